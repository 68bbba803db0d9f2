// THE key stream of ../shared/bench/README.md, exactly: zipf_keys(n, domain, s, seed) with its
// splitmix64 generator, and the FNV-1a fingerprint that proves two programs saw the same stream
// (7f22e02bfa195f13 for the shared parameters below). Used by every benchmark that pairs with the
// references. Host-only test code. Memory: 8·n bytes of keys + 16·domain while building.
#ifndef FEDSTAT_TESTS_BENCH_ZIPF_STREAM_H_
#define FEDSTAT_TESTS_BENCH_ZIPF_STREAM_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace fedstat {
namespace bench {

// The shared parameters and the fingerprint they give.
constexpr uint64_t kZipfKeys = 10000000;
constexpr uint64_t kZipfDomain = 350000;
constexpr double kZipfS = 1.2;
constexpr uint64_t kZipfSeed = 0x5EEDF00D;
constexpr uint64_t kZipfFingerprint = 0x7f22e02bfa195f13ull;

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  uint64_t below(uint64_t n) { return next() % n; }

 private:
  uint64_t state_;
};

inline std::vector<uint64_t> zipf_keys(uint64_t n, uint64_t domain, double s, uint64_t seed) {
  std::vector<double> cdf(domain);
  double acc = 0;
  for (uint64_t k = 1; k <= domain; ++k) {
    acc += std::pow(static_cast<double>(k), -s);
    cdf[k - 1] = acc;
  }
  for (double& c : cdf) c /= acc;
  cdf[domain - 1] = 1.0;

  std::vector<uint64_t> perm(domain);
  for (uint64_t i = 0; i < domain; ++i) perm[i] = i;
  SplitMix64 shuffle(seed ^ 0x9E3779B97F4A7C15ull);
  for (uint64_t i = domain - 1; i >= 1; --i) std::swap(perm[i], perm[shuffle.below(i + 1)]);

  std::vector<uint64_t> keys(n);
  SplitMix64 draw(seed);
  for (uint64_t& key : keys) {
    const double u = draw.uniform();
    uint64_t r = static_cast<uint64_t>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
    if (r > domain - 1) r = domain - 1;
    key = perm[r];
  }
  return keys;
}

inline uint64_t fingerprint(const std::vector<uint64_t>& keys) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (const uint64_t k : keys) {
    h ^= k;
    h *= 0x100000001B3ull;
  }
  return h;
}

}  // namespace bench
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_BENCH_ZIPF_STREAM_H_
