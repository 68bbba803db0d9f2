# The installable CMake package (docs/package.md): `cmake --install <build> --prefix <p>` puts
#   <p>/lib/libfedstat_sdk.a                 the SDK (with the nanopb runtime and generated wire code)
#   <p>/lib/libfedstat_c.a                   the C ABI over the SDK (capi/; hosted: with its TLS
#                                            channel over libfedstat_sdk_tls and mbedTLS)
#   <p>/lib/libfedstat_sdk_tls.a             the device's TLS-PSK channel (hosted builds)
#   <p>/lib/libfedstat_mbedcrypto.a          mbedTLS built for the microcontroller (bare metal)
#   <p>/include/fedstat/...                  the public headers (the rule is below)
#   <p>/include/fedstat/fedstat.h, c/*.h     the C ABI's headers
#   <p>/lib/cmake/fedstat/fedstatConfig.cmake, fedstatConfigVersion.cmake, fedstatTargets*.cmake
#   <p>/lib/pkgconfig/fedstat.pc, fedstat-c.pc (and fedstat-tls.pc on hosted builds)
# so that find_package(fedstat CONFIG REQUIRED) gives fedstat::sdk, fedstat::c (and
# fedstat::sdk_tls) with their usage requirements: C++17, the include directories, the platform
# definition, mbedTLS.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(FEDSTAT_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/fedstat")
set(_inc "${CMAKE_INSTALL_INCLUDEDIR}")

# ---- Targets -------------------------------------------------------------------------------
# Consumers write #include <fedstat/sdk/...>; the installed headers themselves include each other
# as "sdk/...", "platform/..." (as in the source tree), and the generated envelope.pb.h includes
# <pb.h>: hence three directories (docs/package.md explains the choice).
target_include_directories(fedstat_sdk INTERFACE
  $<INSTALL_INTERFACE:${_inc}>
  $<INSTALL_INTERFACE:${_inc}/fedstat>
  $<INSTALL_INTERFACE:${_inc}/fedstat/nanopb>)
set_target_properties(fedstat_sdk PROPERTIES EXPORT_NAME sdk)
set_target_properties(fedstat_c PROPERTIES EXPORT_NAME c)
set(_targets fedstat_sdk fedstat_c)
# The TLS channel is packaged for hosted builds only. On bare metal it is built in the tree (the
# Cortex-M4 firmware links it), but its header includes mbedTLS's, which the bare-metal package
# does not install (it ships mbedTLS as an archive alone).
set(_package_tls OFF)
if(TARGET fedstat_sdk_tls AND FEDSTAT_PLATFORM STREQUAL "posix")
  set(_package_tls ON)
endif()
if(_package_tls)
  set_target_properties(fedstat_sdk_tls PROPERTIES EXPORT_NAME sdk_tls)
  list(APPEND _targets fedstat_sdk_tls)
endif()
if(TARGET fedstat_mbedcrypto)  # bare metal: built here, so shipped here
  set_target_properties(fedstat_mbedcrypto PROPERTIES EXPORT_NAME mbedcrypto)
  list(APPEND _targets fedstat_mbedcrypto)
endif()
# A sanitized build (host-asan) is instrumented: whoever links it must link the runtimes too.
set(_sanitize_libs "")
if(FEDSTAT_SANITIZE)
  target_link_options(fedstat_sdk INTERFACE $<INSTALL_INTERFACE:-fsanitize=address,undefined>)
  set(_sanitize_libs " -fsanitize=address,undefined")
endif()

