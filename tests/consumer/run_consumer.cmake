# The consumer test (label consumer): fedstat as a user gets it, for one target.
#   cmake -DSOURCE_DIR=<fedstat> -DBUILD_DIR=<fedstat build> -DWORK_DIR=<scratch> -DVERSION=<x.y.z>
#         -DPLATFORM=posix|baremetal -DGENERATOR=<g> [-DMAKE_PROGRAM=<p>] [-DBUILD_TYPE=<t>]
#         [-DTOOLCHAIN_FILE=<f> | -DC_COMPILER=<cc> -DCXX_COMPILER=<c++>] [-DEMULATOR=<cmd|arg|...>]
#         [-DPKG_CONFIG=<pkg-config>] [-DSERVER=<fedstat-server for the host>] -P run_consumer.cmake
# 1. installs BUILD_DIR into WORK_DIR/prefix (cmake --install) and checks what is there and what
#    must not be (internal headers);
# 2. configures tests/consumer against that prefix alone (find_package), builds it, runs it (under
#    the emulator when cross-compiled) and compares its output with the golden values every
#    architecture reproduces (tests/common/golden_vectors.h);
#    It does the same for the C ABI's C99 program (main.c, fedstat::c);
#    and it builds and runs examples/first_report (the first-integration walk-throughs' program);
# 3. with PKG_CONFIG: compiles and runs the same programs again from `pkg-config fedstat` (C++)
#    and `pkg-config fedstat-c` (C, linked by the C compiler) flags;
# 4. with SERVER (hosted): builds examples/report_to_server (find_package, and pkg-config
#    fedstat-c) and runs it against that fedstat-server over TLS-PSK, and with certificates
#    (mutual TLS) in a signed round (report_to_server_test.sh).
foreach(_v SOURCE_DIR BUILD_DIR WORK_DIR VERSION PLATFORM GENERATOR)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "run_consumer.cmake: -D${_v}=... is required")
  endif()
endforeach()
string(TIMESTAMP _t0 "%s")
set(_prefix "${WORK_DIR}/prefix")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

function(run what)  # run(<what> COMMAND ...): runs a command, fails the test on a non-zero exit
  execute_process(${ARGN} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "consumer: ${what} failed (${_rc}):\n${_out}\n${_err}")
  endif()
  set(run_output "${_out}" PARENT_SCOPE)
endfunction()

function(elapsed step)
  string(TIMESTAMP _now "%s")
  math(EXPR _s "${_now} - ${_t0}")
  message(STATUS "consumer: ${step} (${_s} s so far)")
endfunction()

