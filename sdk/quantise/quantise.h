// The quantise stage: a real-valued update becomes integers mod 2^b, ready for secure aggregation;
// the host inverts a modular SUM of such encodings back to the sum of the updates.
//
// Device, in this order (002 Algorithms 1 and 3; Kairouz, Liu & Steinke 2021):
//   1. L2 clip to norm c;
//   2. optional randomised Walsh–Hadamard rotation (rotation.h; signs from the task's public seed;
//      zero-padded to D = the next power of two);
//   3. scale by γ;
//   4. conditional stochastic rounding: each x rounds up with probability equal to its fractional
//      part (an exact Bernoulli trial of the double), repeated until ‖v* − γx‖₂ ≤ β·√D; after
//      max_rounding_tries failures the call fails (kAborted) rather than loop forever;
//   5. optional noise (a NoiseSampler, e.g. Skellam with the accountant's λ);
//   6. wrap modulo 2^b (b = 32 default; 64 available with uint64 words).
// Host: centre each word of the modular sum into [−2^(b−1), 2^(b−1)), divide by γ, inverse
// rotation (in double), drop the padding. Exact for any number of clients as long as the true
// sum stays inside that range (choose b with room: |sum| < 2^(b−1)).
//
// Errors (all before any output is trusted): invalid configuration (kInvalidArgument); a scaled
// value that cannot fit the modulus (kOutOfRange: lower γ or raise b); rounding that cannot meet
// the β bound (kAborted).
//
// Memory: the caller's update buffer of D floats (used as working memory) and D output words;
// dequantise needs D doubles of work. D = padded_dimension(d) with rotation, else d;
// d ≤ kMaxDimension. Paper: 002 Algorithm 1 lines 4–8, Algorithm 3, §4 "Random rotation".
#ifndef FEDSTAT_SDK_QUANTISE_QUANTISE_H_
#define FEDSTAT_SDK_QUANTISE_QUANTISE_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/random_bits.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/base/span.h"
#include "sdk/noise/add_noise.h"

namespace fedstat {
namespace quantise {

constexpr size_t kMaxDimension = size_t{1} << 24;

struct QuantiseConfig {
  double clip_norm = 1.0;  // c
  bool rotate = true;      // randomised Walsh–Hadamard rotation
  Seed256 rotation_seed;   // public: from the task
  uint64_t rotation_stream = 0;
  double gamma = 1024;         // scale: finer quantisation, more noise for the same ε
  double beta = 0.6065306597;  // e^(−1/2), Kairouz et al.'s default
  unsigned modulus_bits = 32;  // b
  uint32_t max_rounding_tries = 1000;
};

// D: the number of words an update of dimension d encodes to.
size_t encoded_length(size_t d, const QuantiseConfig& config);

// update[0, d) holds the update; update.size() ≥ D (it is clipped, rotated and scaled in place).
// `noise` may be null (no noise). `private_bits` must come from a CSPRNG in production.
Status quantise(Span<float> update, size_t d, const QuantiseConfig& config,
                const noise::NoiseSampler* noise, RandomBits& private_bits, Span<uint32_t> out);
Status quantise(Span<float> update, size_t d, const QuantiseConfig& config,
                const noise::NoiseSampler* noise, RandomBits& private_bits, Span<uint64_t> out);

// The sum (mod 2^b) of any number of encodings → the sum of the clipped updates (out[0, d)).
Status dequantise(Span<const uint64_t> sum, size_t d, const QuantiseConfig& config,
                  Span<double> work, Span<double> out);

// Σ words mod 2^b, for the host to sum encodings before dequantising (secure aggregation does
// this without seeing any single one).
Status add_mod(Span<uint64_t> accumulator, Span<const uint64_t> words, unsigned modulus_bits);

}  // namespace quantise
}  // namespace fedstat

#endif  // FEDSTAT_SDK_QUANTISE_QUANTISE_H_
