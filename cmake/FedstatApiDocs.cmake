# The API reference (docs/api/README.md): Doxygen over the installed public headers
# (FEDSTAT_PUBLIC_HEADERS, from FedstatPackage.cmake) and the C ABI's headers, with warnings as
# errors, then scripts/check_api_docs.py's rules (@memory and @paper per header, @errors per
# fallible function). Hosted builds only (the headers are the same everywhere; the bare-metal
# hooks header is added to the host's list).
#   cmake --build <build> --target fedstat_api_docs    -> <build>/docs/api/html/index.html
#   ctest -L docs     docs.api, and docs.rules_fire (the checks fire on tests/docs/rule_breaker.h)
if(CMAKE_CROSSCOMPILING)
  return()
endif()

set(_headers ${FEDSTAT_PUBLIC_HEADERS})
if(NOT "platform/baremetal/hooks.h" IN_LIST _headers)
  list(APPEND _headers platform/baremetal/hooks.h)
endif()
file(GLOB _c_headers RELATIVE "${PROJECT_SOURCE_DIR}" "${PROJECT_SOURCE_DIR}/capi/include/fedstat/*.h"
     "${PROJECT_SOURCE_DIR}/capi/include/fedstat/c/*.h")
list(APPEND _headers ${_c_headers})
list(SORT _headers)
set(FEDSTAT_API_DOCS_HEADERS "")
foreach(_h IN LISTS _headers)
  list(APPEND FEDSTAT_API_DOCS_HEADERS "${PROJECT_SOURCE_DIR}/${_h}")
endforeach()
set(FEDSTAT_API_DOCS_DIR "${PROJECT_BINARY_DIR}/docs/api")
list(JOIN FEDSTAT_API_DOCS_HEADERS " " FEDSTAT_API_DOCS_INPUT)
string(APPEND FEDSTAT_API_DOCS_INPUT " ${PROJECT_SOURCE_DIR}/docs/api/mainpage.dox")
configure_file("${PROJECT_SOURCE_DIR}/docs/api/Doxyfile.in" "${FEDSTAT_API_DOCS_DIR}/Doxyfile"
               @ONLY)
file(WRITE "${FEDSTAT_API_DOCS_DIR}/headers.txt" "")
foreach(_h IN LISTS FEDSTAT_API_DOCS_HEADERS)
  file(APPEND "${FEDSTAT_API_DOCS_DIR}/headers.txt" "${_h}\n")
endforeach()

find_program(FEDSTAT_DOXYGEN doxygen)
find_package(Python3 COMPONENTS Interpreter QUIET)
set(_run_docs ${CMAKE_COMMAND} -DDOXYGEN=${FEDSTAT_DOXYGEN} -DPYTHON=${Python3_EXECUTABLE}
    -DDOCS_DIR=${FEDSTAT_API_DOCS_DIR} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
    -DCHECKER=${PROJECT_SOURCE_DIR}/scripts/check_api_docs.py
    -P ${PROJECT_SOURCE_DIR}/cmake/run_api_docs.cmake)
add_custom_target(fedstat_api_docs COMMAND ${_run_docs} VERBATIM
                  COMMENT "Doxygen over the public headers (docs/api/README.md)")
if(FEDSTAT_BUILD_TESTS AND NOT FEDSTAT_FUZZ)  # the fuzz build runs its targets only
  add_test(NAME docs.api COMMAND ${_run_docs})
  # The checks fire: a header breaking each rule fails them, with every breach named.
  add_test(NAME docs.rules_fire
           COMMAND ${CMAKE_COMMAND} -DDOXYGEN=${FEDSTAT_DOXYGEN} -DPYTHON=${Python3_EXECUTABLE}
                   -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
                   -DTEMPLATE=${PROJECT_SOURCE_DIR}/docs/api/Doxyfile.in
                   -DWORK_DIR=${PROJECT_BINARY_DIR}/docs/rules_fire
                   -P ${PROJECT_SOURCE_DIR}/tests/docs/rules_fire_test.cmake)
  set_tests_properties(docs.api docs.rules_fire PROPERTIES LABELS "docs")
endif()
