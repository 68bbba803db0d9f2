// The privacy audit's harness (host tests only): a distinguishing experiment between two
// neighbouring inputs D and D′ that turns a mechanism's observed outputs into a statistically
// valid LOWER bound on its ε, to be compared with the ε the code claims.
//
// Method. A mechanism M is (ε, δ)-DP only if, for every set S of outputs and both orders of the
// neighbours, P[M(D) ∈ S] ≤ e^ε·P[M(D′) ∈ S] + δ. So for any S fixed in advance,
//     ε ≥ ln((P[M(D) ∈ S] − δ) / P[M(D′) ∈ S]).
// audit_threshold runs M `samples` times on D and on D′ (each sampler returns one output per
// call, real or integer, and owns its fixed-seed random source), counts the outputs in
// S_t = {y ≥ t} for every given threshold t, and replaces the two probabilities by exact one-sided
// Clopper–Pearson bounds (clopper_pearson.h): a lower bound on P[M(D) ∈ S], an upper bound on
// P[M(D′) ∈ S]. Every threshold yields four tests: S_t and its complement {y < t}, each in both
// directions (D over D′ and D′ over D); the complement's bounds are 1 minus S_t's, so 4 one-sided
// bounds per threshold cover all four tests. A Bonferroni correction splits the failure
// probability 1 − confidence evenly over those 4·|thresholds| bounds: if they all hold, no test
// can report more than the mechanism's true ε, so a CORRECT mechanism makes
// epsilon_lower_bound > claimed ε with probability at most 1 − confidence (the tests use
// 1 − 1e-6: a correct mechanism would fail about once in a million seeds; the seeds are fixed,
// so a given build always passes or always fails).
//
// The sets must not depend on the audit samples. calibrate_thresholds picks them from a separate
// calibration draw (the samplers' next outputs, never reused): it scores every candidate
// threshold by the bound the audit would give if the audit draw had (pessimistically shrunk)
// calibration frequencies, and keeps the best few. audit_calibrated does both steps.
//
// The result also states the δ the outputs prove at the claimed ε,
//     δ_lb = max over tests of p_lo(first ∈ S) − e^(claimed ε)·p_hi(second ∈ S),
// which is above the claimed δ exactly when epsilon_lower_bound is above the claimed ε: the
// useful figure for a δ-event (an output one neighbour never produces), where ε_lb is 0.
//
// Adding a mechanism: write two samplers (D and D′ worst-case neighbours, distinct fixed seeds),
// call audit_calibrated with the ε and δ the code claims, EXPECT_FALSE(exceeds_claim()), and add a
// negative control (a deliberately mis-calibrated variant whose audit must exceed the claim).
// Memory: the calibration draw is kept (8 bytes per output); the audit draw is only counted.
#ifndef FEDSTAT_TESTS_PRIVACY_AUDIT_AUDIT_H_
#define FEDSTAT_TESTS_PRIVACY_AUDIT_AUDIT_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tests/privacy_audit/clopper_pearson.h"

namespace fedstat {
namespace testing {
namespace audit {

// One output of the mechanism per call (integers up to 2^53 are exact as doubles).
using Sampler = std::function<double()>;

constexpr double kConfidence = 1 - 1e-6;

// One rejection set in one direction: S = {y ≥ threshold} (upper_tail) or {y < threshold}, and
// "first" is D (d_first) or D′.
struct SetBound {
  double threshold = 0;
  bool upper_tail = true;
  bool d_first = true;
  uint64_t hits_first = 0;    // outputs of the first input in S
  uint64_t hits_second = 0;   // outputs of the second input in S
  double p_first_lower = 0;   // Clopper–Pearson lower bound on P[first ∈ S]
  double p_second_upper = 1;  // Clopper–Pearson upper bound on P[second ∈ S]
  double epsilon = -std::numeric_limits<double>::infinity();  // −∞: p_first_lower ≤ δ
  double delta = -1;  // p_first_lower − e^(claimed ε)·p_second_upper

