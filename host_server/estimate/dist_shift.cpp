// The DIST data-shift task on the host (dist_shift.h).
#include "host_server/estimate/dist_shift.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "host_server/estimate/host_common.h"
#include "host_server/secagg/secagg_simulation.h"
#include "sdk/client/contribution.h"
#include "sdk/noise/polya.h"
#include "sdk/noise/rational.h"

namespace fedstat {
namespace host {

double dist_shift_sensitivity(uint32_t max_events) {
  // The device's own charge at T = 1 with every share honest: Δ·(1/1 + 0) = Δ.
  return sketch::hashed_histogram_epsilon(max_events, 1.0, 1, 1);
}

double dist_shift_noise_scale(double epsilon, uint32_t max_events) {
  if (!std::isfinite(epsilon) || epsilon <= 0) {
    throw std::invalid_argument("data shift (dist): epsilon must be a finite number above 0");
  }
  return dist_shift_sensitivity(max_events) / epsilon;
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
        "data shift (dist): the noise scale T = (1, or 2·max_events)/epsilon must be "
        "in (0, " +
        std::to_string(noise::kMaxPolyaScale) + "]: raise epsilon");
  }
}

void set_dist_shift_parameters(const DistShiftConfig& config, fedstat_v1_Task& task) {
  task.which_parameters = fedstat_v1_Task_data_shift_tag;
  task.parameters.data_shift = fedstat_v1_DataShiftParameters_init_zero;
  fedstat_v1_DataShiftParameters& d = task.parameters.data_shift;
  d.buckets = config.buckets;
  d.noise_scale = config.noise_scale;
  d.noise_shares = config.shares;
  d.max_events = config.max_events;
  task.vector_length = config.buckets;
  task.bits = config.bits;
  task.data_words = 0;
  task.device_noise_lambda = 0;
}

fedstat_v1_Task dist_shift_task(const DistShiftConfig& config, const Seed256& seed) {
  check_dist_shift(config);
  fedstat_v1_Task task = fedstat_v1_Task_init_zero;
  task.kind = fedstat_v1_TaskKind_DATA_SHIFT;
  task.trust = fedstat_v1_TrustModel_DIST;
  set_dist_shift_parameters(config, task);
  // The graph fields only have to pass the device's shape checks (the in-process sum uses no
  // graph): the complete graph with a majority threshold up to 1,024 clients (at least 2: a DIST
  // task's least, so one client's clamp is ⌊(2^(bits−1) − 1)/2⌋), above it a sparse shape.
  task.task_id = 1;
  task.max_clients = std::max<uint32_t>(2, config.max_clients);
  task.min_clients = task.max_clients;
  if (task.max_clients <= 1024) {
    task.threshold = task.max_clients / 2 + 1;
  } else {
    task.secagg_degree = 2;
    task.threshold = 2;
  }
  task.epsilon = dist_shift_sensitivity(config.max_events) / config.noise_scale;
  task.seed.size = 32;
  std::memcpy(task.seed.bytes, seed.bytes, 32);
  return task;
}

std::vector<uint64_t> dist_shift_device_vector(const EmulatedClient& client,
                                               const fedstat_v1_Task& task, RandomBits& noise) {
  // A client without a histogram sends its noise share alone (an empty histogram).
  histogram::SparseEntry none[2];
  histogram::SparseHistogram empty;
  const histogram::SparseHistogram* local = &client.histogram;
  if (client.table.empty()) {
    check(empty.init(Span<histogram::SparseEntry>(none, 2)), "data shift (dist): histogram");
    local = &empty;
  }
  std::vector<uint64_t> words(task.vector_length, 0);
  check(client::build_data_shift_dist(task, *local, noise,
                                      Span<uint64_t>(words.data(), words.size())),
        "data shift (dist): the SDK's builder");
  return words;
}

std::vector<uint64_t> dist_shift_fleet_sum(const EmulatedClients& clients, const Seed256& seed,
                                           const DistShiftConfig& config, NoiseBits& noise,
                                           bool secure) {
  const fedstat_v1_Task task = dist_shift_task(config, seed);
  const uint64_t mask = config.bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << config.bits) - 1;
  std::vector<uint64_t> sum(config.buckets, 0);
  std::vector<std::vector<uint64_t>> inputs;
  for (size_t c = 0; c < clients.size(); ++c) {
    std::vector<uint64_t> v = dist_shift_device_vector(*clients[c], task, noise.stream(1 + c));
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
