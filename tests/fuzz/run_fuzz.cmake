# One fuzz test: a fresh corpus from the target's own seeds (fuzz_<name> --write-seeds) plus the
# committed regression inputs (tests/fuzz/corpus/<name>/), then libFuzzer for SECONDS seconds.
# Fails if libFuzzer finds a crash, a sanitizer report, a broken invariant, a leak, a 10 s input
# or more than 2.5 GB; the input is saved as WORK/crash-* (copy it, minimised with
# -minimize_crash=1, into tests/fuzz/corpus/<name>/ with the fix). Prints the executions.
#   cmake -DFUZZER=… -DNAME=… -DREGRESSIONS=… -DWORK=… -DSECONDS=… [-DEXPECT_FAILURE=ON]
#         -P run_fuzz.cmake
foreach(var FUZZER NAME REGRESSIONS WORK SECONDS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_fuzz.cmake: ${var} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK}/corpus")
file(MAKE_DIRECTORY "${WORK}/corpus")
execute_process(COMMAND "${FUZZER}" --write-seeds "${WORK}/corpus" RESULT_VARIABLE rc
                OUTPUT_VARIABLE seeds_out ERROR_VARIABLE seeds_err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fuzz ${NAME}: writing the seeds failed (${rc}): ${seeds_out}${seeds_err}")
endif()
file(GLOB regressions "${REGRESSIONS}/*")
list(LENGTH regressions regression_count)
if(regressions)
  file(COPY ${regressions} DESTINATION "${WORK}/corpus")
endif()
execute_process(
  COMMAND "${FUZZER}" -max_total_time=${SECONDS} -timeout=10 -rss_limit_mb=2560
          -print_final_stats=1 -artifact_prefix=${WORK}/ "${WORK}/corpus"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX MATCH "stat::number_of_executed_units: *([0-9]+)" _ "${err}")
set(executions "${CMAKE_MATCH_1}")
string(REGEX MATCH "stat::new_units_added: *([0-9]+)" _ "${err}")
set(new_units "${CMAKE_MATCH_1}")
if(EXPECT_FAILURE)  # the harness's own test (fuzz.harness_reports_failures)
  if(rc EQUAL 0 OR NOT err MATCHES "fuzz invariant broken")
    message(FATAL_ERROR "fuzz ${NAME}: the canary's broken invariant was not reported (exit ${rc})")
  endif()
  message("fuzz ${NAME}: the broken invariant was reported, as it must be")
  return()
endif()
if(NOT rc EQUAL 0 OR executions STREQUAL "")
  string(LENGTH "${err}" length)
  if(length GREATER 6000)
    math(EXPR from "${length} - 6000")
    string(SUBSTRING "${err}" ${from} 6000 err)
  endif()
  message(FATAL_ERROR "fuzz ${NAME}: FAILED (exit ${rc}); the input is in ${WORK}/\n${err}")
endif()
message("fuzz ${NAME}: ${executions} executions in ${SECONDS} s, ${seeds_out}"
        "plus ${regression_count} regression inputs, ${new_units} new inputs found, no failure")
