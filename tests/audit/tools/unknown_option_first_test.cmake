# cmake -D<tool, with _ for ->=<path> ... -DOUT=<dir> -P unknown_option_first_test.cmake
# Issue 39 item 11: a misspelt option is reported as the unknown option it is, before the required
# option it was meant to be is missing (10 of 13 tools answered "--seed is required" for "--sed
# 1"), and before a value it displaced fails its check. For every tool: one required option (or,
# for fedstat-demo, an optional one) misspelt, everything else valid; the tool must exit 2, print
# nothing on stdout, name the misspelt option as not expected (or unknown) and not talk of a
# required option. Every tool runs for milliseconds.
file(MAKE_DIRECTORY ${OUT}/data)
file(WRITE ${OUT}/P.txt "1 200\n2 300\n3 250\n")
file(WRITE ${OUT}/Q.txt "1 100\n2 300\n3 350\n")
file(WRITE ${OUT}/V.csv "0.1,0.5\n0.4,0.4\n0.9,0.2\n")
file(WRITE ${OUT}/examples.csv "1,0.5,2.0\n0,-0.5,-2.0\n")
file(WRITE ${OUT}/events.txt "3\n")
file(WRITE ${OUT}/task.json "{}")
set(secret 0000000000000000000000000000000000000000000000000000000000000001)

set(failed "")
# expect_unknown_first(tool path typo args...): runs `path args...`, in which `typo` is the misspelt option.
function(expect_unknown_first tool path typo)
  execute_process(COMMAND ${path} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 60)
  string(REPLACE ";" " " command "${tool} ${ARGN}")
  if(NOT rc EQUAL 2 OR NOT "${out}" STREQUAL "" OR NOT err MATCHES "(not expected|unknown option)"
     OR NOT err MATCHES "${typo}" OR err MATCHES "required")
    message(SEND_ERROR "${command}\n  exit ${rc} (want 2), stdout '${out}' (want none), "
                       "stderr '${err}' (want '${typo}' named as not expected or unknown, and "
                       "nothing about a required option)")
    set(failed "${failed} ${tool}" PARENT_SCOPE)
  endif()
endfunction()

expect_unknown_first(fedstat-noise ${fedstat_noise} --sed skellam --lambda 100 --n 20 --sed 1)
expect_unknown_first(fedstat-privacy ${fedstat_privacy} --sensitivty agm-sigma --epsilon 1 --delta 1e-5
      --sensitivty 1)
expect_unknown_first(fedstat-secagg-sim ${fedstat_secagg_sim} --treshold --clients 5 --treshold 3 --length 8)
expect_unknown_first(fedstat-tv ${fedstat_tv} --qq --p ${OUT}/P.txt --qq ${OUT}/Q.txt)
expect_unknown_first(fedstat-kl ${fedstat_kl} --pp --pi ${OUT}/P.txt --pp ${OUT}/Q.txt)
expect_unknown_first(fedstat-heterogeneity ${fedstat_heterogeneity} --vector --vector ${OUT}/V.csv
      --epsilon 8)
expect_unknown_first(fedstat-server ${fedstat_server} --jsno results --jsno)
expect_unknown_first(fedstat-sim ${fedstat_sim} --fleet-secert --server 127.0.0.1:1 --task ${OUT}/task.json
      --data ${OUT}/data --fleet-secert ${secret})
expect_unknown_first(fedstat-netfault ${fedstat_netfault} --atack --server 127.0.0.1:1 --atack silent)
expect_unknown_first(fedstat-loadgen ${fedstat_loadgen} --dat --task ${OUT}/task.json --dat ${OUT}/data)
expect_unknown_first(federated_logreg ${federated_logreg} --client --data ${OUT}/examples.csv --client 2
      --epsilon 2 --delta 1e-6)
expect_unknown_first(fedstat-demo ${fedstat_demo} --sed --sed 7)
expect_unknown_first(fedstat-drift-monitor ${fedstat_drift_monitor} --sate --sate ${OUT}/drift --events
      ${OUT}/events.txt)
if(failed)
  message(FATAL_ERROR "a misspelt option was not reported first by:${failed}")
endif()
