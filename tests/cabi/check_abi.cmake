# The C ABI's drift check: the functions libfedstat_c.a exports (nm -g --defined-only, text
# symbols named fedstat_*) must be exactly the committed list tests/cabi/fedstat_abi.symbols, and
# exactly the functions the headers declare. A changed signature, struct or constant keeps every
# name, so the list also holds a SHA-256 of the headers' declarations (comments and whitespace
# removed): it changes with any of them. An app or binding compiled against one list breaks,
# or silently calls something else, when a function disappears or changes meaning; so a change to
# the list must be deliberate: this test fails until the list is updated in the same commit.
#   cmake -DNM=<nm> -DARCHIVE=<libfedstat_c.a> -DSYMBOLS=<fedstat_abi.symbols>
#         -DHEADERS_DIR=<capi/include/fedstat> [-DUPDATE=ON] -P check_abi.cmake
# With -DUPDATE=ON it rewrites SYMBOLS from the archive instead (the build target
# fedstat_abi_symbols_update does that).
cmake_minimum_required(VERSION 3.25)  # IN_LIST (policy CMP0057) in script mode

# out = the items of list `a` that are not in list `b` (both given by variable name).
function(difference out a b)
  set(_r "")
  foreach(_x IN LISTS ${a})
    if(NOT _x IN_LIST ${b})
      list(APPEND _r "${_x}")
    endif()
  endforeach()
  set(${out} "${_r}" PARENT_SCOPE)
endfunction()

foreach(_v NM ARCHIVE SYMBOLS HEADERS_DIR)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "check_abi.cmake: -D${_v}=... is required")
  endif()
endforeach()

execute_process(COMMAND "${NM}" -g --defined-only "${ARCHIVE}" RESULT_VARIABLE _rc
                OUTPUT_VARIABLE _nm ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "check_abi.cmake: ${NM} failed on ${ARCHIVE}: ${_err}")
endif()
string(REGEX MATCHALL "[ \t][TW][ \t]+fedstat_[A-Za-z0-9_]+" _lines "${_nm}")
set(_exported "")
foreach(_l IN LISTS _lines)
  string(REGEX REPLACE ".*[ \t](fedstat_[A-Za-z0-9_]+)$" "\\1" _name "${_l}")
  list(APPEND _exported "${_name}")
endforeach()
list(REMOVE_DUPLICATES _exported)
list(SORT _exported)
list(LENGTH _exported _count)

set(_header "# The C ABI's exported functions (libfedstat_c.a, nm -g --defined-only, fedstat_*), one a")
string(APPEND _header " line, sorted.\n# Checked by the test cabi.abi_symbols (tests/cabi/check_abi.cmake).")
string(APPEND _header " Change it only on purpose: see\n# docs/c_abi.md, \"Changing the ABI\".\n")
# The headers' declarations (comments removed first: they name functions in prose).
file(GLOB _headers "${HEADERS_DIR}/fedstat.h" "${HEADERS_DIR}/c/*.h")
list(SORT _headers)
set(_declared "")
set(_declarations "")
foreach(_h IN LISTS _headers)
  file(READ "${_h}" _text)
  string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" "" _text "${_text}")
  string(REGEX REPLACE "[ \t\r\n]+" " " _text "${_text}")
  get_filename_component(_file "${_h}" NAME)
  string(APPEND _declarations "${_file}: ${_text}\n")
  # A function's name is followed directly by "(" ("fedstat_status (*send)(...)" is a member).
  string(REGEX MATCHALL "fedstat_[a-z0-9_]+\\(" _calls "${_text}")
  foreach(_c IN LISTS _calls)
    string(REGEX REPLACE "\\($" "" _c "${_c}")
    list(APPEND _declared "${_c}")
  endforeach()
endforeach()
list(REMOVE_DUPLICATES _declared)
list(SORT _declared)
string(SHA256 _digest "${_declarations}")

if(UPDATE)
  string(REPLACE ";" "\n" _body "${_exported}")
  file(WRITE "${SYMBOLS}" "${_header}declarations-sha256 ${_digest}\n${_body}\n")
  message(STATUS "wrote ${_count} symbols and the declarations' digest to ${SYMBOLS}")
  return()
endif()

file(STRINGS "${SYMBOLS}" _committed REGEX "^fedstat_")
file(STRINGS "${SYMBOLS}" _committed_digest REGEX "^declarations-sha256 ")
string(REPLACE "declarations-sha256 " "" _committed_digest "${_committed_digest}")
list(SORT _committed)
difference(_added _exported _committed)
difference(_removed _committed _exported)

difference(_undeclared _exported _declared)
difference(_unexported _declared _exported)

set(_digest_changed FALSE)
if(NOT _committed_digest STREQUAL _digest)
  set(_digest_changed TRUE)
endif()
if(_added OR _removed OR _undeclared OR _unexported OR _digest_changed)
  set(_report "")
  if(_digest_changed)
    string(APPEND _report "\n  * the headers' declarations changed (a signature, struct, enum or "
                          "constant): sha256 ${_digest}, committed '${_committed_digest}'")
  endif()
  foreach(_s IN LISTS _added)
    string(APPEND _report "\n  + ${_s}  (exported, not in ${SYMBOLS})")
  endforeach()
  foreach(_s IN LISTS _removed)
    string(APPEND _report "\n  - ${_s}  (in ${SYMBOLS}, no longer exported)")
  endforeach()
  foreach(_s IN LISTS _undeclared)
    string(APPEND _report "\n  ! ${_s}  (exported but declared in no header of ${HEADERS_DIR})")
  endforeach()
  foreach(_s IN LISTS _unexported)
    string(APPEND _report "\n  ! ${_s}  (declared in a header but not exported)")
  endforeach()
  message(FATAL_ERROR
    "C ABI drift: the exported functions or declarations differ from the committed list:${_report}\n"
    "If the change is intended: removing or changing a function breaks every app and binding "
    "built against the old list, so it needs a new minor version before 1.0 (a major one after) "
    "and a CHANGELOG.md entry; adding one is a compatible change (CHANGELOG 'Added'). Then "
    "regenerate the list and commit it with the change:\n"
    "  cmake --build <build dir> --target fedstat_abi_symbols_update\n"
    "  git add tests/cabi/fedstat_abi.symbols\n"
    "A ! line means a header and the library disagree: fix the code, not the list.")
endif()
message(STATUS "C ABI: ${_count} exported functions, as committed and as declared; declarations "
               "sha256 ${_digest}")
