# cmake -D<tool, with _ for ->=<path> ... -DVERSION=<project version> -DOUT=<dir>
#       -P conventions_test.cmake
# Every command-line tool follows docs/cli.md (issue 16 item 5): --help carries examples and the
# exit status, --version prints "<tool> <version>", a wrong option exits 2 with the reason and a
# pointer to --help on stderr and nothing on stdout, --json prints one JSON object, and a
# successful run whose stderr is not a terminal writes nothing there (no progress lines).
file(MAKE_DIRECTORY ${OUT})
file(WRITE ${OUT}/P.txt "1 200\n2 300\n3 250\n4 150\n5 100\n")
file(WRITE ${OUT}/Q.txt "1 100\n2 300\n3 350\n4 150\n6 100\n")
file(WRITE ${OUT}/PI.txt "1 40\n2 30\n3 15\n4 10\n5 5\n")
file(WRITE ${OUT}/V.csv "0.1,0.5\n0.4,0.4\n0.9,0.2\n0.3,0.3\n")
set(rows "")
foreach(i RANGE 1 40)
  math(EXPR label "${i} % 2")
  math(EXPR a "${i} * 7 % 10")
  set(f "${a}.5")
  if(label)
    string(APPEND rows "1,${f},2.0\n")
  else()
    string(APPEND rows "0,-${f},-2.0\n")
  endif()
endforeach()
file(WRITE ${OUT}/examples.csv "${rows}")
file(WRITE ${OUT}/events.txt "3\n5\n3\n")
file(WRITE ${OUT}/server.json
     "{\"listen\": \"127.0.0.1:0\", \"store\": \"${OUT}/store.db\", \"fleet_secret\": "
     "\"0000000000000000000000000000000000000000000000000000000000000001\", \"tasks\": []}")

# tool: the program's name; path: the built program; the rest: a run that prints --json.
function(check_tool tool path)
  execute_process(COMMAND ${path} --help RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "Examples:\n  ${tool}" OR NOT out MATCHES "Exit status:"
     OR NOT "${err}" STREQUAL "")
    message(SEND_ERROR "${tool} --help: exit ${rc}, want 0 with \"Examples:\" (starting "
                       "with '${tool}') and \"Exit status:\" on stdout: ${out}${err}")
  endif()
  execute_process(COMMAND ${path} --version RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "^${tool} ${VERSION}")
    message(SEND_ERROR "${tool} --version: exit ${rc}, printed '${out}${err}', want "
                       "'${tool} ${VERSION}'")
  endif()
  execute_process(COMMAND ${path} --no-such-option RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT "${out}" STREQUAL "" OR NOT err MATCHES "--help")
    message(SEND_ERROR "${tool} --no-such-option: exit ${rc} (want 2), stdout '${out}' (want "
                       "none), stderr '${err}' (want the reason and a pointer to --help)")
  endif()
  if(ARGN)
    execute_process(COMMAND ${path} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                    ERROR_VARIABLE err)
    string(JSON type ERROR_VARIABLE bad TYPE "${out}")
    if(NOT rc EQUAL 0 OR bad OR NOT type STREQUAL "OBJECT")
      message(SEND_ERROR "${tool} ${ARGN}: exit ${rc}, want one JSON object on stdout: "
                         "${out} (${bad}) ${err}")
    endif()
    if(NOT "${err}" STREQUAL "")
      message(SEND_ERROR "${tool} ${ARGN}: wrote to stderr, which is not a terminal here (no "
                         "progress lines): '${err}'")
    endif()
  endif()
endfunction()

check_tool(fedstat-noise ${fedstat_noise} skellam --lambda 100 --n 20 --seed 1
           --json)
check_tool(fedstat-privacy ${fedstat_privacy} --json agm-sigma --epsilon 1
           --delta 1e-5 --sensitivity 1)
check_tool(fedstat-secagg-sim ${fedstat_secagg_sim} --clients 5 --threshold 3
           --length 8 --json)
check_tool(fedstat-ca ${fedstat_ca})  # no --json; its commands: tests/tools/ca_cli_test.cmake
check_tool(fedstat-tv ${fedstat_tv} --p ${OUT}/P.txt --q ${OUT}/Q.txt --budget
           8192 --json)
check_tool(fedstat-kl ${fedstat_kl} --pi ${OUT}/PI.txt --p ${OUT}/P.txt --T 50
           --evaluate --runs 20 --noise-seed 1 --json)
check_tool(fedstat-heterogeneity ${fedstat_heterogeneity} --vectors ${OUT}/V.csv
           --epsilon 8 --evaluate --runs 20 --noise-seed 1 --json)
check_tool(fedstat-server ${fedstat_server} tasks --config ${OUT}/server.json
           --json)
check_tool(fedstat-sim ${fedstat_sim})  # its --json: tests/emulation
check_tool(fedstat-netfault ${fedstat_netfault})  # its --json: tests/emulation/netfault_test.sh
check_tool(fedstat-loadgen ${fedstat_loadgen})  # its --json: tests/bench/loadgen_smoke.cmake
check_tool(federated_logreg ${federated_logreg} --data ${OUT}/examples.csv --clients
           2 --epsilon 2 --delta 1e-6 --epochs 2 --batches 2 --json)
check_tool(fedstat-demo ${fedstat_demo} --seed 7 --json)
check_tool(fedstat-drift-monitor ${fedstat_drift_monitor} --state ${OUT}/drift
           --events ${OUT}/events.txt --show --json)

# The server's --version also names the wire protocol; a subcommand's --help is its own.
execute_process(COMMAND ${fedstat_server} results --help RESULT_VARIABLE rc
                OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "TASK")
  message(SEND_ERROR "fedstat-server results --help: exit ${rc}: ${out}")
endif()
