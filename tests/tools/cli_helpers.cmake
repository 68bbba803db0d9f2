# Shared by the command-line tests (include() it): expect_close(value expected tolerance what)
# fails unless |value − expected| ≤ tolerance (absolute), compared with awk in floating point.
function(expect_close value expected tolerance what)
  execute_process(COMMAND /usr/bin/env awk -v a=${value} -v b=${expected} -v t=${tolerance}
                  "BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }" RESULT_VARIABLE close)
  if(NOT close EQUAL 0)
    message(FATAL_ERROR "${what}: ${value}, expected ${expected} ± ${tolerance}")
  endif()
endfunction()

# expect_refusal(what pattern [EMPTY_STDOUT] [KEEP_GOING] [TIMEOUT seconds] COMMAND tool args...)
# runs the command and fails unless it exits non-zero with stderr matching `pattern` (and, with
# EMPTY_STDOUT, prints nothing on stdout). A failure stops the script, or with KEEP_GOING is
# reported and the script goes on (so one run lists every option that was not refused).
function(expect_refusal what pattern)
  cmake_parse_arguments(R "EMPTY_STDOUT;KEEP_GOING" "TIMEOUT" "COMMAND" ${ARGN})
  set(timeout)
  if(R_TIMEOUT)
    set(timeout TIMEOUT ${R_TIMEOUT})
  endif()
  execute_process(COMMAND ${R_COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err ${timeout})
  if(rc EQUAL 0 OR NOT err MATCHES "${pattern}" OR (R_EMPTY_STDOUT AND NOT "${out}" STREQUAL ""))
    string(SUBSTRING "${out}" 0 200 head)
    set(level FATAL_ERROR)
    if(R_KEEP_GOING)
      set(level SEND_ERROR)
    endif()
    message(${level} "${what}: expected a refusal matching '${pattern}'"
                     " (non-zero exit, stderr; stdout empty: ${R_EMPTY_STDOUT}), got exit ${rc},"
                     " stdout '${head}', stderr '${err}'")
  endif()
endfunction()
