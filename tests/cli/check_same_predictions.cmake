# Trains a model with the command line, then writes its predictions twice, with `maskgat predict`
# and with the C++ example `predict` (the library's Predictor), and requires identical bytes.
#   cmake -DMASKGAT=<maskgat> -DEXAMPLE=<predict> -DOUT=<dir> -DTRAIN=<args|...>
#         -DDATA=<args|...> -DEXAMPLE_DATA=<args|...> -P check_same_predictions.cmake
# TRAIN holds the training data and options; DATA the data options of `maskgat predict`;
# EXAMPLE_DATA the example's data arguments (a dataset name, or an edge list and features).
foreach(list TRAIN DATA EXAMPLE_DATA)
  string(REPLACE "|" ";" ${list} "${${list}}")
endforeach()
file(MAKE_DIRECTORY ${OUT})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "exit code ${code}: ${ARGN}\n--- stdout ---\n${out}\n--- stderr ---\n${err}")
  endif()
endfunction()
run(${MASKGAT} train ${TRAIN} --save ${OUT}/model.ckpt --force --quiet)
run(${MASKGAT} predict --load ${OUT}/model.ckpt ${DATA} --output ${OUT}/cli.csv --force)
run(${EXAMPLE} ${OUT}/model.ckpt ${OUT}/cpp.csv ${EXAMPLE_DATA})
file(SIZE ${OUT}/cli.csv size)
if(size LESS 100)
  message(FATAL_ERROR "${OUT}/cli.csv holds ${size} bytes: no predictions")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT}/cli.csv ${OUT}/cpp.csv
  RESULT_VARIABLE differ)
if(NOT differ EQUAL 0)
  message(FATAL_ERROR "${OUT}/cli.csv (maskgat predict) and ${OUT}/cpp.csv (the C++ example) differ")
endif()
message(STATUS "${OUT}: maskgat predict and the C++ example wrote the same ${size} bytes")
