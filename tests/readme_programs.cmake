# Checks that each program in PROGRAMS (a |-separated list of files) appears verbatim in README as
# a ```cpp block, so the README shows exactly what CI's consumer check compiles and runs:
#   cmake -DREADME=README.md -DPROGRAMS=a.cpp|b.cpp -P readme_programs.cmake
file(READ "${README}" readme)
string(REPLACE "|" ";" programs "${PROGRAMS}")
foreach(program IN LISTS programs)
  file(READ "${program}" code)
  string(FIND "${readme}" "```cpp\n${code}```\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${README} has no ```cpp block equal to ${program}")
  endif()
endforeach()
