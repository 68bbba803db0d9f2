/// @file
/// Adding i.i.d. integer noise to vectors: the last step before a report is encoded.
///
/// NoiseSampler holds one distribution (NoiseSpec) ready to draw from. add_noise writes
/// out[i] = in[i] + noise_i for int32 or int64 values, refusing (kOutOfRange, before writing that
/// element) a sum that would overflow; add_noise_mod writes out[i] = (in[i] + noise_i) mod 2^bits
/// for unsigned words, the form secure aggregation sums. `in` and `out` may be the same span; on
/// an error (a failing random source, an overflow) the elements before the failing index already
/// hold noise, so callers that work in place must discard the vector — and the RandomBits too
/// (random_bits.h): never retry a failed draw on the same reader.
///
/// NoiseSampler::init refuses (and then changes nothing: an earlier successful spec stays in
/// force) a parameter that is not a positive rational — kInvalidArgument for a zero denominator
/// and for 0, which adds no noise (Skellam λ, Laplace or Pólya scale, Gaussian σ²) — and
/// kOutOfRange past each kind's limits: p and q below 2^32 in lowest terms (the parameter is
/// used in lowest terms), Skellam λ ≤ 2^31, Pólya scale ≤ 10^4 with clients ≥ 1 (clients = 0 is
/// kInvalidArgument). sample() before a successful init() is kFailedPrecondition.
///
/// Every helper also takes a TabulatedSkellamSampler (tabulated_poisson.h: exact Sk(λ) from a
/// table in caller memory, several times faster): it draws with sample_many() in chunks of
/// kNoiseChunk on the stack, so element i gets exactly the i-th draw that sample() calls would
/// give (on an error, the draws of the failing element's chunk are spent).
///
/// @memory sizeof(NoiseSampler) ≈ sizeof(SkellamSampler) + 32 bytes; nothing per element; the
/// tabulated helpers use kNoiseChunk·8 bytes of stack.
/// @paper 002 Algorithm 4 (Skellam noise on the discretised update), 001 §4.7, 000 Algorithm 3.
#ifndef FEDSTAT_SDK_NOISE_ADD_NOISE_H_
#define FEDSTAT_SDK_NOISE_ADD_NOISE_H_

#include <stdint.h>

#include "sdk/base/random_bits.h"
#include "sdk/base/span.h"
#include "sdk/noise/poisson.h"
#include "sdk/noise/rational.h"
#include "sdk/noise/tabulated_poisson.h"

namespace fedstat {
namespace noise {

/// The distribution a NoiseSampler draws from; each takes one exact rational parameter.
enum class NoiseKind : uint8_t {
  kDiscreteLaplace,  ///< parameter: scale T, P(k) ∝ exp(−|k|/T) (discrete_laplace.h)
  kDiscreteGaussian,  ///< parameter: variance σ², P(k) ∝ exp(−k²/(2σ²)) (discrete_gaussian.h)
  kSkellam,           ///< parameter: λ, Poisson(λ) − Poisson(λ) (poisson.h)
  kPolyaShare,  ///< parameter: scale T of the summed discrete Laplace; `clients` shares (polya.h)
};

/// What NoiseSampler::init() builds: a kind, its parameter and (Pólya only) the client count.
struct NoiseSpec {
  NoiseKind kind = NoiseKind::kSkellam;  ///< the distribution
  Rational parameter;                    ///< T, σ² or λ, as NoiseKind says; must be > 0
  uint32_t clients = 1;                  ///< kPolyaShare only: how many shares sum to the noise
};

/// One noise distribution, checked and ready to draw from; draws are exact (no floating point).
class NoiseSampler {
 public:
  /// Checks `spec` and makes it the distribution sample() draws from (parameter reduced to lowest
  /// terms); a refused spec changes nothing, so an earlier successful one stays in force.
  /// @errors kInvalidArgument: the parameter has a zero denominator or is 0, the kind is not a
  /// NoiseKind value, or kPolyaShare has clients = 0. kOutOfRange: p or q ≥ 2^32 in lowest terms,
  /// a Skellam λ > 2^31 or a Pólya scale > 10^4.
  Status init(const NoiseSpec& spec);
  /// One draw of the distribution, reading random bits from `bits`.
  /// @errors kFailedPrecondition: no successful init(). kOutOfRange: a discrete Laplace, Gaussian
  /// or Pólya draw so far in the tail that exact 64/128-bit arithmetic overflows (astronomically
  /// unlikely within init()'s limits). Any error of the RandomSource behind `bits` (e.g.
  /// kUnavailable); discard `bits` after one.
  Result<int64_t> sample(RandomBits& bits) const;

