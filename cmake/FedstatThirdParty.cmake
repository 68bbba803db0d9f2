# Third-party code, all of it from Debian packages, none of it committed.
#
#   fedstat::mbedcrypto   mbedTLS's crypto library.
#     hosted (posix):      Debian's libmbedtls-dev for the target architecture (amd64, or arm64 as
#                          a multiarch package for the AArch64 cross build).
#     bare metal:          built here from Debian's mbedtls source package with the project
#                          config platform/baremetal/mbedtls_config.h (only what the SDK uses).
#   fedstat_nanopb_runtime  nanopb's pb_common/pb_encode/pb_decode compiled from Debian's nanopb
#                          source package for every target, so that the same runtime (no malloc)
#                          is linked on x86-64, AArch64 and Cortex-M. The generator (protoc plugin)
#                          comes from Debian's nanopb binary package.
#
include(FedstatHeapCheck)

# scripts/fetch-sources.sh unpacks the source packages into FEDSTAT_SOURCES_DIR.

function(_fedstat_find_source_dir var pattern what)
  file(GLOB _candidates LIST_DIRECTORIES true "${FEDSTAT_SOURCES_DIR}/${pattern}")
  list(SORT _candidates)
  list(LENGTH _candidates _n)
  if(_n EQUAL 0)
    message(FATAL_ERROR
      "${what} sources not found in ${FEDSTAT_SOURCES_DIR}/${pattern}.\n"
      "Run: bash scripts/fetch-sources.sh   (it runs 'apt-get source' into .deps/), or pass "
      "-DFEDSTAT_SOURCES_DIR=<dir holding the unpacked source packages>.")
  endif()
  list(GET _candidates -1 _dir)
  set(${var} "${_dir}" PARENT_SCOPE)
endfunction()

# ---- nanopb runtime --------------------------------------------------------
_fedstat_find_source_dir(FEDSTAT_NANOPB_SOURCE_DIR "nanopb-*" "nanopb runtime")
add_library(fedstat_nanopb_runtime OBJECT
  ${FEDSTAT_NANOPB_SOURCE_DIR}/pb_common.c
  ${FEDSTAT_NANOPB_SOURCE_DIR}/pb_encode.c
  ${FEDSTAT_NANOPB_SOURCE_DIR}/pb_decode.c)
target_include_directories(fedstat_nanopb_runtime SYSTEM PUBLIC ${FEDSTAT_NANOPB_SOURCE_DIR})
# Messages carry their sizes statically (.options): PB_ENABLE_MALLOC is never defined.
# A build without status messages (FEDSTAT_STATUS_MESSAGES=OFF) drops nanopb's too: PB_NO_ERRMSG
# changes its stream structs, so it is public here and on fedstat::sdk (and in fedstat.pc).
if(NOT FEDSTAT_STATUS_MESSAGES)
  target_compile_definitions(fedstat_nanopb_runtime PUBLIC PB_NO_ERRMSG)
endif()

# ---- mbedTLS ---------------------------------------------------------------
if(FEDSTAT_PLATFORM STREQUAL "baremetal")
  _fedstat_find_source_dir(FEDSTAT_MBEDTLS_SOURCE_DIR "mbedtls-*" "mbedTLS")
  file(GLOB _mbedtls_sources "${FEDSTAT_MBEDTLS_SOURCE_DIR}/library/*.c")
  # With the config's encryption-only AES (the decryption half's stubs).
  add_library(fedstat_mbedcrypto STATIC ${_mbedtls_sources}
    ${PROJECT_SOURCE_DIR}/platform/baremetal/mbedtls_aes_encrypt_only.c)
  # Its headers and config are for the SDK's own sources (only sdk/base/crypto*.cpp include
  # mbedTLS); the installed package carries the archive alone (cmake/FedstatPackage.cmake).
  target_include_directories(fedstat_mbedcrypto SYSTEM PUBLIC
    $<BUILD_INTERFACE:${FEDSTAT_MBEDTLS_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/platform/baremetal>)
  target_include_directories(fedstat_mbedcrypto PRIVATE ${FEDSTAT_MBEDTLS_SOURCE_DIR}/library)
  target_compile_definitions(fedstat_mbedcrypto PUBLIC
    $<BUILD_INTERFACE:MBEDTLS_CONFIG_FILE="fedstat_mbedtls_config.h">)
  add_library(fedstat::mbedcrypto ALIAS fedstat_mbedcrypto)
  # The same archive holds the TLS client the config enables (sdk/tls on the device).
  add_library(fedstat::mbedtls ALIAS fedstat_mbedcrypto)
  # mbedTLS built here for the microcontroller must be heap-free too.
  fedstat_forbid_heap(fedstat_mbedcrypto)
else()
  find_path(FEDSTAT_MBEDTLS_INCLUDE_DIR mbedtls/version.h)
  # The static archive first: a device links mbedTLS into its image, and static test programs
  # (the AArch64 cross build) need it.
  find_library(FEDSTAT_MBEDCRYPTO_LIBRARY NAMES libmbedcrypto.a mbedcrypto)
  if(NOT FEDSTAT_MBEDTLS_INCLUDE_DIR OR NOT FEDSTAT_MBEDCRYPTO_LIBRARY)
    message(FATAL_ERROR "mbedTLS not found for ${CMAKE_SYSTEM_PROCESSOR}: install libmbedtls-dev "
                        "(libmbedtls-dev:arm64 for the AArch64 cross build); scripts/setup.sh does.")
  endif()
  add_library(fedstat::mbedcrypto UNKNOWN IMPORTED)
  set_target_properties(fedstat::mbedcrypto PROPERTIES
    IMPORTED_LOCATION "${FEDSTAT_MBEDCRYPTO_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${FEDSTAT_MBEDTLS_INCLUDE_DIR}")
  # TLS (sdk/tls, host_server/net): libmbedtls and libmbedx509, static archives first as above.
  # Each imported target links the next, so the order on any link line is
  # mbedtls -> mbedx509 -> mbedcrypto.
  find_library(FEDSTAT_MBEDX509_LIBRARY NAMES libmbedx509.a mbedx509)
  find_library(FEDSTAT_MBEDTLS_LIBRARY NAMES libmbedtls.a mbedtls)
  if(NOT FEDSTAT_MBEDX509_LIBRARY OR NOT FEDSTAT_MBEDTLS_LIBRARY)
    message(FATAL_ERROR "libmbedtls/libmbedx509 not found for ${CMAKE_SYSTEM_PROCESSOR}: install "
                        "libmbedtls-dev; scripts/setup.sh does.")
  endif()
  add_library(fedstat::mbedx509 UNKNOWN IMPORTED)
  set_target_properties(fedstat::mbedx509 PROPERTIES
    IMPORTED_LOCATION "${FEDSTAT_MBEDX509_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${FEDSTAT_MBEDTLS_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES fedstat::mbedcrypto)
  add_library(fedstat::mbedtls UNKNOWN IMPORTED)
  set_target_properties(fedstat::mbedtls PROPERTIES
    IMPORTED_LOCATION "${FEDSTAT_MBEDTLS_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${FEDSTAT_MBEDTLS_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES fedstat::mbedx509)
endif()
