// Total variation distance from hashed-domain histograms (hashed_tv.h).
#include "host_server/estimate/hashed_tv.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fedstat {
namespace host {

std::vector<int64_t> bucket_counts(const ItemCounts& items, const sketch::BucketMap& map) {
  if (!map.check().ok()) throw std::invalid_argument("hashed histogram: buckets out of range");
  std::vector<int64_t> counts(map.buckets(), 0);
  for (const ItemCount& item : items.items) {
    counts[map.bucket_of(item.id)] += static_cast<int64_t>(item.count);
  }
  return counts;
}

std::vector<int64_t> signed_sum(const std::vector<uint64_t>& sum, uint32_t bits) {
  if (bits == 0 || bits > 64) throw std::invalid_argument("signed_sum: bits must be in [1, 64]");
  std::vector<int64_t> out(sum.size());
  for (size_t i = 0; i < sum.size(); ++i) {
    uint64_t w = sum[i];
    if (bits < 64) {
      const uint64_t mask = (uint64_t{1} << bits) - 1, sign = uint64_t{1} << (bits - 1);
      w &= mask;
      if (w & sign) w |= ~mask;  // sign-extend
    }
    out[i] = static_cast<int64_t>(w);
  }
  return out;
}

namespace {

// Above this share of the clamped total, phantom events call for the threshold (hashed_tv.h).
constexpr double kPhantomShare = 0.5;

// Σ over buckets of the counts at or above `floor` (a floor of 1: the clamp).
double total_from(const std::vector<int64_t>& counts, int64_t floor) {
  double total = 0;
  for (int64_t c : counts) {
    if (c >= floor) total += static_cast<double>(c);
  }
  return total;
}

}  // namespace

HashedTvEstimate estimate_hashed_tv(const std::vector<int64_t>& p, const std::vector<int64_t>& q,
                                    double noise_scale, double laplaces) {
  if (p.size() != q.size()) {
    throw std::invalid_argument("hashed TV: the two histograms have different bucket counts");
  }
  if (!std::isfinite(noise_scale) || noise_scale < 0) {
    throw std::invalid_argument("hashed TV: the noise scale must be finite and >= 0");
  }
  if (!std::isfinite(laplaces) || laplaces < 1) {
    throw std::invalid_argument("hashed TV: the sum holds at least one Laplace per bucket");
  }
  HashedTvEstimate e;
  e.buckets = p.size();
  for (int64_t c : p) e.negative_p += c < 0;
  int64_t floor = 1;  // the clamp: counts below 1 read as 0
  if (noise_scale > 0 && !p.empty()) {
    const double rho = std::exp(-1 / noise_scale);
    const double positive_noise = rho / ((1 + rho) * (1 - rho));  // E[η⁺]
    const double phantom = static_cast<double>(p.size()) * positive_noise * laplaces;
    if (phantom > kPhantomShare * total_from(p, 1)) {
      const double log_b = std::log(static_cast<double>(p.size()));
      const double sigma = std::sqrt(laplaces * 2 * rho) / (1 - rho);
      // Capped at 2^62 before the cast (a huge `laplaces` through the API), and at least 1 (B = 1).
      const double tau =
          std::ceil(std::max({1.0, noise_scale * log_b, sigma * std::sqrt(2 * log_b)}));
      e.threshold = static_cast<int64_t>(std::min(tau, 4.611686018427388e18));
      floor = e.threshold;
    }
  }
  e.total_p = total_from(p, floor);
  e.total_q = total_from(q, floor);
  if (e.total_p <= 0 || e.total_q <= 0) {
    throw std::invalid_argument(
        "hashed TV: a side holds no positive bucket (an empty distribution)");
  }
  double l1 = 0;
  for (size_t b = 0; b < p.size(); ++b) {
    const double pb = p[b] >= floor ? static_cast<double>(p[b]) / e.total_p : 0;
    const double qb = q[b] >= floor ? static_cast<double>(q[b]) / e.total_q : 0;
    l1 += std::fabs(pb - qb);
  }
  e.tv = std::fmin(1.0, 0.5 * l1);
  return e;
}

}  // namespace host
}  // namespace fedstat
