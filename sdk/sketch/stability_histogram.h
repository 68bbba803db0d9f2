// The stability-based local-DP histogram applied before sketching (001 §4.7.1; Bun, Nissim &
// Stemmer's stability-based histograms).
//
// Every count c > 0 of the client's histogram becomes c + Z, Z a discrete Laplace of scale
// T = 1/ε truncated to |Z| ≤ B (exact, sdk/noise/discrete_laplace.h), and only noisy counts
// above B are kept. Items the client does not hold are never output, so the domain can be
// unbounded. Neighbouring histograms differ by 1 in one count (‖X − X′‖₁ ≤ 1): ε = 1/T, and δ is
// the mass of the outputs a neighbour cannot produce (privacy::truncated_discrete_laplace_delta
// with sensitivity 1 — the paper's Δ). stability_bound picks the smallest B with δ ≤ target.
//
// Errors: kInvalidArgument (ε ≤ 0, δ outside (0, 1)), kResourceExhausted when `out` cannot hold
// the kept items (out is then cleared). Memory: none beyond `out`'s table.
// Paper: 001 §4.7.1, Theorem 4.13.
#ifndef FEDSTAT_SDK_SKETCH_STABILITY_HISTOGRAM_H_
#define FEDSTAT_SDK_SKETCH_STABILITY_HISTOGRAM_H_

#include <stdint.h>

#include "sdk/base/random_bits.h"
#include "sdk/histogram/sparse_histogram.h"
#include "sdk/noise/rational.h"

namespace fedstat {
namespace sketch {

struct StabilityParams {
  noise::Rational scale;  // T ≥ 1/ε
  uint64_t bound = 0;     // B: noise truncated to ±B, counts ≤ B dropped
  double delta = 0;       // the δ this (T, B) gives
};
Result<StabilityParams> stability_params(double epsilon, double delta);

// out must be empty (cleared here); in and out may not be the same object.
Status stability_histogram(const histogram::SparseHistogram& in, const StabilityParams& params,
                           RandomBits& bits, histogram::SparseHistogram& out);

}  // namespace sketch
}  // namespace fedstat

#endif  // FEDSTAT_SDK_SKETCH_STABILITY_HISTOGRAM_H_
