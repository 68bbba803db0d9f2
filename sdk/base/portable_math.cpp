#include "sdk/base/portable_math.h"

#include <math.h>  // INFINITY and NAN only: nothing here calls libm

namespace fedstat {
namespace math {
namespace {

// fdlibm's e_exp.c constants (hex in comments).
constexpr double kOverflowThreshold = 7.09782712893383973096e+02;    // 0x40862E42FEFA39EF
constexpr double kUnderflowThreshold = -7.45133219101941108420e+02;  // 0xC0874910D52D3051
constexpr double kInvLn2 = 1.44269504088896338700e+00;               // 0x3FF71547652B82FE
constexpr double kTwoToMinus1000 = 9.33263618503218878990e-302;      // 0x0170000000000000
// c(r) = r − r²·(P1 + r²·(P2 + … + r²·P5)), the minimax fit of r·(e^r + 1)/(e^r − 1) − 2.
constexpr double kP1 = 1.66666666666666019037e-01;   // 0x3FC555555555553E
constexpr double kP2 = -2.77777777770155933842e-03;  // 0xBF66C16C16BEBD93
constexpr double kP3 = 6.61375632143793436117e-05;   // 0x3F11566AAF25DE2C
constexpr double kP4 = -1.65339022054652515390e-06;  // 0xBEBBBD41C5D26BF1
constexpr double kP5 = 4.13813679705723846039e-08;   // 0x3E66376972BEA4D0
constexpr double kTwoTo54 = 18014398509481984.0;

// y·2^k for a y in [½, 2] and −1074 ≤ k ≤ 1024 whose product is a double: through the exponent
// bits, as fdlibm does (y's exponent plus k stays in range for every k exp produces).
double scale_by_power_of_two(double y, int k) {
  if (k >= -1021)
    return double_of(bits_of(y) + (static_cast<uint64_t>(static_cast<int64_t>(k)) << 52));
  return double_of(bits_of(y) + (static_cast<uint64_t>(static_cast<int64_t>(k + 1000)) << 52)) *
         kTwoToMinus1000;
}

}  // namespace

double portable_log(double x) {
  const uint64_t bits = bits_of(x);
  const uint64_t exponent = (bits >> 52) & 0x7FF;
  if (x != x) return x + x;  // NaN
  if ((bits << 1) == 0) return -INFINITY;
  if (bits >> 63) return NAN;       // negative
  if (exponent == 0x7FF) return x;  // +∞
  if (exponent != 0) return log_of_normal(x);
  return log_of_normal(x * kTwoTo54, -54);  // subnormal: x·2^54 is normal and exact
}

double portable_exp(double x) {
  const uint64_t bits = bits_of(x);
  const bool negative = (bits >> 63) != 0;
  const uint32_t high = static_cast<uint32_t>(bits >> 32) & 0x7FFFFFFF;  // of |x|
  if (high >= 0x40862E42) {                                              // |x| ≥ 709.78…
    if (high >= 0x7FF00000) {
      if (x != x) return x + x;   // NaN
      return negative ? 0.0 : x;  // e^±∞
    }
    if (x > kOverflowThreshold) return INFINITY;
    if (x < kUnderflowThreshold) return 0.0;
  }
  // Argument reduction: x = k·ln 2 + (hi − lo), |hi − lo| ≤ ½ ln 2.
  double hi = 0, lo = 0;
  int k = 0;
  if (high > 0x3FD62E42) {    // |x| > ½ ln 2
    if (high < 0x3FF0A2B2) {  // and < 1.5 ln 2: k = ±1
      hi = negative ? x + kLn2Hi : x - kLn2Hi;
      lo = negative ? -kLn2Lo : kLn2Lo;
      k = negative ? -1 : 1;
    } else {
      k = static_cast<int>(kInvLn2 * x + (negative ? -0.5 : 0.5));
      const double t = k;
      hi = x - t * kLn2Hi;  // exact: t·kLn2Hi has few enough bits
      lo = t * kLn2Lo;
    }
    x = hi - lo;
  } else if (high < 0x3E300000) {  // |x| < 2^-28: e^x = 1 + x to the last bit
    return 1.0 + x;
  }
  const double t = x * x;
  const double c = x - t * (kP1 + t * (kP2 + t * (kP3 + t * (kP4 + t * kP5))));
  if (k == 0) return 1.0 - ((x * c) / (c - 2.0) - x);
  const double y = 1.0 - ((lo - (x * c) / (2.0 - c)) - hi);
  return scale_by_power_of_two(y, k);
}

double portable_sqrt(double x) {
  const uint64_t bits = bits_of(x);
  const uint64_t exponent = (bits >> 52) & 0x7FF;
  if (x != x) return x + x;         // NaN
  if ((bits << 1) == 0) return x;   // ±0
  if (bits >> 63) return NAN;       // negative, −∞ included
  if (exponent == 0x7FF) return x;  // +∞
  // x = m·2^E with m an integer of 53 bits (normalised from a subnormal if need be).
  uint64_t m = bits & kFractionMask;
  int e = 0;
  if (exponent != 0) {
    m |= uint64_t{1} << 52;
    e = static_cast<int>(exponent) - 1075;
  } else {
    e = -1074;
    while (m < (uint64_t{1} << 52)) {
      m <<= 1;
      --e;
    }
  }
  if (e & 1) {  // an odd exponent: make it even, m gets 54 bits
    m <<= 1;
    --e;
  }
  // q = ⌊√(m·2^54)⌋, 54 bits, by restoring bit pairs; r = m·2^54 − q² (r ≤ 2q < 2^55).
  uint64_t q = 0, r = 0;
  for (int i = 0; i < 54; ++i) {
    const uint64_t pair = i <= 26 ? (m >> (52 - 2 * i)) & 3 : 0;
    r = (r << 2) | pair;
    const uint64_t trial = (q << 2) | 1;
    if (r >= trial) {
      r -= trial;
      q = (q << 1) | 1;
    } else {
      q <<= 1;
    }
  }
  // √x = q·2^((E − 54)/2) plus a remainder: keep 53 bits, round to nearest (even on a tie,
  // which a square root never has).
  uint64_t significand = q >> 1;
  const bool round_bit = (q & 1) != 0;
  if (round_bit && (r != 0 || (significand & 1) != 0)) ++significand;
  int power = (e - 54) / 2 + 1;
  if (significand == (uint64_t{1} << 53)) {
    significand >>= 1;
    ++power;
  }
  const uint64_t biased = static_cast<uint64_t>(power + 52 + 1023);
  return double_of((biased << 52) | (significand & kFractionMask));
}

}  // namespace math
}  // namespace fedstat
