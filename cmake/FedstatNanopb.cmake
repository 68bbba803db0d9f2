# fedstat_nanopb_generate(<target> PROTOS a.proto b.proto ...)
# Runs Debian's protoc + protoc-gen-nanopb on proto/<file>.proto (with its .options beside it) and
# adds the generated .pb.c to <target>. Generated code lives only in the build tree.
find_program(FEDSTAT_PROTOC protoc)
find_program(FEDSTAT_PROTOC_GEN_NANOPB protoc-gen-nanopb)
if(NOT FEDSTAT_PROTOC OR NOT FEDSTAT_PROTOC_GEN_NANOPB)
  message(FATAL_ERROR "protoc and protoc-gen-nanopb are needed: install protobuf-compiler, nanopb "
                      "and python3-protobuf (scripts/setup.sh does).")
endif()

function(fedstat_nanopb_generate target)
  cmake_parse_arguments(ARG "" "" "PROTOS" ${ARGN})
  set(_out_dir "${CMAKE_CURRENT_BINARY_DIR}/generated")
  file(MAKE_DIRECTORY "${_out_dir}")
  foreach(_proto IN LISTS ARG_PROTOS)
    get_filename_component(_dir "${_proto}" DIRECTORY)
    get_filename_component(_name "${_proto}" NAME_WE)
    set(_c "${_out_dir}/${_dir}/${_name}.pb.c")
    set(_h "${_out_dir}/${_dir}/${_name}.pb.h")
    set(_options "${CMAKE_CURRENT_SOURCE_DIR}/${_dir}/${_name}.options")
    add_custom_command(
      OUTPUT "${_c}" "${_h}"
      COMMAND "${FEDSTAT_PROTOC}" "--plugin=protoc-gen-nanopb=${FEDSTAT_PROTOC_GEN_NANOPB}"
              "-I${CMAKE_CURRENT_SOURCE_DIR}" "--nanopb_out=${_out_dir}" "${_proto}"
      DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/${_proto}" "${_options}"
      WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
      COMMENT "nanopb: generating ${_dir}/${_name}.pb.{c,h}"
      VERBATIM)
    target_sources(${target} PRIVATE "${_c}" "${_h}")
  endforeach()
  target_include_directories(${target} PUBLIC "${_out_dir}")
endfunction()
