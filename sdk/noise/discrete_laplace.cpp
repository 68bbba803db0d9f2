#include "sdk/noise/discrete_laplace.h"

#include "sdk/noise/bernoulli.h"

namespace fedstat {
namespace noise {

Result<uint64_t> geometric(RandomBits& bits, Rational scale) {
  if (!scale.valid() || scale.is_zero()) {
    return invalid_argument("geometric/discrete Laplace scale must be a positive rational");
  }
  const uint64_t t = scale.num;  // CKS's t and s: P(y) ∝ exp(−y·s/t)
  const uint64_t s = scale.den;
  for (;;) {
    FEDSTAT_ASSIGN_OR_RETURN(const uint64_t u, bits.uniform_below(t));
    FEDSTAT_ASSIGN_OR_RETURN(const bool keep, bernoulli_exp_minus(bits, UInt128(u), UInt128(t)));
    if (!keep) continue;
    uint64_t v = 0;
    for (;;) {
      FEDSTAT_ASSIGN_OR_RETURN(const bool a, bernoulli_exp_minus(bits, UInt128(1), UInt128(1)));
      if (!a) break;
      ++v;
    }
    const UInt128 tv = multiply(t, v);
    if (!tv.fits_u64() || tv.lo > UINT64_MAX - u) {
      return out_of_range("geometric: scale numerator too large for exact 64-bit arithmetic");
    }
    return (tv.lo + u) / s;
  }
}

Result<int64_t> discrete_laplace(RandomBits& bits, Rational scale) {
  for (;;) {
    FEDSTAT_ASSIGN_OR_RETURN(const uint64_t magnitude, geometric(bits, scale));
    FEDSTAT_ASSIGN_OR_RETURN(const bool negative, bits.bit());
    if (negative && magnitude == 0) continue;
    if (magnitude > static_cast<uint64_t>(INT64_MAX)) {
      return out_of_range("discrete Laplace sample does not fit in int64");
    }
    const int64_t value = static_cast<int64_t>(magnitude);
    return negative ? -value : value;
  }
}

Result<int64_t> truncated_discrete_laplace(RandomBits& bits, Rational scale, uint64_t bound) {
  if (bound == 0) {
    return invalid_argument("truncated discrete Laplace bound must be >= 1 (0 adds no noise)");
  }
  for (;;) {
    FEDSTAT_ASSIGN_OR_RETURN(const int64_t value, discrete_laplace(bits, scale));
    const uint64_t magnitude =
        value < 0 ? static_cast<uint64_t>(-(value + 1)) + 1 : static_cast<uint64_t>(value);
    if (magnitude <= bound) return value;
  }
}

}  // namespace noise
}  // namespace fedstat
