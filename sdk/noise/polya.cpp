#include "sdk/noise/polya.h"

#include "sdk/noise/bernoulli.h"
#include "sdk/noise/discrete_laplace.h"

namespace fedstat {
namespace noise {

Result<uint64_t> negative_binomial_fraction(RandomBits& bits, Rational scale, uint32_t clients) {
  if (clients == 0) return invalid_argument("Polya shares need at least one client");
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
