#include "sdk/sketch/sampling_weight.h"

#include <math.h>

namespace fedstat {
namespace sketch {
namespace {

constexpr double kLn2 = 0.69314718055994530942;

// ln(x) for x > 0: x = m·2^e with m ∈ [0.5, 1) exactly (frexp), rescaled to [√½, √2), then
// ln(m) = 2·atanh(s), s = (m − 1)/(m + 1), |s| < 0.172, summed to 2^-60 relative.
double portable_log(double x) {
  int e = 0;
  double m = frexp(x, &e);
  if (m < 0.70710678118654752440) {
    m *= 2;
    e -= 1;
  }
  const double s = (m - 1) / (m + 1);
  const double s2 = s * s;
  double term = s, sum = 0;
  for (int n = 1; n < 60; n += 2) {
    sum += term / n;
    term *= s2;
    if (term < 1e-40 && term > -1e-40) break;
  }
  return 2 * sum + e * kLn2;
}

// exp(z) − 1 for z ≤ 0: halve z until |z| < 2^-4, Taylor series there, then square back with
// expm1(2y) = expm1(y)·(expm1(y) + 2).
double portable_expm1(double z) {
  if (z < -40) return -1;
  int halvings = 0;
  while (z < -0.0625) {
    z *= 0.5;
    ++halvings;
  }
  double term = z, sum = 0;
  for (int n = 2; n < 40; ++n) {
    sum += term;
    term *= z / n;
    if (term < 1e-40 && term > -1e-40) break;
  }
  for (int i = 0; i < halvings; ++i) sum = sum * (sum + 2);
  return sum;
}

}  // namespace

double uniform_from_hash(uint64_t hash) {
  // 52 bits plus ½: exactly representable, so u never rounds to 0 or 1.
  return (static_cast<double>(hash >> 12) + 0.5) * (1.0 / 4503599627370496.0);
}

double sampling_weight(double u, uint32_t k) {
  const double z = portable_log(u) / static_cast<double>(k);  // ln(u^(1/k)) < 0
  return -1 / portable_expm1(z);
}

uint64_t fixed_sampling_weight(uint64_t hash, uint32_t k) {
  const double w = sampling_weight(uniform_from_hash(hash), k);
  const double scaled = w * (1u << kWeightFractionBits) + 0.5;
  // W ≥ 1 always; anything else (no finite value) can only come from u at the top end.
  if (!(scaled >= 1) || !(scaled < static_cast<double>(kMaxFixedWeight))) return kMaxFixedWeight;
  return static_cast<uint64_t>(scaled);
}

}  // namespace sketch
}  // namespace fedstat
