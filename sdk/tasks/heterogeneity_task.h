/// @file
/// Heterogeneity contributions: a device's part of the private dispersion, Cochran's Q and I²
/// (004 §3.1 and §4, with the standard definitions the issue fixes; our copy of 004 has an extra
/// 1/n in the weighted mean and uses Q both as a mean and as a sum).
///
/// A client holds x ∈ [0,1]^d (e.g. its label distribution). Over n clients:
///   μ  = (1/n)·Σ x_i                          the mean
///   D  = (1/n)·Σ ||x_i − μ||_p^p              the dispersion (p ≥ 1; p = 2 is the variance)
///   s_i² = (1/d)·Σ_j (x_ij − x̄_i)²           the within-vector (population) variance
///   w_i = min(1/s_i², W)                      the inverse-variance weight, clipped at W
///   μ̄ = Σ w_i·x_i / Σ w_i                     the weighted mean
///   Q  = Σ w_i·||x_i − μ̄||²                   Cochran's Q
///   I² = max(0, 1 − (n − 1)/Q)
/// The clip W (max_weight) bounds what one client can move: without it a constant vector
/// (s² = 0) has infinite weight and no noise could hide it. Since x ∈ [0,1]^d, s² ≤ 1/4 and
/// w ≥ 4. Exact values are computed with the same clipped weights.
///
/// Two rounds, each a (noised, securely) summed vector:
///   round 1: [x (d), w·x (d), w, 1/w]        → μ′ = Σx/n and μ̄′ = Σw·x/Σw on the host
///                                              (Σ1/w feeds the paper's I² interval)
///   round 2: [||x − μ′||_p^p, w·||x − μ̄′||²] with μ′, μ̄′ clamped to [0,1]^d
/// Sensitivities (one client replaced, n public): Σx: Δ2 = √d;
/// (Σw·x, Σw, Σ1/w): Δ2 = √(W²d + (W−4)² + (1/4 − 1/W)²);
/// Σ||x − μ′||_p^p: Δ = d; Σ w·||x − μ̄′||²: Δ = W·d (each term lies in [0, d] resp. [0, W·d]).
///
/// Integer noise under secure aggregation (the skellam mechanism): a client encodes each release
/// in fixed point, out = round(scale·v), and adds its Skellam share to every entry. Rounding moves
/// an entry by < 1/2, so two neighbours' encodings differ by at most scale·Δ2 + √k in L2 over k
/// entries (fixed_point_sensitivity; L1 ≤ √k·L2).
///
/// Errors: kInvalidArgument for a coordinate outside [0,1] or NaN, p < 1, W < 4, spans of the
/// wrong length, d = 0 (each function lists its own).
///
/// @memory stack only (the caller provides every output span).
/// @paper 004 Definitions 3.2–3.7, Lemmas 4.1–4.9.
#ifndef FEDSTAT_SDK_TASKS_HETEROGENEITY_TASK_H_
#define FEDSTAT_SDK_TASKS_HETEROGENEITY_TASK_H_

#include <stddef.h>

#include "sdk/base/result.h"
#include "sdk/base/span.h"
#include "sdk/privacy/accountants.h"

