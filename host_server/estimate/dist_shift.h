// The DIST data-shift task on the host (issue 41, docs/data_shift_dp.md): its parameters from a
// privacy target, the per-device bucket clamp, and an in-process emulation of its devices for the
// tools (fedstat-tv --trust dist, fedstat-demo) and the tests: each device runs the SDK's builder
// (client::build_data_shift_dist, sdk/client/contribution.h), the device code itself.
//
// A device's vector (the design every side builds to, sdk/sketch/hashed_histogram.h): its counts
// folded into B public buckets by the task seed (add_bucket_counts, with at most m events when
// max_events m > 0), each bucket clamped to ⌊(2^(bits−1) − 1)/max_clients⌋ so that the fleet's sum
// cannot wrap (clamping is 1-Lipschitz: it does not weaken the privacy), plus one Pólya share of
// the discrete Laplace of scale T split s ways in every bucket (add_polya_shares), each word
// reduced modulo 2^bits. The fleet's sum is read back with signed_sum and estimated against the
// reference's exact buckets with estimate_hashed_tv (hashed_tv.h).
// Privacy: Δ = 1 (item level) or 2m (user level: any two histograms of a device bounded to m
// events are up to 2m apart, and the server knows which devices took part); T = Δ/ε; with s = the
// round's threshold and at least s honest shares in a released sum each bucket carries at least one
// discrete Laplace(T): ε = Δ/T, pure DP (the proof: docs/data_shift_dp.md). Errors:
// std::invalid_argument naming the parameter (check_dist_shift), std::runtime_error when the SDK
// refuses (the message is the SDK's). Memory: B words per device vector, plus, for the fleet sum,
// the n vectors when summed through secure aggregation (else one running sum). Paper: 001 §4.7
// (distributed noise), Goryczka & Xiong 2015 (Pólya shares).
#ifndef FEDSTAT_HOST_ESTIMATE_DIST_SHIFT_H_
#define FEDSTAT_HOST_ESTIMATE_DIST_SHIFT_H_

#include <cstdint>
#include <vector>

#include "fedstat/v1/envelope.pb.h"
#include "host_server/estimate/client_emulation.h"
#include "host_server/estimate/noise_bits.h"
#include "sdk/base/random_bits.h"
#include "sdk/sketch/hashed_histogram.h"

namespace fedstat {
namespace host {

// The default bucket count: 160 KiB of 32-bit words (the device budget).
constexpr uint32_t kDefaultDistShiftBuckets = 40960;

struct DistShiftConfig {
  uint32_t buckets = kDefaultDistShiftBuckets;  // B
  uint32_t bits = 32;                           // 32 or 64
  uint32_t max_events = 0;                      // m; 0: item level
  uint32_t max_clients = 1;                     // the Task's: the per-device clamp
  uint32_t shares = 1;                          // s: shares of one discrete Laplace
  double noise_scale = 0;                       // T > 0
};

// Δ, the L1 sensitivity the device charges for (sketch::hashed_histogram_epsilon's: 1 at item
// level, 2m at user level), so that the server's T and the device's charge cannot disagree.
double dist_shift_sensitivity(uint32_t max_events);
// T = Δ/ε. std::invalid_argument for ε not finite or ≤ 0.
double dist_shift_noise_scale(double epsilon, uint32_t max_events);

// ⌊(2^(bits−1) − 1)/max_clients⌋: the most one device puts in a bucket before its noise share.
uint64_t dist_shift_bucket_clamp(uint32_t bits, uint32_t max_clients);

// Every field in range: buckets in [1, sketch::kMaxHashedBuckets], bits 32 or 64, max_clients ≥ 1
// with a clamp ≥ 1, shares ≥ 1, noise_scale finite, > 0 and at most noise::kMaxPolyaScale.
void check_dist_shift(const DistShiftConfig& config);

// Writes `config` into a Task: kind parameters (data_shift, sketch fields 0), vector_length = B,
// bits, data_words 0, device_noise_lambda 0 — what the plan and the emulation's Task share.
void set_dist_shift_parameters(const DistShiftConfig& config, fedstat_v1_Task& task);

// The Task a DIST data-shift device of `config` receives (kind, trust, parameters, vector_length,
// bits, max_clients (at least 2, a DIST task's least), ε = Δ/T, the seed; a graph shape the
// device's checks take): what the SDK's builder reads.
fedstat_v1_Task dist_shift_task(const DistShiftConfig& config, const Seed256& seed);

// One device's vector (B words, each < 2^bits): the SDK's own builder
// (client::build_data_shift_dist) on its histogram, drawing its noise share from `noise`.
std::vector<uint64_t> dist_shift_device_vector(const EmulatedClient& client,
                                               const fedstat_v1_Task& task, RandomBits& noise);

// The fleet's sum modulo 2^bits: client c's noise from noise.stream(1 + c); with `secure`
// (≥ 2 clients) through a real secure-aggregation session (secagg_simulation.h's secure_sum).
std::vector<uint64_t> dist_shift_fleet_sum(const EmulatedClients& clients, const Seed256& seed,
                                           const DistShiftConfig& config, NoiseBits& noise,
                                           bool secure);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_ESTIMATE_DIST_SHIFT_H_
