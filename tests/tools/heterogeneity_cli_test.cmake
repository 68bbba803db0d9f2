# cmake -DTOOL=<fedstat-heterogeneity> -DOUT=<dir> -P heterogeneity_cli_test.cmake
# fedstat-heterogeneity end to end: exact values of a hand-worked example (see
# tests/host/heterogeneity_test.cpp) under --evaluate, JSON keys, every mechanism, no raw-data
# value in a release, errors naming the line, and privacy parameters refused when not finite
# and in range.
file(MAKE_DIRECTORY ${OUT})
file(WRITE ${OUT}/V.csv "# three clients\n0.1,0.5\n0.4,0.4\n0.9,0.2\n")
file(WRITE ${OUT}/V_bad.csv "0.1,0.5\n0.4,1.4\n")

include(${CMAKE_CURRENT_LIST_DIR}/cli_helpers.cmake)

execute_process(COMMAND ${TOOL} --vectors ${OUT}/V.csv --mechanism none --evaluate --json
                RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fedstat-heterogeneity failed: ${err}")
endif()
set(expected_dispersion 0.1244444444)
set(expected_q 4.773946360)
set(expected_i2 0.5810593900)
foreach(stat dispersion q i2)
  string(JSON estimate GET "${json}" ${stat} estimate)
  string(JSON exact GET "${json}" ${stat} exact)
  string(JSON low GET "${json}" ${stat} ci 0)
  string(JSON high GET "${json}" ${stat} ci 1)
  expect_close(${exact} ${expected_${stat}} 1e-9 "${stat} exact")
  expect_close(${estimate} ${expected_${stat}} 1e-9 "${stat} without noise")
  expect_close(${low} ${estimate} 0 "${stat} interval without noise")
  expect_close(${high} ${estimate} 0 "${stat} interval without noise")
endforeach()

foreach(mechanism agm classical skellam)
  execute_process(COMMAND ${TOOL} --vectors ${OUT}/V.csv --mechanism ${mechanism} --json
                  RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "fedstat-heterogeneity --mechanism ${mechanism} failed: ${err}")
  endif()
  string(JSON got GET "${json}" mechanism)
  string(JSON sigma GET "${json}" sigma 0)
  if(NOT got STREQUAL mechanism OR sigma LESS_EQUAL 0)
    message(FATAL_ERROR "fedstat-heterogeneity --mechanism ${mechanism}: ${json}")
  endif()
  # A release carries nothing computed from the raw vectors (nor the time taken), and its noise
  # comes from the CSPRNG.
  string(JSON value ERROR_VARIABLE missing GET "${json}" q exact)
  string(JSON clipped ERROR_VARIABLE no_clipped GET "${json}" clipped_weights)
  string(JSON time ERROR_VARIABLE no_time GET "${json}" seconds)
  string(JSON noise GET "${json}" noise)
  if(NOT missing OR NOT no_clipped OR NOT no_time OR NOT noise STREQUAL "csprng")
    message(FATAL_ERROR "fedstat-heterogeneity --mechanism ${mechanism} printed raw-data values")
  endif()
endforeach()

function(expect_failure pattern)
  expect_refusal("fedstat-heterogeneity ${ARGN}" "${pattern}"
                 COMMAND ${TOOL} --vectors ${OUT}/V.csv ${ARGN})
endfunction()
expect_failure("--mechanism none adds no noise" --mechanism none --epsilon 1)
foreach(bad nan -1 0 inf)
  expect_failure("--epsilon.*finite number in \\(0, inf\\)" --epsilon ${bad})
endforeach()
foreach(bad nan 0 1)
  expect_failure("--delta.*finite number in \\(0, 1\\)" --delta ${bad})
endforeach()
expect_failure("--max-weight.*\\[4, inf\\)" --max-weight nan)
expect_failure("--p.*\\[1, inf\\)" --p 0.5)
expect_failure("--runs.*from 1 to 10000" --runs 4294967295 --evaluate)
expect_failure("--runs repeats the release" --runs 3)
expect_failure("--noise-seed makes the noise recomputable" --noise-seed 3)

execute_process(COMMAND ${TOOL} --vectors ${OUT}/V_bad.csv RESULT_VARIABLE rc
                ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "V_bad.csv:2: field 2: '1.4' lies outside \\[0, 1\\]")
  message(FATAL_ERROR "fedstat-heterogeneity accepted or misreported a bad file: ${err}")
endif()
message(STATUS "fedstat-heterogeneity: exact values, JSON, mechanisms and errors as documented")
