# cmake -DTOOL=<fedstat-privacy> -P privacy_cli_test.cmake
# fedstat-privacy prints the accountants' numbers (checked against the scipy reference values of
# tests/vectors/privacy_reference_vectors.h), JSON with --json, and errors with a non-zero exit.
function(expect_number expected tolerance)
  execute_process(COMMAND ${TOOL} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "fedstat-privacy ${ARGN} failed: ${err}")
  endif()
  string(STRIP "${out}" out)
  execute_process(COMMAND /usr/bin/env awk -v a=${out} -v b=${expected} -v t=${tolerance}
                  "BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t * b) }"
                  RESULT_VARIABLE close)
  if(NOT close EQUAL 0)
    message(FATAL_ERROR "fedstat-privacy ${ARGN} printed ${out}, expected ${expected}")
  endif()
endfunction()

expect_number(3.7306316348159405 1e-6 agm-sigma --epsilon 1 --delta 1e-5 --sensitivity 1)
expect_number(48.44805262605389 1e-9 gauss-sigma --epsilon 0.1 --delta 1e-5 --sensitivity 1)
expect_number(8.717097890630393 1e-6 skellam-lambda --epsilon 1 --delta 1e-5 --l1 1 --l2 1
              --clients 1)

execute_process(COMMAND ${TOOL} --json skellam-epsilon --lambda 10 --clients 100 --l1 1 --l2 1
                        --delta 1e-5 RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^\\{\"epsilon\": [0-9.e+-]+, \"best_order\": [0-9]+")
  message(FATAL_ERROR "fedstat-privacy --json skellam-epsilon printed: ${out}")
endif()
execute_process(COMMAND ${TOOL} gauss-sigma --epsilon 2 --delta 1e-5 --sensitivity 1
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "epsilon < 1")
  message(FATAL_ERROR "fedstat-privacy accepted a classical Gaussian at epsilon 2: ${err}")
endif()
message(STATUS "fedstat-privacy: reference values, JSON and errors as documented")
