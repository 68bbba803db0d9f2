# Shared by the command-line tests (include() it): expect_close(value expected tolerance what)
# fails unless |value − expected| ≤ tolerance (absolute), compared with awk in floating point.
function(expect_close value expected tolerance what)
  execute_process(COMMAND /usr/bin/env awk -v a=${value} -v b=${expected} -v t=${tolerance}
                  "BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }" RESULT_VARIABLE close)
  if(NOT close EQUAL 0)
    message(FATAL_ERROR "${what}: ${value}, expected ${expected} ± ${tolerance}")
  endif()
endfunction()
