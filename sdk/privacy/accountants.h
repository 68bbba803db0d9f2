/// @file
/// Privacy accountants: how much privacy a noise level spends, and how much noise a target needs.
/// Double precision (these produce parameters and reports, not noise).
///
/// Skellam (Agarwal, Kairouz & Liu, NeurIPS 2021; 002 Lemma 2). For Sk(μ) = Poisson(μ) −
/// Poisson(μ) — variance 2μ, μ the POISSON MEAN — added to an integer function with L1/L2
/// sensitivities Δ1, Δ2, for integer α > 1:
///     ε(α) = α·Δ2²/(4μ) + min( ((2α − 1)·Δ2² + 6·Δ1)/(16·μ²), 3·Δ1/(4μ) ).
/// 002 prints this twice: Lemma 2 with 16μ² (used here, AKL21's form) and Eq. 3 with 4μ², which
/// is merely looser. Substituting the variance 2μ for μ would understate ε (unsafe). With n
/// clients each adding Sk(λ) under secure aggregation, the sum carries Sk(n·λ): μ = n·λ.
/// The bound is checked against the exact Rényi divergence of the Skellam pmf in the tests.
///
/// Mixture (002 Lemma 3, after Chen, Lee & Kifer 2019): when the differing record's batch j is
/// uniform over m batches with sensitivities (Δ1[j], Δ2[j]) (Algorithm 4),
///     ε(α) = 1/(α−1) · log( (1/m)·Σ_j exp((α−1)·ε_j(α)) ),
/// which follows from joint convexity of ∫p^α q^(1−α). Our copy of 002 omits the 1/(α−1); that
/// printed form is larger by a factor α−1 (looser, never tighter).
///
/// RDP → (ε, δ) (002 Lemma 1, Canonne, Kamath & Steinke 2020):
///     ε' = ε(α) + (log(1/δ) + (α−1)·log(1 − 1/α) − log α)/(α − 1), minimised over integer
/// α in [2, kMaxOrder].
///
/// Gaussian: classical σ = Δ·√(2·ln(1.25/δ))/ε (Dwork & Roth Thm A.1, valid for ε < 1 only);
/// analytic (Balle & Wang 2018; 004 Algorithm 1): the smallest σ with
///     Φ(Δ/(2σ) − εσ/Δ) − e^ε·Φ(−Δ/(2σ) − εσ/Δ) ≤ δ,
/// the exact condition for the Gaussian mechanism, found by bisection on log σ (monotone).
///
/// Discrete Laplace P(k) ∝ exp(−|k|/T) on an integer function with L1 sensitivity Δ: ε = Δ/T
/// (pure). Truncated to |k| ≤ B: ε = Δ/T and δ = Σ_{k=B−Δ+1..B} q^k / Σ_{|k|≤B} q^|k|, q = e^(−1/T)
/// (the mass of outputs a neighbour cannot produce).
///
/// Errors: kInvalidArgument for non-positive or NaN parameters, δ outside (0, 1), α < 2;
/// kOutOfRange where a formula does not apply (classical Gaussian with ε ≥ 1; no λ up to 10^15
/// reaches the target).
///
/// @memory stack only.
/// @paper 002 §2.1, §2.3, §4.1; 004 §3.2 and Algorithm 1; 001 §4.7.
#ifndef FEDSTAT_SDK_PRIVACY_ACCOUNTANTS_H_
#define FEDSTAT_SDK_PRIVACY_ACCOUNTANTS_H_

#include <stdint.h>

#include "sdk/base/result.h"
#include "sdk/base/span.h"

