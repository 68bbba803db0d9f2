/// @file
/// The firmware's footprint as it runs: the stack's high-water mark by stack painting, the
/// image's sections from the linker script's symbols, and its time by the board's CMSDK timer 0
/// (25 MHz; under QEMU's -icount shift=0, where one instruction is one nanosecond, each tick is 40
/// instructions, as tests/cross/m4_cost.cpp counts them): the ticks since start, and of those the
/// ticks spent waiting (on the UART, between check-ins), so that the rest is the device's work.
///
/// paint_stack() fills the unused stack (from the linker's __StackLimit up to just below the
/// caller's frame) with a pattern; print_footprint() finds the lowest word no longer holding it,
/// and prints "footprint: flash B, data B, bss B, stack high-water B of B, mbedTLS pool
/// high-water B of B" (crypto::mbedtls_pool_high_water) and "footprint: board timer T ticks, W
/// waiting" — what docs/footprint.md records. The timer is 32 bits: it wraps after 171.8 s of
/// board time (2^32 ticks; 171.8 G instructions under -icount shift=0).
///
/// @memory none.
/// @paper none (application).
#ifndef FEDSTAT_EXAMPLES_CORTEX_M_FIRMWARE_STACK_PAINT_H_
#define FEDSTAT_EXAMPLES_CORTEX_M_FIRMWARE_STACK_PAINT_H_

#include <stdint.h>

namespace firmware {

/// Paints the free stack; call first thing in main().
void paint_stack();
/// Prints the sections, the stack's high-water mark since paint_stack() and the board time since
/// start_board_timer().
void print_footprint();
/// Starts the board's timer 0 from 0; call once, first thing in main().
void start_board_timer();
/// Ticks of the board's timer since start_board_timer().
uint32_t board_ticks();
/// Adds the ticks since `since` (a board_ticks() reading) to the time spent waiting.
void add_waiting_since(uint32_t since);

}  // namespace firmware

#endif  // FEDSTAT_EXAMPLES_CORTEX_M_FIRMWARE_STACK_PAINT_H_