namespace fedstat {
namespace tasks {

/// The task's parameters (validate_heterogeneity_config states which are allowed).
struct HeterogeneityConfig {
  double p = 2;             ///< the dispersion exponent, finite and ≥ 1
  double max_weight = 100;  ///< W: weights 1/s² are clipped to at most W (finite, ≥ 4)
};

/// The length of round 1's vector for a d-dimensional x: 2d + 2.
constexpr size_t heterogeneity_round1_length(size_t d) {
  return 2 * d + 2;
}
/// The length of round 2's vector: 2.
constexpr size_t heterogeneity_round2_length() {
  return 2;
}

/// Checks a configuration.
/// @errors kInvalidArgument: p is not finite and ≥ 1 (NaN included), or max_weight is not finite
/// and ≥ 4.
Status validate_heterogeneity_config(const HeterogeneityConfig& config);

/// The L2 sensitivities of the four sums above, in order: Σx, (Σw·x, Σw, Σ1/w),
/// Σ||x − μ′||_p^p, Σw·||x − μ̄′||².
struct HeterogeneitySensitivities {
  double l2[4] = {0, 0, 0, 0};  ///< √d, √(W²d + (W−4)² + (1/4 − 1/W)²), d, W·d
};
/// The sensitivities of the four sums for dimension `d` and `config`'s W (not validated).
HeterogeneitySensitivities heterogeneity_sensitivities(size_t d, const HeterogeneityConfig& config);
/// Checks that `x` is non-empty and every coordinate is a number in [0, 1].
/// @errors kInvalidArgument: `x` is empty, or a coordinate is outside [0, 1] or NaN.
Status validate_unit_vector(Span<const double> x);
/// s² = (1/d)·Σ (x_j − x̄)², the population variance of x's coordinates.
/// @errors kInvalidArgument: `x` fails validate_unit_vector (empty, or a coordinate outside
/// [0, 1] or NaN).
Result<double> within_vector_variance(Span<const double> x);
/// min(1/s², W); W when s² ≤ 0.
double clipped_weight(double variance, double max_weight);
/// ||a − b||_p^p over a's entries (`b` must be at least as long; unchecked).
double distance_power(Span<const double> a, Span<const double> b, double p);

/// Round 1: out = [x, w·x, w, 1/w] (2d + 2 entries), w = clipped_weight(s², W).
/// @errors kInvalidArgument: `config` fails validate_heterogeneity_config; `x` is empty or has a
/// coordinate outside [0, 1] or NaN; `out` does not have 2d + 2 entries. `out` is then unchanged.
Status heterogeneity_round1(Span<const double> x, const HeterogeneityConfig& config,
                            Span<double> out);
/// Round 2: out = [||x − mean||_p^p, w·||x − weighted_mean||²]; the means are clamped to [0,1]
/// here as well, so a host that forgot to clamp cannot raise the sensitivity.
/// @errors kInvalidArgument: `config` fails validate_heterogeneity_config; `x` is empty or has a
/// coordinate outside [0, 1] or NaN; a mean does not have d entries or has a NaN entry; `out`
/// does not have 2 entries. `out` is then unchanged.
Status heterogeneity_round2(Span<const double> x, Span<const double> mean,
                            Span<const double> weighted_mean, const HeterogeneityConfig& config,
                            Span<double> out);

/// `out[j]` = round(scale·`values[j]`) (to nearest, ties to even in the default rounding mode).
/// @errors kInvalidArgument: `scale` is not positive and finite, or `out` is not as long as
/// `values`. kOutOfRange: a scaled value is not below 2^62 in magnitude (or is NaN); nothing
/// is written then.
Status encode_fixed_point(Span<const double> values, double scale, Span<int64_t> out);
/// The sensitivity of `entries` values of L2 sensitivity `l2` sent in fixed point at `scale`:
/// L2 = scale·l2 + √entries (rounding moves each entry by < 1/2), L1 = √entries·L2.
privacy::Sensitivity fixed_point_sensitivity(double l2, double scale, size_t entries);

/// The entries of release `release` (0..3) of the four, in order: d, d + 2, 1, 1.
size_t heterogeneity_release_entries(size_t d, int release);
/// The L1/L2 sensitivities of the four releases when release k is sent in fixed point at
/// scales[k] and the clients' integers are summed exactly (the skellam mechanism: secure
/// aggregation, or an integer sum): fixed_point_sensitivity of Δ2_k plus twice the worst error of
/// one client's own double arithmetic, 2·√entries·(d + 10)·2⁻⁵³ times the release's largest entry
/// (1, W, d, W·d; libm within an ulp), so a neighbour's computed values may err the other way.
/// The host's calibration and the device's ledger charge (sdk/client/contribution.h,
/// device_spend) both read the noise through this one function. d ≥ 1 and a valid config.
void heterogeneity_encoded_sensitivities(size_t d, const HeterogeneityConfig& config,
                                         const double scales[4], privacy::Sensitivity out[4]);

}  // namespace tasks
}  // namespace fedstat

#endif  // FEDSTAT_SDK_TASKS_HETEROGENEITY_TASK_H_
