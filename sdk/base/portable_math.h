/// @file
/// Portable elementary functions: ln, exp and √ from IEEE-754 additions, multiplications and
/// divisions only, so they give the same double on x86-64, AArch64 and the Cortex-M's software
/// floating point (the SDK is compiled with -ffp-contract=off: no fused multiply-adds).
///
/// Why not libm: each platform's libm rounds its last bit its own way, and on a microcontroller
/// newlib's wrappers set errno, which links the C library's reentrancy structure and the stdio it
/// initialises (docs/footprint.md: 4 KiB of the core). The privacy ledger's conversions
/// (privacy/accountants.cpp: rdp_to_dp, truncated_discrete_laplace_delta), the KL task's L2
/// sensitivity and the sketch's sampling weights use these instead, so a device and the server
/// compute the same charge, bit for bit (every accountant's ln, exp and √; the Gaussian
/// mechanism's Φ still takes libm's erfc).
///
/// - portable_log: fdlibm's method (e_log.c, Sun Microsystems 1993: "Permission to use, copy,
///   modify, and distribute this software is freely granted, provided that this notice is
///   preserved."): x = (1 + f)·2^e with 1 + f ∈ [√½, √2), ln(1 + f) = f − (f²/2 − s·(f²/2 +
///   R(s²))), s = f/(2 + f), R fdlibm's degree-14 minimax polynomial. Error below 1 ulp.
/// - portable_exp: fdlibm's method (e_exp.c, same notice): x = k·ln 2 + r with |r| ≤ ½ ln 2 (ln 2
///   in two parts, so k·ln 2 is exact), exp(r) = 1 + r + r·c(r)/(2 − c(r)) with c fdlibm's
///   degree-10 minimax polynomial, then ·2^k through the exponent bits. Error below 1 ulp; the
///   same operations as newlib's exp, so the same value on the Cortex-M (checked by its
///   self-test).
/// - portable_sqrt: correctly rounded (as IEEE-754 requires of every sqrt, so equal to every
///   platform's): the 54-bit integer square root of the significand by restoring bit pairs, then
///   round to nearest (no ties exist for a square root).
/// Tests: tests/unit/base/portable_math_test.cpp (against the host's libm: √ bit for bit, ln and
/// exp within 1 ulp, every special value), tests/cross/baremetal_selftest.cpp (against newlib).
///
/// @memory none (stack only).
/// @paper none (numerical infrastructure for 002 §3 accounting and 001 §4.2 sampling weights).
#ifndef FEDSTAT_SDK_BASE_PORTABLE_MATH_H_
#define FEDSTAT_SDK_BASE_PORTABLE_MATH_H_

#include <stdint.h>
#include <string.h>

#include "sdk/base/lanes_inline.h"

