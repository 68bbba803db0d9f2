// Chi-square goodness-of-fit helpers for the statistical tests (host tests only).
//
// Thresholds: a test fails when Pearson's statistic exceeds the upper critical value of the
// chi-square distribution at p = 1e-6 for its degrees of freedom, so a correct sampler fails
// about once in a million runs; every test uses a fixed seed, so a given build either always
// passes or always fails. The critical value is computed exactly (regularized upper incomplete
// gamma Q(df/2, x/2) by series / continued fraction, then bisection); chi_square_test.cpp pins
// it against scipy.stats.chi2.isf.
#ifndef FEDSTAT_TESTS_COMMON_CHI_SQUARE_H_
#define FEDSTAT_TESTS_COMMON_CHI_SQUARE_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

namespace fedstat {
namespace testing {

// Q(a, x) = Γ(a, x)/Γ(a), the upper regularized incomplete gamma function.
inline double upper_incomplete_gamma_q(double a, double x) {
  if (x <= 0) return 1.0;
  const double log_prefix = -x + a * std::log(x) - std::lgamma(a);
  if (x < a + 1) {  // series for P(a, x)
    double term = 1.0 / a, sum = term;
    for (int n = 1; n < 100000; ++n) {
      term *= x / (a + n);
      sum += term;
      if (std::fabs(term) < std::fabs(sum) * 1e-16) break;
    }
    return 1.0 - sum * std::exp(log_prefix);
  }
  // Continued fraction for Q(a, x) (modified Lentz).
  double b = x + 1 - a, c = 1e300, d = 1 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < 1e-300) d = 1e-300;
    c = b + an / c;
    if (std::fabs(c) < 1e-300) c = 1e-300;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < 1e-16) break;
  }
  return std::exp(log_prefix) * h;
}

// x with P(χ²_df > x) = 1e-6.
inline double chi_square_critical_p1e6(double degrees_of_freedom) {
  double lo = 0, hi = 10 * degrees_of_freedom + 200;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (upper_incomplete_gamma_q(degrees_of_freedom / 2, mid / 2) > 1e-6 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// Pearson's statistic of observed counts against equal expected counts.
inline double chi_square_uniform(const std::vector<uint64_t>& counts) {
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  const double expected = static_cast<double>(total) / static_cast<double>(counts.size());
  double statistic = 0;
  for (uint64_t c : counts) {
    const double d = static_cast<double>(c) - expected;
    statistic += d * d / expected;
  }
  return statistic;
}

struct GoodnessOfFit {
  double statistic = 0;
  double critical = 0;  // at p = 1e-6
  size_t bins = 0;
  bool passes() const { return statistic < critical; }
};

// Pearson's test of integer samples against a pmf. Values lo..hi are grouped, left to right,
// into bins of expected count ≥ 10; samples below lo or above hi count in the first or last bin,
// whose expected counts take the pmf's mass outside [lo, hi]. Choose [lo, hi] to hold all but a
// negligible tail.
inline GoodnessOfFit chi_square_against_pmf(const std::map<int64_t, uint64_t>& observed,
                                            const std::function<double(int64_t)>& pmf, int64_t lo,
                                            int64_t hi) {
  uint64_t n = 0;
  for (const auto& kv : observed) n += kv.second;
  std::vector<double> expected;
  std::vector<double> counts;
  double inside_mass = 0;
  double e = 0, o = 0;
  for (int64_t k = lo; k <= hi; ++k) {
    const double p = pmf(k);
    inside_mass += p;
    e += p * static_cast<double>(n);
    auto it = observed.find(k);
    if (it != observed.end()) o += static_cast<double>(it->second);
    if (e >= 10) {
      expected.push_back(e);
      counts.push_back(o);
      e = o = 0;
    }
  }
  if (!expected.empty()) {
    expected.back() += e;
    counts.back() += o;
  } else {
    expected.push_back(e);
    counts.push_back(o);
  }
  // Outside [lo, hi]: into the edge bins.
  const double outside = std::fmax(0.0, 1.0 - inside_mass) * static_cast<double>(n);
  expected.back() += outside;
  for (const auto& kv : observed) {
    if (kv.first < lo) counts.front() += static_cast<double>(kv.second);
    if (kv.first > hi) counts.back() += static_cast<double>(kv.second);
  }
  GoodnessOfFit fit;
  for (size_t i = 0; i < expected.size(); ++i) {
    const double d = counts[i] - expected[i];
    fit.statistic += d * d / expected[i];
  }
  fit.bins = expected.size();
  fit.critical = chi_square_critical_p1e6(static_cast<double>(fit.bins > 1 ? fit.bins - 1 : 1));
  return fit;
}

}  // namespace testing
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_COMMON_CHI_SQUARE_H_