namespace fedstat {
namespace privacy {

/// The largest Rényi order best_dp() tries (it scans every integer order 2..kMaxOrder).
constexpr uint32_t kMaxOrder = 512;

/// The L1 and L2 sensitivities of an integer-valued function (finite and ≥ 0).
struct Sensitivity {
  double l1 = 0;  ///< Δ1: the largest L1 change one record can make
  double l2 = 0;  ///< Δ2: the largest L2 change one record can make
};

/// ε(α) of Sk(mu) noise (mu = total Poisson mean, e.g. clients·λ), by AKL21's bound above.
/// @errors kInvalidArgument: alpha < 2, a sensitivity negative or not finite, or mu not positive
/// and finite.
Result<double> skellam_rdp(uint32_t alpha, Sensitivity sensitivity, double mu);
/// ε(α) of the mixture over equally likely batches (002 Lemma 3, normalised as above).
/// @errors kInvalidArgument: `by_batch` is empty, or as skellam_rdp() for any batch.
Result<double> skellam_rdp_mixture(uint32_t alpha, Span<const Sensitivity> by_batch, double mu);
/// The ε of (ε, δ)-DP implied by RDP value `rdp` at order `alpha` (002 Lemma 1; never below 0).
/// @errors kInvalidArgument: alpha < 2, δ outside (0, 1), or `rdp` negative, NaN or infinite.
Result<double> rdp_to_dp(uint32_t alpha, double rdp, double delta);

/// The best (ε, δ) conversion of an RDP curve: the smallest ε over orders 2..kMaxOrder.
struct DpFromRdp {
  double epsilon = 0;       ///< the smallest converted ε
  uint32_t best_order = 0;  ///< the order α that gave it
};
/// An RDP curve: maps an order α (2..kMaxOrder) to that order's RDP value; `context` is the
/// caller's, passed through by best_dp().
using RdpCurve = Result<double> (*)(uint32_t alpha, const void* context);
/// Converts `curve` at every order 2..kMaxOrder (rdp_to_dp()) and keeps the smallest ε.
/// @errors kInvalidArgument: δ outside (0, 1), or the curve gives a negative or non-finite value.
/// Any error the curve itself returns, as is.
Result<DpFromRdp> best_dp(RdpCurve curve, const void* context, double delta);

/// (ε, δ) for n clients each adding Sk(lambda_per_client): μ = clients·λ, minimised over orders.
/// @errors kInvalidArgument: clients = 0, clients·λ not positive and finite, δ outside (0, 1), or
/// a sensitivity negative or not finite.
Result<DpFromRdp> skellam_epsilon(double lambda_per_client, uint32_t clients,
                                  Sensitivity sensitivity, double delta);
/// (ε, δ) for n clients each adding Sk(lambda_per_client), the differing record's batch uniform
/// over `by_batch` (002 Lemma 3).
/// @errors kInvalidArgument: clients = 0, `by_batch` empty, clients·λ not positive and finite,
/// δ outside (0, 1), or a sensitivity negative or not finite.
Result<DpFromRdp> skellam_epsilon_mixture(double lambda_per_client, uint32_t clients,
                                          Span<const Sensitivity> by_batch, double delta);
/// The smallest per-client λ whose ε is at most `epsilon` (relative precision 1e-9, rounded up),
/// by bisection on log λ over [1e-9, 1e15].
/// @errors kInvalidArgument: `epsilon` not positive and finite, δ outside (0, 1), clients = 0,
/// or a sensitivity negative or not finite. kOutOfRange: no λ up to 1e15 reaches `epsilon`.
Result<double> skellam_lambda(double epsilon, double delta, Sensitivity sensitivity,
                              uint32_t clients);
/// The same for the mixture over equally likely batches (002 Lemma 3).
/// @errors kInvalidArgument: `by_batch` empty, or as skellam_lambda(). kOutOfRange: no λ up to
/// 1e15 reaches `epsilon`.
Result<double> skellam_lambda_mixture(double epsilon, double delta,
                                      Span<const Sensitivity> by_batch, uint32_t clients);

/// Several releases in sequence (adaptively chosen), each coordinate of each carrying Sk(μ): the
/// RDP values add at every order (Mironov 2017, Prop. 1), then convert as above.
/// @errors kInvalidArgument: clients = 0, `releases` empty, clients·λ not positive and finite,
/// δ outside (0, 1), or a sensitivity negative or not finite.
Result<DpFromRdp> skellam_epsilon_composed(double lambda_per_client, uint32_t clients,
                                           Span<const Sensitivity> releases, double delta);
/// The smallest per-client λ whose composed ε (skellam_epsilon_composed()) is at most `epsilon`.
/// @errors kInvalidArgument: `releases` empty, or as skellam_lambda(). kOutOfRange: no λ up to
/// 1e15 reaches `epsilon`.
Result<double> skellam_lambda_composed(double epsilon, double delta,
                                       Span<const Sensitivity> releases, uint32_t clients);

/// The classical Gaussian calibration σ = Δ·√(2·ln(1.25/δ))/ε (Dwork & Roth Thm A.1).
/// @errors kInvalidArgument: ε or the sensitivity not positive and finite, or δ outside (0, 1).
/// kOutOfRange: ε ≥ 1, where the formula does not hold (use gaussian_sigma_analytic()).
Result<double> gaussian_sigma_classical(double epsilon, double delta, double l2_sensitivity);
/// The analytic Gaussian calibration (Balle & Wang 2018): the smallest σ with
/// gaussian_delta(ε, σ, Δ) ≤ δ, by bisection on log σ.
/// @errors kInvalidArgument: ε or the sensitivity not positive and finite, or δ outside (0, 1).
/// kOutOfRange: no σ up to e^40·Δ reaches δ.
Result<double> gaussian_sigma_analytic(double epsilon, double delta, double l2_sensitivity);
/// δ of the Gaussian mechanism at a given σ (the exact curve the analytic calibration inverts).
/// @errors kInvalidArgument: ε negative or NaN, or σ or the sensitivity not positive and finite.
Result<double> gaussian_delta(double epsilon, double sigma, double l2_sensitivity);

/// 002 Algorithm 4 (Chen, Lee & Kifer 2019) as printed: the L2 sensitivity of RSGD-AR's last
/// iterate when the differing record is in batch j, for j = 1..m, written to out[0..m), for steps
/// η_s = η0/s over all T epochs (no averaging, no step-size reset). Loss: convexity μ,
/// smoothness L; batch size |B|; gradient norm bound R (1 for unit-norm features in logistic
/// regression). out.size() is m.
/// @errors kInvalidArgument: `out` is empty, epochs = 0, smoothness, eta0 or batch_size not
/// positive and finite, or convexity or gradient_bound negative or not finite.
Status rsgd_ar_sensitivities(double convexity, double smoothness, uint32_t epochs, double eta0,
                             double batch_size, double gradient_bound, Span<double> out);
/// The same for the schedule the trainer actually runs (002 Algorithm 2,
/// tasks/logistic_trainer.h): the step counter h resets to 0 and the model becomes the average of
/// the m·τ iterates of the window every τ epochs (τ = averaging_interval; τ > T never averages).
/// Bound, per j, by the argument of Algorithm 4 applied step by step: two runs on neighbouring
/// data that start from the same model differ after each step by at most δ ← ρ(η)·δ (+ 2ηR/|B| at
/// batch j), ρ(η) = max(|1 − ημ|, |1 − ηL|) (a gradient step on a μ-strongly convex, L-smooth
/// loss is ρ-Lipschitz for any η); an average of iterates differs by at most the average of their
/// bounds (triangle inequality), so at each averaging δ ← (Σ_window δ_t)/(m·τ); the output is the
/// model after epoch T (the window average when τ divides T). Algorithm 4's η0/s over all steps
/// understates this whenever τ < T: after a reset the steps are large again. Time O(T·m²), no
/// scratch memory.
/// @errors kInvalidArgument: as rsgd_ar_sensitivities(), or averaging_interval = 0.
Status rsgd_ar_schedule_sensitivities(double convexity, double smoothness, uint32_t epochs,
                                      uint32_t averaging_interval, double eta0, double batch_size,
                                      double gradient_bound, Span<double> out);
/// The discretised sensitivities of 002 §4.1: Δ2* = γ·Δ + 2β·√d and Δ1* = min(√d·Δ2*, Δ2*²)
/// (no checks: the caller passes finite, non-negative values).
Sensitivity discretised_sensitivity(double l2, double gamma, double beta, uint32_t dimension);

/// ε = Δ/T of the discrete Laplace with scale T on a function of L1 sensitivity Δ (pure DP).
/// @errors kInvalidArgument: the scale not positive and finite, or the sensitivity negative or
/// not finite.
Result<double> discrete_laplace_epsilon(double scale, double l1_sensitivity);
/// The largest truncation bound truncated_discrete_laplace_delta() takes (it runs in O(bound)
/// time; 2^64 − 1 would never end).
constexpr uint64_t kMaxTruncationBound = uint64_t{1} << 32;
/// δ of the discrete Laplace truncated to [−bound, bound] (see above; 1 when the sensitivity
/// exceeds the bound, 0 for sensitivity 0), in O(bound) time.
/// @errors kInvalidArgument: the scale not positive and finite, or bound > kMaxTruncationBound.
Result<double> truncated_discrete_laplace_delta(double scale, uint64_t bound,
                                                uint64_t l1_sensitivity);

}  // namespace privacy
}  // namespace fedstat

#endif  // FEDSTAT_SDK_PRIVACY_ACCOUNTANTS_H_
