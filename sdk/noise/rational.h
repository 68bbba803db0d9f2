/// @file
/// Rational: an exact non-negative rational num/den, the parameter type of every exact sampler
/// (a rational λ, scale or σ² gives an exact output distribution; a double would not).
///
/// parse_rational accepts "p/q", an integer "12", or a decimal "0.125" (read exactly, as
/// 125/1000, then reduced); no exponents, no signs.
///
/// @memory 16 bytes.
/// @paper CKS 2020 §5.
#ifndef FEDSTAT_SDK_NOISE_RATIONAL_H_
#define FEDSTAT_SDK_NOISE_RATIONAL_H_

#include <stdint.h>

#include "sdk/base/result.h"

namespace fedstat {
namespace noise {

/// An exact non-negative rational num/den (not necessarily in lowest terms).
struct Rational {
  uint64_t num = 0;  ///< the numerator
  uint64_t den = 1;  ///< the denominator; 0 makes the value invalid

  /// True when the denominator is non-zero.
  constexpr bool valid() const { return den != 0; }
  /// True for the value 0 (num = 0).
  constexpr bool is_zero() const { return num == 0; }
  /// ⌊num/den⌋; the denominator must be non-zero.
  constexpr uint64_t floor() const { return num / den; }
  /// num/den in double precision (rounded: for reports and accounting, not for exact sampling).
  double to_double() const { return static_cast<double>(num) / static_cast<double>(den); }
};

/// The greatest common divisor of a and b (gcd(a, 0) = a; gcd(0, 0) = 0).
uint64_t gcd(uint64_t a, uint64_t b);
/// num/den in lowest terms (den must be non-zero).
Rational reduced(Rational r);
/// Reads "p/q", an integer "12" or a decimal "0.125" (exactly: 125/1000), in lowest terms.
/// @errors kInvalidArgument: `text` is null or empty, does not start with a digit, has a zero
/// or missing q, a decimal point without digits after it, characters after the number, or a
/// numerator, q or fraction of more digits than 64 bits hold. kOutOfRange: a decimal whose
/// exact fraction (whole·10^digits + fraction) does not fit 64 bits.
Result<Rational> parse_rational(const char* text);
/// The smallest p/q ≥ x with p, q < 2^32 and q a power of ten (≤ 10^6), in lowest terms: for
/// turning an accountant's λ or σ² (a double) into a sampler parameter without ever rounding it
/// down.
/// @errors kInvalidArgument: x < 0 or x is NaN. kOutOfRange: x ≥ 2^31 (including +infinity).
Result<Rational> rational_at_least(double x);
/// ⌊√n⌋ exactly (integer arithmetic only).
uint64_t integer_sqrt(uint64_t n);

}  // namespace noise
}  // namespace fedstat

#endif  // FEDSTAT_SDK_NOISE_RATIONAL_H_
