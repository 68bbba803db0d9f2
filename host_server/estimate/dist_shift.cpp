// The DIST data-shift task on the host (dist_shift.h).
#include "host_server/estimate/dist_shift.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "host_server/estimate/host_common.h"
#include "host_server/secagg/secagg_simulation.h"
#include "sdk/noise/polya.h"
#include "sdk/noise/rational.h"

namespace fedstat {
namespace host {

double dist_shift_noise_scale(double epsilon, uint32_t max_events) {
  if (!std::isfinite(epsilon) || epsilon <= 0) {
    throw std::invalid_argument("data shift (dist): epsilon must be a finite number above 0");
  }
  return static_cast<double>(std::max<uint32_t>(1, max_events)) / epsilon;
}

uint64_t dist_shift_bucket_clamp(uint32_t bits, uint32_t max_clients) {
  if (bits < 2 || bits > 64 || max_clients == 0) return 0;
  return ((uint64_t{1} << (bits - 1)) - 1) / max_clients;
}

void check_dist_shift(const DistShiftConfig& c) {
  if (c.buckets == 0 || c.buckets > sketch::kMaxHashedBuckets) {
    throw std::invalid_argument("data shift (dist): buckets must be in [1, " +
                                std::to_string(sketch::kMaxHashedBuckets) + "]");
  }
  if (c.bits != 32 && c.bits != 64) {
    throw std::invalid_argument("data shift (dist): bits must be 32 or 64");
  }
  if (c.max_clients == 0 || dist_shift_bucket_clamp(c.bits, c.max_clients) == 0) {
    throw std::invalid_argument(
        "data shift (dist): max_clients must be at least 1 and leave each device at least 1 per "
        "bucket ((2^(bits-1) - 1) / max_clients >= 1)");
  }
  if (c.shares == 0) throw std::invalid_argument("data shift (dist): noise shares must be >= 1");
  if (!std::isfinite(c.noise_scale) || c.noise_scale <= 0 ||
      c.noise_scale > static_cast<double>(noise::kMaxPolyaScale)) {
    throw std::invalid_argument(
        "data shift (dist): the noise scale T = max_events/epsilon must be "
        "in (0, " +
        std::to_string(noise::kMaxPolyaScale) + "]: raise epsilon");
  }
}

std::vector<uint64_t> dist_shift_device_vector(const EmulatedClient& client,
                                               const sketch::BucketMap& map,
                                               const DistShiftConfig& config, RandomBits& noise) {
  check_dist_shift(config);
  std::vector<uint64_t> words(config.buckets, 0);
  Span<uint64_t> out(words.data(), words.size());
  if (!client.table.empty()) {
    check(sketch::add_bucket_counts(map, client.histogram, config.max_events, out),
          "data shift (dist): bucket counts");
  }
  const uint64_t clamp = dist_shift_bucket_clamp(config.bits, config.max_clients);
  for (uint64_t& w : words) w = std::min(w, clamp);
  const noise::Rational scale =
      value_or_throw(noise::rational_at_least(config.noise_scale), "data shift (dist): scale");
  check(sketch::add_polya_shares(scale, config.shares, noise, out), "data shift (dist): noise");
  if (config.bits < 64) {
    const uint64_t mask = (uint64_t{1} << config.bits) - 1;
    for (uint64_t& w : words) w &= mask;
  }
  return words;
}

std::vector<uint64_t> dist_shift_fleet_sum(const EmulatedClients& clients, const Seed256& seed,
                                           const DistShiftConfig& config, NoiseBits& noise,
                                           bool secure) {
  check_dist_shift(config);
  const sketch::BucketMap map(seed, config.buckets);
  const uint64_t mask = config.bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << config.bits) - 1;
  std::vector<uint64_t> sum(config.buckets, 0);
  std::vector<std::vector<uint64_t>> inputs;
  for (size_t c = 0; c < clients.size(); ++c) {
    std::vector<uint64_t> v =
        dist_shift_device_vector(*clients[c], map, config, noise.stream(1 + c));
    if (secure) {
      inputs.push_back(std::move(v));
    } else {
      for (size_t b = 0; b < sum.size(); ++b) sum[b] = (sum[b] + v[b]) & mask;
    }
  }
  if (secure) {
    if (inputs.size() < 2) {
      throw std::invalid_argument("data shift (dist): secure aggregation needs >= 2 clients");
    }
    sum = secure_sum(inputs, config.bits, noise.session_seed());
  }
  return sum;
}

}  // namespace host
}  // namespace fedstat
