// The L1-sampling weight of an item (001 §4.2–4.4, Algorithm 1 lines 1–2), bit-identical on every
// architecture.
//
// u = (⌊h/2^12⌋ + ½)/2^52 ∈ (0, 1) (exact, never 0 or 1) from the item's seeded 64-bit hash h; W =
// 1/(1 − u^(1/k)), the largest of k reciprocal uniforms (Lemma 4.4). W is kept in fixed point: ω =
// round(W·2^8), capped at kMaxFixedWeight = 2^31 (W ≤ 2^23), so sketches hold integers and add
// exactly. The host divides by 2^8 and uses the same ω, so the rounding changes W's distribution by
// at most 2^-9 absolute; the cap touches an item with probability ≈ k/2^23 (1e-3 at k = 8192), and
// such an item's v = x·W ≥ 2^23·x is above any threshold the estimators use for x ≥ 10^-6.
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

constexpr unsigned kWeightFractionBits = 8;
constexpr uint64_t kMaxFixedWeight = uint64_t{1} << 31;

// W = 1/(1 − u^(1/k)) for u ∈ (0, 1), k ≥ 1, computed portably (see above).
double sampling_weight(double u, uint32_t k);
// ω = min(round(W·2^8), 2^31) from the item's 64-bit hash.
uint64_t fixed_sampling_weight(uint64_t hash, uint32_t k);
// u from a 64-bit hash: (⌊h/2^12⌋ + ½)/2^52.
double uniform_from_hash(uint64_t hash);

}  // namespace sketch
}  // namespace fedstat

#endif  // FEDSTAT_SDK_SKETCH_SAMPLING_WEIGHT_H_
