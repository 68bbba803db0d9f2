# cmake -DVERSION=<project version> -DTOOLS="name=path|..." -DC_VERSION=<program>
#       [-DPYTHON=<python3> -DPYTHON_ENV="VAR=value|..."] -DSOURCE=<repository>
#       -DPACKAGE_DIR=<build>/package -P version_agreement_test.cmake
# One version everywhere (issue 44 item 5): every tool's --version ("<tool> <version>", the
# programs CMake builds under host_server/ and examples/, listed from the build, not by hand),
# the C ABI's fedstat_version(), the Python module's fedstat.__version__, the version pip installs
# (setup.py, read from CMakeLists.txt) and the pkg-config files' Version: all equal VERSION, the
# CMake project's (project(fedstat VERSION ...), the single source; nothing here hard-codes it).
set(failures "")
set(checked 0)
macro(fail text)
  string(APPEND failures "  ${text}\n")
endmacro()

string(REPLACE "|" ";" tools "${TOOLS}")
foreach(entry ${tools})
  string(REGEX MATCH "^([^=]+)=(.*)$" _ "${entry}")
  set(name ${CMAKE_MATCH_1})
  set(path ${CMAKE_MATCH_2})
  execute_process(COMMAND ${path} --version RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  string(REGEX MATCH "^[^\n]*" first "${out}")
  if(NOT rc EQUAL 0 OR NOT first MATCHES "^${name} ([^ ]+)")
    fail("${name} --version: exit ${rc}, printed '${out}${err}', want '${name} <version>'")
  elseif(NOT CMAKE_MATCH_1 STREQUAL VERSION)
    fail("${name} --version says ${CMAKE_MATCH_1}, the project is ${VERSION}")
  endif()
  math(EXPR checked "${checked} + 1")
endforeach()
if(checked LESS 10)
  fail("only ${checked} tools found: the list from the build is incomplete")
endif()

execute_process(COMMAND ${C_VERSION} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0 OR NOT out STREQUAL VERSION)
  fail("the C ABI's fedstat_version() is '${out}' (exit ${rc}), the project is ${VERSION}")
endif()

if(PYTHON)
  string(REPLACE "|" ";" python_env "${PYTHON_ENV}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${python_env} ${PYTHON} -c
                          "import fedstat; print(fedstat.__version__)"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0 OR NOT out STREQUAL VERSION)
    fail("fedstat.__version__ is '${out}' (exit ${rc}: ${err}), the project is ${VERSION}")
  endif()
  # What pip installs: setup.py's version (read from CMakeLists.txt).
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=LD_PRELOAD ${PYTHON} setup.py --version
                  WORKING_DIRECTORY ${SOURCE} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  string(REGEX MATCH "[^\n]+\n?$" last "${out}")
  string(STRIP "${last}" last)
  if(NOT rc EQUAL 0 OR NOT last STREQUAL VERSION)
    fail("setup.py --version (pip's) is '${last}' (exit ${rc}: ${err}), the project is ${VERSION}")
  endif()
endif()

file(GLOB pcs ${PACKAGE_DIR}/*.pc)
if(NOT pcs)
  fail("no pkg-config file in ${PACKAGE_DIR}")
endif()
foreach(pc ${pcs})
  file(STRINGS ${pc} line REGEX "^Version: ")
  if(NOT line STREQUAL "Version: ${VERSION}")
    fail("${pc}: '${line}', want 'Version: ${VERSION}'")
  endif()
endforeach()

# The release the CHANGELOG names last (its first "## [X.Y.Z]" heading below [Unreleased]) is
# the project's version: a bump without its CHANGELOG section, or the reverse, fails here.
file(STRINGS ${SOURCE}/CHANGELOG.md releases REGEX "^## \\[[0-9]+\\.[0-9]+\\.[0-9]+\\]")
list(GET releases 0 newest)
string(REGEX MATCH "[0-9]+\\.[0-9]+\\.[0-9]+" newest "${newest}")
if(NOT newest STREQUAL VERSION)
  fail("CHANGELOG.md's newest release is '${newest}', the project is ${VERSION}")
endif()

if(failures)
  message(FATAL_ERROR "versions disagree with the project's ${VERSION}:\n${failures}")
endif()
message(STATUS "${checked} tools, the C ABI, the Python module and pip, the pkg-config files and "
               "the CHANGELOG's newest release all say ${VERSION}")
