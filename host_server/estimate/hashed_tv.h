// Total variation distance from hashed-domain histograms: the estimator of the DIST data-shift
// task (sdk/sketch/hashed_histogram.h, docs/data_shift_dp.md).
//
// The fleet's vector is the sum, modulo 2^bits, of every device's bucket counts and Pólya shares:
// each bucket holds its true count plus at least one discrete Laplace of the task's scale. The
// reference is folded into the same buckets on the host, exactly (no noise: the server holds it).
//   1. signed_sum reads each word as a two's-complement number of `bits` bits (a bucket's noise can
//      make it negative).
//   2. estimate_hashed_tv clamps every noised count to [0, ∞) — a count is never negative, and
//      the clamp removes most of the noise in the many empty or tiny buckets — takes each side's
//      total as the sum of its clamped counts, and returns ½·Σ_b |p_b/N_p − q_b/N_q|.
// The bucketed distance is at most the true one (collisions cancel mass); its shortfall and the
// noise's bias are measured in docs/data_shift_dp.md. A threshold instead of the clamp (buckets
// ≤ t read as 0) was measured and not kept (fedstat-tv --trust dist, ε = 3, B = 40,960, 20
// clients): t = 1..3 moves the errors by at most ±0.006 either way (Zipf −0.0065 → −0.0053 at
// t = 1, −0.012 at t = 3; man1/man8 −0.0098 → −0.0082 at t = 3), and the noise-free buckets give
// the same errors as the clamp (−0.0063, −0.0102, −0.0024, −0.0115): the error is the collisions'.
//   3. When the noise is large (user level: T = m/ε), the clamp keeps the positive half of every
//      empty bucket's noise — B·E[η⁺] phantom events, E[η⁺] = ρ/((1+ρ)(1−ρ)) for a discrete
//      Laplace of scale T, ρ = e^{−1/T}: 6.8·10⁵ at B = 40,960, T = 100/3 — and the estimate
//      drifts towards 1. Given the scale (noise_scale > 0), estimate_hashed_tv then reads every
//      bucket below τ (above which no empty bucket's noise is likely to reach) as 0, on both sides
//      alike, whenever the phantom mass exceeds half the fleet's clamped total. The study
//      (docs/data_shift_dp.md, user level, Δ = 2m, m = 100, sampled bound, B = 40,960): 0.398 →
//      0.076 at 1,000 clients and 0.288 → 0.035 at 10,000. At item level the clamp stays even
//      where the noise is many Laplaces (a SecAgg+ round of 10⁴ has n/t ≈ 196 per bucket: phantom
//      mass 0.4 of 10⁶ events, and the clamp's 0.011 mean error beats the threshold's 0.014 on the
//      example pairs: scripts/data_shift_dp_laplaces.py, docs/data_shift_dp.md).
//
// Privacy: post-processing of the released sum (and of the server's own reference). Errors:
// std::invalid_argument for vectors of different lengths, an empty side (no positive bucket), or
// bits outside [1, 64]. Memory: O(B). Paper: 001 §4.7 (distributed noise), docs/data_shift_dp.md.
#ifndef FEDSTAT_HOST_ESTIMATE_HASHED_TV_H_
#define FEDSTAT_HOST_ESTIMATE_HASHED_TV_H_

#include <cstdint>
#include <vector>

#include "host_server/estimate/item_counts.h"
#include "sdk/sketch/hashed_histogram.h"

namespace fedstat {
namespace host {

// The exact bucket counts of `items` under `map` (the SDK's bucket function).
std::vector<int64_t> bucket_counts(const ItemCounts& items, const sketch::BucketMap& map);

// Each word of a secure-aggregation sum modulo 2^bits as a signed number.
std::vector<int64_t> signed_sum(const std::vector<uint64_t>& sum, uint32_t bits);

struct HashedTvEstimate {
  double tv = 0;       // ½·Σ_b |p_b/N_p − q_b/N_q| over the clamped counts
  double total_p = 0;  // N_p, N_q: the clamped sums
  double total_q = 0;
  size_t buckets = 0;
  size_t negative_p = 0;  // buckets of P the clamp raised to 0 (noise the clamp removed)
  int64_t threshold = 0;  // τ when step 3 applied (buckets below it read as 0), else 0
};

// `noise_scale`: T of the discrete Laplace each bucket of `p` carries (0: no noise known: the
// clamp only); `laplaces` L ≥ 1: how many such Laplaces the sum holds — contributors/shares, as
// every device adds NB(1/s) − NB(1/s) — which widens the noise to variance L·2ρ/(1 − ρ)²: the
// phantom mass is then L-fold (roughly) and τ = ⌈max(T·ln B, σ_L·√(2 ln B))⌉. Throws
// std::invalid_argument as above, and for a negative or non-finite noise_scale or laplaces < 1.
HashedTvEstimate estimate_hashed_tv(const std::vector<int64_t>& p, const std::vector<int64_t>& q,
                                    double noise_scale = 0, double laplaces = 1);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_ESTIMATE_HASHED_TV_H_
