# Checks that the k-th program in PROGRAMS appears verbatim as a ```cpp block in the k-th document
# in README (both |-separated lists of files), so the docs show exactly what CI's consumer check
# compiles and runs:
#   cmake -DREADME=README.md|docs/cpp-api.md -DPROGRAMS=a.cpp|b.cpp -P readme_programs.cmake
string(REPLACE "|" ";" documents "${README}")
string(REPLACE "|" ";" programs "${PROGRAMS}")
foreach(document program IN ZIP_LISTS documents programs)
  file(READ "${document}" text)
  file(READ "${program}" code)
  string(FIND "${text}" "```cpp\n${code}```\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${document} has no ```cpp block equal to ${program}")
  endif()
endforeach()
