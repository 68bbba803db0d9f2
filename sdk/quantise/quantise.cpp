#include "sdk/quantise/quantise.h"

#include <float.h>
#include <math.h>

#include <type_traits>

#include "sdk/noise/bernoulli.h"
#include "sdk/quantise/rotation.h"

namespace fedstat {
namespace quantise {
namespace {

uint64_t mask_of(unsigned bits) {
  return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}

Status check_config(size_t d, const QuantiseConfig& c, unsigned word_bits) {
  if (d == 0 || d > kMaxDimension) return invalid_argument("update dimension must be 1..2^24");
  if (!(c.clip_norm > 0) || !(c.gamma > 0) || !isfinite(c.clip_norm) || !isfinite(c.gamma)) {
    return invalid_argument("clip norm and gamma must be positive and finite");
  }
  if (!(c.beta >= 0.5 && c.beta <= 1)) {
    return invalid_argument(
        "beta must lie in [1/2, 1]: below 1/2 no rounding is sure to meet the bound, and whether "
        "a report could be made at all would depend on the data");
  }
  if (c.modulus_bits == 0 || c.modulus_bits > word_bits) {
    return invalid_argument("modulus bits must be 1..32 for uint32 words, 1..64 for uint64");
  }
  if (c.max_rounding_tries == 0) return invalid_argument("max_rounding_tries must be >= 1");
  // The unnormalised Walsh–Hadamard transform reaches √D·c in float: keep it finite (a float
  // overflow would fail some updates and not others).
  if (!(c.clip_norm * sqrt(static_cast<double>(encoded_length(d, c))) * 2 < FLT_MAX)) {
    return invalid_argument("clip norm x sqrt(D) must stay below FLT_MAX / 2: lower the clip norm");
  }
  // Every value after clipping and rotation is at most c + e in magnitude: if γ·(c + e) fits the
  // modulus' signed range, no data can overflow it (a public check, not a data-dependent one).
  const double limit = ldexp(1.0, static_cast<int>(c.modulus_bits) - 1) - 2;
  if (!(c.gamma * (c.clip_norm + rounding_bound(d, c)) <= limit)) {
    return invalid_argument(
        "gamma x clip norm exceeds the modulus' signed range: lower gamma or the clip norm, or "
        "raise the modulus bits");
  }
  return Status();
}

}  // namespace

Status validate_config(size_t d, const QuantiseConfig& config) {
  return check_config(d, config, 64);
}

namespace {

template <typename Word>
Status quantise_impl(Span<float> update, size_t d, const QuantiseConfig& c,
                     const noise::NoiseSampler* noise, RandomBits& bits, Span<Word> out) {
  FEDSTAT_RETURN_IF_ERROR(check_config(d, c, sizeof(Word) * 8));
  const size_t length = encoded_length(d, c);
  if (update.size() < length) return invalid_argument("update buffer is shorter than D");
  if (out.size() != length) return invalid_argument("output must hold exactly D words");
  Span<float> x = update.first(length);
  FEDSTAT_RETURN_IF_ERROR(clip_and_rotate(x, d, c));  // 1–2
  // 3. Scale: check_config made every γ·|value| ≤ γ·(c + e) fit the modulus' signed range.
  const double limit = ldexp(1.0, static_cast<int>(c.modulus_bits) - 1) - 2;
  for (float v : x) {
    if (!(fabs(c.gamma * v) <= limit)) {
      return internal_error("quantise: a clipped value beyond c + e (a rounding-bound bug)");
    }
  }
  // 4. Conditional stochastic rounding into out (two's complement words), then 5–6. After
  // max_rounding_tries misses, nearest rounding: its error is ≤ ½ per value, so ≤ β·√D for
  // β ≥ ½ — every outcome meets the bound and no data makes the report fail.
  const double bound2 = c.beta * c.beta * static_cast<double>(length);
  const uint64_t mask = mask_of(c.modulus_bits);
  for (uint32_t attempt = 0;; ++attempt) {
    const bool nearest = attempt == c.max_rounding_tries;
    double error2 = 0;
    for (size_t i = 0; i < length; ++i) {
      const double scaled = c.gamma * x[i];
      const double low = floor(scaled);
      bool up = scaled - low >= 0.5;
      if (!nearest) {
        FEDSTAT_ASSIGN_OR_RETURN(up, noise::bernoulli_dyadic(bits, scaled - low));
      }
      const double rounded = low + (up ? 1 : 0);
      error2 += (rounded - scaled) * (rounded - scaled);
      out[i] = static_cast<Word>(static_cast<uint64_t>(static_cast<int64_t>(rounded)));
    }
    if (nearest || error2 <= bound2) break;
  }
  for (size_t i = 0; i < length; ++i) {
    uint64_t word = static_cast<uint64_t>(
        static_cast<int64_t>(static_cast<typename std::make_signed<Word>::type>(out[i])));
    if (noise != nullptr) {
      FEDSTAT_ASSIGN_OR_RETURN(const int64_t z, noise->sample(bits));
      word += static_cast<uint64_t>(z);
    }
    out[i] = static_cast<Word>(word & mask);
  }
  return Status();
}

}  // namespace

size_t encoded_length(size_t d, const QuantiseConfig& config) {
  return config.rotate ? padded_dimension(d) : d;
}

Status clip_and_rotate(Span<float> update, size_t d, const QuantiseConfig& config) {
  const size_t length = encoded_length(d, config);
  if (d == 0 || update.size() != length) {
    return invalid_argument("clip_and_rotate: the update must hold exactly D values");
  }
  for (size_t i = d; i < length; ++i) update[i] = 0;
  double norm2 = 0;
  for (float v : update) norm2 += static_cast<double>(v) * v;
  const double norm = sqrt(norm2);
  if (!isfinite(norm)) return invalid_argument("update holds a NaN or an infinity");
  if (norm > config.clip_norm) {
    const float factor = static_cast<float>(config.clip_norm / norm);
    for (float& v : update) v *= factor;
  }
  if (config.rotate) {
    FEDSTAT_RETURN_IF_ERROR(rotate(update, config.rotation_seed, config.rotation_stream));
  }
  return Status();
}

Status clip_to_float(Span<const double> update, double clip_norm, Span<float> out) {
  if (!(clip_norm > 0) || !isfinite(clip_norm)) {
    return invalid_argument("clip norm must be positive and finite");
  }
  if (out.size() < update.size()) return invalid_argument("clip_to_float: output is too short");
  double norm2 = 0;
  for (double v : update) norm2 += v * v;
  const double norm = sqrt(norm2);
  if (!isfinite(norm)) return invalid_argument("update holds a NaN or an infinity");
  const double factor = norm > clip_norm ? clip_norm / norm : 1.0;
  for (size_t i = 0; i < update.size(); ++i) out[i] = static_cast<float>(update[i] * factor);
  return Status();
}

double rounding_bound(size_t d, const QuantiseConfig& config) {
  const size_t padded = encoded_length(d, config);
  const double length = static_cast<double>(padded);
  // K = log2 D butterfly stages when rotating; the shift stays below size_t's width even for a
  // saturated length (kSizeOverflow from an unvalidated d on a 32-bit device).
  constexpr int kMaxStages = static_cast<int>(8 * sizeof(size_t)) - 1;
  int stages = 0;
  while (config.rotate && stages < kMaxStages && (size_t{1} << stages) < padded) ++stages;
  return (stages + 7) * ldexp(config.clip_norm, -24) + sqrt(length) * ldexp(1.0, -148);
}

double discretised_l2_sensitivity(double update_l2, size_t d, const QuantiseConfig& config) {
  const double length = static_cast<double>(encoded_length(d, config));
  const double change = fmin(update_l2, 2 * config.clip_norm) + 2 * rounding_bound(d, config);
  return config.gamma * change +
         2 * config.beta * sqrt(length) * (1 + (length + 3) * ldexp(1.0, -52)) +
         config.gamma * ldexp(config.clip_norm, -51);
}

Status quantise(Span<float> update, size_t d, const QuantiseConfig& config,
                const noise::NoiseSampler* noise, RandomBits& private_bits, Span<uint32_t> out) {
  return quantise_impl<uint32_t>(update, d, config, noise, private_bits, out);
}
Status quantise(Span<float> update, size_t d, const QuantiseConfig& config,
                const noise::NoiseSampler* noise, RandomBits& private_bits, Span<uint64_t> out) {
  return quantise_impl<uint64_t>(update, d, config, noise, private_bits, out);
}

Status add_mod(Span<uint64_t> accumulator, Span<const uint64_t> words, unsigned modulus_bits) {
  if (accumulator.size() != words.size()) return invalid_argument("add_mod: lengths differ");
  if (modulus_bits == 0 || modulus_bits > 64) return invalid_argument("modulus bits: 1..64");
  const uint64_t mask = mask_of(modulus_bits);
  for (size_t i = 0; i < words.size(); ++i) accumulator[i] = (accumulator[i] + words[i]) & mask;
  return Status();
}

Status dequantise(Span<const uint64_t> sum, size_t d, const QuantiseConfig& c, Span<double> work,
                  Span<double> out) {
  FEDSTAT_RETURN_IF_ERROR(check_config(d, c, 64));
  const size_t length = encoded_length(d, c);
  if (sum.size() != length || work.size() < length || out.size() != d) {
    return invalid_argument("dequantise: sum must hold D words, work D doubles, out d doubles");
  }
  const uint64_t mask = mask_of(c.modulus_bits);
  const uint64_t half = uint64_t{1} << (c.modulus_bits - 1);
  for (size_t i = 0; i < length; ++i) {
    const uint64_t w = sum[i] & mask;
    // Centre: [0, 2^b) → [−2^(b−1), 2^(b−1)).
    const double centred =
        w >= half ? -static_cast<double>((mask - w) + 1) : static_cast<double>(w);
    work[i] = centred / c.gamma;
  }
  if (c.rotate) {
    FEDSTAT_RETURN_IF_ERROR(unrotate(work.first(length), c.rotation_seed, c.rotation_stream));
  }
  for (size_t i = 0; i < d; ++i) out[i] = work[i];
  return Status();
}

}  // namespace quantise
}  // namespace fedstat
