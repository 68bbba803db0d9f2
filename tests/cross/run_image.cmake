# cmake -DEMULATOR=<qemu command|arg|arg...> -DIMAGE=<elf> -P run_image.cmake
# Runs a bare-metal image and passes only if it exits 0 AND printed its closing line
# "selftest: N passed, 0 failed" with N > 0: an image that silently does nothing (e.g. .data not
# copied, output lost) must not pass.
string(REPLACE "|" ";" _emulator "${EMULATOR}")
execute_process(COMMAND ${_emulator} ${IMAGE}
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err TIMEOUT 240)
message(NOTICE "${_out}")
if(_err)
  message(NOTICE "stderr: ${_err}")
endif()
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "bare-metal image exited with status '${_rc}' (the number of failed checks, "
                      "or an emulator error)")
endif()
if(SUMMARY)  # another image's closing line (e.g. the cost image's "cost: done")
  if(NOT _out MATCHES "${SUMMARY}")
    message(FATAL_ERROR "bare-metal image exited 0 but did not print '${SUMMARY}'")
  endif()
elseif(NOT _out MATCHES "selftest: [1-9][0-9]* passed, 0 failed")
  message(FATAL_ERROR "bare-metal image exited 0 but did not print its closing summary line")
endif()
