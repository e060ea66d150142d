# Runs one maskgat command and checks its exit code and output.
#   cmake -DCOMMAND=<program|arg|...> -DEXPECT_CODE=N [-DEXPECT_STDOUT=regex]
#         [-DEXPECT_STDERR=regex] -P run_cli.cmake
string(REPLACE "|" ";" COMMAND "${COMMAND}")
execute_process(COMMAND ${COMMAND}
  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(failed FALSE)
if(NOT code STREQUAL EXPECT_CODE)
  message(SEND_ERROR "exit code ${code}, expected ${EXPECT_CODE}")
  set(failed TRUE)
endif()
if(DEFINED EXPECT_STDOUT AND NOT out MATCHES "${EXPECT_STDOUT}")
  message(SEND_ERROR "stdout does not match '${EXPECT_STDOUT}'")
  set(failed TRUE)
endif()
if(DEFINED EXPECT_STDERR AND NOT err MATCHES "${EXPECT_STDERR}")
  message(SEND_ERROR "stderr does not match '${EXPECT_STDERR}'")
  set(failed TRUE)
endif()
if(failed)
  message(FATAL_ERROR "command: ${COMMAND}\n--- stdout ---\n${out}\n--- stderr ---\n${err}")
endif()
