/// @file
/// The stability-based local-DP histogram applied before sketching (001 §4.7.1; Bun, Nissim &
/// Stemmer's stability-based histograms).
///
/// Every count c > 0 of the client's histogram becomes c + Z, Z a discrete Laplace of scale
/// T = 1/ε truncated to |Z| ≤ B (exact, sdk/noise/discrete_laplace.h), and only noisy counts
/// above B are kept. Items the client does not hold are never output, so the domain can be
/// unbounded. Neighbouring histograms differ by 1 in one count (‖X − X′‖₁ ≤ 1): ε = 1/T, and δ is
/// the mass of the outputs a neighbour cannot produce (privacy::truncated_discrete_laplace_delta
/// with sensitivity 1 — the paper's Δ). stability_params picks the smallest B with δ ≤ target.
///
/// Allowed: ε finite in [kMinStabilityEpsilon, kMaxStabilityEpsilon] = [0.001, 20] — above 20
/// the noise is 0 with probability > 1 − 10^−8 (no meaningful local privacy), and below 0.001
/// the noise swamps every count and the rejection sampling slows down (scale T ≤ 1000) — and δ
/// in (0, 1). T is 1/ε rounded UP to a multiple of 10^−6 (noise::rational_at_least), so the ε
/// achieved is never above the one asked for. B is searched by doubling and bisection (δ falls
/// as B grows), so an unreachable δ costs O(B log B), not O(B²).
///
/// The errors of each function are listed with it.
///
/// @memory none beyond `out`'s table (the caller's SparseHistogram); StabilityParams is 32 bytes.
/// @paper 001 §4.7.1, Theorem 4.13.
#ifndef FEDSTAT_SDK_SKETCH_STABILITY_HISTOGRAM_H_
#define FEDSTAT_SDK_SKETCH_STABILITY_HISTOGRAM_H_

#include <stdint.h>

#include "sdk/base/random_bits.h"
#include "sdk/histogram/sparse_histogram.h"
#include "sdk/noise/rational.h"

namespace fedstat {
namespace sketch {

/// The smallest ε stability_params accepts (scale T ≤ 1000).
constexpr double kMinStabilityEpsilon = 0.001;
/// The largest ε stability_params accepts (above it the noise is almost always 0).
constexpr double kMaxStabilityEpsilon = 20;
/// The largest truncation bound B stability_params searches and stability_histogram accepts.
constexpr uint64_t kMaxStabilityBound = 99999;

/// The mechanism's parameters, built by stability_params.
struct StabilityParams {
  noise::Rational scale;  ///< T ≥ 1/ε, in lowest terms
  uint64_t bound = 0;     ///< B: noise truncated to ±B, counts ≤ B dropped
  double delta = 0;       ///< the δ this (T, B) gives
};

/// The parameters for (ε, δ): T = 1/ε rounded up to a multiple of 10^−6 and the smallest B whose
/// δ is at most `delta`.
/// @errors kInvalidArgument: ε outside [kMinStabilityEpsilon, kMaxStabilityEpsilon] or δ outside
/// (0, 1) (NaN, ±inf and ≤ 0 included). kOutOfRange: no B ≤ kMaxStabilityBound (99,999) reaches
/// δ.
Result<StabilityParams> stability_params(double epsilon, double delta);

/// Writes the noisy, thresholded histogram of `in` to `out`: every held count c becomes c + Z and
/// is kept if above B. One noise draw is taken per slot of `in`, held or not, so the work and the
/// random bits used depend only on in's capacity. `out` is cleared here (after the arguments are
/// checked); `in` and `out` may not be the same object.
/// @errors kInvalidArgument: `in` and `out` are the same object; `params` that stability_params
/// cannot produce (a scale not in lowest terms with both terms below 2^32 or not in
/// [1/20, 1000], a bound outside [1, 99,999], δ outside (0, 1) or below the δ that (T, B)
/// really gives); or an `out` with less capacity than `in` (how many items survive is random and
/// depends on the data, so `out` is sized never to fill: no refusal depends on the data). `out`
/// is then left as it was. Any error of `bits`' random source (e.g. kUnavailable when entropy
/// fails): `out` is then cleared.
Status stability_histogram(const histogram::SparseHistogram& in, const StabilityParams& params,
                           RandomBits& bits, histogram::SparseHistogram& out);

}  // namespace sketch
}  // namespace fedstat

#endif  // FEDSTAT_SDK_SKETCH_STABILITY_HISTOGRAM_H_
