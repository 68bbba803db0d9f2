#include "sdk/noise/polya.h"

#include "sdk/noise/bernoulli.h"
#include "sdk/noise/discrete_laplace.h"

namespace fedstat {
namespace noise {

Status check_polya_params(Rational scale, uint32_t clients) {
  if (!scale.valid() || scale.is_zero()) {
    return invalid_argument("Polya share scale must be a positive rational (0 adds no noise)");
  }
  if (clients == 0) return invalid_argument("Polya shares need at least one client");
  const uint64_t whole = scale.floor();
  if (whole > kMaxPolyaScale || (whole == kMaxPolyaScale && scale.num % scale.den != 0)) {
    return out_of_range("Polya share scale must be at most kMaxPolyaScale (10^4)");
  }
  return Status();
}

Result<uint64_t> negative_binomial_fraction(RandomBits& bits, Rational scale, uint32_t clients) {
  FEDSTAT_RETURN_IF_ERROR(check_polya_params(scale, clients));
  for (;;) {
    FEDSTAT_ASSIGN_OR_RETURN(const uint64_t k, geometric(bits, scale));
    ProductTrial weight(bits);  // w(k) = Π_{i<k} (n·i + 1)/(n·(i + 1))
    bool accepted = true;
    for (uint64_t i = 0; i < k && accepted; ++i) {
      const UInt128 num = multiply(clients, i) + UInt128(1);
      const UInt128 den = multiply(clients, i + 1);
      FEDSTAT_ASSIGN_OR_RETURN(accepted, weight.add(num, den));
    }
    if (accepted) {
      FEDSTAT_ASSIGN_OR_RETURN(accepted, weight.finish());
    }
    if (accepted) return k;
  }
}

Result<int64_t> polya_share(RandomBits& bits, Rational scale, uint32_t clients) {
  FEDSTAT_ASSIGN_OR_RETURN(const uint64_t x, negative_binomial_fraction(bits, scale, clients));
  FEDSTAT_ASSIGN_OR_RETURN(const uint64_t y, negative_binomial_fraction(bits, scale, clients));
  return static_cast<int64_t>(x) - static_cast<int64_t>(y);
}

}  // namespace noise
}  // namespace fedstat
