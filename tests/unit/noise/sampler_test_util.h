// Shared helpers for the sampler tests: fixed-seed bit sources, histograms, exact pmfs in
// double precision (the oracle), and mean/variance checks.
#ifndef FEDSTAT_TESTS_UNIT_NOISE_SAMPLER_TEST_UTIL_H_
#define FEDSTAT_TESTS_UNIT_NOISE_SAMPLER_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "sdk/base/random_bits.h"
#include "sdk/base/seeded_stream.h"
#include "tests/common/chi_square.h"

namespace fedstat {
namespace noise {
namespace testing_util {

// A seeded stream plus its bit reader; `salt` picks the stream so every test draws fresh bits.
struct SeededBits {
  explicit SeededBits(uint64_t salt) : stream(seed(), salt), bits(stream) {}
  static Seed256 seed() {
    Seed256 s;
    for (int i = 0; i < 32; ++i) s.bytes[i] = static_cast<uint8_t>(0xA5 ^ (i * 29));
    return s;
  }
  SeededStream stream;
  RandomBits bits;
};

template <typename Draw>
std::map<int64_t, uint64_t> histogram(size_t n, Draw draw) {
  std::map<int64_t, uint64_t> counts;
  for (size_t i = 0; i < n; ++i) ++counts[draw()];
  return counts;
}

inline void expect_fits(const std::map<int64_t, uint64_t>& observed,
                        const std::function<double(int64_t)>& pmf, int64_t lo, int64_t hi,
                        const char* what) {
  const auto fit = fedstat::testing::chi_square_against_pmf(observed, pmf, lo, hi);
  EXPECT_TRUE(fit.passes()) << what << ": chi-square " << fit.statistic << " over " << fit.bins
                            << " bins, critical value at p = 1e-6 is " << fit.critical;
}

// Sample mean within 5.3 standard errors of the true mean (two-sided p ≈ 1e-7), and the sample
// variance within 5.3 of its own standard errors (normal approximation, with the excess
// kurtosis the caller supplies for the distribution).
inline void expect_moments(const std::map<int64_t, uint64_t>& observed, double mean,
                           double variance, double excess_kurtosis, const char* what) {
  double n = 0, sum = 0;
  for (const auto& kv : observed) {
    n += static_cast<double>(kv.second);
    sum += static_cast<double>(kv.first) * static_cast<double>(kv.second);
  }
  const double m = sum / n;
  double ss = 0;
  for (const auto& kv : observed) {
    const double d = static_cast<double>(kv.first) - m;
    ss += d * d * static_cast<double>(kv.second);
  }
  const double v = ss / (n - 1);
  EXPECT_LT(std::fabs(m - mean), 5.3 * std::sqrt(variance / n)) << what << ": mean " << m;
  const double var_se = variance * std::sqrt((2.0 + excess_kurtosis) / n);
  EXPECT_LT(std::fabs(v - variance), 5.3 * var_se) << what << ": variance " << v;
}

inline double poisson_pmf(double lambda, int64_t k) {
  if (k < 0) return 0;
  if (lambda == 0) return k == 0 ? 1 : 0;
  const double kk = static_cast<double>(k);
  return std::exp(kk * std::log(lambda) - lambda - std::lgamma(kk + 1));
}

// n draws of a Poisson(λ) sampler checked against the exact pmf (chi-square) and moments.
template <typename Draw>
void expect_poisson(double lambda, size_t n, Draw draw, const char* what) {
  auto h = histogram(n, [&] {
    auto r = draw();
    EXPECT_TRUE(r.ok()) << r.status().message();
    return static_cast<int64_t>(r.value());
  });
  const int64_t lo =
      std::max<int64_t>(0, static_cast<int64_t>(lambda - 12 * std::sqrt(lambda) - 5));
  const int64_t hi = static_cast<int64_t>(lambda + 12 * std::sqrt(lambda) + 15);
  expect_fits(
      h, [lambda](int64_t k) { return poisson_pmf(lambda, k); }, lo, hi, what);
  expect_moments(h, lambda, lambda, 1 / lambda, what);
}

inline double skellam_pmf(double lambda, int64_t d) {  // Σ_k P(k + |d|) P(k)
  const int64_t a = d < 0 ? -d : d;
  const int64_t span = static_cast<int64_t>(lambda + 40 * std::sqrt(lambda + 1) + 40);
  double sum = 0;
  for (int64_t k = 0; k <= span; ++k) sum += poisson_pmf(lambda, k) * poisson_pmf(lambda, k + a);
  return sum;
}

// Sk(λ)'s pmf at 0..span (symmetric), e^−2λ·I_d(2λ), for any λ: Miller's backward recurrence
// I_{d−1}(x) = I_{d+1}(x) + (2d/x)·I_d(x) (stable downwards), started far above span and
// normalised by I_0 + 2·Σ I_d = e^x. Relative error ~1e-12, plenty for a chi-square oracle.
inline std::vector<double> skellam_pmf_table(double lambda, int64_t span) {
  const double x = 2 * lambda;
  const int64_t top = span + static_cast<int64_t>(40 * std::sqrt(x + 1) + 60);
  std::vector<double> v(static_cast<size_t>(top + 2), 0.0);
  v[static_cast<size_t>(top + 1)] = 0;
  v[static_cast<size_t>(top)] = 1e-300;
  for (int64_t d = top; d >= 1; --d) {
    const size_t i = static_cast<size_t>(d);
    v[i - 1] = v[i + 1] + (2.0 * static_cast<double>(d) / x) * v[i];
    if (v[i - 1] > 1e200) {  // rescale what is computed so far
      for (size_t k = i - 1; k < v.size(); ++k) v[k] *= 1e-200;
    }
  }
  double total = v[0];
  for (size_t d = 1; d < v.size(); ++d) total += 2 * v[d];
  std::vector<double> pmf(static_cast<size_t>(span + 1));
  for (int64_t d = 0; d <= span; ++d)
    pmf[static_cast<size_t>(d)] = v[static_cast<size_t>(d)] / total;
  return pmf;
}

inline double discrete_laplace_pmf(double scale, int64_t k) {
  const double q = std::exp(-1.0 / scale);
  return (1 - q) / (1 + q) * std::pow(q, std::fabs(static_cast<double>(k)));
}

}  // namespace testing_util
}  // namespace noise
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_UNIT_NOISE_SAMPLER_TEST_UTIL_H_
