# cmake -DTOOL=<fedstat-tv> -DOUT=<dir> -P tv_cli_test.cmake
# fedstat-tv end to end on a small pair: the exact D_TV (--evaluate), both estimators close to it,
# the JSON keys, clients, local DP and --trust dist (distributed DP) accepted, no raw-data value
# without --evaluate, every
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

# --trust dist (issue 41): each client's counts in B public buckets plus its share of one discrete
# Laplace(1/ε) per bucket, summed modulo 2^bits. At ε = 3 the estimate is within 0.02 of the exact
# D_TV (340 items in ≥ 1,024 buckets: few collisions; measured +0.003 and −0.005); read as
# unsigned words, every negative noise share would be ≈ 2^32 events and the estimate ≈ 1. The
# secure sum is the clear one bit for bit (same seeded noise); B and the bytes per device follow
# --budget and --bits.
foreach(case "4;--clients;4" "4s;--clients;4;--secure" "64;--clients;4;--bits;64;--buckets;1024"
        "b;--clients;2;--budget;40960")
  list(POP_FRONT case name)
  execute_process(COMMAND ${TOOL} --p ${OUT}/P.txt --q ${OUT}/Q.txt --trust dist --epsilon 3
                          ${case} --evaluate --noise-seed 1 --json
                  RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "fedstat-tv --trust dist ${case} failed: ${err}")
  endif()
  foreach(key tv exact error buckets bytes privacy params)
    string(JSON value ERROR_VARIABLE missing GET "${json}" ${key})
    if(missing)
      message(FATAL_ERROR "fedstat-tv --trust dist --json has no '${key}': ${json}")
    endif()
  endforeach()
  string(JSON error GET "${json}" error)
  expect_close(${error} 0 0.02 "dist error with ${case}")
  string(JSON tv_${name} GET "${json}" tv)
  string(JSON buckets_${name} GET "${json}" buckets)
  string(JSON bytes_${name} GET "${json}" bytes)
endforeach()
if(NOT tv_4 STREQUAL tv_4s)
  message(FATAL_ERROR "--trust dist --secure changed the estimate: ${tv_4} vs ${tv_4s}")
endif()
if(NOT buckets_4 EQUAL 40960 OR NOT bytes_4 EQUAL 163840 OR NOT bytes_64 EQUAL 8192
   OR NOT buckets_b EQUAL 10240 OR NOT bytes_b EQUAL 40960)
  message(FATAL_ERROR "dist buckets/bytes: ${buckets_4}/${bytes_4}, 64-bit ${bytes_64}, "
                      "budget 40960 ${buckets_b}/${bytes_b}")
endif()
execute_process(COMMAND ${TOOL} --p ${OUT}/P.txt --q ${OUT}/Q.txt --trust dist --epsilon 3 --json
                RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
string(JSON exact ERROR_VARIABLE missing GET "${json}" exact)
string(JSON privacy GET "${json}" privacy)
if(NOT rc EQUAL 0 OR NOT missing OR NOT privacy MATCHES "distributed DP: epsilon 3 per event")
  message(FATAL_ERROR "fedstat-tv --trust dist release printed raw-data values: ${json}${err}")
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
expect_failure("--trust dist needs --epsilon" --trust dist)
expect_failure("--trust.*not in" --trust central)
expect_failure("--rows is a sketch option" --trust dist --epsilon 3 --rows 3)
expect_failure("--domain is a sketch option" --trust dist --epsilon 3 --domain 400)
expect_failure("--buckets.*from 1 to 4194304" --trust dist --epsilon 3 --buckets 0)
expect_failure("--buckets.*from 1 to 4194304" --trust dist --epsilon 3 --buckets 4194305)
expect_failure("--bits must be 32 or 64" --trust dist --epsilon 3 --bits 48)
expect_failure("--bits.*whole number" --trust dist --epsilon 3 --bits nan)
expect_failure("--max-events.*whole number" --trust dist --epsilon 3 --max-events -1)
expect_failure("noise scale T" --trust dist --epsilon 0.001 --max-events 100000)
expect_failure("--buckets is for --trust dist only" --buckets 100)
expect_failure("--max-events is for --trust dist only" --epsilon 3 --max-events 10)
expect_failure("--trust none adds no noise" --trust none --epsilon 3)
expect_failure("--trust local needs --epsilon" --trust local)
expect_failure("give --clients >= 2" --trust dist --epsilon 3 --secure)

execute_process(COMMAND ${TOOL} --p ${OUT}/P.txt --q ${OUT}/bad.txt RESULT_VARIABLE rc
                ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "bad.txt:2: expected a count")
  message(FATAL_ERROR "fedstat-tv accepted or misreported a malformed file: ${err}")
endif()
message(STATUS "fedstat-tv: estimates near the exact D_TV, JSON keys, clients, local DP, dist, "
               "errors")