# ---- 1. Install ------------------------------------------------------------------------------
run("cmake --install" COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${_prefix}")
set(_must
  lib/cmake/fedstat/fedstatConfig.cmake lib/cmake/fedstat/fedstatConfigVersion.cmake
  lib/cmake/fedstat/fedstatTargets.cmake lib/pkgconfig/fedstat.pc lib/libfedstat_sdk.a
  lib/libfedstat_c.a lib/pkgconfig/fedstat-c.pc include/fedstat/fedstat.h
  include/fedstat/c/base.h include/fedstat/c/client.h include/fedstat/c/tls.h
  include/fedstat/sdk/version.h include/fedstat/sdk/client/client.h
  include/fedstat/sdk/wire/envelope_codec.h include/fedstat/v1/envelope.pb.h
  include/fedstat/nanopb/pb.h include/fedstat/platform/platform.h)
set(_must_not
  include/fedstat/sdk/secagg/session_hash.h include/fedstat/platform/raw_storage.h
  include/fedstat/platform/blob_format.h
  include/fedstat/platform/baremetal/fedstat_mbedtls_config.h
  include/fedstat/sdk/secagg/secagg_client_internal.h include/fedstat/sdk/client/client_internal.h
  include/fedstat/sdk/sketch/shift_sketch_internal.h
  include/fedstat/sdk/noise/tabulated_poisson_internal.h)
if(PLATFORM STREQUAL "posix")
  list(APPEND _must lib/libfedstat_sdk_tls.a lib/pkgconfig/fedstat-tls.pc
                    include/fedstat/sdk/tls/tls_channel.h
                    include/fedstat/platform/posix/posix_platform.h)
  list(APPEND _must_not include/fedstat/platform/baremetal/hooks.h)
else()
  list(APPEND _must lib/libfedstat_mbedcrypto.a include/fedstat/platform/baremetal/hooks.h)
  list(APPEND _must_not include/fedstat/sdk/tls/tls_channel.h lib/libfedstat_sdk_tls.a
                        include/fedstat/platform/posix/posix_platform.h)
endif()
foreach(_f IN LISTS _must)
  if(NOT EXISTS "${_prefix}/${_f}")
    message(FATAL_ERROR "consumer: the install lacks ${_f}")
  endif()
endforeach()
foreach(_f IN LISTS _must_not)
  if(EXISTS "${_prefix}/${_f}")
    message(FATAL_ERROR "consumer: the install has ${_f}, an internal header")
  endif()
endforeach()
file(GLOB_RECURSE _sources "${_prefix}/*.cpp" "${_prefix}/*.c" "${_prefix}/*.in")
if(_sources)
  message(FATAL_ERROR "consumer: the install has sources or templates: ${_sources}")
endif()
file(READ "${_prefix}/include/fedstat/sdk/version.h" _version_h)
if(_version_h MATCHES "@" OR NOT _version_h MATCHES "FEDSTAT_VERSION_STRING \"${VERSION}\"")
  message(FATAL_ERROR "consumer: installed version.h is not filled in for ${VERSION}:\n${_version_h}")
endif()
file(READ "${_prefix}/lib/pkgconfig/fedstat.pc" _pc)
if(NOT _pc MATCHES "\nVersion: ${VERSION}\n")
  message(FATAL_ERROR "consumer: fedstat.pc does not carry version ${VERSION}:\n${_pc}")
endif()
# The version file: this version is accepted; the next breaking one (0.x: the next minor, from
# 1.0 the next major) and an older minor are not.
string(REGEX MATCH "^([0-9]+)\\.([0-9]+)" _ "${VERSION}")
set(_major "${CMAKE_MATCH_1}")
set(_minor "${CMAKE_MATCH_2}")
if(_major EQUAL 0)
  math(EXPR _next "${_minor} + 1")
  set(_breaking "0.${_next}")
else()
  math(EXPR _next "${_major} + 1")
  set(_breaking "${_next}.0")
endif()
foreach(_want "${VERSION}=TRUE" "${_major}.${_minor}=TRUE" "${_breaking}=FALSE")
  string(REPLACE "=" ";" _want "${_want}")
  list(GET _want 0 PACKAGE_FIND_VERSION)
  list(GET _want 1 _expected)
  string(REGEX MATCH "^([0-9]+)\\.([0-9]+)" _ "${PACKAGE_FIND_VERSION}")
  set(PACKAGE_FIND_VERSION_MAJOR "${CMAKE_MATCH_1}")  # as find_package sets them
  set(PACKAGE_FIND_VERSION_MINOR "${CMAKE_MATCH_2}")
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
  include("${_prefix}/lib/cmake/fedstat/fedstatConfigVersion.cmake")
  set(_got FALSE)
  if(PACKAGE_VERSION_COMPATIBLE)
    set(_got TRUE)
  endif()
  if(NOT PACKAGE_VERSION STREQUAL VERSION OR NOT _got STREQUAL _expected)
    message(FATAL_ERROR "consumer: fedstatConfigVersion.cmake (${PACKAGE_VERSION}) answers "
                        "'${PACKAGE_VERSION_COMPATIBLE}' to a request for ${PACKAGE_FIND_VERSION}")
  endif()
endforeach()
elapsed("installed into ${_prefix}")

# ---- 2. The consumer project, from the prefix alone ------------------------------------------
set(_args -S "${SOURCE_DIR}/tests/consumer" -B "${WORK_DIR}/build" -G "${GENERATOR}"
          "-DCMAKE_PREFIX_PATH=${_prefix}" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
if(MAKE_PROGRAM)
  list(APPEND _args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(BUILD_TYPE)
  list(APPEND _args "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}")
endif()
if(TOOLCHAIN_FILE)
  list(APPEND _args "-DCMAKE_TOOLCHAIN_FILE=${TOOLCHAIN_FILE}")
else()
  list(APPEND _args "-DCMAKE_C_COMPILER=${C_COMPILER}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
run("configuring tests/consumer" COMMAND "${CMAKE_COMMAND}" ${_args})
if(NOT run_output MATCHES "fedstat ${VERSION} \\(${PLATFORM}\\) from ([^\n]*)")
  message(FATAL_ERROR "consumer: find_package did not report fedstat ${VERSION}:\n${run_output}")
endif()
if(NOT CMAKE_MATCH_1 STREQUAL "${_prefix}/lib/cmake/fedstat")
  message(FATAL_ERROR "consumer: found fedstat at ${CMAKE_MATCH_1}, not in ${_prefix}")
endif()
elapsed("configured")
run("building tests/consumer" COMMAND "${CMAKE_COMMAND}" --build "${WORK_DIR}/build" -j 2)
elapsed("built")

set(_exe "${WORK_DIR}/build/fedstat_consumer")
if(PLATFORM STREQUAL "baremetal")
  set(_exe "${_exe}.elf")
endif()
set(_emulator "")
if(EMULATOR)
  string(REPLACE "|" ";" _emulator "${EMULATOR}")
endif()

# What every architecture must print (the same golden values as the unit tests and the M4 image).
file(READ "${SOURCE_DIR}/tests/common/golden_vectors.h" _golden)
if(NOT _golden MATCHES "kShiftSketchReportCrc = 0x([0-9A-Fa-f]+)u")
  message(FATAL_ERROR "consumer: kShiftSketchReportCrc not found in golden_vectors.h")
endif()
string(TOLOWER "${CMAKE_MATCH_1}" _crc)
if(NOT _golden MATCHES "kSkellam100\\[8\\] = {([^}]*)}")
  message(FATAL_ERROR "consumer: kSkellam100 not found in golden_vectors.h")
endif()
string(REPLACE "," "" _skellam "${CMAKE_MATCH_1}")
string(STRIP "${_skellam}" _skellam)

function(check_run label)  # check_run(<label> <program and arguments>)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err
                  TIMEOUT 120)
  message(STATUS "${label} printed:\n${_out}${_err}")
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "consumer: ${label} exited with '${_rc}'")
  endif()
  foreach(_line "fedstat ${VERSION} \\(" "sketch report: [0-9]+ bytes, crc32 ${_crc}\n"
                "skellam\\(100\\): ${_skellam}\n" "envelope: [0-9]+-byte frame round trip\n"
                "consumer: ok\n")
    if(NOT _out MATCHES "${_line}")
      message(FATAL_ERROR "consumer: ${label}'s output lacks /${_line}/")
    endif()
  endforeach()
endfunction()
check_run("fedstat_consumer" ${_emulator} "${_exe}")
elapsed("ran fedstat_consumer")

# The C ABI's program: the same golden report through <fedstat/fedstat.h> from C99.
function(check_run_c label)  # check_run_c(<label> <program and arguments>)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err
                  TIMEOUT 120)
  message(STATUS "${label} printed:\n${_out}${_err}")
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "consumer: ${label} exited with '${_rc}'")
  endif()
  foreach(_line "fedstat ${VERSION} \\(C ABI\\)\n" "c sketch report: [0-9]+ bytes, crc32 ${_crc}\n"
                "c histogram report: [0-9]+ bytes\n" "consumer c: ok\n")
    if(NOT _out MATCHES "${_line}")
      message(FATAL_ERROR "consumer: ${label}'s output lacks /${_line}/")
    endif()
  endforeach()
