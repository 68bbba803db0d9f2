#include "sdk/noise/add_noise.h"

#include "sdk/noise/discrete_gaussian.h"
#include "sdk/noise/discrete_laplace.h"
#include "sdk/noise/polya.h"

namespace fedstat {
namespace noise {
namespace {
constexpr uint64_t kParameterLimit = uint64_t{1} << 32;
}  // namespace

Status NoiseSampler::init(const NoiseSpec& spec) {
  // Everything is checked before anything changes: a refused spec leaves an earlier one.
  if (!spec.parameter.valid()) {
    return invalid_argument("noise parameter must be a rational p/q with q > 0 (q is 0)");
  }
  if (spec.parameter.is_zero()) {
    switch (spec.kind) {
      case NoiseKind::kDiscreteLaplace:
        return invalid_argument("discrete Laplace scale must be > 0 (0 adds no noise)");
      case NoiseKind::kDiscreteGaussian:
        return invalid_argument("discrete Gaussian sigma^2 must be > 0 (0 adds no noise)");
      case NoiseKind::kSkellam:
        return invalid_argument("Skellam lambda must be > 0 (0 adds no noise)");
      case NoiseKind::kPolyaShare:
        return invalid_argument("Polya share scale must be > 0 (0 adds no noise)");
    }
    return invalid_argument("noise kind must be one of NoiseKind's values");
  }
  const Rational parameter = reduced(spec.parameter);
  if (parameter.num >= kParameterLimit || parameter.den >= kParameterLimit) {
    return out_of_range("noise parameter p/q must have p and q below 2^32 in lowest terms");
  }
  switch (spec.kind) {
    case NoiseKind::kDiscreteLaplace:
    case NoiseKind::kDiscreteGaussian:
      break;
    case NoiseKind::kSkellam:
      FEDSTAT_RETURN_IF_ERROR(checked_poisson_lambda(parameter).status());  // λ ≤ 2^31
      break;
    case NoiseKind::kPolyaShare:
      FEDSTAT_RETURN_IF_ERROR(check_polya_params(parameter, spec.clients));
      break;
    default:
      return invalid_argument("noise kind must be one of NoiseKind's values");
  }
  if (spec.kind == NoiseKind::kSkellam) {
    const Status built = skellam_.init(parameter);
    if (!built.ok()) {  // cannot happen for a λ checked above; never leave a half-built sampler
      ready_ = false;
      return built;
    }
  }
  spec_ = spec;
  spec_.parameter = parameter;
  ready_ = true;
  return Status();
}

Result<int64_t> NoiseSampler::sample(RandomBits& bits) const {
  if (!ready_) return failed_precondition("NoiseSampler used before a successful init()");
  switch (spec_.kind) {
    case NoiseKind::kDiscreteLaplace:
      return discrete_laplace(bits, spec_.parameter);
    case NoiseKind::kDiscreteGaussian:
      return discrete_gaussian(bits, spec_.parameter);
    case NoiseKind::kSkellam:
      return skellam_.sample(bits);
    case NoiseKind::kPolyaShare:
      return polya_share(bits, spec_.parameter, spec_.clients);
  }
  return internal_error("unknown noise kind");
}

namespace {
// Noise one element at a time from a NoiseSampler.
class OneByOne {
 public:
  OneByOne(const NoiseSampler& noise, RandomBits& bits) : noise_(noise), bits_(bits) {}
  Result<int64_t> next() { return noise_.sample(bits_); }

 private:
  const NoiseSampler& noise_;
  RandomBits& bits_;
};

// Noise from a TabulatedSkellamSampler, kNoiseChunk draws at a time (the same draws, in order).
class Chunked {
 public:
  Chunked(TabulatedSkellamSampler& noise, RandomBits& bits, size_t total)
      : noise_(noise), bits_(bits), left_(total) {}
  Result<int64_t> next() {
    if (at_ == filled_) {
      filled_ = left_ < kNoiseChunk ? left_ : kNoiseChunk;
      FEDSTAT_RETURN_IF_ERROR(noise_.sample_many(bits_, Span<int64_t>(chunk_, filled_)));
      left_ -= filled_;
      at_ = 0;
    }
    return chunk_[at_++];
  }

