# fedstat_baremetal_image(<target> LINKER_SCRIPT <.ld> SOURCES <files...> [SIZE_COMMENT <text>])
# A bare-metal executable for QEMU's boards: the sources plus tests/cross/startup_cortex_m.c
# (vector table, .data/.bss set-up), the project root on the include path, linked with the SDK
# (add more with target_link_libraries), semihosting (rdimon), the given linker script (a
# relink when it changes), --gc-sections and a link map beside the image (<target>.map, with
# the cross-reference table scripts/footprint.py attributes library code by). The
# image is <target>.elf. With SIZE_COMMENT, arm-none-eabi-size prints its sections after the link.
function(fedstat_baremetal_image target)
  cmake_parse_arguments(PARSE_ARGV 1 _image "" "LINKER_SCRIPT;SIZE_COMMENT" "SOURCES")
  add_executable(${target} ${_image_SOURCES} ${PROJECT_SOURCE_DIR}/tests/cross/startup_cortex_m.c)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${target} PRIVATE fedstat::sdk)
  fedstat_sdk_rules(${target})
  set_target_properties(${target} PROPERTIES SUFFIX ".elf" LINK_DEPENDS ${_image_LINKER_SCRIPT})
  target_link_options(${target} PRIVATE
    --specs=rdimon.specs -nostartfiles -T${_image_LINKER_SCRIPT} -Wl,--gc-sections
    -Wl,-Map=$<TARGET_FILE_DIR:${target}>/${target}.map -Wl,--cref)
  find_program(FEDSTAT_ARM_SIZE arm-none-eabi-size)
  if(_image_SIZE_COMMENT AND FEDSTAT_ARM_SIZE)
    add_custom_command(TARGET ${target} POST_BUILD
      COMMAND ${FEDSTAT_ARM_SIZE} $<TARGET_FILE:${target}>
      COMMENT "${_image_SIZE_COMMENT}" VERBATIM)
  endif()
endfunction()
