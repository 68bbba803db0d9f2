// Total variation distance from hashed-domain histograms (hashed_tv.h).
#include "host_server/estimate/hashed_tv.h"

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

HashedTvEstimate estimate_hashed_tv(const std::vector<int64_t>& p, const std::vector<int64_t>& q) {
  if (p.size() != q.size()) {
    throw std::invalid_argument("hashed TV: the two histograms have different bucket counts");
  }
  HashedTvEstimate e;
  e.buckets = p.size();
  for (size_t b = 0; b < p.size(); ++b) {
    if (p[b] > 0) e.total_p += static_cast<double>(p[b]);
    if (p[b] < 0) ++e.negative_p;
    if (q[b] > 0) e.total_q += static_cast<double>(q[b]);
  }
  if (e.total_p <= 0 || e.total_q <= 0) {
    throw std::invalid_argument(
        "hashed TV: a side holds no positive bucket (an empty distribution)");
  }
  double l1 = 0;
  for (size_t b = 0; b < p.size(); ++b) {
    const double pb = p[b] > 0 ? static_cast<double>(p[b]) / e.total_p : 0;
    const double qb = q[b] > 0 ? static_cast<double>(q[b]) / e.total_q : 0;
    l1 += std::fabs(pb - qb);
  }
  e.tv = std::fmin(1.0, 0.5 * l1);
  return e;
}

}  // namespace host
}  // namespace fedstat
