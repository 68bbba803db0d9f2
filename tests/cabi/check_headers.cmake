# The C ABI's headers compile on their own (each one first in its translation unit) as C99 and as
# C++ (11 and 17), with -Wall -Wextra -Werror -pedantic: what a C program, a C++ program and a
# binding generator each see.
#   cmake -DC_COMPILER=<cc> -DCXX_COMPILER=<c++> -DINCLUDE_DIR=<capi/include> -DWORK_DIR=<dir>
#         -P check_headers.cmake
foreach(_v C_COMPILER CXX_COMPILER INCLUDE_DIR WORK_DIR)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "check_headers.cmake: -D${_v}=... is required")
  endif()
endforeach()
file(MAKE_DIRECTORY "${WORK_DIR}")
file(GLOB _headers RELATIVE "${INCLUDE_DIR}" "${INCLUDE_DIR}/fedstat/fedstat.h"
     "${INCLUDE_DIR}/fedstat/c/*.h")
list(SORT _headers)
set(_checked 0)
foreach(_h IN LISTS _headers)
  string(MAKE_C_IDENTIFIER "${_h}" _name)
  # Each header alone, then used: a declaration of every handle type must be reachable.
  file(WRITE "${WORK_DIR}/${_name}.c" "#include <${_h}>\nint fedstat_header_check_${_name};\n")
  foreach(_mode "C;-std=c99" "CXX;-std=c++11" "CXX;-std=c++17")
    list(GET _mode 0 _lang)
    list(GET _mode 1 _std)
    set(_compiler "${C_COMPILER}")
    set(_x -x c)
    if(_lang STREQUAL "CXX")
      set(_compiler "${CXX_COMPILER}")
      set(_x -x c++)
    endif()
    execute_process(
      COMMAND "${_compiler}" ${_x} ${_std} -pedantic -Wall -Wextra -Werror -fsyntax-only
              "-I${INCLUDE_DIR}" "${WORK_DIR}/${_name}.c"
      RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
    if(NOT _rc EQUAL 0)
      message(FATAL_ERROR "<${_h}> does not compile alone as ${_std}:\n${_out}${_err}")
    endif()
    math(EXPR _checked "${_checked} + 1")
  endforeach()
endforeach()
list(LENGTH _headers _n)
if(_n LESS 8)
  message(FATAL_ERROR "check_headers.cmake: found only ${_n} headers under ${INCLUDE_DIR}")
endif()
message(STATUS "C ABI headers: ${_n} headers, ${_checked} compiles (C99, C++11, C++17) passed")
