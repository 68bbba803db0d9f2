# FEDSTAT_SANITIZE=ON instruments every target of the build with ASan + UBSan; any report aborts
# the test that caused it.
if(FEDSTAT_SANITIZE)
  if(CMAKE_CROSSCOMPILING)
    message(FATAL_ERROR "FEDSTAT_SANITIZE is for host builds only")
  endif()
  # vptr is left out: it needs RTTI, which the SDK is built without.
  add_compile_options(-fsanitize=address,undefined -fno-sanitize=vptr -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