namespace fedstat {
namespace math {

/// The IEEE-754 bits of a double.
inline uint64_t bits_of(double x) {
  uint64_t bits = 0;
  memcpy(&bits, &x, sizeof bits);
  return bits;
}

/// The double of IEEE-754 bits.
inline double double_of(uint64_t bits) {
  double x = 0;
  memcpy(&x, &bits, sizeof x);
  return x;
}

/// fdlibm's ln 2, split so that e·kLn2Hi is exact for |e| < 2^11 (0x3FE62E42FEE00000).
constexpr double kLn2Hi = 6.93147180369123816490e-01;
/// The rest of ln 2 (0x3DEA39EF35793C76).
constexpr double kLn2Lo = 1.90821492927058770002e-10;
/// fdlibm's R(z) = Lg1·z + … + Lg7·z^7 ≈ (ln(1 + f) − 2s)/s, z = s², |s| ≤ 0.1716, error <
/// 2^-58.45 (hex: 3FE5555555555593, 3FD999999997FA04, 3FD2492494229359, 3FCC71C51D8E78AF,
/// 3FC7466496CB03DE, 3FC39A09D078C69F, 3FC2F112DF3E5244).
constexpr double kLg1 = 6.666666666666735130e-01;
constexpr double kLg2 = 3.999999999940941908e-01;  ///< see kLg1
constexpr double kLg3 = 2.857142874366239149e-01;  ///< see kLg1
constexpr double kLg4 = 2.222219843214978396e-01;  ///< see kLg1
constexpr double kLg5 = 1.818357216161805012e-01;  ///< see kLg1
constexpr double kLg6 = 1.531383769920937332e-01;  ///< see kLg1
constexpr double kLg7 = 1.479819860511658591e-01;  ///< see kLg1
/// The 52 fraction bits of √2 (0x3FF6A09E667F3BCD): a significand at or above them is halved.
constexpr uint64_t kSqrt2Fraction = 0x6A09E667F3BCDull;
/// The fraction bits of a double.
constexpr uint64_t kFractionMask = (uint64_t{1} << 52) - 1;

/// ln((1 + f)·2^e) from m = 1 + f ∈ [√½, √2) and e as a double (fdlibm's steps, file comment).
/// T is double, or a type of two lanes of doubles with the same operators (the sketch's batch):
/// the same operations in the same order either way. Internal linkage (static), as
/// log_of_normal: each translation unit keeps its own copy, compiled with its own flags, so a
/// caller built without -ffp-contract=off can never lend the SDK a copy with fused operations.
template <typename T>
static FEDSTAT_LANES_INLINE T log_of_parts(const T& m, const T& de) {
  const T f = m - 1;  // exact (Sterbenz)
  const T s = f / (2.0 + f);
  const T z = s * s;
  const T w = z * z;
  const T t1 = w * (kLg2 + w * (kLg4 + w * kLg6));
  const T t2 = z * (kLg1 + w * (kLg3 + w * (kLg5 + w * kLg7)));
  const T r = t2 + t1;
  const T hfsq = 0.5 * f * f;
  return de * kLn2Hi - ((hfsq - (s * (hfsq + r) + de * kLn2Lo)) - f);
}

/// ln(x·2^offset) for a positive normal double x: the exponent and significand taken from the
/// bits (exact), then log_of_parts. Error below 1 ulp. For x near 1, e = 0 and the result keeps
/// its relative accuracy (no cancellation against e·ln 2). The sketch's hot path (offset 0);
/// portable_log below takes every double (a subnormal as x·2^54 with offset −54).
static inline double log_of_normal(double x, int offset = 0) {
  const uint64_t bits = bits_of(x);
  int e = static_cast<int>((bits >> 52) & 0x7FF) - 1023 + offset;
  const uint64_t fraction = bits & kFractionMask;
  uint64_t exponent_bits = uint64_t{1023} << 52;
  if (fraction >= kSqrt2Fraction) {  // 1 + f ≥ √2: use (1 + f)/2 and e + 1
    exponent_bits = uint64_t{1022} << 52;
    e += 1;
  }
  return log_of_parts(double_of(fraction | exponent_bits), static_cast<double>(e));
}

/// ln(x) for every double: log_of_normal for positive normal and subnormal x (scaled by 2^54
/// first); ln(+∞) = +∞, ln(±0) = −∞, ln(x < 0) and ln(NaN) = NaN, as C's log. Sets no errno.
double portable_log(double x);

/// e^x for every double, error below 1 ulp: +∞ above ln(DBL_MAX) (709.78…), 0 below −745.13…
/// (subnormal results in between, as C's exp), e^0 = 1 exactly, e^−∞ = 0, NaN for NaN. Sets no
/// errno.
double portable_exp(double x);

/// √x correctly rounded, for every double: √(−0) = −0, √(x < 0) and √NaN = NaN, √+∞ = +∞. Sets
/// no errno.
double portable_sqrt(double x);

}  // namespace math
}  // namespace fedstat

#endif  // FEDSTAT_SDK_BASE_PORTABLE_MATH_H_
