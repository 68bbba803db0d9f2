// The stability-based local-DP histogram applied before sketching (001 §4.7.1; Bun, Nissim &
// Stemmer's stability-based histograms).
//
// Every count c > 0 of the client's histogram becomes c + Z, Z a discrete Laplace of scale
// T = 1/ε truncated to |Z| ≤ B (exact, sdk/noise/discrete_laplace.h), and only noisy counts
// above B are kept. Items the client does not hold are never output, so the domain can be
// unbounded. Neighbouring histograms differ by 1 in one count (‖X − X′‖₁ ≤ 1): ε = 1/T, and δ is
// the mass of the outputs a neighbour cannot produce (privacy::truncated_discrete_laplace_delta
// with sensitivity 1 — the paper's Δ). stability_params picks the smallest B with δ ≤ target.
//
// Allowed: ε finite in [kMinStabilityEpsilon, kMaxStabilityEpsilon] = [0.001, 20] — above 20
// the noise is 0 with probability > 1 − 10^−8 (no meaningful local privacy), and below 0.001
// the noise swamps every count and the rejection sampling slows down (scale T ≤ 1000) — and δ
// in (0, 1). T is 1/ε rounded UP to a multiple of 10^−6 (noise::rational_at_least), so the ε
// achieved is never above the one asked for. B is searched by doubling and bisection (δ falls
// as B grows), so an unreachable δ costs O(B log B), not O(B²).
//
// Errors: stability_params: kInvalidArgument for ε or δ outside the ranges above (NaN, ±inf,
// ≤ 0 included); kOutOfRange when no B ≤ kMaxStabilityBound (99,999) reaches δ.
// stability_histogram: kInvalidArgument for params stability_params cannot produce (a scale
// that is not a rational in [1/20, 1000], a bound outside [1, 99,999], δ outside (0, 1) or
// below the δ that (T, B) really gives) and for an `out` with less capacity than `in` — out is
// then left as it was (how many items survive is random and depends on the data, so `out` is
// sized to never fill: no refusal depends on the data); any error of the random source (out is
// then cleared).
// Memory: none beyond `out`'s table.
// Paper: 001 §4.7.1, Theorem 4.13.
#ifndef FEDSTAT_SDK_SKETCH_STABILITY_HISTOGRAM_H_
#define FEDSTAT_SDK_SKETCH_STABILITY_HISTOGRAM_H_

#include <stdint.h>

#include "sdk/base/random_bits.h"
#include "sdk/histogram/sparse_histogram.h"
#include "sdk/noise/rational.h"

namespace fedstat {
namespace sketch {

constexpr double kMinStabilityEpsilon = 0.001;
constexpr double kMaxStabilityEpsilon = 20;
constexpr uint64_t kMaxStabilityBound = 99999;

struct StabilityParams {
  noise::Rational scale;  // T ≥ 1/ε
  uint64_t bound = 0;     // B: noise truncated to ±B, counts ≤ B dropped
  double delta = 0;       // the δ this (T, B) gives
};
Result<StabilityParams> stability_params(double epsilon, double delta);

// out is cleared here (after params are checked); in and out may not be the same object.
Status stability_histogram(const histogram::SparseHistogram& in, const StabilityParams& params,
                           RandomBits& bits, histogram::SparseHistogram& out);

}  // namespace sketch
}  // namespace fedstat

#endif  // FEDSTAT_SDK_SKETCH_STABILITY_HISTOGRAM_H_