  std::string describe() const {
    char text[160];
    std::snprintf(text, sizeof(text), "S = {y %s %g}, %s, hits %llu vs %llu",
                  upper_tail ? ">=" : "<", threshold, d_first ? "D over D'" : "D' over D",
                  static_cast<unsigned long long>(hits_first),
                  static_cast<unsigned long long>(hits_second));
    return text;
  }
};

struct AuditResult {
  double epsilon_lower_bound = 0;  // max over the tests, at least 0 (0: no test gave evidence)
  double delta_lower_bound = 0;    // max over the tests of δ_lb at the claimed ε, at least 0
  SetBound best;  // the test giving the largest positive ε (if none, the largest δ_lb)
  double claimed_epsilon = 0;
  double claimed_delta = 0;
  uint64_t samples = 0;        // per input
  size_t bounds = 0;           // one-sided confidence bounds the Bonferroni split covers
  double alpha_per_bound = 0;  // (1 − confidence)/bounds
  std::vector<double> thresholds;

  bool exceeds_claim() const { return epsilon_lower_bound > claimed_epsilon; }
  // "audit <mechanism>: epsilon lower bound X (claimed Y), N samples; ..."
  std::string summary(const std::string& mechanism) const {
    char text[512];
    std::snprintf(text, sizeof(text),
                  "audit %s: epsilon lower bound %.4f (claimed %.4f), %llu samples; delta lower "
                  "bound at the claimed epsilon %.3g (claimed %.3g); best test %s",
                  mechanism.c_str(), epsilon_lower_bound, claimed_epsilon,
                  static_cast<unsigned long long>(samples), delta_lower_bound, claimed_delta,
                  best.describe().c_str());
    return text;
  }
};

namespace detail {

// The four tests of one threshold from its hit counts (n outputs per input).
inline void tests_of_threshold(double threshold, uint64_t hits_d, uint64_t hits_d_prime, uint64_t n,
                               double claimed_epsilon, double delta, double alpha,
                               SetBound out[4]) {
  const double d_lo = clopper_pearson_lower(hits_d, n, alpha);
  const double d_hi = clopper_pearson_upper(hits_d, n, alpha);
  const double dp_lo = clopper_pearson_lower(hits_d_prime, n, alpha);
  const double dp_hi = clopper_pearson_upper(hits_d_prime, n, alpha);
  for (int i = 0; i < 4; ++i) {
    SetBound& s = out[i];
    s = SetBound();
    s.threshold = threshold;
    s.upper_tail = i < 2;
    s.d_first = i % 2 == 0;
    const uint64_t in_d = s.upper_tail ? hits_d : n - hits_d;
    const uint64_t in_dp = s.upper_tail ? hits_d_prime : n - hits_d_prime;
    // Bounds on P[· ∈ {y < t}] are 1 minus those on P[· ∈ {y ≥ t}] (the same events).
    const double lo_d = s.upper_tail ? d_lo : 1 - d_hi;
    const double hi_d = s.upper_tail ? d_hi : 1 - d_lo;
    const double lo_dp = s.upper_tail ? dp_lo : 1 - dp_hi;
    const double hi_dp = s.upper_tail ? dp_hi : 1 - dp_lo;
    s.hits_first = s.d_first ? in_d : in_dp;
    s.hits_second = s.d_first ? in_dp : in_d;
    s.p_first_lower = s.d_first ? lo_d : lo_dp;
    s.p_second_upper = s.d_first ? hi_dp : hi_d;
    if (s.p_first_lower > delta) {
      s.epsilon = s.p_second_upper > 0 ? std::log((s.p_first_lower - delta) / s.p_second_upper)
                                       : std::numeric_limits<double>::infinity();
    }
    s.delta = s.p_first_lower - std::exp(claimed_epsilon) * s.p_second_upper;
  }
}

// Better: larger positive ε; among tests without positive ε evidence (ε ≤ 0 or −∞: a δ-event
// that stays within δ), larger δ_lb.
inline bool better(const SetBound& a, const SetBound& b) {
  const double ea = std::max(0.0, a.epsilon), eb = std::max(0.0, b.epsilon);
  if (ea != eb) return ea > eb;
  return a.delta > b.delta;
}

inline uint64_t count_at_least(const std::vector<double>& sorted, double t) {
  return static_cast<uint64_t>(sorted.end() - std::lower_bound(sorted.begin(), sorted.end(), t));
}

}  // namespace detail

// The audit with thresholds fixed in advance (see the top of this file). samples ≥ 1 per input.
inline AuditResult audit_threshold(const Sampler& d, const Sampler& d_prime,
                                   const std::vector<double>& thresholds, double claimed_epsilon,
                                   double delta, uint64_t samples,
                                   double confidence = kConfidence) {
  AuditResult r;
  r.claimed_epsilon = claimed_epsilon;
  r.claimed_delta = delta;
  r.samples = samples;
  r.thresholds = thresholds;
  r.bounds = 4 * thresholds.size();
  if (thresholds.empty() || samples == 0) return r;
  r.alpha_per_bound = (1 - confidence) / static_cast<double>(r.bounds);
  std::vector<uint64_t> hits_d(thresholds.size()), hits_dp(thresholds.size());
  for (uint64_t i = 0; i < samples; ++i) {
    const double y = d();
    for (size_t j = 0; j < thresholds.size(); ++j) hits_d[j] += y >= thresholds[j];
  }
  for (uint64_t i = 0; i < samples; ++i) {
    const double y = d_prime();
    for (size_t j = 0; j < thresholds.size(); ++j) hits_dp[j] += y >= thresholds[j];
  }
  bool first = true;
  for (size_t j = 0; j < thresholds.size(); ++j) {
    SetBound tests[4];
    detail::tests_of_threshold(thresholds[j], hits_d[j], hits_dp[j], samples, claimed_epsilon,
                               delta, r.alpha_per_bound, tests);
    for (const SetBound& s : tests) {
      if (first || detail::better(s, r.best)) r.best = s;
      first = false;
      r.delta_lower_bound = std::max(r.delta_lower_bound, s.delta);
    }
  }
  r.epsilon_lower_bound = std::max(0.0, r.best.epsilon);
  return r;
}

// Draws calibration_samples outputs from each sampler and returns up to `count` thresholds,
// best first. Each candidate is scored by its best test's predicted audit bound: the calibration
// frequencies of the test's two inputs, each moved kCalibrationShrink standard errors against
// the test (a rare set's frequency is noisy, and picking the luckiest one would pick noise), are
// scaled to audit_samples outputs and turned into Clopper–Pearson bounds at the audit's α (with
// `count` thresholds); the score is the largest positive ε, without one the largest δ_lb.
// Candidates: every distinct output of the calibration draw, or max_candidates evenly spaced
// order statistics of it when there are more (real outputs).
constexpr double kCalibrationShrink = 2;

inline std::vector<double> calibrate_thresholds(const Sampler& d, const Sampler& d_prime,
                                                double claimed_epsilon, double delta,
                                                uint64_t calibration_samples,
                                                uint64_t audit_samples, size_t count,
                                                double confidence = kConfidence,
                                                size_t max_candidates = 256) {
  std::vector<double> candidates;
  if (calibration_samples == 0 || audit_samples == 0 || count == 0 || max_candidates < 2) {
    return candidates;
  }
  std::vector<double> yd(calibration_samples), ydp(calibration_samples);
  for (double& y : yd) y = d();
  for (double& y : ydp) y = d_prime();
  std::sort(yd.begin(), yd.end());
  std::sort(ydp.begin(), ydp.end());
  std::vector<double> pooled(yd);
  pooled.insert(pooled.end(), ydp.begin(), ydp.end());
  std::sort(pooled.begin(), pooled.end());
  pooled.erase(std::unique(pooled.begin(), pooled.end()), pooled.end());
  if (pooled.size() <= max_candidates) {
    candidates = pooled;
  } else {
    for (size_t i = 0; i < max_candidates; ++i) {
      candidates.push_back(pooled[i * (pooled.size() - 1) / (max_candidates - 1)]);
    }
  }
  const double alpha = (1 - confidence) / static_cast<double>(4 * count);
  const double n_cal = static_cast<double>(calibration_samples);
  const double n = static_cast<double>(audit_samples);
  // Predicted audit hits of a set whose calibration frequency is f, moved by `sign` errors.
  auto predicted = [&](double f, double sign) {
    const double se = std::sqrt(std::max(f * (1 - f), 1 / n_cal) / n_cal);
    const double moved = std::min(1.0, std::max(0.0, f + sign * kCalibrationShrink * se));
    return static_cast<uint64_t>(std::llround(moved * n));
  };
  std::vector<std::pair<SetBound, double>> scored;  // the best test of each candidate
  for (double t : candidates) {
    const double fd = static_cast<double>(detail::count_at_least(yd, t)) / n_cal;
    const double fdp = static_cast<double>(detail::count_at_least(ydp, t)) / n_cal;
    SetBound best;
    bool first = true;
    for (int i = 0; i < 4; ++i) {
      const bool upper = i < 2, d_first = i % 2 == 0;
      const double f_first = upper ? (d_first ? fd : fdp) : 1 - (d_first ? fd : fdp);
      const double f_second = upper ? (d_first ? fdp : fd) : 1 - (d_first ? fdp : fd);
      SetBound s;
      s.threshold = t;
      s.upper_tail = upper;
      s.d_first = d_first;
      s.hits_first = predicted(f_first, -1);
      s.hits_second = predicted(f_second, +1);
      s.p_first_lower = clopper_pearson_lower(s.hits_first, audit_samples, alpha);
      s.p_second_upper = clopper_pearson_upper(s.hits_second, audit_samples, alpha);
      if (s.p_first_lower > delta)
        s.epsilon = std::log((s.p_first_lower - delta) / s.p_second_upper);
      s.delta = s.p_first_lower - std::exp(claimed_epsilon) * s.p_second_upper;
      if (first || detail::better(s, best)) best = s;
      first = false;
    }
    scored.emplace_back(best, t);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const std::pair<SetBound, double>& a, const std::pair<SetBound, double>& b) {
                     return detail::better(a.first, b.first);
                   });
  std::vector<double> chosen;
  for (size_t i = 0; i < scored.size() && chosen.size() < count; ++i) {
    chosen.push_back(scored[i].second);
  }
  return chosen;
}

// calibrate_thresholds, then audit_threshold on fresh outputs of the same samplers.
inline AuditResult audit_calibrated(const Sampler& d, const Sampler& d_prime,
                                    double claimed_epsilon, double delta,
                                    uint64_t calibration_samples, uint64_t samples,
                                    size_t thresholds = 2, double confidence = kConfidence) {
  const std::vector<double> chosen = calibrate_thresholds(
      d, d_prime, claimed_epsilon, delta, calibration_samples, samples, thresholds, confidence);
  return audit_threshold(d, d_prime, chosen, claimed_epsilon, delta, samples, confidence);
}

// FEDSTAT_AUDIT_SCALE (default 1) multiplies every sample count, for the long run
// (scripts/privacy_audit.sh --long). Returns 0 for a value that is not a number in [1, 10^4];
// callers fail the test then.
inline double audit_scale() {
  const char* text = std::getenv("FEDSTAT_AUDIT_SCALE");
  if (text == nullptr || *text == '\0') return 1;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v >= 1 && v <= 1e4)) return 0;
  return v;
}

inline uint64_t scaled(uint64_t samples, double scale) {
  return static_cast<uint64_t>(std::llround(static_cast<double>(samples) * scale));
}

}  // namespace audit
}  // namespace testing
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_PRIVACY_AUDIT_AUDIT_H_
