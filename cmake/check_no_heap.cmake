# cmake -DNM=<nm> [-DNM_TARGET=<bfd target>] -DARCHIVE=<lib.a> -P check_no_heap.cmake
# Fails (exit code 1) when the archive has an undefined reference to the heap or to exceptions.
# NM_TARGET (e.g. elf32-little) makes nm read fat LTO objects' machine code, not their bytecode.
if(NOT NM OR NOT ARCHIVE)
  message(FATAL_ERROR "usage: cmake -DNM=<nm> -DARCHIVE=<lib.a> -P check_no_heap.cmake")
endif()
set(_target_arg "")
if(NM_TARGET)
  set(_target_arg "--target=${NM_TARGET}")
endif()
execute_process(COMMAND "${NM}" -u ${_target_arg} "${ARCHIVE}" OUTPUT_VARIABLE _nm RESULT_VARIABLE _rc
                ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "heap check: '${NM} -u ${ARCHIVE}' failed: ${_err}")
endif()
# C allocation (and newlib's reentrant forms), C++ operator new/new[]/delete/delete[] in every
# mangling (size_t is 'm' on LP64, 'j' on ILP32; aligned and nothrow variants), exceptions.
set(_forbidden
  "^(malloc|calloc|realloc|free|aligned_alloc|posix_memalign|memalign|valloc|strdup|strndup)$"
  "^_(malloc|calloc|realloc|free)_r$"
  "^_Zn[wa][jm]"
  "^_Zd[la]Pv"
  "^__cxa_(throw|allocate_exception|rethrow|begin_catch)$")
string(REPLACE "\n" ";" _lines "${_nm}")
set(_bad "")
foreach(_line IN LISTS _lines)
  string(STRIP "${_line}" _line)
  if(_line MATCHES "^U (.+)$")
    set(_sym "${CMAKE_MATCH_1}")
    foreach(_re IN LISTS _forbidden)
      if(_sym MATCHES "${_re}")
        list(APPEND _bad "${_sym}")
      endif()
    endforeach()
  endif()
endforeach()
if(_bad)
  list(REMOVE_DUPLICATES _bad)
  string(REPLACE ";" ", " _bad "${_bad}")
  # NOTICE prints the line as it is (FATAL_ERROR re-wraps text), so tools can grep it.
  message(NOTICE "heap check FAILED: ${ARCHIVE} references ${_bad}")
  message(FATAL_ERROR
    "SDK code must not allocate or throw: take memory from the caller (an Arena or a buffer) and "
    "return a Status. Find the object with: ${NM} -A -u ${ARCHIVE} | grep -E '<symbol>'")
endif()
message(STATUS "heap check passed: ${ARCHIVE} references no heap or exception symbols")
