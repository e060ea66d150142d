# Compiler settings applied to MaskGAT's own targets only (never to dependencies or users).
include_guard(GLOBAL)

add_library(maskgat_options INTERFACE)
target_compile_features(maskgat_options INTERFACE cxx_std_20)
target_compile_options(maskgat_options INTERFACE
  $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion>
  # MaskGAT never reads errno after a math function; without this, every std::sqrt keeps a scalar
  # errno path and loops containing one (Adam's update) cannot vectorise. Results are unchanged:
  # it is not -ffast-math.
  $<$<CXX_COMPILER_ID:GNU,Clang>:-fno-math-errno>
  # GCC 12's -Wrestrict misfires inside libstdc++'s `"literal" + std::string` at -O2 and above
  # (GCC bug 105329); it reports libstdc++'s memcpy, never our code.
  $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>
  # GCC 12 flags the deliberately undefined operand of AVX-512 intrinsics (`_mm512_undefined_ps`)
  # as (maybe-)uninitialized wherever Eigen's AVX-512 packets inline (GCC bug 105593). The
  # portable builds (the sanitizer presets) keep both warnings.
  $<$<AND:$<CXX_COMPILER_ID:GNU>,$<BOOL:${MASKGAT_NATIVE}>>:-Wno-maybe-uninitialized -Wno-uninitialized>
  # GCC 12 reports libstdc++'s own memcpy (a string literal pushed into a std::vector of strings)
  # as out of bounds once the standard headers come from a precompiled header, where they lose
  # their system-header exemption from these middle-end warnings; a build without precompiled
  # headers keeps them (.ci/consumer's shared library, with warnings as errors).
  $<$<AND:$<CXX_COMPILER_ID:GNU>,$<BOOL:${MASKGAT_PRECOMPILE_HEADERS}>>:-Wno-array-bounds -Wno-stringop-overflow -Wno-stringop-overread>
  $<$<AND:$<BOOL:${MASKGAT_WARNINGS_AS_ERRORS}>,$<CXX_COMPILER_ID:GNU,Clang>>:-Werror>
  $<$<BOOL:${MASKGAT_NATIVE}>:-march=native>)
if(MASKGAT_SANITIZE)
  target_compile_options(maskgat_options INTERFACE
    -fsanitize=${MASKGAT_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(maskgat_options INTERFACE -fsanitize=${MASKGAT_SANITIZE})
endif()
if(MASKGAT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "MASKGAT_FUZZ needs clang (libFuzzer): configure with "
                        "-DCMAKE_CXX_COMPILER=clang++-14; Debian: apt-get install libclang-rt-14-dev")
  endif()
  # Coverage instrumentation for libFuzzer in every MaskGAT target; the fuzz executables add
  # libFuzzer's main (tests/fuzz).
  target_compile_options(maskgat_options INTERFACE -fsanitize=fuzzer-no-link)
endif()