install(TARGETS ${_targets} EXPORT fedstatTargets ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
# FEDSTAT_LTO builds fat objects; the installed archives keep only their machine code. An app that
# links with -flto would otherwise inline the SDK's bytecode into its own functions, under its own
# -ffp-contract (GCC's default fuses a*b + c on the Cortex-M4F's single-precision FPU), and the
# SDK's arithmetic would no longer be the same as on x86-64.
if(FEDSTAT_LTO)
  foreach(_t IN LISTS _targets)
    install(CODE "execute_process(COMMAND \"${CMAKE_OBJCOPY}\" -R .gnu.lto_* -R .gnu.debuglto_*
                    \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:${_t}>\"
                    RESULT_VARIABLE _rc)
                  if(NOT _rc EQUAL 0)
                    message(FATAL_ERROR \"objcopy could not strip the LTO bytecode of $<TARGET_FILE_NAME:${_t}>\")
                  endif()")
  endforeach()
endif()
install(EXPORT fedstatTargets NAMESPACE fedstat:: DESTINATION "${FEDSTAT_INSTALL_CMAKEDIR}")

# ---- Headers -------------------------------------------------------------------------------
# Rule: a header is public if an application includes it to use the SDK or a public header
# includes it. So: every header under sdk/ (but sdk/tls/ only where libfedstat_sdk_tls exists),
# the platform interface (platform.h) and this backend's settings header (posix_platform.h or
# baremetal/hooks.h), the generated fedstat/v1/envelope.pb.h and nanopb's pb.h, which public
# headers include. Internal, never installed: what only the library's own .cpp files (or the host
# server) include, below.
set(FEDSTAT_INTERNAL_HEADERS
  sdk/secagg/session_hash.h        # the secure-aggregation session hash: SDK client + host server
  sdk/secagg/secagg_client_internal.h  # what the pieces of secagg_client*.cpp share
  sdk/client/contribution_helpers.h  # what the task kinds' .cpp files share
  sdk/client/client_internal.h     # what the pieces of client*.cpp share
  sdk/sketch/shift_sketch_internal.h  # what the pieces of shift_sketch*.cpp share
  sdk/noise/tabulated_poisson_internal.h  # what the pieces of tabulated_poisson*.cpp share
  platform/raw_storage.h           # the backends' raw file operations under blob_store.cpp
  platform/blob_format.h           # the on-storage blob frame, written only by blob_store.cpp
  platform/baremetal/fedstat_mbedtls_config.h)  # mbedTLS's build config (no public header
                                                # includes mbedTLS on bare metal)
file(GLOB_RECURSE _sdk_headers RELATIVE "${PROJECT_SOURCE_DIR}" "${PROJECT_SOURCE_DIR}/sdk/*.h")
set(_public_headers platform/platform.h)
if(FEDSTAT_PLATFORM STREQUAL "posix")
  list(APPEND _public_headers platform/posix/posix_platform.h)
else()
  list(APPEND _public_headers platform/baremetal/hooks.h)
endif()
foreach(_h IN LISTS _sdk_headers)
  if(_h IN_LIST FEDSTAT_INTERNAL_HEADERS)
    continue()
  endif()
  if(_h MATCHES "^sdk/tls/" AND NOT _package_tls)
    continue()
  endif()
  list(APPEND _public_headers "${_h}")
endforeach()
# The same list feeds the API documentation (cmake/FedstatApiDocs.cmake).
set(FEDSTAT_PUBLIC_HEADERS ${_public_headers})
foreach(_h IN LISTS _public_headers)
  get_filename_component(_dir "${_h}" DIRECTORY)
  install(FILES "${PROJECT_SOURCE_DIR}/${_h}" DESTINATION "${_inc}/fedstat/${_dir}")
endforeach()
install(FILES "${PROJECT_BINARY_DIR}/sdk/include/sdk/version.h"
              "${PROJECT_BINARY_DIR}/sdk/include/sdk/build_options.h"
        DESTINATION "${_inc}/fedstat/sdk")
install(FILES "${PROJECT_BINARY_DIR}/proto/generated/fedstat/v1/envelope.pb.h"
        DESTINATION "${_inc}/fedstat/v1")
install(FILES "${FEDSTAT_NANOPB_SOURCE_DIR}/pb.h" DESTINATION "${_inc}/fedstat/nanopb")
# The C ABI: <fedstat/fedstat.h> and the headers it includes (relative includes: only
# <prefix>/include is needed on the path, which fedstat::sdk carries).
install(FILES "${PROJECT_SOURCE_DIR}/capi/include/fedstat/fedstat.h" DESTINATION "${_inc}/fedstat")
file(GLOB _c_headers "${PROJECT_SOURCE_DIR}/capi/include/fedstat/c/*.h")
install(FILES ${_c_headers} DESTINATION "${_inc}/fedstat/c")

# ---- Config, version, pkg-config -----------------------------------------------------------
# Semantic versioning: the version is project()'s. Before 1.0 a minor release may break the API,
# so 0.x packages accept requests of the same minor version only; from 1.0, the same major.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_compatibility SameMinorVersion)
else()
  set(_compatibility SameMajorVersion)
endif()
configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/fedstatConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/package/fedstatConfig.cmake"
  INSTALL_DESTINATION "${FEDSTAT_INSTALL_CMAKEDIR}"
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file("${PROJECT_BINARY_DIR}/package/fedstatConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY ${_compatibility})
install(FILES "${PROJECT_BINARY_DIR}/package/fedstatConfig.cmake"
              "${PROJECT_BINARY_DIR}/package/fedstatConfigVersion.cmake"
        DESTINATION "${FEDSTAT_INSTALL_CMAKEDIR}")

# pkg-config: relocatable (${pcfiledir}), static archives only, so every library is in Libs.
file(RELATIVE_PATH FEDSTAT_PC_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
string(REGEX REPLACE "/$" "" FEDSTAT_PC_PREFIX "${FEDSTAT_PC_PREFIX}")
if(FEDSTAT_PLATFORM STREQUAL "posix")
  set(FEDSTAT_PC_CFLAGS "-DFEDSTAT_PLATFORM_POSIX=1")
  set(FEDSTAT_PC_LIBS "-lfedstat_sdk -lmbedcrypto${_sanitize_libs}")
else()
  set(FEDSTAT_PC_CFLAGS "-DFEDSTAT_PLATFORM_BAREMETAL=1")
  set(FEDSTAT_PC_LIBS "-lfedstat_sdk -lfedstat_mbedcrypto")
endif()
if(NOT FEDSTAT_STATUS_MESSAGES)
  string(APPEND FEDSTAT_PC_CFLAGS " -DPB_NO_ERRMSG")
endif()
configure_file("${CMAKE_CURRENT_LIST_DIR}/fedstat.pc.in" "${PROJECT_BINARY_DIR}/package/fedstat.pc"
               @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/package/fedstat.pc"
        DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
# The C ABI: a C program links it with the C compiler, so the C++ runtime it needs is named.
# Hosted, the ABI's TLS channel (c/tls.h) needs libfedstat_sdk_tls and mbedTLS's TLS and X.509
# libraries before its crypto library (static archives: each before what it calls).
if(_package_tls)
  string(CONCAT FEDSTAT_PC_C_LIBS "-lfedstat_c -lfedstat_sdk_tls -lfedstat_sdk -lmbedtls "
                                  "-lmbedx509 -lmbedcrypto${_sanitize_libs} -lstdc++ -lm")
else()
  set(FEDSTAT_PC_C_LIBS "-lfedstat_c ${FEDSTAT_PC_LIBS} -lstdc++ -lm")
endif()
configure_file("${CMAKE_CURRENT_LIST_DIR}/fedstat-c.pc.in" "${PROJECT_BINARY_DIR}/package/fedstat-c.pc"
               @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/package/fedstat-c.pc"
        DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
if(_package_tls)
  configure_file("${CMAKE_CURRENT_LIST_DIR}/fedstat-tls.pc.in"
                 "${PROJECT_BINARY_DIR}/package/fedstat-tls.pc" @ONLY)
  install(FILES "${PROJECT_BINARY_DIR}/package/fedstat-tls.pc"
          DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
endif()
