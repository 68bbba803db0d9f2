// The L1-sampling weight of an item (001 §4.2–4.4, Algorithm 1 lines 1–2), bit-identical on every
// architecture.
//
// u = (⌊h/2^12⌋ + ½)/2^52 ∈ (0, 1) (exact, never 0 or 1) from the item's seeded 64-bit hash h; W =
// 1/(1 − u^(1/k)), the largest of k reciprocal uniforms (Lemma 4.4). W is kept in fixed point: ω =
// round(W·2^4), capped at kMaxFixedWeight = 2^35 (W ≤ 2^31), so sketches hold integers and add
// exactly. The host divides by 2^4 and uses the same ω, so the rounding changes W's distribution by
// at most 2^-5 absolute (W ≥ k/37 ≫ 1 for every u). The cap matters for an item only when its
// share x is below τ/2^31 (the estimators' threshold τ is a few units): an item held once among
// N < 2^28 items has x > 2^-28, so every item is counted. (An earlier cap of 2^23 lost the tail
// of a 10^8-draw Zipf pair: items below τ/2^23 could never be sampled.)
//
// u^(1/k) = exp(ln(u)/k) is evaluated with a fixed sequence of IEEE-754 additions,
// multiplications and divisions (ln by the atanh series after an exact frexp; expm1 by Taylor
// series after halving): those are correctly rounded everywhere, and the build never contracts
// them into fused multiply-adds (-std=c++17 implies -ffp-contract=off), so ω is the same on x86-64,
// AArch64 and the Cortex-M4's software floating point. Memory: none. Paper: 001 §4.2, Alg. 1.
#ifndef FEDSTAT_SDK_SKETCH_SAMPLING_WEIGHT_H_
#define FEDSTAT_SDK_SKETCH_SAMPLING_WEIGHT_H_

#include <stdint.h>

namespace fedstat {
namespace sketch {

constexpr unsigned kWeightFractionBits = 4;
constexpr uint64_t kMaxFixedWeight = uint64_t{1} << 35;

// W = 1/(1 − u^(1/k)) for u ∈ (0, 1), k ≥ 1, computed portably (see above).
double sampling_weight(double u, uint32_t k);
// ω = min(round(W·2^4), 2^35) from the item's 64-bit hash.
uint64_t fixed_sampling_weight(uint64_t hash, uint32_t k);
// u from a 64-bit hash: (⌊h/2^12⌋ + ½)/2^52.
double uniform_from_hash(uint64_t hash);

}  // namespace sketch
}  // namespace fedstat

#endif  // FEDSTAT_SDK_SKETCH_SAMPLING_WEIGHT_H_