 private:
  TabulatedSkellamSampler& noise_;
  RandomBits& bits_;
  size_t left_;
  size_t at_ = 0, filled_ = 0;
  int64_t chunk_[kNoiseChunk];
};

template <typename Value, typename Noise>
Status add_plain(Span<const Value> in, Span<Value> out, Noise noise) {
  if (in.size() != out.size()) return invalid_argument("add_noise: in and out differ in length");
  for (size_t i = 0; i < in.size(); ++i) {
    FEDSTAT_ASSIGN_OR_RETURN(const int64_t z, noise.next());
    Value sum;
    if (__builtin_add_overflow(in[i], z, &sum)) {
      return out_of_range("add_noise: value + noise overflows the value type: use add_noise_mod");
    }
    out[i] = sum;
  }
  return Status();
}

template <typename Word, typename Noise>
Status add_mod(Span<const Word> in, Span<Word> out, unsigned modulus_bits, Noise noise) {
  constexpr unsigned kWordBits = sizeof(Word) * 8;
  if (in.size() != out.size())
    return invalid_argument("add_noise_mod: in and out differ in length");
  if (modulus_bits == 0 || modulus_bits > kWordBits) {
    return invalid_argument("add_noise_mod: modulus bits must be 1..32 (uint32) or 1..64 (uint64)");
  }
  const Word mask = modulus_bits == kWordBits ? static_cast<Word>(~Word{0})
                                              : static_cast<Word>((Word{1} << modulus_bits) - 1);
  for (size_t i = 0; i < in.size(); ++i) {
    FEDSTAT_ASSIGN_OR_RETURN(const int64_t z, noise.next());
    // Two's complement wrap: adding the 64-bit pattern of z is adding z mod 2^64, then mod 2^b.
    out[i] = static_cast<Word>((static_cast<uint64_t>(in[i]) + static_cast<uint64_t>(z)) & mask);
  }
  return Status();
}
}  // namespace

Status add_noise(Span<const int64_t> in, Span<int64_t> out, const NoiseSampler& noise,
                 RandomBits& bits) {
  return add_plain<int64_t>(in, out, OneByOne(noise, bits));
}
Status add_noise(Span<const int32_t> in, Span<int32_t> out, const NoiseSampler& noise,
                 RandomBits& bits) {
  return add_plain<int32_t>(in, out, OneByOne(noise, bits));
}
Status add_noise_mod(Span<const uint32_t> in, Span<uint32_t> out, unsigned bits_of_modulus,
                     const NoiseSampler& noise, RandomBits& bits) {
  return add_mod<uint32_t>(in, out, bits_of_modulus, OneByOne(noise, bits));
}
Status add_noise_mod(Span<const uint64_t> in, Span<uint64_t> out, unsigned bits_of_modulus,
                     const NoiseSampler& noise, RandomBits& bits) {
  return add_mod<uint64_t>(in, out, bits_of_modulus, OneByOne(noise, bits));
}

Status add_noise(Span<const int64_t> in, Span<int64_t> out, TabulatedSkellamSampler& noise,
                 RandomBits& bits) {
  return add_plain<int64_t>(in, out, Chunked(noise, bits, in.size()));
}
Status add_noise(Span<const int32_t> in, Span<int32_t> out, TabulatedSkellamSampler& noise,
                 RandomBits& bits) {
  return add_plain<int32_t>(in, out, Chunked(noise, bits, in.size()));
}
Status add_noise_mod(Span<const uint32_t> in, Span<uint32_t> out, unsigned bits_of_modulus,
                     TabulatedSkellamSampler& noise, RandomBits& bits) {
  return add_mod<uint32_t>(in, out, bits_of_modulus, Chunked(noise, bits, in.size()));
}
Status add_noise_mod(Span<const uint64_t> in, Span<uint64_t> out, unsigned bits_of_modulus,
                     TabulatedSkellamSampler& noise, RandomBits& bits) {
  return add_mod<uint64_t>(in, out, bits_of_modulus, Chunked(noise, bits, in.size()));
}

}  // namespace noise
}  // namespace fedstat
