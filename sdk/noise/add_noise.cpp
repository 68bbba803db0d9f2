#include "sdk/noise/add_noise.h"

#include "sdk/noise/discrete_gaussian.h"
#include "sdk/noise/discrete_laplace.h"
#include "sdk/noise/polya.h"

namespace fedstat {
namespace noise {

Status NoiseSampler::init(const NoiseSpec& spec) {
  ready_ = false;
  if (!spec.parameter.valid()) return invalid_argument("noise parameter has a zero denominator");
  if (spec.kind == NoiseKind::kPolyaShare && spec.clients == 0) {
    return invalid_argument("Polya shares need at least one client");
  }
  if (spec.kind == NoiseKind::kSkellam) FEDSTAT_RETURN_IF_ERROR(skellam_.init(spec.parameter));
  if (spec.kind != NoiseKind::kSkellam && spec.parameter.is_zero()) {
    return invalid_argument("noise scale or variance must be positive");
  }
  spec_ = spec;
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
template <typename Value>
Status add_plain(Span<const Value> in, Span<Value> out, const NoiseSampler& noise,
                 RandomBits& bits) {
  if (in.size() != out.size()) return invalid_argument("add_noise: in and out differ in length");
  for (size_t i = 0; i < in.size(); ++i) {
    FEDSTAT_ASSIGN_OR_RETURN(const int64_t z, noise.sample(bits));
    Value sum;
    if (__builtin_add_overflow(in[i], z, &sum)) {
      return out_of_range("add_noise: value + noise overflows the value type: use add_noise_mod");
    }
    out[i] = sum;
  }
  return Status();
}
}  // namespace

Status add_noise(Span<const int64_t> in, Span<int64_t> out, const NoiseSampler& noise,
                 RandomBits& bits) {
  return add_plain<int64_t>(in, out, noise, bits);
}
Status add_noise(Span<const int32_t> in, Span<int32_t> out, const NoiseSampler& noise,
                 RandomBits& bits) {
  return add_plain<int32_t>(in, out, noise, bits);
}

namespace {
template <typename Word>
Status add_mod(Span<const Word> in, Span<Word> out, unsigned modulus_bits,
               const NoiseSampler& noise, RandomBits& bits) {
  constexpr unsigned kWordBits = sizeof(Word) * 8;
  if (in.size() != out.size())
    return invalid_argument("add_noise_mod: in and out differ in length");
  if (modulus_bits == 0 || modulus_bits > kWordBits) {
    return invalid_argument("add_noise_mod: modulus bits must be 1..32 (uint32) or 1..64 (uint64)");
  }
  const Word mask = modulus_bits == kWordBits ? static_cast<Word>(~Word{0})
                                              : static_cast<Word>((Word{1} << modulus_bits) - 1);
  for (size_t i = 0; i < in.size(); ++i) {
    FEDSTAT_ASSIGN_OR_RETURN(const int64_t z, noise.sample(bits));
    // Two's complement wrap: adding the 64-bit pattern of z is adding z mod 2^64, then mod 2^b.
    out[i] = static_cast<Word>((static_cast<uint64_t>(in[i]) + static_cast<uint64_t>(z)) & mask);
  }
  return Status();
}
}  // namespace

Status add_noise_mod(Span<const uint32_t> in, Span<uint32_t> out, unsigned bits_of_modulus,
                     const NoiseSampler& noise, RandomBits& bits) {
  return add_mod<uint32_t>(in, out, bits_of_modulus, noise, bits);
}
Status add_noise_mod(Span<const uint64_t> in, Span<uint64_t> out, unsigned bits_of_modulus,
                     const NoiseSampler& noise, RandomBits& bits) {
  return add_mod<uint64_t>(in, out, bits_of_modulus, noise, bits);
}

}  // namespace noise
}  // namespace fedstat
