// Private dispersion, Cochran's Q and I² on the host (004 §4), with the definitions stated in
// sdk/tasks/heterogeneity_task.h (μ, D = (1/n)Σ||x_i − μ||_p^p, clipped w_i = min(1/s_i², W),
// μ̄ = Σw_i·x_i/Σw_i, Q = Σ w_i·||x_i − μ̄||², I² = max(0, 1 − (n−1)/Q)).
//
// Releases, each the sum of the clients' contributions plus Gaussian noise (added centrally, or
// as clients' shares under secure aggregation — the same sum, 004 §4.1):
//   1. Σx                  Δ2 = √d                          → μ′ = clamp(Σx′/n)
//   2. (Σw·x, Σw, Σ1/w)    Δ2 = √(W²d + (W−4)² + (1/4−1/W)²) → μ̄′ = clamp(Σw·x′ / Σw′)
//   3. Σ||x − μ′||_p^p     Δ = d                             → D″ = Σ′/n
//   4. Σ w·||x − μ̄′||²     Δ = W·d                           → Q″ = Σ′, I²″ = max(0, 1 − (n−1)/Q″)
// (D″ and Q″ are clamped to [0, d] and [0, n·W·d]: every term ‖x − μ′‖ₚᵖ lies in [0, d] and every
// w·‖x − μ̄′‖² in [0, W·d] for x, μ′, μ̄′ ∈ [0, 1]^d, and clamping is post-processing. Under
// secure aggregation a device's words are masked and no report bound applies, so these clamps
// are what bounds one device's effect on D and Q: it can still move them anywhere in the
// ranges, not beyond — before, one device adding 2^40 moved D to 2.7e8 (second review of issue
// 39, C1). I² = max(0, 1 − (n−1)/Q″) lies in [0, 1) whatever Q″.)
// I² is post-processing of Q″: it needs no budget of its own (004 Theorem 4.17 spends ε3 on it).
// Composition over the four releases: analytic (agm) — each is a Gaussian mechanism with
// μ_k = Δ_k/σ_k, the four compose to √Σμ_k² (Gaussian DP, Dong, Roth & Su 2019), so σ_k =
// 2·Δ_k·σ₁ with σ₁ the analytic σ for Δ = 1 at (ε, δ′) (Balle & Wang 2018 is exactly that GDP
// conversion); classical — basic composition, each at (ε/4, δ′_k), δ′_k ≤ δ/4, so ε/4 must be
// < 1. Gaussian releases go through the central mechanism of gaussian_noise.h: each value is
// rounded to release k's public grid and noised there with exact discrete noise, and δ′ is what
// grid_calibration_delta leaves of δ after the grid's total-variation term over all 2d + 4 values
// (the rounding's √entries is inside the noise, so every μ_k is as calibrated);
// skellam — integer noise the clients add under secure aggregation: release k is encoded in
// fixed point at scale 1024/Δ2_k (sdk/tasks/heterogeneity_task.h), every client adds Sk(μ/n)
// (rounded up) to every entry, the host sums the integers and decodes; μ is the smallest total
// whose four releases, composed in RDP (sdk/privacy skellam_lambda_composed), meet (ε, δ).
// sigma[k] then reports the equivalent standard deviation √(2·n·λ_c)/scale_k.
//
// The 95% intervals are the paper's (Theorems 4.7, 4.15, 4.19), with ξ1² and η1² the per-
// coordinate noise variances actually added to μ′ (σ₁²/n²) and μ̄′ (σ₂²/Σw′², first order):
//   D: ± 7.84·√6·ξ1⁴/√n      Q: ± 7.84·√6·η1⁴·Σw_i/√n      I²:
//   ± 7.84·√2·(n−1)·Σ(1/w_i)/(3·√(35n)·η1⁴)
// using the released Σw′ and Σ(1/w)′. They describe only the noise on the means (not the noise of
// releases 3–4), as in the paper; intervals are cut to [0, ∞) for D and Q and to [0, 1] for I².
// With mechanism none every interval is the point itself. Beside them, noise_sd is the standard
// deviation the last release's own noise adds (D: σ₃/n; Q: σ₄; I²: (n−1)·σ₄/Q″²), which those
// intervals leave out.
//
// Each Δ2_k also carries twice the double arithmetic's worst error on the computed sums
// (bounded from n, d and W; ≈ 1e-14 of Δ2 for n = 3, d = 2): a neighbour's computed sum may err
// the other way, and only the grid's rounding is inside the Gaussian mechanism's proof.
// Data-dependent decisions: none. Every refusal depends only on public inputs (n, d, ε, δ, p,
// W, a row outside [0, 1] — the clients validate their own vectors); the clamps of μ′, μ̄′, Σw′,
// Σ(1/w)′ and the cuts at 0 are post-processing of released values; the number of clipped
// weights is not part of the estimate (HeterogeneityExact has it, for measurement).
// Errors: std::invalid_argument (fewer than 2 clients, ragged rows, a value outside [0, 1], bad
// ε, δ, p or W). Memory: O(n·d). Paper: 004 Definitions 3.2–3.7, Theorems 4.3–4.19, Algorithm 1.
#ifndef FEDSTAT_HOST_ESTIMATE_HETEROGENEITY_H_
#define FEDSTAT_HOST_ESTIMATE_HETEROGENEITY_H_

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "sdk/base/random_bits.h"
#include "sdk/tasks/heterogeneity_task.h"

