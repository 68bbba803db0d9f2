// A vector of 4 or 8 lanes must never cross a call between code compiled for AVX and code
// compiled without (the two pass it differently). Every helper that takes or returns lanes is
// always inlined (lanes_inline.h: weights_in_lanes down to log_of_parts), so in the AVX functions
// below all the lanes' code is AVX code at every optimisation level and no such call exists. GCC
// and Clang still warn at each instantiation that one could (-Wpsabi); the warning is off here.
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#include "sdk/sketch/sampling_weight.h"

#include <string.h>

#include "sdk/base/lanes_inline.h"
#include "sdk/base/portable_math.h"

namespace fedstat {
namespace sketch {
namespace {

// The logarithm's constants and steps are sdk/base/portable_math.h's (fdlibm's method).
using math::kFractionMask;
using math::kSqrt2Fraction;
using math::log_of_parts;

// x/(1 − e^(−x)) = 1 + x/2 + Σ B_2n·x^2n/(2n)! (Bernoulli numbers): the coefficients B_2n/(2n)!
// for n = 1..6, i.e. 1/12, −1/720, 1/30240, −1/1209600, 1/47900160, −691/1307674368000.
constexpr double kB2 = 8.333333333333333e-02;
constexpr double kB4 = -1.388888888888889e-03;
constexpr double kB6 = 3.306878306878307e-05;
constexpr double kB8 = -8.267195767195768e-07;
constexpr double kB10 = 2.08767569878681e-08;
constexpr double kB12 = -5.284190138687493e-10;
// The series is used for x ≤ 1/4, where the first omitted term is below 2·(x/2π)^14 < 1e-19 of
// the sum.
constexpr double kSeriesLimit = 0.25;

// exp(z) − 1 for z ≤ −1/4 (the rare path of sampling_weight, small k only): halve z until
// |z| < 2^-4, Taylor series there (at most 40 terms), then square back with
// expm1(2y) = expm1(y)·(expm1(y) + 2). Unchanged from the first version of this file.
double portable_expm1(double z) {
  if (z < -40) return -1;
  int halvings = 0;
  while (z < -0.0625) {
    z *= 0.5;
    ++halvings;
  }
  double term = z, sum = 0;
  for (int n = 2; n < 40; ++n) {
    sum += term;
    term *= z / n;
    if (term < 1e-40 && term > -1e-40) break;
  }
  for (int i = 0; i < halvings; ++i) sum = sum * (sum + 2);
  return sum;
}

// u = (⌊h/2^12⌋ + ½)/2^52: 52 bits plus ½, exactly representable, so u never rounds to 0 or 1.
inline double uniform_of(uint64_t hash) {
  return (static_cast<double>(hash >> 12) + 0.5) * (1.0 / 4503599627370496.0);
}

// W = k/t + 1/2 + x·P(x²) for x = t/k ≤ 1/4 (the Bernoulli series above; k/t one rounding).
// T is double or two lanes of doubles, as for log_of_parts.
template <typename T>
FEDSTAT_LANES_INLINE T series_of(double k, const T& t, const T& x) {
  const T z = x * x;
  const T z2 = z * z;
  const T p = (kB2 + z * kB4) + z2 * ((kB6 + z * kB8) + z2 * (kB10 + z * kB12));
  return k / t + (0.5 + x * p);
}

}  // namespace

double uniform_from_hash(uint64_t hash) {
  return uniform_of(hash);
}

SamplingWeight::SamplingWeight(uint32_t k) : k_(static_cast<double>(k)), inverse_k_(1 / k_) {}

double SamplingWeight::weight(double u) const {
  const double t = -math::log_of_normal(u);  // −ln u > 0; W = 1/(1 − e^(−x)) with x = t/k
  const double x = t * inverse_k_;
  if (x <= kSeriesLimit) return series_weight(t, x);
  return -1 / portable_expm1(-x);
}

double SamplingWeight::series_weight(double t, double x) const {
  // W = 1/x + 1/2 + x·(B2 + x²·B4 + …): k/t (one rounding) plus a small correction.
  return series_of(k_, t, x);
}

namespace {

// ω = min(round(W·2^4), 2^35). W ≥ 1 always; anything else (no finite value) can only come from u
// at the top end, and gets the cap.
inline uint64_t to_fixed(double w) {
  const double scaled = w * (1u << kWeightFractionBits) + 0.5;
  if (!(scaled >= 1) || !(scaled < static_cast<double>(kMaxFixedWeight))) return kMaxFixedWeight;
  return static_cast<uint64_t>(scaled);
}

}  // namespace

uint64_t SamplingWeight::fixed(uint64_t hash) const {
  return to_fixed(weight(uniform_from_hash(hash)));
}

namespace {

// Lanes of doubles and of 64-bit integers (GCC/Clang vector extensions): two (SSE2 on x86-64, NEON
// on AArch64, lane by lane elsewhere), four (AVX2) or eight (AVX-512F); the wider ones only in the
// functions compiled for those instruction sets and called where the processor has them. Every
// operation on a lane is the IEEE-754 operation the scalar code performs, in the same order (and
// -ffp-contract=off keeps a·b + c unfused, also where AVX-512F has fused instructions), so each
// lane's value is bit for bit the scalar one, whatever the width.
template <size_t kLanes>
struct Lanes {
  typedef double Doubles __attribute__((vector_size(8 * kLanes)));
  typedef uint64_t Words __attribute__((vector_size(8 * kLanes)));
  typedef int64_t Ints __attribute__((vector_size(8 * kLanes)));
};

template <typename To, typename From>
FEDSTAT_LANES_INLINE To bit_cast_lanes(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "same width");
  To to;
  memcpy(&to, &from, sizeof to);
  return to;
}

template <typename T, size_t kLanes>
FEDSTAT_LANES_INLINE T splat(double value) {
  T v;
  for (size_t l = 0; l < kLanes; ++l) v[l] = value;
  return v;
}

// uniform_of on a vector of hashes. ⌊h/2^12⌋ < 2^52 becomes a double exactly through the bits of
// 2^52 + m (then − 2^52, exact): the same value as the scalar conversion.
template <size_t kLanes>
FEDSTAT_LANES_INLINE typename Lanes<kLanes>::Doubles uniform_of_lanes(
    const typename Lanes<kLanes>::Words& hash) {
  typedef typename Lanes<kLanes>::Doubles Doubles;
  const typename Lanes<kLanes>::Words m = hash >> 12;
  const Doubles two52 = splat<Doubles, kLanes>(4503599627370496.0);
  const Doubles value = bit_cast_lanes<Doubles>(m | (uint64_t{0x433} << 52)) - two52;
  return (value + 0.5) * (1.0 / 4503599627370496.0);
}

// math::log_of_normal on a vector of positive normal doubles: the same steps. The exponent e
// (|e| < 2^11) becomes a double exactly through the bits of 1.5·2^52 + e.
template <size_t kLanes>
FEDSTAT_LANES_INLINE typename Lanes<kLanes>::Doubles portable_log_lanes(
    const typename Lanes<kLanes>::Doubles& x) {
  typedef typename Lanes<kLanes>::Doubles Doubles;
  typedef typename Lanes<kLanes>::Words Words;
  typedef typename Lanes<kLanes>::Ints Ints;
  const Words bits = bit_cast_lanes<Words>(x);
  Ints e = __builtin_convertvector((bits >> 52) & 0x7FF, Ints) - 1023;
  const Words fraction = bits & kFractionMask;
  const Ints halve = fraction >= kSqrt2Fraction;  // all ones in a lane where 1 + f ≥ √2
  const Words exponent_bits =
      (uint64_t{1023} << 52) - (__builtin_convertvector(halve, Words) & (uint64_t{1} << 52));
  e -= halve;
  const Doubles magic = splat<Doubles, kLanes>(6755399441055744.0);  // 1.5·2^52
  const Doubles de =
      bit_cast_lanes<Doubles>(__builtin_convertvector(e, Words) + (uint64_t{0x4338} << 48)) - magic;
  return log_of_parts(bit_cast_lanes<Doubles>(fraction | exponent_bits), de);
}

// weights() for the whole multiples of kGroups·kLanes hashes: each step written across kGroups
// vectors so that the processor overlaps independent chains (one chain is ~140 cycles of latency:
// two divisions and two polynomials); each lane the same operations as weight(). The rare
// x > kSeriesLimit (small k only) is redone by weight(). Returns how many were computed.
template <size_t kLanes, size_t kGroups>
FEDSTAT_LANES_INLINE size_t weights_in_lanes(const SamplingWeight& scalar, double k,
                                             double inverse_k, const uint64_t* hashes, double* out,
                                             size_t n) {
  typedef typename Lanes<kLanes>::Doubles Doubles;
  typedef typename Lanes<kLanes>::Words Words;
  size_t j = 0;
  for (; j + kGroups * kLanes <= n; j += kGroups * kLanes) {
    Doubles t[kGroups], x[kGroups], w[kGroups];
    for (size_t q = 0; q < kGroups; ++q) {
      Words hash;
      memcpy(&hash, hashes + j + kLanes * q, sizeof hash);
      t[q] = -portable_log_lanes<kLanes>(uniform_of_lanes<kLanes>(hash));
    }
    for (size_t q = 0; q < kGroups; ++q) x[q] = t[q] * inverse_k;
    for (size_t q = 0; q < kGroups; ++q) w[q] = series_of(k, t[q], x[q]);
    for (size_t q = 0; q < kGroups; ++q) {
      for (size_t l = 0; l < kLanes; ++l) {
        const size_t i = j + kLanes * q + l;
        out[i] = x[q][l] <= kSeriesLimit ? w[q][l] : scalar.weight(uniform_of(hashes[i]));
      }
    }
  }
  return j;
}

#if defined(FEDSTAT_X86_VECTOR_KERNELS)
__attribute__((target("avx512f"))) size_t weights_avx512(const SamplingWeight& scalar, double k,
                                                         double inverse_k, const uint64_t* hashes,
                                                         double* out, size_t n) {
  return weights_in_lanes<8, 2>(scalar, k, inverse_k, hashes, out, n);
}
__attribute__((target("avx2"))) size_t weights_avx2(const SamplingWeight& scalar, double k,
                                                    double inverse_k, const uint64_t* hashes,
                                                    double* out, size_t n) {
  return weights_in_lanes<4, 2>(scalar, k, inverse_k, hashes, out, n);
}
#endif

}  // namespace

bool SamplingWeight::weights_with(VectorIsa isa, const uint64_t* hashes, double* out,
                                  size_t n) const {
  if (!vector_isa_available(isa)) return false;
  size_t done = 0;
#if defined(FEDSTAT_X86_VECTOR_KERNELS)
  if (isa == VectorIsa::kAvx512) done = weights_avx512(*this, k_, inverse_k_, hashes, out, n);
  if (isa == VectorIsa::kAvx2) done = weights_avx2(*this, k_, inverse_k_, hashes, out, n);
#endif
  done += weights_in_lanes<2, 4>(*this, k_, inverse_k_, hashes + done, out + done, n - done);
  for (size_t j = done; j < n; ++j) out[j] = weight(uniform_of(hashes[j]));
  return true;
}

void SamplingWeight::weights(const uint64_t* hashes, double* out, size_t n) const {
  weights_with(widest_vector_isa(), hashes, out, n);
}

void SamplingWeight::fixed_batch(const uint64_t* hashes, uint64_t* out, size_t n) const {
  constexpr size_t kChunk = 16;
  double w[kChunk];
  for (size_t j = 0; j < n; j += kChunk) {
    const size_t m = n - j < kChunk ? n - j : kChunk;
    weights(hashes + j, w, m);
    for (size_t l = 0; l < m; ++l) out[j + l] = to_fixed(w[l]);
  }
}

double sampling_weight(double u, uint32_t k) {
  return SamplingWeight(k).weight(u);
}

uint64_t fixed_sampling_weight(uint64_t hash, uint32_t k) {
  return SamplingWeight(k).fixed(hash);
}

}  // namespace sketch
}  // namespace fedstat
