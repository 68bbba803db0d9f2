#include "host_server/estimate/heterogeneity.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "host_server/estimate/gaussian_noise.h"
#include "host_server/estimate/host_common.h"
#include "sdk/privacy/accountants.h"

namespace fedstat {
namespace host {
namespace {

// n = 3, d = 2; W = 100. Worked by hand:
//   s² = 0.04, 0, 0.1225 → w = 25, 100 (clipped: s² = 0), 1/0.1225 = 400/49
//   μ = (1.4/3, 1.1/3); Σ||x − μ||² = 0.152222 + 0.005556 + 0.215556 = 0.373333 → D = 28/225
//   μ̄ = Σw·x/Σw = (2.5 + 40 + 360/49, 12.5 + 40 + 80/49)/(125 + 400/49)
//   Q = Σ w·||x − μ̄||² = 4.773946360153257, I² = 1 − 2/Q = 0.581059390048154
const ClientVectors kVectors = {{0.1, 0.5}, {0.4, 0.4}, {0.9, 0.2}};

TEST(Heterogeneity, ExactStatisticsMatchTheHandComputation) {
  const HeterogeneityExact e = exact_heterogeneity(kVectors, tasks::HeterogeneityConfig{});
  EXPECT_NEAR(e.mean[0], 1.4 / 3, 1e-15);
  EXPECT_NEAR(e.dispersion, 28.0 / 225, 1e-15);
  EXPECT_NEAR(e.sum_weights, 125 + 400.0 / 49, 1e-12);
  EXPECT_NEAR(e.sum_inverse_weights, 0.04 + 0.01 + 0.1225, 1e-15);
  EXPECT_NEAR(e.weighted_mean[0], (42.5 + 360.0 / 49) / (125 + 400.0 / 49), 1e-15);
  EXPECT_NEAR(e.q, 4.773946360153257, 1e-12);
  EXPECT_NEAR(e.i2, 0.581059390048154, 1e-12);
  EXPECT_EQ(e.clipped, 1u);
}

TEST(Heterogeneity, WithoutNoiseTheEstimatesAreExact) {
  HeterogeneityOptions options;
  options.mechanism = HeterogeneityMechanism::kNone;
  SeededBits bits(1, 0);
  const HeterogeneityEstimate e = estimate_heterogeneity(kVectors, options, bits.bits());
  const HeterogeneityExact exact = exact_heterogeneity(kVectors, options.config);
  EXPECT_NEAR(e.dispersion.estimate, exact.dispersion, 1e-15);
  EXPECT_NEAR(e.q.estimate, exact.q, 1e-12);
  EXPECT_NEAR(e.i2.estimate, exact.i2, 1e-12);
  EXPECT_EQ(e.q.ci.low, e.q.estimate);
  EXPECT_EQ(e.q.ci.high, e.q.estimate);
}

TEST(Heterogeneity, IntervalFormulasReproduceHandValues) {
  // Theorem 4.7: 7.84·√6·ξ⁴/√n with ξ² = 0.01, n = 4: 7.84 × 2.4494897 × 1e-4 / 2.
  EXPECT_NEAR(dispersion_ci_half_width(0.01, 4), 9.60200e-4, 1e-9);
  // Theorem 4.15: Σ_i 7.84·w_i·√6·η⁴/√n with η² = 0.02, Σw = 50, n = 4.
  EXPECT_NEAR(q_ci_half_width(0.02, 50, 4), 0.192040, 1e-6);
  // Theorem 4.19: Σ_i 7.84·√2·(n−1)/(3·w_i·√(35n)·η⁴), Σ 1/w = 0.5: 7.84·1.41421·3·0.5 /
  // (3·11.8322·4e-4) = 1171.32.
  EXPECT_NEAR(i2_ci_half_width(0.02, 0.5, 4), 1171.324, 1e-3);
}

TEST(Heterogeneity, NoiseScalesAreTheAccountants) {
  HeterogeneityOptions options;
  options.epsilon = 0.25;
  options.delta = 0.1;
  SeededBits bits(2, 0);
  const tasks::HeterogeneitySensitivities s = tasks::heterogeneity_sensitivities(2, options.config);
  HeterogeneityEstimate e = estimate_heterogeneity(kVectors, options, bits.bits());
  // 2d + 4 = 8 released values; the grid term takes (1 + e^0.25)·8·2^−55 of δ.
  const double grid_term = (1 + std::exp(0.25)) * 8 * kGridTvPerCoordinate;
  const size_t entries[4] = {2, 4, 1, 1};
  const double unit = privacy::gaussian_sigma_analytic(0.25, 0.1 - grid_term, 1).value();
  double mu2 = 0;
  for (int k = 0; k < 4; ++k) {
    // 004's sensitivity plus the double sums' worst rounding (1e-14 of it here).
    EXPECT_GT(e.sensitivity[k], s.l2[k]);
    EXPECT_NEAR(e.sensitivity[k], s.l2[k], 1e-12 * s.l2[k]);
    const double delta_k = e.sensitivity[k];
    const GridGaussian expected =
        make_grid_gaussian(2 * delta_k * unit, delta_k, entries[k]).value();
    EXPECT_EQ(e.sigma[k], expected.sigma) << k;
    EXPECT_EQ(e.grid[k], expected.grid) << k;
    // Each release's ratio with the grid's rounding inside the sensitivity (gaussian_noise.h).
    const double k_eff = delta_k + std::sqrt(double(entries[k])) * e.grid[k];
    mu2 += (k_eff / e.sigma[k]) * (k_eff / e.sigma[k]);
  }
  // The four releases compose (Gaussian DP) to Δ/σ = √Σμ_k², which with the grid term is
  // (0.25, 0.1)-DP — and not much more private than that (the calibration is tight).
  const double achieved = privacy::gaussian_delta(0.25, 1 / std::sqrt(mu2), 1).value();
  EXPECT_LE(achieved + grid_term, 0.1 * (1 + 1e-9));
  EXPECT_GE(achieved + grid_term, 0.1 * (1 - 1e-6));
  EXPECT_NEAR(e.xi1_squared, e.sigma[0] * e.sigma[0] / 9, 1e-15);

  options.mechanism = HeterogeneityMechanism::kClassical;
  e = estimate_heterogeneity(kVectors, options, bits.bits());
  for (int k = 0; k < 4; ++k) {
    const double delta = grid_calibration_delta(0.0625, 0.025, entries[k]).value();
    const double sigma = privacy::gaussian_sigma_classical(0.0625, delta, e.sensitivity[k]).value();
    EXPECT_EQ(e.sigma[k], make_grid_gaussian(sigma, e.sensitivity[k], entries[k]).value().sigma)
        << k;
  }
  options.epsilon = 4;  // ε/4 = 1: the classical calibration does not apply
  EXPECT_THROW(estimate_heterogeneity(kVectors, options, bits.bits()), std::runtime_error);
}

TEST(Heterogeneity, SkellamSharesAreCalibratedByTheComposedAccountant) {
  HeterogeneityOptions options;
  options.mechanism = HeterogeneityMechanism::kSkellam;
  options.epsilon = 1;
  options.delta = 1e-5;
  SeededBits bits(4, 0);
  const HeterogeneityEstimate e = estimate_heterogeneity(kVectors, options, bits.bits());
  const tasks::HeterogeneitySensitivities s = tasks::heterogeneity_sensitivities(2, options.config);
  const size_t entries[4] = {2, 4, 1, 1};
  privacy::Sensitivity encoded[4];
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(e.sensitivity[k], s.l2[k], 1e-12 * s.l2[k]);  // + the sums' rounding
    const double l2 = e.sensitivity[k];
    encoded[k] = tasks::fixed_point_sensitivity(l2, 1024 / l2, entries[k]);
    EXPECT_NEAR(e.sigma[k], std::sqrt(6 * e.skellam_lambda_per_client) * l2 / 1024, 1e-9);
  }
  const Span<const privacy::Sensitivity> releases(encoded, 4);
  const double mu = privacy::skellam_lambda_composed(1, 1e-5, releases, 1).value();
  EXPECT_GE(3 * e.skellam_lambda_per_client, mu);               // shares rounded up
  EXPECT_LE(3 * e.skellam_lambda_per_client, mu * (1 + 1e-5));  // ... by very little
  EXPECT_LE(privacy::skellam_epsilon_composed(e.skellam_lambda_per_client, 3, releases, 1e-5)
                .value()
                .epsilon,
            1 + 1e-9);
  // Decoding: 900 clients (the example 300 times) at ε = 1000, where Q ≈ 1400 dwarfs the noise
  // (σ₄ ≈ 13: integer-order RDP cannot certify less) and the rounding (≤ n/2 units of 1/scale).
  // The estimate lies within 6 σ plus that rounding; a wrong scale would miss by a factor of 5.
  ClientVectors many;
  for (int copy = 0; copy < 300; ++copy) many.insert(many.end(), kVectors.begin(), kVectors.end());
  options.epsilon = 1e3;
  const HeterogeneityEstimate sharp = estimate_heterogeneity(many, options, bits.bits());
  const HeterogeneityExact exact = exact_heterogeneity(many, options.config);
  ASSERT_GT(exact.q, 1000);
  EXPECT_NEAR(sharp.q.estimate, exact.q, 6 * sharp.sigma[3] + 900 * 0.5 * s.l2[3] / 1024);
  EXPECT_NEAR(sharp.dispersion.estimate, exact.dispersion,
              (6 * sharp.sigma[2] + 900 * 0.5 * s.l2[2] / 1024) / 900);
}

TEST(Heterogeneity, IntervalsStayInsideTheStatisticsRanges) {
  HeterogeneityOptions options;
  options.epsilon = 1;
  options.delta = 1e-5;
  SeededBits bits(3, 0);
  for (int i = 0; i < 50; ++i) {
    const HeterogeneityEstimate e = estimate_heterogeneity(kVectors, options, bits.bits());
    EXPECT_GE(e.dispersion.ci.low, 0);
    EXPECT_GE(e.q.ci.low, 0);
    EXPECT_GE(e.i2.ci.low, 0);
    EXPECT_LE(e.i2.ci.high, 1);
    EXPECT_GE(e.i2.estimate, 0);
    EXPECT_LE(e.i2.estimate, 1);
  }
}

TEST(Heterogeneity, CsvErrorsNameTheFileAndTheLine) {
  auto error_of = [](const std::string& text) -> std::string {
    std::istringstream in(text);
    try {
      parse_client_vectors(in, "V.csv");
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(error_of("0.1,0.2\n0.3,abc\n"),
            "V.csv:2: field 2: 'abc' is not a decimal number (unexpected 'a' at character 1)");
  EXPECT_EQ(error_of("0.1,0.2\n0.3,1.2\n"), "V.csv:2: field 2: '1.2' lies outside [0, 1]");
  // Read strictly (csv_fields.h): a trailing comma, a hex float, trailing text, nan.
  EXPECT_EQ(error_of("0.1,0.2,\n0.3,0.4\n"),
            "V.csv:1: field 3: is empty (a doubled or trailing comma?)");
  EXPECT_EQ(error_of("0.1,0x1p-1\n0.3,0.4\n"),
            "V.csv:1: field 2: '0x1p-1' is a hex number: write decimal digits");
  EXPECT_EQ(error_of("0.1,0.2\n0.5x,0.4\n"),
            "V.csv:2: field 1: '0.5x' is not a decimal number (unexpected 'x' at character 4)");
  EXPECT_EQ(error_of("0.1,nan\n0.3,0.4\n"),
            "V.csv:1: field 2: 'nan' is not a finite number: inf and nan are not accepted");
  EXPECT_EQ(error_of("0.1,0.2\n# c\n0.3\n"), "V.csv:3: 1 values; the first row has 2");
  EXPECT_EQ(error_of("0.1,0.2\n"), "V.csv: needs at least 2 client rows");
  std::istringstream good("# header\n0.1, 0.2\n\n0.3,0.4\r\n");
  EXPECT_EQ(parse_client_vectors(good, "V.csv").size(), 2u);
}

// The skellam mechanism through real secure aggregation: the same estimates as summing the
// clients' noised integer releases in the clear (the host only sees the sums).
TEST(Heterogeneity, SecureAggregationGivesTheSameEstimates) {
  HeterogeneityOptions options;
  options.mechanism = HeterogeneityMechanism::kSkellam;
  options.epsilon = 1;
  options.delta = 1e-5;
  SeededBits clear_bits(6, 0), secure_bits(6, 0);
  const HeterogeneityEstimate clear = estimate_heterogeneity(kVectors, options, clear_bits.bits());
  options.secure = true;
  const HeterogeneityEstimate secure =
      estimate_heterogeneity(kVectors, options, secure_bits.bits());
  EXPECT_EQ(secure.dispersion.estimate, clear.dispersion.estimate);
  EXPECT_EQ(secure.q.estimate, clear.q.estimate);
  options.mechanism = HeterogeneityMechanism::kAnalytic;
  EXPECT_THROW(estimate_heterogeneity(kVectors, options, secure_bits.bits()),
               std::invalid_argument);
}

}  // namespace
}  // namespace host
}  // namespace fedstat
