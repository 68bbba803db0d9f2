/// @file
/// The firmware's footprint as it runs: the stack's high-water mark by stack painting, and the
/// image's sections from the linker script's symbols.
///
/// paint_stack() fills the unused stack (from the linker's __StackLimit up to just below the
/// caller's frame) with a pattern; print_footprint() finds the lowest word no longer holding it,
/// and prints "footprint: flash B, data B, bss B, stack high-water B of B, mbedTLS pool
/// high-water B of B" (crypto::mbedtls_pool_high_water) — what docs/footprint.md records.
///
/// @memory none.
/// @paper none (application).
#ifndef FEDSTAT_EXAMPLES_CORTEX_M_FIRMWARE_STACK_PAINT_H_
#define FEDSTAT_EXAMPLES_CORTEX_M_FIRMWARE_STACK_PAINT_H_

namespace firmware {

/// Paints the free stack; call first thing in main().
void paint_stack();
/// Prints the sections and the stack's high-water mark since paint_stack().
void print_footprint();

}  // namespace firmware

#endif  // FEDSTAT_EXAMPLES_CORTEX_M_FIRMWARE_STACK_PAINT_H_
