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

}  // namespace

void paint_stack() {
  uint32_t here = 0;
  const uintptr_t top = reinterpret_cast<uintptr_t>(&here) - kMarginBytes;
  for (uintptr_t p = address(__StackLimit); p < top; p += 4) {
    *reinterpret_cast<volatile uint32_t*>(p) = kPaint;
  }
}

void print_footprint() {
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
}

}  // namespace firmware
