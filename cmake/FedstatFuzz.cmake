# FEDSTAT_FUZZ=ON (the host-fuzz preset): every target is built with Clang's libFuzzer
# instrumentation (-fsanitize=fuzzer-no-link) on top of FEDSTAT_SANITIZE's ASan + UBSan, and the
# tests directory builds only the fuzz targets of tests/fuzz/ (label fuzz).
option(FEDSTAT_FUZZ "Build the libFuzzer targets of tests/fuzz (Clang, with FEDSTAT_SANITIZE)" OFF)
if(FEDSTAT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "FEDSTAT_FUZZ needs Clang (libFuzzer): use the host-fuzz preset, or "
                        "CC=clang CXX=clang++ (Debian: apt-get install clang libclang-rt-14-dev)")
  endif()
  if(NOT FEDSTAT_SANITIZE)
    message(FATAL_ERROR "FEDSTAT_FUZZ needs FEDSTAT_SANITIZE=ON: a fuzzer without ASan + UBSan "
                        "finds only crashes")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