 private:
  NoiseSpec spec_;
  SkellamSampler skellam_;
  bool ready_ = false;
};

/// out[i] = in[i] + one draw of `noise`, for int64 values; `in` and `out` may be the same span.
/// @errors kInvalidArgument: `in` and `out` differ in length. kOutOfRange: in[i] + noise
/// overflows int64 (use add_noise_mod); out[0, i) already hold noise. Any error of
/// NoiseSampler::sample() (kFailedPrecondition before init(), the random source's error).
Status add_noise(Span<const int64_t> in, Span<int64_t> out, const NoiseSampler& noise,
                 RandomBits& bits);
/// out[i] = in[i] + one draw of `noise`, for int32 values; `in` and `out` may be the same span.
/// @errors kInvalidArgument: `in` and `out` differ in length. kOutOfRange: in[i] + noise
/// overflows int32 (use add_noise_mod); out[0, i) already hold noise. Any error of
/// NoiseSampler::sample() (kFailedPrecondition before init(), the random source's error).
Status add_noise(Span<const int32_t> in, Span<int32_t> out, const NoiseSampler& noise,
                 RandomBits& bits);
/// out[i] = (in[i] + one draw of `noise`) mod 2^bits_of_modulus, for uint32 words (1..32 bits).
/// @errors kInvalidArgument: `in` and `out` differ in length, or bits_of_modulus is not in 1..32.
/// Any error of NoiseSampler::sample() (kFailedPrecondition before init(), kOutOfRange, the
/// random source's error); out[0, i) already hold noise.
Status add_noise_mod(Span<const uint32_t> in, Span<uint32_t> out, unsigned bits_of_modulus,
                     const NoiseSampler& noise, RandomBits& bits);
/// out[i] = (in[i] + one draw of `noise`) mod 2^bits_of_modulus, for uint64 words (1..64 bits).
/// @errors kInvalidArgument: `in` and `out` differ in length, or bits_of_modulus is not in 1..64.
/// Any error of NoiseSampler::sample() (kFailedPrecondition before init(), kOutOfRange, the
/// random source's error); out[0, i) already hold noise.
Status add_noise_mod(Span<const uint64_t> in, Span<uint64_t> out, unsigned bits_of_modulus,
                     const NoiseSampler& noise, RandomBits& bits);

/// Draws per TabulatedSkellamSampler::sample_many() call in the tabulated helpers (int64 slots on
/// the stack).
constexpr size_t kNoiseChunk = 32;
/// out[i] = in[i] + Sk(λ) from a tabulated sampler (the draws of sample() calls in a row), int64.
/// @errors kInvalidArgument: `in` and `out` differ in length. kOutOfRange: in[i] + noise
/// overflows int64; out[0, i) already hold noise. kFailedPrecondition: `noise` has no successful
/// init(). kResourceExhausted or kInternal: the sampler's exact fallback ran out of scratch or
/// stayed undecided (see tabulated_poisson.h; practically never). The random source's error.
Status add_noise(Span<const int64_t> in, Span<int64_t> out, TabulatedSkellamSampler& noise,
                 RandomBits& bits);
/// out[i] = in[i] + Sk(λ) from a tabulated sampler (the draws of sample() calls in a row), int32.
/// @errors kInvalidArgument: `in` and `out` differ in length. kOutOfRange: in[i] + noise
/// overflows int32; out[0, i) already hold noise. kFailedPrecondition: `noise` has no successful
/// init(). kResourceExhausted or kInternal: the sampler's exact fallback ran out of scratch or
/// stayed undecided (see tabulated_poisson.h; practically never). The random source's error.
Status add_noise(Span<const int32_t> in, Span<int32_t> out, TabulatedSkellamSampler& noise,
                 RandomBits& bits);
/// out[i] = (in[i] + Sk(λ)) mod 2^bits_of_modulus from a tabulated sampler, uint32 words.
/// @errors kInvalidArgument: `in` and `out` differ in length, or bits_of_modulus is not in 1..32.
/// kFailedPrecondition: `noise` has no successful init(). kResourceExhausted or kInternal: the
/// sampler's exact fallback ran out of scratch or stayed undecided (practically never). The
/// random source's error (e.g. kUnavailable); out[0, i) already hold noise.
Status add_noise_mod(Span<const uint32_t> in, Span<uint32_t> out, unsigned bits_of_modulus,
                     TabulatedSkellamSampler& noise, RandomBits& bits);
/// out[i] = (in[i] + Sk(λ)) mod 2^bits_of_modulus from a tabulated sampler, uint64 words.
/// @errors kInvalidArgument: `in` and `out` differ in length, or bits_of_modulus is not in 1..64.
/// kFailedPrecondition: `noise` has no successful init(). kResourceExhausted or kInternal: the
/// sampler's exact fallback ran out of scratch or stayed undecided (practically never). The
/// random source's error (e.g. kUnavailable); out[0, i) already hold noise.
Status add_noise_mod(Span<const uint64_t> in, Span<uint64_t> out, unsigned bits_of_modulus,
                     TabulatedSkellamSampler& noise, RandomBits& bits);

}  // namespace noise
}  // namespace fedstat

#endif  // FEDSTAT_SDK_NOISE_ADD_NOISE_H_