endfunction()
set(_exe_c "${WORK_DIR}/build/fedstat_consumer_c")
if(PLATFORM STREQUAL "baremetal")
  set(_exe_c "${_exe_c}.elf")
endif()
check_run_c("fedstat_consumer_c" ${_emulator} "${_exe_c}")
elapsed("ran fedstat_consumer_c")

# example_configure_args(NAME OUT): the consumer's configure arguments (_args) for
# examples/NAME, built in WORK_DIR/NAME.
function(example_configure_args name out)
  set(_result "")
  foreach(_a IN LISTS _args)
    if(_a STREQUAL "${SOURCE_DIR}/tests/consumer")
      set(_a "${SOURCE_DIR}/examples/${name}")
    elseif(_a STREQUAL "${WORK_DIR}/build")
      set(_a "${WORK_DIR}/${name}")
    endif()
    list(APPEND _result "${_a}")
  endforeach()
  set(${out} "${_result}" PARENT_SCOPE)
endfunction()

# ---- 2b. The first-integration example (docs/first_integration/), as its walk-throughs build it
# The app (hosted) or firmware image (bare metal, with the QEMU board's start-up code and linker
# script) prints the same report CRC on every architecture, and the app writes the bytes it says.
# Not on the Cortex-M0: the example's 18.5 KiB of buffers (an 8 KiB sketch for its 1,000 items)
# do not fit the micro:bit's 16 KiB of RAM; its M4 walk-through is the bare-metal one.
if(NOT TOOLCHAIN_FILE MATCHES "cortex-m0")
  if(NOT _golden MATCHES "kFirstReportCrc = 0x([0-9A-Fa-f]+)u")
    message(FATAL_ERROR "consumer: kFirstReportCrc not found in golden_vectors.h")
  endif()
  string(TOLOWER "${CMAKE_MATCH_1}" _first_crc)
  example_configure_args(first_report _first_args)
  if(PLATFORM STREQUAL "baremetal")
    list(APPEND _first_args "-DBOARD_DIR=${SOURCE_DIR}/tests/cross")
  endif()
  run("configuring examples/first_report" COMMAND "${CMAKE_COMMAND}" ${_first_args})
  run("building examples/first_report" COMMAND "${CMAKE_COMMAND}" --build "${WORK_DIR}/first_report")
  set(_first "${WORK_DIR}/first_report/first_report")
  set(_first_out "")
  if(PLATFORM STREQUAL "baremetal")
    set(_first "${_first}.elf")
  else()
    set(_first_out "${WORK_DIR}/report.bin")
  endif()
  execute_process(COMMAND ${_emulator} "${_first}" ${_first_out} RESULT_VARIABLE _rc
                  OUTPUT_VARIABLE _out ERROR_VARIABLE _err TIMEOUT 120)
  message(STATUS "first_report printed:\n${_out}${_err}")
  if(NOT _rc EQUAL 0 OR NOT _out MATCHES "report: ([0-9]+) bytes, crc32 ${_first_crc}\n")
    message(FATAL_ERROR "consumer: first_report exited with '${_rc}' or did not print the report "
                        "CRC ${_first_crc} (kFirstReportCrc)")
  endif()
  if(_first_out)
    file(SIZE "${_first_out}" _written)
    if(NOT _written EQUAL CMAKE_MATCH_1)
      message(FATAL_ERROR "consumer: first_report wrote ${_written} bytes, said ${CMAKE_MATCH_1}")
    endif()
  endif()
  elapsed("ran examples/first_report")
