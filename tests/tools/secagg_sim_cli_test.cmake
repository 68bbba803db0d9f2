# cmake -DTOOL=<fedstat-secagg-sim> -P secagg_sim_cli_test.cmake
# fedstat-secagg-sim: exact sums with dropouts at each round (32- and 64-bit), an abort below the
# threshold, the documented JSON keys, a signed session (--signed), and a clear error for
# impossible parameters.
function(run_json out_var)
  execute_process(COMMAND ${TOOL} ${ARGN} --json RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "fedstat-secagg-sim ${ARGN} failed (${rc}): ${err}${out}")
  endif()
  foreach(key ok aborted bytes_per_client seconds)
    string(JSON value ERROR_VARIABLE missing GET "${out}" ${key})
    if(missing)
      message(FATAL_ERROR "fedstat-secagg-sim --json has no '${key}': ${out}")
    endif()
  endforeach()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

foreach(bits 32 64)
  run_json(json --clients 7 --threshold 4 --length 130 --bits ${bits} --drop-r1 1 --drop-r2 1
           --drop-r3 1 --seed 5)
  string(JSON ok GET "${json}" ok)
  string(JSON survivors GET "${json}" survivors)
  if(NOT ok STREQUAL "ON" AND NOT ok STREQUAL "true")
    message(FATAL_ERROR "fedstat-secagg-sim --bits ${bits} with dropouts: ${json}")
  endif()
  if(NOT survivors EQUAL 5)
    message(FATAL_ERROR "expected 5 inputs in the sum (7 - 1 - 1), got ${survivors}")
  endif()
endforeach()

# --signed: a signed session with the consistency round, a client dropping after signing; both
# the signed and the unsigned run are exact, and signing costs bytes.
run_json(json --clients 8 --threshold 5 --length 130 --drop-r1 1 --drop-r3 1 --drop-consistency 1
         --signed --seed 5)
string(JSON ok GET "${json}" ok)
string(JSON plain_ok GET "${json}" unsigned ok)
string(JSON signed_bytes GET "${json}" bytes_per_client)
string(JSON plain_bytes GET "${json}" unsigned bytes_per_client)
string(JSON consistency_bytes GET "${json}" consistency_bytes)
if(NOT (ok STREQUAL "ON" OR ok STREQUAL "true") OR NOT (plain_ok STREQUAL "ON" OR
                                                        plain_ok STREQUAL "true"))
  message(FATAL_ERROR "fedstat-secagg-sim --signed: ${json}")
endif()
if(NOT signed_bytes GREATER plain_bytes OR NOT consistency_bytes GREATER 64)
  message(FATAL_ERROR "fedstat-secagg-sim --signed: no signing bytes counted: ${json}")
endif()

run_json(json --clients 6 --threshold 4 --length 10 --drop-r2 3)
string(JSON aborted GET "${json}" aborted)
string(JSON ok GET "${json}" ok)
if(NOT (aborted STREQUAL "ON" OR aborted STREQUAL "true") OR ok STREQUAL "ON" OR ok STREQUAL "true")
  message(FATAL_ERROR "fedstat-secagg-sim did not abort below the threshold: ${json}")
endif()

execute_process(COMMAND ${TOOL} --clients 3 --threshold 5 --length 10 RESULT_VARIABLE rc
                ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "threshold")
  message(FATAL_ERROR "fedstat-secagg-sim accepted a threshold above the clients: ${err}")
endif()
# Documented bounds: each request above them is refused at once with a message naming the bound
# (a 2^32 - 1 word vector once ran unbounded; the timeout makes such a run fail, not hang): the
# length, 1024 clients for the complete graph, 100,000 for the sparse one (the default above
# 1024), the threshold's range, an odd sparse degree (named, with the even ones around it), and
# a signed sparse graph the devices would refuse.
foreach(case "--clients;4;--threshold;2;--length;4294967295;1048576"
             "--clients;4;--threshold;2;--length;1048577;1048576"
             "--graph;complete;--clients;1025;--threshold;700;--length;1;at most 1024 clients"
             "--clients;100001;--length;1;100000"
             "--clients;4;--threshold;4294967295;--length;1;100000"
             "--graph;sparse;--clients;1000;--degree;61;--length;1;61 is odd.*60 or 62"
             # --signed sparse: the devices' rule 2t > k + ceil(5% N) (signed_keys.h): the
             # unsigned pick (62, 43) at 1,000 is refused, and no degree <= 126 fits 2,000.
             "--signed;--graph;sparse;--clients;1000;--degree;62;--threshold;43;--length;1;2 \\* threshold > degree \\+ ceil"
             "--signed;--graph;sparse;--clients;2000;--length;1;no signed sparse graph")
  list(POP_BACK case bound)
  execute_process(COMMAND ${TOOL} ${case} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 60)
  if(rc EQUAL 0 OR NOT "${err}${out}" MATCHES "${bound}")
    message(FATAL_ERROR "fedstat-secagg-sim ${case}: expected a refusal naming ${bound}, got "
                        "exit ${rc}: ${err}${out}")
  endif()
endforeach()
message(STATUS "fedstat-secagg-sim: exact sums with dropouts, abort, JSON and errors as documented")
