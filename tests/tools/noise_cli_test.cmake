# cmake -DTOOL=<fedstat-noise> -P noise_cli_test.cmake
# fedstat-noise prints exactly --n integers, the same ones for the same seed, different ones for
# another seed, and refuses a bad parameter with a message and a non-zero exit.
include(${CMAKE_CURRENT_LIST_DIR}/cli_helpers.cmake)
function(run_tool out_var rc_var)
  execute_process(COMMAND ${TOOL} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  set(${out_var} "${out}${err}" PARENT_SCOPE)
  set(${rc_var} "${rc}" PARENT_SCOPE)
endfunction()

foreach(args "skellam;--lambda;100" "skellam;--lambda;100;--method;integer" "poisson;--lambda;7/2"
             "poisson;--lambda;10000;--method;integer" "dlaplace;--t;2.5" "dgauss;--sigma2;10"
             "polya;--t;3;--clients;4")
  run_tool(a rc_a ${args} --n 500 --seed 42)
  run_tool(b rc_b ${args} --n 500 --seed 42)
  run_tool(c rc_c ${args} --n 500 --seed 43)
  if(NOT rc_a EQUAL 0 OR NOT rc_b EQUAL 0)
    message(FATAL_ERROR "fedstat-noise ${args} failed: ${a}")
  endif()
  string(REGEX MATCHALL "-?[0-9]+\n" lines "${a}")
  list(LENGTH lines n)
  if(NOT n EQUAL 500)
    message(FATAL_ERROR "fedstat-noise ${args} printed ${n} integers, not 500")
  endif()
  if(NOT a STREQUAL b)
    message(FATAL_ERROR "fedstat-noise ${args}: the same seed gave different samples")
  endif()
  if(a STREQUAL c)
    message(FATAL_ERROR "fedstat-noise ${args}: seeds 42 and 43 gave the same samples")
  endif()
endforeach()

# Every numeric option is checked before anything is drawn (issue 11 item 7): a refused value
# exits non-zero, names the option and what is allowed, and prints no sample. TIMEOUT: before
# the checks, --n -1 wrapped to 2^64 − 1 and printed for ever.
function(expect_refused what pattern)
  expect_refusal("fedstat-noise ${ARGN}: ${what}" "${pattern}" EMPTY_STDOUT KEEP_GOING TIMEOUT 10
                 COMMAND ${TOOL} ${ARGN})
endfunction()

foreach(n nan inf -1 0 1e3 1.5 +5 100000001 18446744073709551615 18446744073709551616)
  expect_refused("--n ${n}" "--n.*1 to 100000000" dlaplace --t 2 --n "${n}" --seed 1)
endforeach()
foreach(seed nan inf -1 1.5 18446744073709551616)
  expect_refused("--seed ${seed}" "--seed.*0 to 18446744073709551615" dlaplace --t 2 --n 3
                 --seed "${seed}")
endforeach()
foreach(value nan inf -1 0 0/5 1/0 -0.5 1e3)
  foreach(method tabulated integer)
    expect_refused("skellam --lambda ${value}" "lambda" skellam --method ${method} --lambda
                   "${value}" --n 3 --seed 1)
    expect_refused("poisson --lambda ${value}" "lambda" poisson --method ${method} --lambda
                   "${value}" --n 3 --seed 1)
  endforeach()
  expect_refused("dlaplace --t ${value}" "--t|scale" dlaplace --t "${value}" --n 3 --seed 1)
  expect_refused("dgauss --sigma2 ${value}" "sigma2|sigma\\^2" dgauss --sigma2 "${value}" --n 3
                 --seed 1)
  expect_refused("polya --t ${value}" "--t|scale" polya --t "${value}" --clients 3 --n 3 --seed 1)
endforeach()
foreach(clients nan inf -1 0 4294967296)
  expect_refused("polya --clients ${clients}" "--clients.*1 to 4294967295" polya --t 2 --clients
                 "${clients}" --n 3 --seed 1)
endforeach()
# Each kind's own limits.
expect_refused("skellam lambda above 2^31" "lambda" skellam --lambda 2147483649 --n 3 --seed 1)
expect_refused("polya scale above 10^4" "10\\^4" polya --t 10001 --clients 3 --n 3 --seed 1)
expect_refused("polya without --clients" "needs --clients" polya --t 2 --n 3 --seed 1)
# The ends of the ranges work.
foreach(args "dlaplace;--t;2;--n;1;--seed;0" "dlaplace;--t;2;--n;1;--seed;18446744073709551615"
             "polya;--t;10000;--clients;4294967295;--n;1;--seed;1")
  run_tool(edge rc_edge ${args})
  if(NOT rc_edge EQUAL 0 OR NOT edge MATCHES "^-?[0-9]+\n$")
    message(FATAL_ERROR "fedstat-noise ${args} should print one sample: ${edge}")
  endif()
endforeach()

run_tool(bad rc_bad dgauss --sigma2 -1 --n 3 --seed 1)
if(rc_bad EQUAL 0 OR NOT bad MATCHES "sigma2")
  message(FATAL_ERROR "fedstat-noise accepted sigma2 = -1: ${bad}")
endif()
run_tool(missing rc_missing skellam --n 3 --seed 1)
if(rc_missing EQUAL 0 OR NOT missing MATCHES "needs --lambda")
  message(FATAL_ERROR "fedstat-noise ran skellam without --lambda: ${missing}")
endif()
message(STATUS "fedstat-noise: counts, determinism and errors as documented")
