// Adding i.i.d. integer noise to vectors: the last step before a report is encoded.
//
// NoiseSampler holds one distribution (NoiseSpec) ready to draw from. add_noise writes
// out[i] = in[i] + noise_i for int32 or int64 values, refusing (kOutOfRange, before writing that
// element) a sum that would overflow; add_noise_mod writes out[i] = (in[i] + noise_i) mod 2^bits
// for unsigned words, the form secure aggregation sums. `in` and `out` may be the same span; on
// an error (a failing random source, an overflow) the elements before the failing index already
// hold noise, so callers that work in place must discard the vector — and the RandomBits too
// (random_bits.h): never retry a failed draw on the same reader.
//
// NoiseSampler::init refuses (and then changes nothing: an earlier successful spec stays in
// force) a parameter that is not a positive rational — kInvalidArgument for a zero denominator
// and for 0, which adds no noise (Skellam λ, Laplace or Pólya scale, Gaussian σ²) — and
// kOutOfRange past each kind's limits: p and q below 2^32 in lowest terms (the parameter is
// used in lowest terms), Skellam λ ≤ 2^31, Pólya scale ≤ 10^4 with clients ≥ 1 (clients = 0 is
// kInvalidArgument). sample() before a successful init() is kFailedPrecondition.
//
// Every helper also takes a TabulatedSkellamSampler (tabulated_poisson.h: exact Sk(λ) from a
// table in caller memory, several times faster): it draws with sample_many() in chunks of
// kNoiseChunk on the stack, so element i gets exactly the i-th draw that sample() calls would
// give (on an error, the draws of the failing element's chunk are spent).
//
// Memory: sizeof(NoiseSampler) ≈ sizeof(SkellamSampler) + 32 bytes; nothing per element; the
// tabulated helpers use kNoiseChunk·8 bytes of stack.
// Paper: 002 Algorithm 4 (Skellam noise on the discretised update), 001 §4.7, 000 Algorithm 3.
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

enum class NoiseKind : uint8_t {
  kDiscreteLaplace,   // parameter: scale T, P(k) ∝ exp(−|k|/T)
  kDiscreteGaussian,  // parameter: variance σ², P(k) ∝ exp(−k²/(2σ²))
  kSkellam,           // parameter: λ, Poisson(λ) − Poisson(λ)
  kPolyaShare,        // parameter: scale T of the summed discrete Laplace; `clients` shares
};

struct NoiseSpec {
  NoiseKind kind = NoiseKind::kSkellam;
  Rational parameter;
  uint32_t clients = 1;  // kPolyaShare only
};

class NoiseSampler {
 public:
  Status init(const NoiseSpec& spec);
  Result<int64_t> sample(RandomBits& bits) const;

 private:
  NoiseSpec spec_;
  SkellamSampler skellam_;
  bool ready_ = false;
};

Status add_noise(Span<const int64_t> in, Span<int64_t> out, const NoiseSampler& noise,
                 RandomBits& bits);
Status add_noise(Span<const int32_t> in, Span<int32_t> out, const NoiseSampler& noise,
                 RandomBits& bits);
// bits_of_modulus in 1..32 (uint32 words) or 1..64 (uint64 words).
Status add_noise_mod(Span<const uint32_t> in, Span<uint32_t> out, unsigned bits_of_modulus,
                     const NoiseSampler& noise, RandomBits& bits);
Status add_noise_mod(Span<const uint64_t> in, Span<uint64_t> out, unsigned bits_of_modulus,
                     const NoiseSampler& noise, RandomBits& bits);

constexpr size_t kNoiseChunk = 32;
Status add_noise(Span<const int64_t> in, Span<int64_t> out, TabulatedSkellamSampler& noise,
                 RandomBits& bits);
Status add_noise(Span<const int32_t> in, Span<int32_t> out, TabulatedSkellamSampler& noise,
                 RandomBits& bits);
Status add_noise_mod(Span<const uint32_t> in, Span<uint32_t> out, unsigned bits_of_modulus,
                     TabulatedSkellamSampler& noise, RandomBits& bits);
Status add_noise_mod(Span<const uint64_t> in, Span<uint64_t> out, unsigned bits_of_modulus,
                     TabulatedSkellamSampler& noise, RandomBits& bits);

}  // namespace noise
}  // namespace fedstat

#endif  // FEDSTAT_SDK_NOISE_ADD_NOISE_H_
