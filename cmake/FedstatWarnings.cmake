# Compiler rules for fedstat code.
#   fedstat_sdk_rules(target): the SDK's freestanding rules: C++17, no exceptions, no RTTI,
#     warnings as errors.
#   fedstat_host_rules(target): host programs and tests: warnings as errors, exceptions allowed.
function(fedstat_sdk_rules target)
  target_compile_features(${target} PUBLIC cxx_std_17)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions -fno-rtti -fno-threadsafe-statics>
    -Wall -Wextra -Wpedantic -Werror -Wshadow -Wconversion -Wno-sign-conversion)
endfunction()

function(fedstat_host_rules target)
  target_compile_features(${target} PUBLIC cxx_std_17)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Werror)
endfunction()
