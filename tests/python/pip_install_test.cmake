# cmake -DPYTHON=<python3> -DSOURCE=<repository> -DVERSION=<project version> -DOUT=<dir>
#       -P pip_install_test.cmake
# `pip install .` as docs/python.md gives it (issue 44 item 4): offline (--no-index: nothing from
# PyPI; --no-build-isolation: Debian's setuptools and wheel), into a venv that sees Debian's
# numpy (--system-site-packages; Debian's pip refuses /usr, PEP 668). Then the installed module
# imports from the venv and its __version__, like the distribution's, is the CMake project's.
# setup.py builds in <SOURCE>/build/pip-<tag>: a rerun compiles only what changed, and a ccache
# in the environment serves a first build from the host-release preset's objects.
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
set(venv ${OUT}/venv)

function(run what)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=LD_PRELOAD --unset=PYTHONPATH
                          --unset=ASAN_OPTIONS PIP_NO_CACHE_DIR=1 ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

string(TIMESTAMP start "%s")
run("python3 -m venv" ${PYTHON} -m venv --system-site-packages ${venv})
run("pip install" ${venv}/bin/pip install --no-build-isolation --no-index ${SOURCE})
string(TIMESTAMP stop "%s")
math(EXPR seconds "${stop} - ${start}")
message(STATUS "venv and pip install: ${seconds} s")

# (no ';' in the program: it would split the argument into a CMake list)
run("import fedstat" ${venv}/bin/python -c "import fedstat\nprint(fedstat.__version__)\nprint(fedstat.__file__)")
string(REPLACE "\n" ";" lines "${out}")
list(GET lines 0 version)
list(GET lines 1 where)
if(NOT version STREQUAL VERSION)
  message(FATAL_ERROR "the installed fedstat.__version__ is '${version}', want '${VERSION}'")
endif()
file(REAL_PATH ${venv} venv_real)
string(FIND "${where}" "${venv_real}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "import fedstat found ${where}, not the module installed in ${venv_real}")
endif()
run("pip show" ${venv}/bin/pip show fedstat)
if(NOT out MATCHES "\nVersion: ${VERSION}\n")
  message(FATAL_ERROR "pip show fedstat: want Version: ${VERSION}:\n${out}")
endif()
message(STATUS "fedstat ${version} installed in ${where}")
