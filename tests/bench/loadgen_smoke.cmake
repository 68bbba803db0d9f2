# cmake -DLOADGEN=<fedstat-loadgen> -DSERVER=<fedstat-server> -DDIR=<scratch dir> -P loadgen_smoke.cmake
# fedstat-loadgen's smoke test (the figures are measurements, not tests): 10 devices report to a
# real fedstat-server it starts for 2 s (a kl task, trust none, T = 300 over a Zipf law's items);
# the JSON must hold every figure, sane: reports > 0 and a whole number of rounds of 10, no device
# error, not out of tasks, p50 ≤ p99 ≤ max, wall_seconds ≥ 2, CPU seconds > 0, peak memory > 0.
# Then the refusals: a trusted task (exit 2, the trust named) and no server given (exit 2).
foreach(var LOADGEN SERVER DIR)
  if(NOT ${var})
    message(FATAL_ERROR "usage: cmake -DLOADGEN=... -DSERVER=... -DDIR=... -P loadgen_smoke.cmake")
  endif()
endforeach()
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
set(items "")
set(reference "")
foreach(i RANGE 0 319)
  math(EXPR count "100000 / (${i} + 1)")
  string(APPEND reference "${i} ${count}\n")
  if(i LESS 300)
    math(EXPR item "${i} + 15")
    string(APPEND items "${item} ${count}\n")
  endif()
endforeach()
file(WRITE "${DIR}/items.txt" "${items}")
file(WRITE "${DIR}/reference.txt" "${reference}")
set(seed "0000000000000000000000000000000000000000000000000000000000000031")
file(WRITE "${DIR}/task.json"
     "{\"id\": 1, \"kind\": \"kl\", \"trust\": \"none\", \"epsilon\": 0, \"delta\": 0, "
     "\"deadline_seconds\": 3600, \"phase_timeout_seconds\": 30, \"seed\": \"${seed}\", "
     "\"kl\": {\"reference\": \"reference.txt\", \"rounds\": 300, \"lambda\": 0.1}}\n")

execute_process(COMMAND ${LOADGEN} --server-binary ${SERVER} --clients 10 --seconds 2
                        --task ${DIR}/task.json --data ${DIR} --tasks 2000 --json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fedstat-loadgen failed (exit ${rc}): ${err}${out}")
endif()
message(STATUS "fedstat-loadgen: ${out}")
macro(field name)
  string(JSON ${name} ERROR_VARIABLE missing GET "${out}" ${ARGN})
  if(missing)
    message(FATAL_ERROR "no ${ARGN} in the JSON: ${missing}\n${out}")
  endif()
endmacro()
field(reports reports)
field(rounds rounds)
field(rate reports_per_second)
field(wall wall_seconds)
field(p50 ack_latency_ms p50)
field(p99 ack_latency_ms p99)
field(max ack_latency_ms max)
field(cpu server_cpu_seconds)
field(peak server_peak_memory_kb)
field(out_of_tasks out_of_tasks)
field(sessions tls_sessions)
field(resumed tls_resumed)
string(JSON errors LENGTH "${out}" errors)
math(EXPR whole_rounds "${rounds} * 10")
if(reports LESS_EQUAL 0 OR NOT reports EQUAL whole_rounds)
  message(FATAL_ERROR "reports ${reports} is not a positive multiple of 10 (rounds ${rounds})")
endif()
if(NOT errors EQUAL 0 OR out_of_tasks)
  message(FATAL_ERROR "device errors or out of tasks: ${out}")
endif()
# CMake compares floats as floats with LESS/GREATER (decimal strings).
if(NOT rate GREATER 0 OR wall LESS 2 OR p50 GREATER p99 OR p99 GREATER max OR NOT p50 GREATER 0)
  message(FATAL_ERROR "insane rate or latencies: ${out}")
endif()
# Each of the 10 devices keeps its channel: its first connection is a full handshake, every
# later one resumes its session (the server holds it for an hour).
math(EXPR full "${sessions} - ${resumed}")
if(NOT full EQUAL 10 OR sessions LESS 10)
  message(FATAL_ERROR "expected every device's connections after its first to resume: ${out}")
endif()
if(NOT cpu GREATER 0 OR NOT peak GREATER 0)
  message(FATAL_ERROR "no server CPU or peak memory: ${out}")
endif()

file(READ "${DIR}/task.json" task)
string(REPLACE "\"trust\": \"none\", \"epsilon\": 0, \"delta\": 0"
               "\"trust\": \"trusted\", \"epsilon\": 4, \"delta\": 1e-6" trusted "${task}")
file(WRITE "${DIR}/trusted.json" "${trusted}")
execute_process(COMMAND ${LOADGEN} --server-binary ${SERVER} --task ${DIR}/trusted.json
                        --data ${DIR} RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 30)
if(NOT rc EQUAL 2 OR NOT err MATCHES "trust must be \"none\"")
  message(FATAL_ERROR "a trusted task: exit ${rc}, expected 2 naming the trust: ${err}")
endif()
execute_process(COMMAND ${LOADGEN} --task ${DIR}/task.json --data ${DIR}
                RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 30)
if(NOT rc EQUAL 2 OR NOT err MATCHES "give --server-binary PATH or --server HOST:PORT")
  message(FATAL_ERROR "no server: exit ${rc}, expected 2 asking for one: ${err}")
endif()
file(REMOVE_RECURSE "${DIR}")
