// Total variation distance from data-shift sketches on the host (001 §4.3–4.6, with the
// re-estimation step the issue measured to matter most).
//
// 1. Merge: the clients' reports of one distribution are summed counter by counter (exact, as
//    int64 modulo 2^64: what secure aggregation would output) and their heaps' item ids united.
// 2. Combine: v = counters_P/(2^4·N_P) − counters_Q/(2^4·N_Q) (double), the sketch of
//    w ⊙ (P − Q) (Fact 4.11); candidates = both heaps' items, or every id of a known domain
//    [0, D) when heaps cannot be revealed (secure aggregation; D ≤ 2^24).
// 3. Prune: keep the `max_candidates` (default 1.25·w, measured: R·w/4 at R = 5 and R·w/2.5 at
//    R = 3 were best) candidates with the largest |median| CountSketch estimate — without pruning
//    the least squares breaks down.
// 4. Re-estimate by least squares on the candidate columns (support-then-least-squares, as in
//    CoSaMP, Needell & Tropp 2009): minimise ||A·z − v||² where column j has s_r(j) in row
//    (r, h_r(j)); Eigen's LeastSquaresConjugateGradient, started from the medians.
// 5. Estimators over the candidates' ẑ_j and weights W_j = ω_j/2^4, with
//        count(y) = Σ_{|ẑ_j| ≥ y} [1 + (k−1)·min(1, (|ẑ_j|/y − 1)/(W_j − 1))]
//    (the expected number of the k virtual samples per item that reach y, 001 Eq. 6):
//      HH:    L = (τ/k)·count(τ) with τ = 2k/H by default, raised to the recovery floor below
//             when the candidates cannot support it (001 Algorithm 2 via Eq. 6; our copy of
//             Algorithm 2 misprints the constants);
//      top-k: for ranks r = r0 − κ + 1 … r0 solve count(y_r) = r (the back-filled list's r-th
//             largest value, Lemma 4.9, in expectation) and average (r/k)·y_r — the rank weight
//             r/k keeps every rank unbiased (001 uses r = k/2 and ½). By default r0 adapts: the
//             largest rank (≤ k/2) whose y_r stays at or above the recovery floor — the largest
//             of the (m/2)-th largest |ẑ|, noise_margin × the least-squares residual r.m.s., and
//             each full heap's H-th largest value on its own sketch (below it a distribution may
//             hold items no heap kept; counts are non-negative, so |v_P − v_Q| ≤ max(v_P, v_Q))
//             — so every item that can reach y_r is recovered and well above the noise;
//             κ = r0/4, evaluated at ≤ 16 ranks.
//    Both estimate ||P − Q||₁; D_TV is half of it.
// 6. Clamp: each candidate's ẑ_j to [−W_j, W_j] before step 5 (ẑ_j estimates W_j·(P(j) − Q(j)),
//    both shares in [0, 1]), and both published estimates to at most 1 (D_TV is a distance in
//    [0, 1]; neither estimator is ever negative). Honest sketches rarely reach either clamp (only
//    noise far above an item's weight, or a TV near 1); a sketch summed with a forged report can:
//    one device declaring 100 items within the first word bounds moved an estimate from 0.032 to
//    6616 (issue 39 item 7's review; host_server/tasks/report_bounds.h now bounds the report
//    tighter, and the clamp keeps whatever passes a distance). Inside [0, 1] a forged sketch can
//    still move the estimate: the clamp bounds the damage, not the lie.
//
// Privacy: the estimators themselves add no noise. What they read — counters, totals, heap ids —
// is what the clients released, so with the local-DP stability histogram on every client
// (sketch/stability_histogram.h) every output and every refusal here (an empty distribution, a
// total of 2^28 or more whose counters may have wrapped, a corrupt report) is post-processing of
// those private reports; without it no privacy is claimed.
// Errors: std::invalid_argument for reports with different parameters or seeds, an empty
// distribution, or options out of range (validate_tv_options: τ and noise_margin finite, τ ≥ 0,
// noise_margin > 0, domain and max_candidates ≤ 2^24). Memory: O(R·w + candidates·R). Paper: 001
// §4.3–4.6, Algorithms 2–3, Fact 4.11.
#ifndef FEDSTAT_HOST_ESTIMATE_TV_ESTIMATOR_H_
#define FEDSTAT_HOST_ESTIMATE_TV_ESTIMATOR_H_

#include <cstdint>
#include <vector>

#include "host_server/estimate/item_counts.h"
#include "sdk/sketch/shift_sketch.h"

namespace fedstat {
namespace host {

// One distribution's merged sketch.
struct MergedSketch {
  sketch::ShiftSketchParams params;
  std::vector<int64_t> counters;  // R·w, summed modulo 2^64
  int64_t total = 0;
  std::vector<uint32_t> heap_items;  // union, ascending
};
// Parses every client's report; a corrupt one throws std::runtime_error naming it. The parsed
// reports view `bytes`, which must outlive them.
std::vector<sketch::SketchReport> parse_reports(const std::vector<std::vector<uint8_t>>& bytes);
// Throws std::invalid_argument when the reports' parameters or seeds differ.
MergedSketch merge_reports(const std::vector<sketch::SketchReport>& reports);

// The exact D_TV = ½·Σ_x |P(x) − Q(x)| of two item-count files.
double exact_tv(const ItemCounts& p, const ItemCounts& q);

struct TvOptions {
  size_t max_candidates = 0;  // 0: 1.25·w
  bool least_squares = true;
  double tau = 0;           // HH threshold; 0: 2k/H
  uint32_t rank = 0;        // top-k r0; 0: adaptive (see above)
  uint32_t window = 0;      // top-k κ; 0: r0/4
  double noise_margin = 4;  // adaptive r0: y_r0 ≥ noise_margin × residual r.m.s.
  uint32_t domain = 0;      // > 0: candidates are every id in [0, domain) instead of the heaps
};

void validate_tv_options(const TvOptions& options);  // throws std::invalid_argument

struct TvEstimate {
  double hh = 0;  // D_TV estimates (½·||P − Q||₁)
  double topk = 0;
  size_t candidates = 0;  // after pruning
  double tau = 0;
  uint32_t rank = 0, window = 0;
  double noise = 0;  // r.m.s. per counter of what the candidates leave unexplained
};

TvEstimate estimate_tv(const MergedSketch& p, const MergedSketch& q, const TvOptions& options);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_ESTIMATE_TV_ESTIMATOR_H_
