// The audit harness on mechanisms whose privacy is known exactly (randomized response, a
// continuous Laplace, a mechanism with an explicit δ-event): its bound must stay below the true
// ε (validity) and come close to it (power), and a δ-event must be charged to δ. Fixed seeds
// (std::mt19937_64, whose output the standard fixes); the power margins are derived from the
// Clopper–Pearson widths at these sample sizes, as each comment says.
#include "tests/privacy_audit/audit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>

namespace fedstat {
namespace testing {
namespace audit {
namespace {

// Uniform in [0, 1) from the top 53 bits.
double uniform(std::mt19937_64& g) {
  return static_cast<double>(g() >> 11) * 0x1p-53;
}

// Randomized response: 1 with probability p, else 0.
Sampler bernoulli(double p, uint64_t seed) {
  auto g = std::make_shared<std::mt19937_64>(seed);
  return [g, p]() -> double { return uniform(*g) < p ? 1 : 0; };
}

TEST(AuditHarness, RandomizedResponseBoundIsValidAndTight) {
  const double eps = 1;
  const double p = std::exp(eps) / (1 + std::exp(eps));
  const AuditResult r =
      audit_threshold(bernoulli(p, 1), bernoulli(1 - p, 2), {1.0}, eps, 0, 100000);
  // 4 bounds (one threshold), α = 2.5e-7 each: the bound is ln(0.724/0.276) ≈ 0.965 expected.
  EXPECT_EQ(r.bounds, 4u);
  EXPECT_DOUBLE_EQ(r.alpha_per_bound, (1 - kConfidence) / 4);
  EXPECT_FALSE(r.exceeds_claim()) << r.summary("randomized response");
  EXPECT_LE(r.epsilon_lower_bound, eps);
  EXPECT_GT(r.epsilon_lower_bound, 0.9 * eps) << r.summary("randomized response");
  // The best test is {y ≥ 1} with D first (or {y < 1} with D′ first: the same pair of counts).
  EXPECT_EQ(r.best.threshold, 1.0);
  EXPECT_EQ(r.best.upper_tail, r.best.d_first);
}

TEST(AuditHarness, ClaimBelowTheTruthIsCaught) {
  // Randomized response at ε = 1 audited against a claim of 0.5.
  const double p = std::exp(1.0) / (1 + std::exp(1.0));
  const AuditResult r =
      audit_threshold(bernoulli(p, 3), bernoulli(1 - p, 4), {1.0}, 0.5, 0, 100000);
  EXPECT_TRUE(r.exceeds_claim()) << r.summary("randomized response");
  EXPECT_GT(r.delta_lower_bound, 0);
}

TEST(AuditHarness, IdenticalInputsGiveNoEvidence) {
  const AuditResult r =
      audit_calibrated(bernoulli(0.3, 5), bernoulli(0.3, 6), 0.1, 0, 10000, 100000);
  EXPECT_EQ(r.epsilon_lower_bound, 0.0) << r.summary("identical inputs");
  EXPECT_EQ(r.delta_lower_bound, 0.0);
}

TEST(AuditHarness, MoreThresholdsCostConfidencePerBound) {
  const double p = std::exp(1.0) / (1 + std::exp(1.0));
  const AuditResult one = audit_threshold(bernoulli(p, 7), bernoulli(1 - p, 8), {1.0}, 1, 0, 50000);
  const AuditResult three =
      audit_threshold(bernoulli(p, 7), bernoulli(1 - p, 8), {-1.0, 1.0, 2.0}, 1, 0, 50000);
  EXPECT_EQ(three.bounds, 12u);
  EXPECT_DOUBLE_EQ(three.alpha_per_bound, (1 - kConfidence) / 12);
  // Same outputs (same seeds), wider intervals: the Bonferroni split can only lower the bound.
  EXPECT_LT(three.epsilon_lower_bound, one.epsilon_lower_bound);
  EXPECT_EQ(three.best.threshold, 1.0);
}

// D: δ0 → 2, otherwise randomized response at ε; D′: δ0 → −1, otherwise the other side.
// Exactly (ε, δ0)-DP in both directions: the outputs 2 and −1 are the δ-events.
Sampler with_delta_event(double p, double delta0, double event_output, uint64_t seed) {
  auto g = std::make_shared<std::mt19937_64>(seed);
  return [g, p, delta0, event_output]() -> double {
    if (uniform(*g) < delta0) return event_output;
    return uniform(*g) < p ? 1 : 0;
  };
}

TEST(AuditHarness, DeltaEventIsChargedToDelta) {
  const double eps = 0.5, delta0 = 0.01;
  const double p = std::exp(eps) / (1 + std::exp(eps));
  const Sampler d = with_delta_event(p, delta0, 2, 9);
  const Sampler d_prime = with_delta_event(1 - p, delta0, -1, 10);
  const AuditResult honest = audit_calibrated(d, d_prime, eps, delta0, 10000, 100000);
  EXPECT_FALSE(honest.exceeds_claim()) << honest.summary("delta event, claimed delta");
  // {y ≥ 2}: 1000 expected hits of D, none of D′; the proven δ is ≈ 0.01 − 5.3·3e-4 − e^0.5·1.6e-4.
  EXPECT_GT(honest.delta_lower_bound, 0.8 * delta0) << honest.summary("delta event");
  // The same outputs' distribution claimed as pure ε-DP: the δ-event proves a large ε.
  const AuditResult pure =
      audit_calibrated(with_delta_event(p, delta0, 2, 11), with_delta_event(1 - p, delta0, -1, 12),
                       eps, 0, 10000, 100000);
  EXPECT_TRUE(pure.exceeds_claim()) << pure.summary("delta event, claimed pure");
  EXPECT_GT(pure.epsilon_lower_bound, 3);
}

// A continuous Laplace(b) (inverse cdf) on a real-valued query of sensitivity 1: ε = 1/b.
Sampler laplace(double location, double b, uint64_t seed) {
  auto g = std::make_shared<std::mt19937_64>(seed);
  return [g, location, b]() -> double {
    const double u = uniform(*g) - 0.5;
    return location - b * (u < 0 ? -1 : 1) * std::log1p(-2 * std::fabs(u));
  };
}

TEST(AuditHarness, RealValuedOutputsUseQuantileThresholds) {
  // For t ≥ 1, P[1 + L ≥ t] / P[L ≥ t] = e^(1/b) exactly; at t = 1 the probabilities are 0.5 and
  // 0.18, so 10^5 samples give ≈ 0.96 (a third of ε lost would mean the candidates are wrong).
  const double b = 1;
  const AuditResult r =
      audit_calibrated(laplace(0, b, 13), laplace(1, b, 14), 1 / b, 0, 20000, 100000);
  EXPECT_FALSE(r.exceeds_claim()) << r.summary("continuous Laplace");
  EXPECT_GT(r.epsilon_lower_bound, 0.9 / b) << r.summary("continuous Laplace");
  EXPECT_EQ(r.thresholds.size(), 2u);
  // At a third of the scale the same harness must exceed the claim (true ε = 3).
  const AuditResult wrong =
      audit_calibrated(laplace(0, b / 3, 15), laplace(1, b / 3, 16), 1 / b, 0, 20000, 100000);
  EXPECT_TRUE(wrong.exceeds_claim()) << wrong.summary("continuous Laplace at b/3");
}

TEST(AuditHarness, ScaleFromTheEnvironment) {
  const char* saved = std::getenv("FEDSTAT_AUDIT_SCALE");
  const std::string saved_value = saved ? saved : "";
  unsetenv("FEDSTAT_AUDIT_SCALE");
  EXPECT_EQ(audit_scale(), 1.0);
  setenv("FEDSTAT_AUDIT_SCALE", "10", 1);
  EXPECT_EQ(audit_scale(), 10.0);
  EXPECT_EQ(scaled(20000, audit_scale()), 200000u);
  for (const char* bad : {"0.5", "ten", "10x", "1e5", "-3"}) {
    setenv("FEDSTAT_AUDIT_SCALE", bad, 1);
    EXPECT_EQ(audit_scale(), 0.0) << bad;
  }
  if (saved) {
    setenv("FEDSTAT_AUDIT_SCALE", saved_value.c_str(), 1);
  } else {
    unsetenv("FEDSTAT_AUDIT_SCALE");
  }
}

}  // namespace
}  // namespace audit
}  // namespace testing
}  // namespace fedstat
