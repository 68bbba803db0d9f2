# docs.rules_fire (label docs): the API-documentation checks (cmake/run_api_docs.cmake) fail on a
# header that breaks each rule (tests/docs/rule_breaker.h), naming every breach, and pass the one
# function that follows the rules. Without this, a check that never fires would look like success.
#   cmake -DDOXYGEN=... -DPYTHON=... -DSOURCE_DIR=<fedstat> -DTEMPLATE=<Doxyfile.in>
#         -DWORK_DIR=<scratch> -P rules_fire_test.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(PROJECT_VERSION 0)
set(PROJECT_SOURCE_DIR "${SOURCE_DIR}")
set(FEDSTAT_API_DOCS_DIR "${WORK_DIR}")
set(_header "${SOURCE_DIR}/tests/docs/rule_breaker.h")
set(FEDSTAT_API_DOCS_INPUT "${_header}")
configure_file("${TEMPLATE}" "${WORK_DIR}/Doxyfile" @ONLY)
file(WRITE "${WORK_DIR}/headers.txt" "${_header}\n")
execute_process(COMMAND "${CMAKE_COMMAND}" -DDOXYGEN=${DOXYGEN} -DPYTHON=${PYTHON}
                        -DDOCS_DIR=${WORK_DIR} -DSOURCE_DIR=${SOURCE_DIR}
                        -DCHECKER=${SOURCE_DIR}/scripts/check_api_docs.py
                        -P "${SOURCE_DIR}/cmake/run_api_docs.cmake"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("run_api_docs on rule_breaker.h (exit ${rc}):\n${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "the documentation checks passed a header that breaks every rule")
endif()
# Doxygen's warnings are errors, so its run fails first: then run the project checker on the XML
# it wrote anyway, to see rules 2 and 3 fire too.
if(NOT err MATCHES "undocumented_function" OR NOT err MATCHES "not[ \n]+documented")
  message(FATAL_ERROR "Doxygen did not report the undocumented function (rule 1)")
endif()
execute_process(COMMAND "${PYTHON}" "${SOURCE_DIR}/scripts/check_api_docs.py" --root
                        "${SOURCE_DIR}" "${WORK_DIR}/xml" "${_header}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("check_api_docs (exit ${rc}):\n${out}${err}")
foreach(_expected "the file documentation has no @memory"
                  "fallible_without_errors returns Status but has no @errors section"
                  "fallible_with_vague_errors's @errors names no status code")
  if(rc EQUAL 0 OR NOT out MATCHES "${_expected}")
    message(FATAL_ERROR "check_api_docs did not report: ${_expected}")
  endif()
endforeach()
if(out MATCHES "fallible_with_errors[^_]" OR out MATCHES "no @paper")
  message(FATAL_ERROR "check_api_docs reported something that follows the rules")
endif()
