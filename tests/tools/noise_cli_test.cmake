# cmake -DTOOL=<fedstat-noise> -P noise_cli_test.cmake
# fedstat-noise prints exactly --n integers, the same ones for the same seed, different ones for
# another seed, and refuses a bad parameter with a message and a non-zero exit.
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

run_tool(bad rc_bad dgauss --sigma2 -1 --n 3 --seed 1)
if(rc_bad EQUAL 0 OR NOT bad MATCHES "sigma2")
  message(FATAL_ERROR "fedstat-noise accepted sigma2 = -1: ${bad}")
endif()
run_tool(missing rc_missing skellam --n 3 --seed 1)
if(rc_missing EQUAL 0 OR NOT missing MATCHES "needs --lambda")
  message(FATAL_ERROR "fedstat-noise ran skellam without --lambda: ${missing}")
endif()
message(STATUS "fedstat-noise: counts, determinism and errors as documented")
