#include "sdk/noise/discrete_gaussian.h"

#include "sdk/noise/bernoulli.h"
#include "sdk/noise/discrete_laplace.h"

namespace fedstat {
namespace noise {

Result<int64_t> discrete_gaussian(RandomBits& bits, Rational sigma2) {
  if (!sigma2.valid() || sigma2.is_zero()) {
    return invalid_argument("discrete Gaussian variance sigma^2 must be a positive rational");
  }
  const uint64_t a = sigma2.num;
  const uint64_t b = sigma2.den;
  const uint64_t t = integer_sqrt(sigma2.floor()) + 1;  // ⌊σ⌋ + 1 (⌊√x⌋ = ⌊√⌊x⌋⌋)
  // Denominator 2·a·b·t², the same for every round.
  UInt128 den = multiply(a, b);
  if (!multiply_checked(den, t, den) || !multiply_checked(den, t, den) ||
      !multiply_checked(den, 2, den)) {
    return out_of_range("discrete Gaussian: sigma^2 too large for exact 128-bit arithmetic");
  }
  for (;;) {
    FEDSTAT_ASSIGN_OR_RETURN(const int64_t y, discrete_laplace(bits, Rational{t, 1}));
    const uint64_t magnitude =
        y < 0 ? static_cast<uint64_t>(-(y + 1)) + 1 : static_cast<uint64_t>(y);
    // |Y|·b·t − a, as a magnitude.
    UInt128 ybt = multiply(magnitude, b);
    if (!multiply_checked(ybt, t, ybt)) {
      return out_of_range("discrete Gaussian: a tail sample overflowed 128-bit arithmetic");
    }
    const UInt128 diff = ybt >= UInt128(a) ? ybt - UInt128(a) : UInt128(a) - ybt;
    if (!diff.fits_u64()) {
      return out_of_range("discrete Gaussian: a tail sample overflowed 128-bit arithmetic");
    }
    const UInt128 num = multiply(diff.lo, diff.lo);
    FEDSTAT_ASSIGN_OR_RETURN(const bool accept, bernoulli_exp_minus(bits, num, den));
    if (accept) return y;
  }
}

}  // namespace noise
}  // namespace fedstat
