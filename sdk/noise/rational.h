// Rational: an exact non-negative rational num/den, the parameter type of every exact sampler
// (a rational λ, scale or σ² gives an exact output distribution; a double would not).
//
// parse_rational accepts "p/q", an integer "12", or a decimal "0.125" (read exactly, as
// 125/1000, then reduced); no exponents, no signs. Memory: 16 bytes. Paper: CKS 2020 §5.
#ifndef FEDSTAT_SDK_NOISE_RATIONAL_H_
#define FEDSTAT_SDK_NOISE_RATIONAL_H_

#include <stdint.h>

#include "sdk/base/result.h"

namespace fedstat {
namespace noise {

struct Rational {
  uint64_t num = 0;
  uint64_t den = 1;

  constexpr bool valid() const { return den != 0; }
  constexpr bool is_zero() const { return num == 0; }
  constexpr uint64_t floor() const { return num / den; }
  double to_double() const { return static_cast<double>(num) / static_cast<double>(den); }
};

uint64_t gcd(uint64_t a, uint64_t b);
// num/den in lowest terms (den must be non-zero).
Rational reduced(Rational r);
Result<Rational> parse_rational(const char* text);
// The smallest p/q ≥ x with p, q < 2^32 and q a power of ten (≤ 10^6): for turning an
// accountant's λ or σ² (a double) into a sampler parameter without ever rounding it down.
// kOutOfRange for x ≥ 2^31 or not finite; kInvalidArgument for x < 0.
Result<Rational> rational_at_least(double x);
// ⌊√n⌋ exactly.
uint64_t integer_sqrt(uint64_t n);

}  // namespace noise
}  // namespace fedstat

#endif  // FEDSTAT_SDK_NOISE_RATIONAL_H_