endif()

# ---- 3. pkg-config (hosted builds) -----------------------------------------------------------
if(PKG_CONFIG)
  set(ENV{PKG_CONFIG_PATH} "${_prefix}/lib/pkgconfig")
  run("pkg-config" COMMAND "${PKG_CONFIG}" --cflags --libs fedstat)
  string(STRIP "${run_output}" _flags)
  separate_arguments(_flags UNIX_COMMAND "${_flags}")
  run("compiling with pkg-config flags"
      COMMAND "${CXX_COMPILER}" -std=c++17 "${SOURCE_DIR}/tests/consumer/main.cpp" ${_flags}
              -o "${WORK_DIR}/consumer_pc")
  check_run("consumer_pc (pkg-config)" "${WORK_DIR}/consumer_pc")
  run("pkg-config (C ABI)" COMMAND "${PKG_CONFIG}" --cflags --libs fedstat-c)
  string(STRIP "${run_output}" _flags)
  separate_arguments(_flags UNIX_COMMAND "${_flags}")
  run("compiling the C consumer with pkg-config flags"
      COMMAND "${C_COMPILER}" -std=c99 -Wall -Wextra -Werror -pedantic
              "${SOURCE_DIR}/tests/consumer/main.c" ${_flags} -o "${WORK_DIR}/consumer_c_pc")
  check_run_c("consumer_c_pc (pkg-config fedstat-c)" "${WORK_DIR}/consumer_c_pc")
  elapsed("pkg-config build ran")
endif()

# ---- 4. A device that reaches the real server (hosted builds, with -DSERVER) -----------------
# examples/report_to_server, built from the prefix alone (find_package, and pkg-config fedstat-c
# when there is one: -lmbedtls -lmbedx509 -lmbedcrypto must come from the .pc, nothing added),
# checks in with fedstat-server over TLS-PSK through the C ABI and answers a task
# (report_to_server_test.sh: a wrong key, a round of two devices, a refused connection, and a
# signed round over mutual TLS with fedstat-ca's certificates).
if(SERVER AND PLATFORM STREQUAL "posix")
  example_configure_args(report_to_server _report_args)
  run("configuring examples/report_to_server" COMMAND "${CMAKE_COMMAND}" ${_report_args})
  run("building examples/report_to_server"
      COMMAND "${CMAKE_COMMAND}" --build "${WORK_DIR}/report_to_server")
  set(_device_a "${WORK_DIR}/report_to_server/report_to_server")
  set(_device_b "${_device_a}")
  if(PKG_CONFIG)
    run("pkg-config (C ABI, TLS)" COMMAND "${PKG_CONFIG}" --cflags --libs fedstat-c)
    string(STRIP "${run_output}" _flags)
    separate_arguments(_flags UNIX_COMMAND "${_flags}")
    set(_device_b "${WORK_DIR}/report_to_server_pc")
    run("compiling examples/report_to_server with pkg-config fedstat-c flags"
        COMMAND "${C_COMPILER}" -std=c99 -Wall -Wextra -Werror -pedantic
                "${SOURCE_DIR}/examples/report_to_server/report_to_server.c" ${_flags}
                -o "${_device_b}")
  endif()
  elapsed("built examples/report_to_server")
  execute_process(COMMAND bash "${SOURCE_DIR}/tests/consumer/report_to_server_test.sh" "${SERVER}"
                          "${_device_a}" "${_device_b}" "${WORK_DIR}/report_run" ${_emulator}
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err TIMEOUT 120)
  message(STATUS "report_to_server against fedstat-server printed:\n${_out}${_err}")
  if(NOT _rc EQUAL 0 OR NOT _out MATCHES "report_to_server: ok\n")
    message(FATAL_ERROR "consumer: examples/report_to_server against ${SERVER} failed ('${_rc}')")
  endif()
  elapsed("ran examples/report_to_server against fedstat-server")
endif()
