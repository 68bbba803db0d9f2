/// @file
/// KL answers: a device's part of PRIEST-KLD (000 Algorithms 1–3, client side, lines 5–6).
///
/// The host samples query points x_1..x_T from the public reference Π and asks each participating
/// client for its counts at them. The client answers, as integers, its local histogram's count at
/// each requested point and its total (the number of items it holds). The host forms
/// P(x) = Σ_c count_c(x) / Σ_c total_c (the correction of Algorithm 1's average).
///
/// Dist model (000 Algorithm 3): the client adds its share of integer noise to every count before
/// the answer leaves the device — Sk(λ) per count, so that the secure sum over the k clients that
/// answer a point carries Sk(k·λ) — and may wrap the noised counts modulo 2^b for secure
/// aggregation. The total is not noised: under the substitution neighbouring relation of 000
/// Theorems 4.9–4.11 (datasets of fixed size N that differ in one item) the totals are public.
///
/// Calibration: one changed item moves the client's counts at two distinct points by ±1 each. If
/// the client answers each distinct point once, the answers' sensitivity is Δ1 = 2, Δ2 = √2. If a
/// point can be asked in several rounds (per-round client sampling), with m1 ≥ m2 the two largest
/// numbers of rounds in which one point is asked, Δ1 = m1 + m2 and Δ2 = √(m1 + m2).
/// kl_dist_skellam_lambda returns the smallest per-client λ for (ε, δ) when `clients_per_sum`
/// clients answer every point (the accountant of sdk/privacy, Skellam RDP).
///
/// Errors: kInvalidArgument (spans of different lengths, null total); kOutOfRange when a noised
/// count would overflow. On an error the output spans hold no complete answer: discard them.
///
/// @memory stack only; the answer is points.size() words (the caller's spans).
/// @paper 000 §4.2–4.3, Algorithms 1–3.
#ifndef FEDSTAT_SDK_TASKS_KL_ANSWER_TASK_H_
#define FEDSTAT_SDK_TASKS_KL_ANSWER_TASK_H_

#include <stdint.h>

#include "sdk/histogram/dense_histogram.h"
#include "sdk/histogram/sparse_histogram.h"
#include "sdk/noise/add_noise.h"
#include "sdk/privacy/accountants.h"

namespace fedstat {
namespace tasks {

/// Exact answers (none, Trusted and TAgg models): `counts[t]` = count(`points[t]`) and
/// `*total` = the histogram's total.
/// @errors kInvalidArgument: `total` is null, or `counts` is not as long as `points`; nothing is
/// written then.
Status answer_kl_points(const histogram::DenseHistogram& local, Span<const uint32_t> points,
                        Span<int64_t> counts, uint64_t* total);
/// Exact answers from a sparse histogram, as the DenseHistogram overload.
/// @errors kInvalidArgument: `total` is null, or `counts` is not as long as `points`; nothing is
/// written then.
Status answer_kl_points(const histogram::SparseHistogram& local, Span<const uint32_t> points,
                        Span<int64_t> counts, uint64_t* total);

/// Dist model: `counts[t]` = count(`points[t]`) + the client's noise share, drawn from `share`
/// with `bits`; `*total` is exact.
/// @errors kInvalidArgument: `total` is null, or `counts` is not as long as `points`.
/// kFailedPrecondition: `share` was never init()ed. kOutOfRange: a count plus its noise overflows
/// int64. Any error of `bits`' random source (e.g. kUnavailable). `counts` then holds no complete
/// answer: discard it, and `bits` with it.
Status answer_kl_points_noised(const histogram::DenseHistogram& local, Span<const uint32_t> points,
                               const noise::NoiseSampler& share, RandomBits& bits,
                               Span<int64_t> counts, uint64_t* total);
/// Dist model from a sparse histogram, as the DenseHistogram overload.
/// @errors kInvalidArgument: `total` is null, or `counts` is not as long as `points`.
/// kFailedPrecondition: `share` was never init()ed. kOutOfRange: a count plus its noise overflows
/// int64. Any error of `bits`' random source (e.g. kUnavailable). `counts` then holds no complete
/// answer: discard it, and `bits` with it.
Status answer_kl_points_noised(const histogram::SparseHistogram& local, Span<const uint32_t> points,
                               const noise::NoiseSampler& share, RandomBits& bits,
                               Span<int64_t> counts, uint64_t* total);
/// The same, wrapped: `words[t]` = (count(`points[t]`) + noise) mod 2^bits_of_modulus (1..32),
/// for secure aggregation; `*total` is exact.
/// @errors kInvalidArgument: `total` is null, `words` is not as long as `points`, or
/// `bits_of_modulus` is outside 1..32. kFailedPrecondition: `share` was never init()ed. Any error
/// of `bits`' random source (e.g. kUnavailable). `words` then holds no complete answer: discard
/// it.
Status answer_kl_points_noised_mod(const histogram::SparseHistogram& local,
                                   Span<const uint32_t> points, const noise::NoiseSampler& share,
                                   RandomBits& bits, unsigned bits_of_modulus, Span<uint32_t> words,
                                   uint64_t* total);

/// The answers' sensitivity when the most-asked point is asked in m1 rounds and the next in m2
/// (m1 = m2 = 1 when each distinct point is answered once): Δ1 = m1 + m2, Δ2 = √(m1 + m2).
privacy::Sensitivity kl_answer_sensitivity(uint32_t m1, uint32_t m2);

/// The smallest per-client Skellam λ giving (epsilon, delta) when `clients_per_sum` clients'
/// answers are summed for every point (privacy::skellam_lambda).
/// @errors kInvalidArgument: `clients_per_sum` = 0, ε not positive, δ outside (0, 1), or an
/// invalid sensitivity. kOutOfRange: no per-client λ up to 10^15 reaches ε.
Result<double> kl_dist_skellam_lambda(double epsilon, double delta,
                                      privacy::Sensitivity sensitivity, uint32_t clients_per_sum);

}  // namespace tasks
}  // namespace fedstat

#endif  // FEDSTAT_SDK_TASKS_KL_ANSWER_TASK_H_