namespace fedstat {
namespace host {

using ClientVectors = std::vector<std::vector<double>>;

enum class HeterogeneityMechanism { kNone, kClassical, kAnalytic, kSkellam };
const char* heterogeneity_mechanism_name(HeterogeneityMechanism mechanism);
HeterogeneityMechanism parse_heterogeneity_mechanism(const std::string& name);

struct HeterogeneityOptions {
  tasks::HeterogeneityConfig config;
  HeterogeneityMechanism mechanism = HeterogeneityMechanism::kAnalytic;
  double epsilon = 0.25;  // 004's default
  double delta = 0.1;
  // skellam only: sum the clients' noised integer releases through a real secure-aggregation
  // session (host_server/secagg, 64-bit words) instead of in the clear.
  bool secure = false;
};

// The exact (non-private) values, for measurement: never part of a release. `clipped` is how
// many clients' weights the clip W bound, which depends on the raw data as well.
struct HeterogeneityExact {
  std::vector<double> mean, weighted_mean;
  double dispersion = 0, q = 0, i2 = 0;
  double sum_weights = 0, sum_inverse_weights = 0;
  uint32_t clipped = 0;  // clients whose weight 1/s² exceeded W
};
HeterogeneityExact exact_heterogeneity(const ClientVectors& x,
                                       const tasks::HeterogeneityConfig& config);

struct Interval {
  double low = 0, high = 0;
};
// The released statistic and what follows from the release alone (no raw data: the exact
// values are exact_heterogeneity's, computed separately and only for measurement).
struct StatisticEstimate {
  double estimate = 0;
  Interval ci;          // the paper's interval
  double noise_sd = 0;  // s.d. the final release's noise adds (I²: to first order in Q)
};
struct HeterogeneityEstimate {
  StatisticEstimate dispersion, q, i2;
  double sigma[4] = {0, 0, 0, 0};        // σ of each release's noise
  double sensitivity[4] = {0, 0, 0, 0};  // Δ2 of each release
  double grid[4] = {0, 0, 0, 0};         // agm, classical: the public grid of each release
  double xi1_squared = 0, eta1_squared = 0;
  double skellam_lambda_per_client = 0;  // skellam: each client's share on every entry
};
HeterogeneityEstimate estimate_heterogeneity(const ClientVectors& x,
                                             const HeterogeneityOptions& options,
                                             RandomBits& noise_bits);

// The pieces estimate_heterogeneity is made of, for a host that receives the two rounds' sums
// separately (fedstat-server's HETEROGENEITY plans, host_server/tasks/heterogeneity_plan.h).
//
// The skellam mechanism's calibration: each release's fixed-point scale, its encoded
// sensitivities (tasks::heterogeneity_encoded_sensitivities) and μ, the total Poisson mean every
// released sum must carry so that the four releases composed in RDP meet (ε, δ). Scales:
//   kPerRelease  scale_k = 1024/Δ2_k: a client encodes each release at its own scale (the tools)
//   kPerStage    one scale per round, 1024/√(Δ2_a² + Δ2_b²) over the round's two releases (a
//                HETEROGENEITY Task carries one `scale` for its stage's whole vector). Both
//                rounds then carry the same μ: each round's encoded L2 is ≈ 1024, so the two
//                rounds spend about the same RDP; within a round the smaller release (Σx, resp.
//                Σ||x − μ′||_p^p) carries the noise its larger partner needs.
enum class FixedPointScales { kPerRelease, kPerStage };
struct SkellamCalibration {
  double scale[4] = {0, 0, 0, 0};
  privacy::Sensitivity encoded[4];
  double sum_lambda = 0;  // μ
};
// The four releases' fixed-point scales alone (the calibration's first step; also what a task
// without noise encodes at).
void heterogeneity_fixed_point_scales(size_t d, const tasks::HeterogeneityConfig& config,
                                      FixedPointScales scales, double out[4]);
SkellamCalibration calibrate_heterogeneity_skellam(size_t d,
                                                   const tasks::HeterogeneityConfig& config,
                                                   double epsilon, double delta,
                                                   FixedPointScales scales);

// Sums of fixed-point words (int64 in two's complement, mod 2^64) decoded at `scale`.
std::vector<double> decode_fixed_point_sums(const std::vector<uint64_t>& words, double scale);

// Round 1's released sums [Σx (d), Σw·x (d), Σw, Σ1/w] over n clients → the means round 2 is
// computed against (μ′ = clamp(Σx/n), μ̄′ = clamp(Σw·x/Σw′)) and the clamped Σw′ ∈ [4n, W·n],
// Σ(1/w)′ ∈ [n/W, n/4] the intervals read. Post-processing of the release only.
struct HeterogeneityRound1 {
  std::vector<double> mean, weighted_mean;
  double sum_weights = 0, sum_inverse_weights = 0;
  double max_weight = 0;  // W (config.max_weight): round 2's clamp of Q″ reads it
};
HeterogeneityRound1 finish_heterogeneity_round1(const std::vector<double>& released, size_t n,
                                                const tasks::HeterogeneityConfig& config);
// Round 2: D″ = clamp(Σ′/n2, 0, d), Q″ = clamp(Σ′, 0, n2·W·d) (d = round1.mean.size(), W =
// round1.max_weight), I²″ and the intervals and noise_sd above, into
// `result`, whose sigma[] must hold each release's σ (read only when `noisy`). n1 and n2 are the
// clients of each round's sum (one set in estimate_heterogeneity; under secure aggregation with
// dropouts the second round may sum other devices than the first): ξ1² = σ₁²/n1², and the
// intervals' n is n2.
void finish_heterogeneity_round2(double dispersion_sum, double q_sum, size_t n1, size_t n2,
                                 const HeterogeneityRound1& round1, bool noisy,
                                 HeterogeneityEstimate& result);

// The paper's half-widths.
double dispersion_ci_half_width(double xi1_squared, size_t n);
double q_ci_half_width(double eta1_squared, double sum_weights, size_t n);
double i2_ci_half_width(double eta1_squared, double sum_inverse_weights, size_t n);

// One client vector per CSV row (comma-separated decimal numbers in [0, 1], read strictly by
// csv_fields.h: no empty field, trailing comma, hex, inf/nan or trailing text; '#' lines and
// blank lines skipped). Errors name the file, the line and the field.
ClientVectors parse_client_vectors(std::istream& in, const std::string& name);
ClientVectors read_client_vectors(const std::string& path);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_ESTIMATE_HETEROGENEITY_H_
