# Compiler rules for fedstat code.
#   fedstat_sdk_rules(target): the SDK's freestanding rules: C++17, no exceptions, no RTTI,
#     warnings as errors, and -ffp-contract=off: every double the SDK computes (sampling weights,
#     clip norms, rounding bounds, accountants) must round alike on every architecture, and GCC
#     contracts a*b + c into a fused multiply-add in C++ even with -std=c++17 where the target has
#     one (AArch64; x86-64 without -mfma and the Cortex-M4's software doubles have none).
#   fedstat_host_rules(target): host programs and tests: warnings as errors, exceptions allowed.
function(fedstat_sdk_rules target)
  target_compile_features(${target} PUBLIC cxx_std_17)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions -fno-rtti -fno-threadsafe-statics>
    -ffp-contract=off -Wall -Wextra -Wpedantic -Werror -Wshadow -Wconversion -Wno-sign-conversion)
endfunction()

function(fedstat_host_rules target)
  target_compile_features(${target} PUBLIC cxx_std_17)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Werror)
endfunction()
