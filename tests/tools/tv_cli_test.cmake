# cmake -DTOOL=<fedstat-tv> -DOUT=<dir> -P tv_cli_test.cmake
# fedstat-tv end to end on a small pair: the exact D_TV (--evaluate), both estimators close to it,
# the JSON keys, clients and local DP accepted, no raw-data value without --evaluate, every
# privacy parameter and size refused when not finite and in range, and a malformed file reported
# with its name and line.
file(MAKE_DIRECTORY ${OUT})
set(p "")
set(q "")
foreach(i RANGE 1 300)
  math(EXPR pc "30000 / ${i}")
  math(EXPR qid "${i} + 40")
  math(EXPR qc "20000 / ${i} + 5")
  string(APPEND p "${i} ${pc}\n")
  string(APPEND q "${qid} ${qc}\n")
endforeach()
file(WRITE ${OUT}/P.txt "${p}")
file(WRITE ${OUT}/Q.txt "${q}")
file(WRITE ${OUT}/bad.txt "1 5\n2 five\n")

include(${CMAKE_CURRENT_LIST_DIR}/cli_helpers.cmake)

foreach(args "--budget;49152" "--budget;163840;--clients;4" "--budget;49152;--epsilon;3")
  execute_process(COMMAND ${TOOL} --p ${OUT}/P.txt --q ${OUT}/Q.txt ${args} --evaluate --json
                  RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "fedstat-tv ${args} failed: ${err}")
  endif()
  foreach(key exact topk hh bytes params seconds)
    string(JSON value ERROR_VARIABLE missing GET "${json}" ${key})
    if(missing)
      message(FATAL_ERROR "fedstat-tv --json has no '${key}': ${json}")
    endif()
  endforeach()
  string(JSON exact GET "${json}" exact)
  string(JSON topk GET "${json}" topk)
  string(JSON hh GET "${json}" hh)
  string(JSON bytes GET "${json}" bytes)
  if(bytes GREATER 163840)
    message(FATAL_ERROR "fedstat-tv used ${bytes} bytes, more than the budget")
  endif()
  expect_close(${topk} ${exact} 0.03 "top-k with ${args}")
  expect_close(${hh} ${exact} 0.03 "HH with ${args}")
endforeach()

# Under secure aggregation only the summed counters are revealed: with candidates from the known
# domain the estimates equal those from the clear sums of the same counters.
foreach(mode clear secure)
  set(extra "")
  if(mode STREQUAL "secure")
    set(extra "--secure")
  endif()
  execute_process(COMMAND ${TOOL} --p ${OUT}/P.txt --q ${OUT}/Q.txt --clients 3 --domain 400
                          ${extra} --json
                  RESULT_VARIABLE rc OUTPUT_VARIABLE json_${mode} ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "fedstat-tv ${mode} failed: ${err}")
  endif()
  string(JSON topk_${mode} GET "${json_${mode}}" topk)
endforeach()
if(NOT topk_clear STREQUAL topk_secure)
  message(FATAL_ERROR "--secure changed the estimate: ${topk_clear} vs ${topk_secure}")
endif()
execute_process(COMMAND ${TOOL} --p ${OUT}/P.txt --q ${OUT}/Q.txt --secure RESULT_VARIABLE rc
                ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "needs|give --domain")
  message(FATAL_ERROR "fedstat-tv --secure without --domain was not refused: ${err}")
endif()

# Without --evaluate nothing computed from the raw files is printed, and the privacy is stated.
execute_process(COMMAND ${TOOL} --p ${OUT}/P.txt --q ${OUT}/Q.txt --epsilon 3 --json
                RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
string(JSON exact ERROR_VARIABLE missing GET "${json}" exact)
string(JSON time ERROR_VARIABLE no_time GET "${json}" seconds)
string(JSON privacy GET "${json}" privacy)
string(JSON noise GET "${json}" noise)
if(NOT rc EQUAL 0 OR NOT missing OR NOT no_time OR NOT privacy MATCHES "local DP"
   OR NOT noise STREQUAL "csprng")
  message(FATAL_ERROR "fedstat-tv release printed raw-data values or no privacy: ${json}${err}")
endif()

function(expect_failure pattern)
  expect_refusal("fedstat-tv ${ARGN}" "${pattern}"
                 COMMAND ${TOOL} --p ${OUT}/P.txt --q ${OUT}/Q.txt ${ARGN})
endfunction()
foreach(bad nan -1 0 inf)
  expect_failure("--epsilon.*finite number in \\(0, inf\\)" --epsilon ${bad})
  expect_failure("--tau.*finite number in \\(0, inf\\)" --tau ${bad})
  expect_failure("--noise-margin.*finite number in \\(0, inf\\)" --noise-margin ${bad})
endforeach()
expect_failure("--heap-fraction.*finite number in \\(0, 1\\)" --heap-fraction nan)
expect_failure("--noise-seed makes the noise recomputable" --epsilon 3 --noise-seed 3)
expect_failure("--clients.*from 1 to 10000" --clients 100000000)
expect_failure("--budget.*from 1024 to" --budget 200000000000)
expect_failure("at most 2 GiB" --clients 10000 --budget 1048576)

execute_process(COMMAND ${TOOL} --p ${OUT}/P.txt --q ${OUT}/bad.txt RESULT_VARIABLE rc
                ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "bad.txt:2: expected a count")
  message(FATAL_ERROR "fedstat-tv accepted or misreported a malformed file: ${err}")
endif()
message(STATUS "fedstat-tv: estimates near the exact D_TV, JSON keys, clients, local DP, errors")
