# cmake -DBENCH=<fedstat_skellam_stream_bench> -P skellam_stream_smoke.cmake
# One short run (--n 20000 --reps 1 --json) must succeed and print exactly three JSON lines in the
# shared format (../shared/bench/README.md), "bench":"skellam", one per lambda = 10, 1e4, 1e6 in
# that order, with the shapes numpy_skellam.py prints ("lambda=%g"); a bad --n is refused.
if(NOT BENCH)
  message(FATAL_ERROR
          "usage: cmake -DBENCH=<fedstat_skellam_stream_bench> -P skellam_stream_smoke.cmake")
endif()

execute_process(COMMAND ${BENCH} --n 20000 --reps 1 --json RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err TIMEOUT 50)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fedstat_skellam_stream_bench --n 20000 --reps 1 --json failed (exit ${rc}): "
                      "${err}${out}")
endif()
string(REGEX REPLACE "\n$" "" trimmed "${out}")
string(REPLACE "\n" ";" lines "${trimmed}")
list(LENGTH lines count)
if(NOT count EQUAL 3)
  message(FATAL_ERROR "expected 3 JSON lines on stdout, got ${count}:\n${out}")
endif()
set(index 0)
foreach(lambda_shape "10;lambda=10" "10000;lambda=10000" "1000000;lambda=1e\\+06")
  list(GET lambda_shape 0 lambda)
  list(GET lambda_shape 1 shape)
  list(GET lines ${index} line)
  set(pattern "^{\"anchor\":\"fedstat\",\"bench\":\"skellam\",\"params\":{\"lambda\":${lambda},")
  string(APPEND pattern "\"shape\":\"${shape}\",\"method\":\"(split|difference)\",[^{}]*},")
  string(APPEND pattern "\"ops\":20000,\"unit\":\"sample\",\"reps\":1,\"t_median_s\":[^,]+,")
  string(APPEND pattern "\"t_min_s\":[^,]+,\"t_max_s\":[^,]+,\"per_s_median\":[^,]+,")
  string(APPEND pattern "\"per_s_best\":[^,]+,\"per_s_worst\":[^,]+,\"ns_per_op_median\":[^,]+,")
  string(APPEND pattern "\"fp\":null}$")
  if(NOT line MATCHES "${pattern}")
    message(FATAL_ERROR "line ${index} is not the skellam line for lambda = ${lambda}:\n${line}")
  endif()
  math(EXPR index "${index} + 1")
endforeach()

execute_process(COMMAND ${BENCH} --n 0 --json RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err TIMEOUT 10)
if(NOT rc EQUAL 2 OR NOT out STREQUAL "" OR NOT err MATCHES "bad argument '--n'")
  message(FATAL_ERROR "--n 0 was not refused (exit ${rc}, stdout '${out}', stderr '${err}')")
endif()
