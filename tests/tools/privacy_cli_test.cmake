# cmake -DTOOL=<fedstat-privacy> -P privacy_cli_test.cmake
# fedstat-privacy prints the accountants' numbers (checked against the scipy reference values of
# tests/vectors/privacy_reference_vectors.h), JSON with --json, and errors with a non-zero exit.
include(${CMAKE_CURRENT_LIST_DIR}/cli_helpers.cmake)
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

# Every numeric option is checked while the command line is parsed (issue 11 item 7): a refused
# value exits non-zero with a message naming the option and what is allowed, and prints nothing.
function(expect_refused option pattern)
  expect_refusal("fedstat-privacy ${ARGN}: ${option}" "${option}.*${pattern}" EMPTY_STDOUT
                 KEEP_GOING TIMEOUT 20 COMMAND ${TOOL} ${ARGN})
endfunction()

set(skellam_eps skellam-epsilon --lambda 10 --clients 100 --l1 1 --l2 1 --delta 1e-5)
set(skellam_lam skellam-lambda --epsilon 1 --delta 1e-5 --l1 1 --l2 1 --clients 50)
set(agm agm-sigma --epsilon 1 --delta 1e-5 --sensitivity 1)
set(gauss gauss-sigma --epsilon 0.5 --delta 1e-5 --sensitivity 1)
# Replaces the value after `option` in the list `command`.
function(with_value out_var command option value)
  list(FIND command ${option} at)
  math(EXPR at_value "${at} + 1")
  list(REMOVE_AT command ${at_value})
  list(INSERT command ${at_value} "${value}")
  set(${out_var} "${command}" PARENT_SCOPE)
endfunction()

foreach(value nan inf -inf -1 0 1e309 0x10 1/2)
  foreach(case "skellam_eps;--lambda" "skellam_eps;--l1" "skellam_eps;--l2" "skellam_eps;--delta"
               "skellam_lam;--epsilon" "skellam_lam;--delta" "skellam_lam;--l1" "skellam_lam;--l2"
               "agm;--epsilon" "agm;--delta" "agm;--sensitivity" "gauss;--epsilon" "gauss;--delta"
               "gauss;--sensitivity")
    list(GET case 0 name)
    list(GET case 1 option)
    with_value(command "${${name}}" ${option} ${value})
    expect_refused(${option} "finite number in" ${command})
  endforeach()
endforeach()
foreach(value nan inf -1 0 1.5 4294967296)
  with_value(command "${skellam_eps}" --clients ${value})
  expect_refused(--clients "whole number from 1 to 4294967295" ${command})
  with_value(command "${skellam_lam}" --clients ${value})
  expect_refused(--clients "whole number from 1 to 4294967295" ${command})
endforeach()
# Upper ends: epsilon at most 100, delta below 1, lambda and sensitivities at most 1e15.
with_value(command "${agm}" --epsilon 1e308)
expect_refused(--epsilon "\\(0, 100\\]" ${command})
with_value(command "${agm}" --delta 1)
expect_refused(--delta "\\(0, 1\\)" ${command})
with_value(command "${skellam_eps}" --lambda 1e300)
expect_refused(--lambda "\\(0, 1e\\+?15\\]" ${command})
with_value(command "${skellam_lam}" --l2 1e300)
expect_refused(--l2 "\\(0, 1e\\+?15\\]" ${command})
# and the ends themselves are accepted.
foreach(command "agm-sigma;--epsilon;100;--delta;0.999;--sensitivity;1e15"
                "skellam-epsilon;--lambda;1e15;--clients;4294967295;--l1;1;--l2;1;--delta;1e-5")
  execute_process(COMMAND ${TOOL} ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "^[0-9.e+-]+\n$")
    message(SEND_ERROR "fedstat-privacy ${command} should print a number: ${out}${err}")
  endif()
endforeach()
message(STATUS "fedstat-privacy: reference values, JSON and errors as documented")
