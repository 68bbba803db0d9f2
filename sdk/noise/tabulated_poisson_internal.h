/// @file
/// What the pieces of TabulatedPoissonSampler (tabulated_poisson*.cpp) share: the layout of a
/// table entry's known prefix of A(j) (its length in bits 58..63, the bits reversed below) and
/// the bit reversal. Internal to sdk/noise, never installed (FEDSTAT_INTERNAL_HEADERS).
///
/// @memory none (constants and functions only).
/// @paper none.
#ifndef FEDSTAT_SDK_NOISE_TABULATED_POISSON_INTERNAL_H_
#define FEDSTAT_SDK_NOISE_TABULATED_POISSON_INTERNAL_H_

#include <stdint.h>

namespace fedstat {
namespace noise {

constexpr unsigned kKnownShift = 58;
constexpr uint64_t kPrefixMask = (uint64_t{1} << kKnownShift) - 1;

/// x with its 64 bits in reverse order.
inline uint64_t reverse_bits(uint64_t x) {
  x = ((x >> 1) & 0x5555555555555555u) | ((x & 0x5555555555555555u) << 1);
  x = ((x >> 2) & 0x3333333333333333u) | ((x & 0x3333333333333333u) << 2);
  x = ((x >> 4) & 0x0F0F0F0F0F0F0F0Fu) | ((x & 0x0F0F0F0F0F0F0F0Fu) << 4);
  return __builtin_bswap64(x);
}

}  // namespace noise
}  // namespace fedstat

#endif  // FEDSTAT_SDK_NOISE_TABULATED_POISSON_INTERNAL_H_
