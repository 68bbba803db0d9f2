// ScaleFleet: a fleet of 10^4–10^5 lightweight emulated devices for the scale benchmark
// (scale_bench.cpp), each a real Client (sdk/client) with its own data, ledger and seeded random
// stream over real TLS-PSK (sdk/tls), reporting once into one task on one of N server endpoints.
//
// Lightweight: the devices share `workers` threads — a worker runs one device's session to its
// end, then takes the next device — instead of one thread each (host_server/sim/device_threads.h,
// which fits 1,000). A device leaves once its whole report is acknowledged (the Ack whose offset
// is the task's vector_length): it does not wait for the RoundOutcome, which would hold a worker
// until the whole fleet has reported. Its channel then reads as closed to its Client (kUnavailable
// after the last Ack: the Client's "connection lost after the report"), which the fleet counts as
// the device's success. The server keeps the report (task_round.cpp: a disconnect after the report
// leaves it summed); the round closes when max_clients have reported.
//
// Endpoints: device id i reaches endpoints[draw(seed, i) mod N] — a fixed seed spreads the fleet
// over N nodes, the same way in every run (today only N = 1 serves a round: docs/scale_out.md).
//
// Returning devices (`returning`): warm_up() makes each device's first TLS connection (a full
// ECDHE-PSK handshake, then close; not part of the measured run) so that run() resumes that session
// (an abbreviated handshake), as a fleet that reports every day does. Each device then keeps its
// TlsPskChannel (≈ 3 KiB plus mbedTLS's saved session) between the two.
//
// Acknowledgement latency: per device, from its last Report chunk handed to TLS (send returns) to
// the decoded Ack for the whole report (load_fleet.cpp's definition).
// Errors: std::runtime_error from setup. Memory: per device its data (EmulatedClient) and, when
// returning, its channel; per worker one Client and its memory (Client::memory_bytes); 4 bytes of
// latency per device. Paper: none (emulation).
#ifndef FEDSTAT_TESTS_BENCH_SCALE_FLEET_H_
#define FEDSTAT_TESTS_BENCH_SCALE_FLEET_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "host_server/estimate/client_emulation.h"
#include "sdk/tls/tls_channel.h"

namespace fedstat {
namespace bench {

struct FleetOptions {
  std::vector<std::string> endpoints;  // "127.0.0.1:7443", ...; at least one
  std::array<uint8_t, 32> fleet_secret{};
  uint64_t seed = 17;       // the devices' randomness (SeededStream(seed, id)) and endpoint draw
  size_t memory_bytes = 0;  // what each Client is given (the most any device needs)
  size_t workers = 64;      // threads the devices share
  uint32_t receive_timeout_ms = 60000;  // a device waits this long for any answer
  uint8_t report_window = 1;
};

struct FleetResult {
  uint64_t reports = 0;                    // devices whose whole report was acknowledged
  uint64_t resumed = 0;                    // ... whose TLS handshake resumed its warm-up session
  double wall_seconds = 0;                 // first device started to last device done
  std::vector<uint32_t> latency_us;        // one per acknowledged report
  std::vector<uint64_t> per_endpoint;      // devices sent to each endpoint
  std::map<std::string, uint32_t> errors;  // by message
};

class ScaleFleet {
 public:
  ScaleFleet(FleetOptions options, host::EmulatedClients& devices);
  // Each device's first connection (full handshake), to be resumed by run(). Returns the errors.
  std::map<std::string, uint32_t> warm_up();
  // Every device reports once. Device i has id i + 1.
  FleetResult run();
  // The endpoint index device `id` reaches (fixed by the seed).
  size_t endpoint_of(uint64_t id) const { return endpoint_index_[id - 1]; }

 private:
  FleetOptions options_;
  host::EmulatedClients& devices_;
  std::vector<uint32_t> endpoint_index_;
  std::vector<std::unique_ptr<tls::TlsPskChannel>> channels_;  // kept when warmed up
};

// Nearest-rank percentile `p` (0–100) of `samples` (sorted here), in the samples' unit.
uint32_t percentile(std::vector<uint32_t> samples, double p);

}  // namespace bench
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_BENCH_SCALE_FLEET_H_
