# Runs Doxygen (warnings are errors) and scripts/check_api_docs.py; see cmake/FedstatApiDocs.cmake.
# -DDOXYGEN=<doxygen> -DPYTHON=<python3> -DDOCS_DIR=<build>/docs/api -DCHECKER=<check_api_docs.py>
# -DSOURCE_DIR=<fedstat>
if(NOT DOXYGEN)
  message(FATAL_ERROR "doxygen not found: install Debian's doxygen (scripts/setup.sh does), then "
                      "configure again")
endif()
if(NOT PYTHON)
  message(FATAL_ERROR "python3 not found: scripts/setup.sh installs it")
endif()
file(REMOVE_RECURSE "${DOCS_DIR}/html" "${DOCS_DIR}/xml")
file(REMOVE "${DOCS_DIR}/warnings.txt")
execute_process(COMMAND "${DOXYGEN}" "${DOCS_DIR}/Doxyfile" WORKING_DIRECTORY "${DOCS_DIR}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(warnings "")
if(EXISTS "${DOCS_DIR}/warnings.txt")
  file(READ "${DOCS_DIR}/warnings.txt" warnings)
endif()
if(NOT rc EQUAL 0 OR NOT warnings STREQUAL "")
  message(FATAL_ERROR "Doxygen failed (exit ${rc}); every warning is an error "
                      "(docs/api/README.md):\n${warnings}${err}")
endif()
file(STRINGS "${DOCS_DIR}/headers.txt" headers)
execute_process(COMMAND "${PYTHON}" "${CHECKER}" --root "${SOURCE_DIR}" "${DOCS_DIR}/xml" ${headers}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the API documentation breaks the rules above (docs/api/README.md)")
endif()
file(GLOB_RECURSE pages "${DOCS_DIR}/html/*.html")
list(LENGTH pages n)
message("API reference: ${DOCS_DIR}/html/index.html (${n} pages)")
