// Accountants against reference values computed independently with scipy
// (tests/vectors/privacy_reference.py → privacy_reference_vectors.h), plus the properties the
// formulas must have.
#include "sdk/privacy/accountants.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/vectors/privacy_reference_vectors.h"

namespace fedstat {
namespace privacy {
namespace {

TEST(SkellamAccountantTest, RdpMatchesReference) {
  for (const auto& v : reference::kSkellamRdp) {
    const auto rdp = skellam_rdp(static_cast<uint32_t>(v[0]), Sensitivity{v[1], v[2]}, v[3]);
    ASSERT_TRUE(rdp.ok());
    EXPECT_NEAR(rdp.value(), v[4], 1e-12 * v[4]);
  }
}

TEST(SkellamAccountantTest, BoundIsNeverBelowTheExactRenyiDivergence) {
  // The exact D_α(Sk(μ) + Δ ‖ Sk(μ)) comes from scipy's Skellam pmf; a bound below it would be
  // a privacy claim the mechanism does not meet.
  for (const auto& v : reference::kSkellamExactRenyi) {
    const auto bound =
        skellam_rdp(static_cast<uint32_t>(v[0]), Sensitivity{v[2], v[2]}, v[1]).value();
    EXPECT_GE(bound, v[3]) << "alpha " << v[0] << " mu " << v[1] << " shift " << v[2];
    // And not vacuous where noise dominates the shift (μ ≥ 10): within 1.5× of the truth.
    if (v[1] >= 10) {
      EXPECT_LT(bound, 1.5 * v[3]) << "alpha " << v[0] << " mu " << v[1];
    }
  }
}

TEST(SkellamAccountantTest, SubstitutingTheVarianceWouldBeUnsafe) {
  // Using the variance 2μ where the bound wants μ understates ε below the exact divergence.
  bool understated_somewhere = false;
  for (const auto& v : reference::kSkellamExactRenyi) {
    const auto wrong =
        skellam_rdp(static_cast<uint32_t>(v[0]), Sensitivity{v[2], v[2]}, 2 * v[1]).value();
    understated_somewhere |= wrong < v[3];
  }
  EXPECT_TRUE(understated_somewhere);
}

TEST(SkellamAccountantTest, EpsilonMatchesReference) {
  for (const auto& v : reference::kSkellamEpsilon) {
    const auto e =
        skellam_epsilon(v[0], static_cast<uint32_t>(v[1]), Sensitivity{v[2], v[3]}, v[4]);
    ASSERT_TRUE(e.ok()) << e.status().message();
    EXPECT_NEAR(e->epsilon, v[5], 1e-9 * v[5]);
    EXPECT_GE(e->best_order, 2u);
  }
}

TEST(SkellamAccountantTest, SmallestLambdaMatchesReferenceAndMeetsTheTarget) {
  for (const auto& v : reference::kSkellamLambda) {
    const Sensitivity s{v[2], v[3]};
    const uint32_t clients = static_cast<uint32_t>(v[4]);
    const auto lambda = skellam_lambda(v[0], v[1], s, clients);
    ASSERT_TRUE(lambda.ok()) << lambda.status().message();
    EXPECT_NEAR(lambda.value(), v[5], 1e-6 * v[5]);
    EXPECT_LE(skellam_epsilon(lambda.value(), clients, s, v[1])->epsilon, v[0]);
    EXPECT_GT(skellam_epsilon(lambda.value() * (1 - 1e-6), clients, s, v[1])->epsilon, v[0]);
  }
}

TEST(SkellamAccountantTest, MixtureOfEqualBatchesIsTheSingleBoundAndLiesBetween) {
  const std::vector<Sensitivity> same(5, Sensitivity{4, 2});
  for (uint32_t alpha : {2u, 7u, 40u}) {
    const double single = skellam_rdp(alpha, Sensitivity{4, 2}, 300).value();
    const double mixed =
        skellam_rdp_mixture(alpha, Span<const Sensitivity>(same.data(), same.size()), 300).value();
    EXPECT_NEAR(mixed, single, 1e-12 * single);
  }
  const std::vector<Sensitivity> growing = {{1, 1}, {2, 2}, {4, 3}, {8, 5}};
  const Span<const Sensitivity> span(growing.data(), growing.size());
  const double mixed = skellam_rdp_mixture(9, span, 50).value();
  EXPECT_GT(mixed, skellam_rdp(9, growing.front(), 50).value());
  EXPECT_LT(mixed, skellam_rdp(9, growing.back(), 50).value());
  EXPECT_LT(skellam_epsilon_mixture(1, 50, span, 1e-6)->epsilon,
            skellam_epsilon(1, 50, growing.back(), 1e-6)->epsilon);
}

TEST(SkellamAccountantTest, MoreNoiseOrMoreClientsMeansLessEpsilon) {
  double previous = INFINITY;
  for (double lambda : {1.0, 10.0, 100.0, 1000.0}) {
    const double e = skellam_epsilon(lambda, 10, Sensitivity{1, 1}, 1e-6)->epsilon;
    EXPECT_LT(e, previous);
    previous = e;
  }
  EXPECT_LT(skellam_epsilon(10, 100, Sensitivity{1, 1}, 1e-6)->epsilon,
            skellam_epsilon(10, 10, Sensitivity{1, 1}, 1e-6)->epsilon);
}

TEST(GaussianAccountantTest, AnalyticAndClassicalMatchReference) {
  for (const auto& v : reference::kGaussianSigma) {
    const auto agm = gaussian_sigma_analytic(v[0], v[1], v[2]);
    ASSERT_TRUE(agm.ok());
    EXPECT_NEAR(agm.value(), v[3], 1e-7 * v[3]);
    EXPECT_LE(gaussian_delta(v[0], agm.value(), v[2]).value(), v[1] * (1 + 1e-9));
    const auto classical = gaussian_sigma_classical(v[0], v[1], v[2]);
    if (v[4] > 0) {
      ASSERT_TRUE(classical.ok());
      EXPECT_NEAR(classical.value(), v[4], 1e-12 * v[4]);
      EXPECT_LE(agm.value(), classical.value());  // AGM never needs more noise
    } else {
      EXPECT_EQ(classical.status().code(), StatusCode::kOutOfRange);
    }
  }
}

TEST(GaussianAccountantTest, AnalyticSigmaFallsAsEpsilonGrows) {
  double previous = INFINITY;
  for (double eps : {0.05, 0.1, 0.3, 1.0, 3.0, 10.0}) {
    const double sigma = gaussian_sigma_analytic(eps, 1e-6, 1).value();
    EXPECT_LT(sigma, previous) << eps;
    previous = sigma;
  }
}

TEST(GaussianAccountantTest, DeltaFallsAsSigmaGrows) {
  double previous = 1.0;
  for (double sigma : {0.5, 1.0, 2.0, 4.0, 8.0}) {
    const double d = gaussian_delta(1.0, sigma, 1.0).value();
    EXPECT_LT(d, previous) << sigma;
    previous = d;
  }
}

TEST(RsgdArSensitivityTest, Algorithm4ByHandAndShape) {
  // One epoch, two batches, η0 = 0.5, μ = 0.1, L = 1: ρ = max(|1 − 0.05|, |1 − 0.5|) = 0.95.
  // j = 1: Δ = [0, 0]·ρ + [2·0.5·1/10, 0] = [0.1, 0]; j = 2: Δ = [0.095, 0] + [0, 0.1].
  double out[2];
  ASSERT_TRUE(rsgd_ar_sensitivities(0.1, 1, 1, 0.5, 10, 1, Span<double>(out)).ok());
  EXPECT_NEAR(out[0], 0.095, 1e-15);
  EXPECT_NEAR(out[1], 0.1, 1e-15);
  // Later batches contract less: the last batch has the largest sensitivity.
  double many[8];
  ASSERT_TRUE(rsgd_ar_sensitivities(0.001, 0.25, 5, 1, 32, 1, Span<double>(many)).ok());
  for (int j = 1; j < 8; ++j) EXPECT_GT(many[j], many[j - 1]);
  const Sensitivity s = discretised_sensitivity(0.5, 100, 1, 16);  // Δ2* = 50 + 8
  EXPECT_DOUBLE_EQ(s.l2, 58);
  EXPECT_DOUBLE_EQ(s.l1, 4 * 58);  // min(√d·Δ2*, Δ2*²)
  EXPECT_EQ(rsgd_ar_sensitivities(0.1, 1, 0, 0.5, 10, 1, Span<double>(out)).code(),
            StatusCode::kInvalidArgument);
}

TEST(LaplaceAccountantTest, PureAndTruncated) {
  EXPECT_DOUBLE_EQ(discrete_laplace_epsilon(4, 2).value(), 0.5);
  for (const auto& v : reference::kTruncatedDlapDelta) {
    const auto d = truncated_discrete_laplace_delta(v[0], static_cast<uint64_t>(v[1]),
                                                    static_cast<uint64_t>(v[2]));
    ASSERT_TRUE(d.ok());
    EXPECT_NEAR(d.value(), v[3], 1e-12);
  }
  EXPECT_EQ(truncated_discrete_laplace_delta(2, 3, 4).value(), 1.0);
  // A bound the O(bound) sum could not finish (2^64 − 1 wrapped k and never ended) is refused.
  EXPECT_EQ(truncated_discrete_laplace_delta(2, UINT64_MAX, 1).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(truncated_discrete_laplace_delta(2, kMaxTruncationBound + 1, 1).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(AccountantErrorsTest, BadParametersAreRefused) {
  EXPECT_EQ(skellam_rdp(1, Sensitivity{1, 1}, 10).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(skellam_rdp(2, Sensitivity{-1, 1}, 10).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(skellam_rdp(2, Sensitivity{1, 1}, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(rdp_to_dp(2, 1, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(rdp_to_dp(2, 1, 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(skellam_epsilon(1, 0, Sensitivity{1, 1}, 1e-5).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(skellam_lambda(1e-12, 1e-5, Sensitivity{1000, 1000}, 1).status().code(),
            StatusCode::kOutOfRange);
  EXPECT_EQ(gaussian_sigma_analytic(0, 1e-5, 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(gaussian_sigma_analytic(NAN, 1e-5, 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(skellam_rdp_mixture(2, Span<const Sensitivity>(), 5).status().code(),
            StatusCode::kInvalidArgument);
  // An empty batch list is refused, not read as one batch of zero sensitivity (which gave the
  // epsilon of no data at all: found through the Python module's tests).
  EXPECT_EQ(skellam_epsilon_mixture(1, 5, Span<const Sensitivity>(), 1e-6).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(skellam_lambda_mixture(1, 1e-6, Span<const Sensitivity>(), 5).status().code(),
            StatusCode::kInvalidArgument);
}

// Composition adds the releases' RDP at every order before the conversion to (ε, δ).
TEST(SkellamAccountantTest, ComposedAddsRdpAcrossReleases) {
  const Sensitivity releases[] = {{4, 2}, {10, 3}, {1, 1}};
  const Span<const Sensitivity> view(releases, 3);
  const double lambda = 40, delta = 1e-6;
  double best = INFINITY;
  for (uint32_t alpha = 2; alpha <= kMaxOrder; ++alpha) {
    double rdp = 0;
    for (const Sensitivity& s : releases) rdp += skellam_rdp(alpha, s, 5 * lambda).value();
    best = std::min(best, rdp_to_dp(alpha, rdp, delta).value());
  }
  EXPECT_DOUBLE_EQ(skellam_epsilon_composed(lambda, 5, view, delta).value().epsilon, best);
  // One release composes to itself.
  EXPECT_DOUBLE_EQ(skellam_epsilon_composed(lambda, 5, Span<const Sensitivity>(releases, 1), delta)
                       .value()
                       .epsilon,
                   skellam_epsilon(lambda, 5, releases[0], delta).value().epsilon);
  // The calibrated λ meets the target and 1% less does not; composing costs more than any part.
  const double calibrated = skellam_lambda_composed(1, delta, view, 5).value();
  EXPECT_LE(skellam_epsilon_composed(calibrated, 5, view, delta).value().epsilon, 1 + 1e-9);
  EXPECT_GT(skellam_epsilon_composed(calibrated * 0.99, 5, view, delta).value().epsilon, 1);
  EXPECT_GT(calibrated, skellam_lambda(1, delta, releases[1], 5).value());
  EXPECT_EQ(skellam_lambda_composed(1, delta, Span<const Sensitivity>(), 5).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace privacy
}  // namespace fedstat
