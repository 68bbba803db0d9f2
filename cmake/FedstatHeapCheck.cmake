# fedstat_forbid_heap(<static library target>)
# After the archive is built, lists its undefined symbols with the toolchain's nm and fails the
# build if any refers to the heap or to exceptions (malloc, free, operator new/delete, __cxa_throw,
# ...). The check runs on the archive, not on a final image: newlib's stdio pulls malloc into every
# semihosting program, so only the library's own references say whether the SDK uses the heap.
set(FEDSTAT_HEAP_CHECK_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/check_no_heap.cmake" CACHE INTERNAL "")
# With FEDSTAT_LTO the objects are fat, and nm's LTO plugin would list the bytecode's symbols,
# which leave out calls to built-ins such as malloc; naming the ELF target makes nm read the
# objects' machine code instead (tests/CMakeLists.txt's canary proves it still fires).
set(FEDSTAT_HEAP_CHECK_NM_TARGET "")
if(FEDSTAT_LTO)
  set(FEDSTAT_HEAP_CHECK_NM_TARGET "elf32-little")
endif()
set(FEDSTAT_HEAP_CHECK_NM_TARGET "${FEDSTAT_HEAP_CHECK_NM_TARGET}" CACHE INTERNAL "")

function(fedstat_forbid_heap target)
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND "${CMAKE_COMMAND}" "-DNM=${CMAKE_NM}" "-DNM_TARGET=${FEDSTAT_HEAP_CHECK_NM_TARGET}"
            "-DARCHIVE=$<TARGET_FILE:${target}>"
            -P "${FEDSTAT_HEAP_CHECK_SCRIPT}"
    COMMENT "heap check: ${target} must not reference malloc/free/new/delete/exceptions"
    VERBATIM)
endfunction()
