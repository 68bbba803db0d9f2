/// @file
/// UInt128: the few unsigned 128-bit operations the exact samplers need, in portable C++ (32-bit
/// microcontrollers have no __int128). Values are (hi, lo) pairs of uint64_t.
///
/// @memory 16 bytes.
/// @paper none (arithmetic for CKS 2020's exact samplers).
#ifndef FEDSTAT_SDK_NOISE_UINT128_H_
#define FEDSTAT_SDK_NOISE_UINT128_H_

#include <stdint.h>

namespace fedstat {
namespace noise {

/// An unsigned 128-bit integer hi·2^64 + lo.
struct UInt128 {
  uint64_t hi = 0;  ///< the upper 64 bits
  uint64_t lo = 0;  ///< the lower 64 bits

  /// Zero.
  constexpr UInt128() = default;
  /// `low`, widened (implicitly: every uint64_t converts exactly).
  constexpr UInt128(uint64_t low) : hi(0), lo(low) {}  // NOLINT: implicit widening is safe
  /// high·2^64 + low.
  constexpr UInt128(uint64_t high, uint64_t low) : hi(high), lo(low) {}

  /// True for 0.
  constexpr bool is_zero() const { return hi == 0 && lo == 0; }
  /// True when the value is below 2^64 (hi = 0).
  constexpr bool fits_u64() const { return hi == 0; }
};

/// Equality of values.
constexpr bool operator==(UInt128 a, UInt128 b) {
  return a.hi == b.hi && a.lo == b.lo;
}
/// The negation of operator==.
constexpr bool operator!=(UInt128 a, UInt128 b) {
  return !(a == b);
}
/// Numeric order: a < b.
constexpr bool operator<(UInt128 a, UInt128 b) {
  return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo);
}
/// Numeric order: a ≥ b.
constexpr bool operator>=(UInt128 a, UInt128 b) {
  return !(a < b);
}
/// Numeric order: a > b.
constexpr bool operator>(UInt128 a, UInt128 b) {
  return b < a;
}
/// Numeric order: a ≤ b.
constexpr bool operator<=(UInt128 a, UInt128 b) {
  return !(b < a);
}

/// a + b modulo 2^128 (callers ensure no wrap where it matters).
constexpr UInt128 operator+(UInt128 a, UInt128 b) {
  return UInt128(a.hi + b.hi + (a.lo + b.lo < a.lo ? 1 : 0), a.lo + b.lo);
}
/// a − b modulo 2^128 (callers ensure no wrap where it matters).
constexpr UInt128 operator-(UInt128 a, UInt128 b) {
  return UInt128(a.hi - b.hi - (a.lo < b.lo ? 1 : 0), a.lo - b.lo);
}

/// The full 128-bit product of two 64-bit values (one instruction where the compiler has a
/// native 128-bit type — x86-64, AArch64 — and four 32-bit products elsewhere; same result).
constexpr UInt128 multiply(uint64_t a, uint64_t b) {
#if defined(__SIZEOF_INT128__)
  __extension__ using native = unsigned __int128;
  const native product = static_cast<native>(a) * b;
  return UInt128(static_cast<uint64_t>(product >> 64), static_cast<uint64_t>(product));
#else
  const uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32, b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
  const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const uint64_t middle = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
  return UInt128(p11 + (p01 >> 32) + (p10 >> 32) + (middle >> 32),
                 (middle << 32) | (p00 & 0xFFFFFFFFu));
#endif
}

/// out = a·b and true if the product fits in 128 bits; false (out unchanged) otherwise.
constexpr bool multiply_checked(UInt128 a, uint64_t b, UInt128& out) {
  if (a.hi == 0) {  // the common case: one 64×64 product
    out = multiply(a.lo, b);
    return true;
  }
  const UInt128 low = multiply(a.lo, b);
  const UInt128 high = multiply(a.hi, b);
  if (high.hi != 0) return false;
  const uint64_t top = low.hi + high.lo;
  if (top < low.hi) return false;
  out = UInt128(top, low.lo);
  return true;
}

}  // namespace noise
}  // namespace fedstat

#endif  // FEDSTAT_SDK_NOISE_UINT128_H_
