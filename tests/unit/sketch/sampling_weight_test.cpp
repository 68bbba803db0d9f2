#include "sdk/sketch/sampling_weight.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "sdk/base/bytes.h"
#include "sdk/base/crc32.h"
#include "tests/common/golden_vectors.h"
#include "tests/common/vector_isa_param.h"

namespace fedstat {
namespace sketch {
namespace {

// The first version of sampling_weight.cpp (until the sketch speed work): ln by the atanh series
// and expm1 by a Taylor series, each summed until its terms fell below 1e-40. Kept here as the
// reference the fixed-length evaluation is checked against.
namespace reference {

double log_series(double x) {
  int e = 0;
  double m = std::frexp(x, &e);
  if (m < 0.70710678118654752440) {
    m *= 2;
    e -= 1;
  }
  const double s = (m - 1) / (m + 1);
  const double s2 = s * s;
  double term = s, sum = 0;
  for (int n = 1; n < 60; n += 2) {
    sum += term / n;
    term *= s2;
    if (term < 1e-40 && term > -1e-40) break;
  }
  return 2 * sum + e * 0.69314718055994530942;
}

double expm1_series(double z) {
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

double weight(double u, uint32_t k) {
  return -1 / expm1_series(log_series(u) / static_cast<double>(k));
}

uint64_t fixed(uint64_t hash, uint32_t k) {
  const double scaled = weight(uniform_from_hash(hash), k) * 16 + 0.5;
  if (!(scaled >= 1) || !(scaled < static_cast<double>(kMaxFixedWeight))) return kMaxFixedWeight;
  return static_cast<uint64_t>(scaled);
}

}  // namespace reference

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Hashes spread over every scale of u: uniform ones, ones with leading zero bits (u near 0) and
// ones with leading one bits (u near 1, where W is largest and t = −ln u smallest).
std::vector<uint64_t> test_hashes(size_t n, uint64_t seed) {
  std::vector<uint64_t> out;
  uint64_t state = seed;
  for (size_t i = 0; i < n; ++i) {
    uint64_t h = splitmix(state);
    const int shift = static_cast<int>(splitmix(state) % 64);
    if (i % 3 == 1) h >>= shift;
    if (i % 3 == 2) h = ~(~h >> shift);
    out.push_back(h);
  }
  out.push_back(0);
  out.push_back(~uint64_t{0});
  return out;
}

const uint32_t* const kTestK = golden::kWeightTestK;
constexpr size_t kTestKs = sizeof golden::kWeightTestK / sizeof golden::kWeightTestK[0];

// The fixed-length evaluation agrees with the long series to a few ulps (measured: at most
// 1.2e-15 relative; against 200-bit arithmetic the new one is within 6e-16, the series 7e-16),
// and so gives the same ω for all but a vanishing share of hashes (those whose W·16 lies within a
// few ulps of a half-integer).
TEST(SamplingWeight, AgreesWithTheLongSeries) {
  const std::vector<uint64_t> hashes = test_hashes(50000, 11);
  size_t differing = 0;
  for (size_t ki = 0; ki < kTestKs; ++ki) {
    const uint32_t k = kTestK[ki];
    const SamplingWeight weight(k);
    for (uint64_t h : hashes) {
      const double u = uniform_from_hash(h);
      const double now = weight.weight(u), before = reference::weight(u, k);
      ASSERT_LE(std::fabs(now / before - 1), 2e-15) << "k " << k << " hash " << h;
      const uint64_t a = weight.fixed(h), b = reference::fixed(h, k);
      if (a != b) {
        ++differing;
        // Only where rounding W·16 could go either way, and then by one.
        EXPECT_EQ(a > b ? a - b : b - a, 1u);
        const double scaled = before * 16;
        EXPECT_LT(std::fabs(scaled - std::floor(scaled) - 0.5), 1e-14 * scaled) << h;
      }
    }
  }
  EXPECT_LE(differing, 2u) << "of " << hashes.size() * kTestKs;
}

TEST(SamplingWeight, BatchGivesTheSameValues) {
  const std::vector<uint64_t> hashes = test_hashes(4099, 12);  // not a multiple of 4
  for (size_t ki = 0; ki < kTestKs; ++ki) {
    const uint32_t k = kTestK[ki];
    const SamplingWeight weight(k);
    std::vector<uint64_t> batch(hashes.size());
    weight.fixed_batch(hashes.data(), batch.data(), hashes.size());
    std::vector<double> doubles(hashes.size());
    weight.weights(hashes.data(), doubles.data(), hashes.size());
    for (size_t i = 0; i < hashes.size(); ++i) {
      // The vector lanes give the scalar double bit for bit, not only the same rounded ω.
      const double scalar = weight.weight(uniform_from_hash(hashes[i]));
      ASSERT_EQ(std::memcmp(&doubles[i], &scalar, sizeof scalar), 0)
          << "k " << k << " hash " << hashes[i] << ": " << doubles[i] << " vs " << scalar;
      ASSERT_EQ(batch[i], weight.fixed(hashes[i])) << "k " << k << " hash " << hashes[i];
      ASSERT_EQ(batch[i], fixed_sampling_weight(hashes[i], k));
    }
  }
}

// Every kernel of weights() gives weight()'s doubles bit for bit: the test k's (small ones take
// the rare expm1 path in some lanes), hashes at both ends of the range, and every batch length up
// to 40 around the group sizes (16 for AVX-512F, 8 for AVX2 and two lanes, then one by one). A
// kernel this processor lacks must refuse and write nothing, and its test is reported skipped;
// with AVX-512F all three run.
class SamplingWeightKernels : public ::testing::TestWithParam<VectorIsa> {};

TEST_P(SamplingWeightKernels, GiveTheScalarDoublesBitForBit) {
  const VectorIsa isa = GetParam();
  std::vector<uint64_t> hashes = test_hashes(1027, 31);
  hashes[0] = 0;
  hashes[1] = ~uint64_t{0};
  hashes[17] = uint64_t{1} << 63;
  for (size_t ki = 0; ki < kTestKs; ++ki) {
    const SamplingWeight weight(kTestK[ki]);
    for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{15}, size_t{16}, size_t{17},
                     size_t{31}, size_t{33}, size_t{40}, hashes.size()}) {
      std::vector<double> out(n + 1, -7.0);
      if (!vector_isa_available(isa)) {
        EXPECT_FALSE(weight.weights_with(isa, hashes.data(), out.data(), n));
        for (double value : out) ASSERT_EQ(value, -7.0);
        continue;
      }
      ASSERT_TRUE(weight.weights_with(isa, hashes.data(), out.data(), n));
      for (size_t i = 0; i < n; ++i) {
        const double scalar = weight.weight(uniform_from_hash(hashes[i]));
        ASSERT_EQ(std::memcmp(&out[i], &scalar, sizeof scalar), 0)
            << "k " << kTestK[ki] << " n " << n << " i " << i << ": " << out[i] << " vs " << scalar;
      }
      EXPECT_EQ(out[n], -7.0) << "wrote past n = " << n;
    }
  }
  if (!vector_isa_available(isa)) {
    GTEST_SKIP() << "this processor lacks the kernel: only its refusal was checked";
  }
}

INSTANTIATE_TEST_SUITE_P(EveryKernel, SamplingWeightKernels, testing_support::every_vector_isa(),
                         testing_support::vector_isa_name);

TEST(SamplingWeight, KnownValues) {
  // W = 1/(1 − u^(1/k)): at u = ½, k = 1 it is 2; at k = 2, 1/(1 − √½) = 3.414...
  EXPECT_DOUBLE_EQ(sampling_weight(0.5, 1), 2.0);
  EXPECT_NEAR(sampling_weight(0.5, 2), 3.4142135623730951, 1e-14);
  // Large k: W ≈ k/ln(1/u) + ½; at u = ½, k = 2^20: 1/(1 − 2^(−2^-20)) = 1512775.895...
  EXPECT_NEAR(sampling_weight(0.5, 1u << 20), 1.0 / -std::expm1(-std::log(2.0) / 1048576),
              1e-9 * 1512775.9);
  // u from a hash: exact, never 0 or 1.
  EXPECT_EQ(uniform_from_hash(0), 0.5 / 4503599627370496.0);
  EXPECT_LT(uniform_from_hash(~uint64_t{0}), 1.0);
}

// The bytes every architecture must reproduce (golden_vectors.h: the AArch64 unit tests and the
// Cortex-M4 self-test pin the same value); a fused multiply-add anywhere in the evaluation would
// change it.
TEST(SamplingWeight, SameValuesOnEveryArchitecture) {
  Crc32 crc;
  for (uint32_t k : golden::kWeightTestK) {
    const SamplingWeight weight(k);
    for (size_t i = 0; i < golden::kWeightTestHashes; ++i) {
      uint8_t bytes[8];
      store_le64(bytes, weight.fixed(golden::weight_test_hash(i)));
      crc.update(ByteSpan(bytes, 8));
    }
  }
  EXPECT_EQ(crc.value(), golden::kSamplingWeightCrc);
}

}  // namespace
}  // namespace sketch
}  // namespace fedstat
