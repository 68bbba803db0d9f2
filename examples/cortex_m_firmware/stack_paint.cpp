// Stack painting and the image's sections (stack_paint.h).
#include "examples/cortex_m_firmware/stack_paint.h"

#include <stdint.h>
#include <stdio.h>

#include "sdk/base/crypto.h"

extern "C" uint32_t __text_start__, __etext, __data_start__, __data_end__, __bss_start__,
    __bss_end__, __StackTop, __StackLimit;

namespace firmware {
namespace {

constexpr uint32_t kPaint = 0xC5A1AB1Eu;
// Left unpainted below the caller's frame: paint_stack's own frame and a margin.
constexpr uintptr_t kMarginBytes = 256;

uintptr_t address(const uint32_t& symbol) {
  return reinterpret_cast<uintptr_t>(&symbol);
}

// CMSDK APB timer 0 of the MPS2-AN386: a 32-bit down-counter at the 25 MHz peripheral clock.
struct CmsdkTimer {
  volatile uint32_t control;  // bit 0: enable
  volatile uint32_t value;
  volatile uint32_t reload;
  volatile uint32_t interrupts;
};
CmsdkTimer& timer0() {
  return *reinterpret_cast<CmsdkTimer*>(0x40000000u);
}
uint32_t g_waiting_ticks = 0;

}  // namespace

void paint_stack() {
  uint32_t here = 0;
  const uintptr_t top = reinterpret_cast<uintptr_t>(&here) - kMarginBytes;
  for (uintptr_t p = address(__StackLimit); p < top; p += 4) {
    *reinterpret_cast<volatile uint32_t*>(p) = kPaint;
  }
}

void start_board_timer() {
  timer0().control = 0;
  timer0().reload = 0xFFFFFFFFu;
  timer0().value = 0xFFFFFFFFu;
  timer0().control = 1;
}

uint32_t board_ticks() {
  return 0xFFFFFFFFu - timer0().value;
}

void add_waiting_since(uint32_t since) {
  g_waiting_ticks += board_ticks() - since;
}

void print_footprint() {
  const uint32_t ticks = board_ticks();
  uintptr_t p = address(__StackLimit);
  while (p < address(__StackTop) && *reinterpret_cast<volatile uint32_t*>(p) == kPaint) p += 4;
  const unsigned long stack_used = static_cast<unsigned long>(address(__StackTop) - p);
  const unsigned long stack_size =
      static_cast<unsigned long>(address(__StackTop) - address(__StackLimit));
  const unsigned long flash =
      static_cast<unsigned long>(address(__etext) - address(__text_start__));
  const unsigned long data =
      static_cast<unsigned long>(address(__data_end__) - address(__data_start__));
  const unsigned long bss =
      static_cast<unsigned long>(address(__bss_end__) - address(__bss_start__));
  printf(
      "footprint: flash %lu, data %lu, bss %lu, stack high-water %lu of %lu, mbedTLS pool "
      "high-water %lu of %lu\n",
      flash + data, data, bss, stack_used, stack_size,
      static_cast<unsigned long>(fedstat::crypto::mbedtls_pool_high_water()),
      static_cast<unsigned long>(fedstat::crypto::kMbedtlsPoolBytes));
  printf("footprint: board timer %lu ticks, %lu waiting\n", static_cast<unsigned long>(ticks),
         static_cast<unsigned long>(g_waiting_ticks));
}

}  // namespace firmware
