# cmake -DTOOL=<fedstat-kl> -DOUT=<dir> -P kl_cli_test.cmake
# fedstat-kl end to end: the exact value against a hand sum (--evaluate), JSON keys, every trust
# model, the documented refusals and warnings (malformed file, zero mass under none, mass outside
# the support), a count below 2 answered under trusted, no raw-data value in a release, and every
# privacy parameter and size argument refused when not finite and in range.
file(MAKE_DIRECTORY ${OUT})
file(WRITE ${OUT}/PI.txt "1 40\n2 30\n3 15\n4 10\n5 5\n")
file(WRITE ${OUT}/P.txt "# five items\n1 200\n2 300\n3 250\n4 150\n5 100\n")
file(WRITE ${OUT}/P_missing.txt "1 200\n2 300\n3 250\n4 150\n")
file(WRITE ${OUT}/P_outside.txt "1 200\n2 300\n3 250\n4 150\n5 100\n77 1000\n")
file(WRITE ${OUT}/P_once.txt "1 200\n2 300\n3 250\n4 150\n5 1\n")
file(WRITE ${OUT}/P_bad.txt "1 200\n2 x\n")

function(run_tool out_var)
  execute_process(COMMAND ${TOOL} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "fedstat-kl ${ARGN} failed (${rc}): ${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

function(expect_failure pattern)
  expect_refusal("fedstat-kl ${ARGN}" "${pattern}" COMMAND ${TOOL} ${ARGN})
endfunction()

include(${CMAKE_CURRENT_LIST_DIR}/cli_helpers.cmake)

# Π against itself: both the estimate and the exact value are 0.
run_tool(json --pi ${OUT}/PI.txt --p ${OUT}/PI.txt --clients 3 --model none --evaluate --json)
string(JSON estimate GET "${json}" estimate)
string(JSON exact GET "${json}" exact)
expect_close(${estimate} 0 1e-12 "estimate of D(PI||PI)")
expect_close(${exact} 0 1e-12 "exact D(PI||PI)")

# 0.4·ln 2 + 0.15·ln 0.6 + 0.1·ln(2/3) + 0.05·ln 0.5 = 0.1254312...
run_tool(json --pi ${OUT}/PI.txt --p ${OUT}/P.txt --T 4000 --model none --evaluate --json)
foreach(key estimate exact model T lambda error)
  string(JSON value ERROR_VARIABLE missing GET "${json}" ${key})
  if(missing)
    message(FATAL_ERROR "fedstat-kl --json has no '${key}': ${json}")
  endif()
endforeach()
string(JSON exact GET "${json}" exact)
expect_close(${exact} 0.1254312 1e-6 "exact D(PI||P)")
string(JSON model GET "${json}" model)
string(JSON T GET "${json}" T)
if(NOT model STREQUAL "none" OR NOT T EQUAL 4000)
  message(FATAL_ERROR "fedstat-kl --json: model ${model}, T ${T}")
endif()

foreach(model trusted tagg dist)
  run_tool(json --pi ${OUT}/PI.txt --p ${OUT}/P.txt --model ${model} --epsilon 1 --json)
  string(JSON got GET "${json}" model)
  if(NOT got STREQUAL model)
    message(FATAL_ERROR "fedstat-kl --model ${model} reported ${got}")
  endif()
  # A release carries nothing computed from the raw data (not even the time taken), and its noise
  # comes from the CSPRNG.
  string(JSON noise GET "${json}" noise)
  if(NOT noise STREQUAL "csprng")
    message(FATAL_ERROR "fedstat-kl --model ${model}: noise from ${noise}, not the CSPRNG")
  endif()
  foreach(key exact error mse support_mass warnings seconds)
    string(JSON value ERROR_VARIABLE missing GET "${json}" ${key})
    if(NOT missing)
      message(FATAL_ERROR "fedstat-kl --model ${model} without --evaluate printed '${key}'")
    endif()
  endforeach()
endforeach()
# Trusted: the estimate is a multiple of the public grid it reports.
run_tool(json --pi ${OUT}/PI.txt --p ${OUT}/P.txt --model trusted --epsilon 1 --json)
string(JSON estimate GET "${json}" estimate)
string(JSON grid GET "${json}" grid)
execute_process(COMMAND /usr/bin/env awk -v e=${estimate} -v g=${grid}
                "BEGIN { k = e / g; exit !(g > 0 && k == int(k)) }" RESULT_VARIABLE on_grid)
if(NOT on_grid EQUAL 0)
  message(FATAL_ERROR "fedstat-kl trusted estimate ${estimate} is not on its grid ${grid}")
endif()
# Dist through a real secure-aggregation session gives the same estimate as the clear sum (with
# the same seeded noise: a measurement, so --evaluate).
run_tool(clear --pi ${OUT}/PI.txt --p ${OUT}/P.txt --model dist --clients 3 --evaluate
         --noise-seed 4 --json)
run_tool(secure --pi ${OUT}/PI.txt --p ${OUT}/P.txt --model dist --clients 3 --secure --evaluate
         --noise-seed 4 --json)
string(JSON clear_estimate GET "${clear}" estimate)
string(JSON secure_estimate GET "${secure}" estimate)
if(NOT clear_estimate STREQUAL secure_estimate)
  message(FATAL_ERROR "--secure changed the estimate: ${clear_estimate} vs ${secure_estimate}")
endif()
run_tool(text --pi ${OUT}/PI.txt --p ${OUT}/P.txt --model dist --runs 3 --evaluate)
if(NOT text MATCHES "mse " OR NOT text MATCHES "Skellam mu")
  message(FATAL_ERROR "fedstat-kl --runs 3 printed: ${text}")
endif()

expect_failure("P_bad.txt:2: expected a count" --pi ${OUT}/PI.txt --p ${OUT}/P_bad.txt)
expect_failure("no mass at sampled point 5"
               --pi ${OUT}/PI.txt --p ${OUT}/P_missing.txt --T 500 --model none)
# A count of 1 at a sampled point is answered (clamped at 2), not refused: a refusal would depend
# on that one record.
run_tool(text --pi ${OUT}/PI.txt --p ${OUT}/P_once.txt --T 500 --model trusted --clients 1)
if(NOT text MATCHES "estimate ")
  message(FATAL_ERROR "fedstat-kl trusted with a count of 1 printed: ${text}")
endif()
# Privacy parameters and sizes: refused when not finite and in range, never silently ignored.
expect_failure("--model none adds no noise"
               --pi ${OUT}/PI.txt --p ${OUT}/P.txt --model none --epsilon 1)
expect_failure("--model none adds no noise"
               --pi ${OUT}/PI.txt --p ${OUT}/P.txt --model none --delta 1e-6)
expect_failure("--noise-seed makes the noise recomputable"
               --pi ${OUT}/PI.txt --p ${OUT}/P.txt --noise-seed 3)
expect_failure("--rate x --clients must be at least 1"
               --pi ${OUT}/PI.txt --p ${OUT}/P.txt --rate 0.001 --clients 10)
expect_failure("--lambda.*\\[-1000, 1000\\]" --pi ${OUT}/PI.txt --p ${OUT}/P.txt --lambda 1001)
foreach(bad nan -1 0 inf)
  expect_failure("--epsilon.*finite number in \\(0, inf\\)"
                 --pi ${OUT}/PI.txt --p ${OUT}/P.txt --model trusted --epsilon ${bad})
endforeach()
foreach(bad nan 0 1 -0.5)
  expect_failure("--delta.*finite number in \\(0, 1\\)"
                 --pi ${OUT}/PI.txt --p ${OUT}/P.txt --model trusted --delta ${bad})
  expect_failure("--tau.*finite number in \\(0, 1\\)"
                 --pi ${OUT}/PI.txt --p ${OUT}/P.txt --model dist --tau ${bad})
endforeach()
expect_failure("--lambda.*\\[-1000, 1000\\]" --pi ${OUT}/PI.txt --p ${OUT}/P.txt --lambda inf)
expect_failure("--rate.*in \\(0, 1\\]" --pi ${OUT}/PI.txt --p ${OUT}/P.txt --rate nan)
expect_failure("--T.*from 1 to 1000000" --pi ${OUT}/PI.txt --p ${OUT}/P.txt --T 4294967295)
expect_failure("--runs.*from 1 to 10000"
               --pi ${OUT}/PI.txt --p ${OUT}/P.txt --runs 4294967295 --evaluate)
expect_failure("--clients.*from 1 to 100000" --pi ${OUT}/PI.txt --p ${OUT}/P.txt --clients 0)
expect_failure("--runs repeats the release" --pi ${OUT}/PI.txt --p ${OUT}/P.txt --runs 3)
expect_failure("at most 10\\^8" --pi ${OUT}/PI.txt --p ${OUT}/P.txt --T 1000000 --clients 1000)
expect_failure("unknown model 'central'" --pi ${OUT}/PI.txt --p ${OUT}/P.txt --model central)
expect_failure("epsilon < 1" --pi ${OUT}/PI.txt --p ${OUT}/P.txt --model trusted --epsilon 2
               --calibration classical)

# Zero mass under dist is clamped, but the tool still says the divergence is infinite.
run_tool(json --pi ${OUT}/PI.txt --p ${OUT}/P_missing.txt --model dist --evaluate --json)
string(JSON exact TYPE "${json}" exact)
string(JSON warning GET "${json}" warnings 0)
if(NOT exact STREQUAL "NULL" OR NOT warning MATCHES "infinite")
  message(FATAL_ERROR "fedstat-kl with P missing an item: exact ${exact}, warning ${warning}")
endif()
run_tool(json --pi ${OUT}/PI.txt --p ${OUT}/P_outside.txt --model none --evaluate --json)
string(JSON warning GET "${json}" warnings 0)
string(JSON mass GET "${json}" support_mass)
expect_close(${mass} 0.5 1e-12 "P(supp PI)")
if(NOT warning MATCHES "outside the reference's support")
  message(FATAL_ERROR "fedstat-kl did not warn about mass outside the support: ${json}")
endif()
message(STATUS "fedstat-kl: exact value, JSON, models, refusals and warnings as documented")
