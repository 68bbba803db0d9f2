// An emulated device for fedstat-sim and the emulation tests: a real `Client` (sdk/client) with
// its own histogram or examples (EmulatedClient, the app's ClientData), privacy ledger (platform
// storage, blob "ledger-<id>") and random source, talking to a real fedstat-server over real
// TLS-PSK (sdk/tls) on loopback. It may drop out of a round on purpose: just before it would send
// its first message of a chosen kind (its keys, its shares, its masked input, its reveals, or its
// report), it closes the connection.
//
// Randomness: with a seed, device `id` draws everything (noise, secure-aggregation keys) from
// SeededStream(seed, id), so its contribution can be recomputed in-process
// (expected_contribution); without one, from a Csprng. A connection lost mid-report (the server
// restarted) is checked in again and the Client resumes its report (sdk/client/client.h). Memory:
// the histogram's table or the examples, the Client's memory (`memory_bytes`) and the ledger.
// Errors: std::runtime_error from setup. Paper: none (emulation).
#ifndef FEDSTAT_HOST_SIM_EMULATED_DEVICE_H_
#define FEDSTAT_HOST_SIM_EMULATED_DEVICE_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fedstat/v1/envelope.pb.h"
#include "host_server/estimate/client_emulation.h"

namespace fedstat {
namespace host {

struct DeviceSetup {
  uint64_t id = 1;
  std::string endpoint;         // "127.0.0.1:7443"
  std::array<uint8_t, 32> psk;  // the device's key
  uint64_t seed = 0;            // 0: Csprng
  size_t memory_bytes = 4u << 20;
  pb_size_t drop_before = 0;  // an Envelope body tag (e.g. fedstat_v1_Envelope_secagg_keys_tag)
  double epsilon_budget = 10, delta_budget = 1e-3;
  uint32_t max_sessions = 600;  // check-ins before giving up while no task is offered
  uint32_t retry_millis = 50;   // wait between check-ins that found no task
  uint32_t receive_timeout_ms = 120000;
};

struct DeviceReport {
  uint64_t id = 0;
  // "completed", "aborted", "dropped", "declined-budget", ..., "error"; "unconfirmed": the device
  // lost its connection with its report sent, and the round was over when it came back.
  std::string outcome;
  uint32_t task_id = 0;
  uint64_t frame_bytes_sent = 0;
  uint32_t sessions = 0;
  uint32_t reconnects = 0;  // sessions the connection was lost in, then checked in again
  std::string detail;
};

// Runs check-ins until one ends with a task outcome (or max_sessions found none).
DeviceReport run_emulated_device(const DeviceSetup& setup, EmulatedClient& data);

// The contribution device `id` sends for `task` with `seed` (as its Client computes it).
std::vector<uint64_t> expected_contribution(const fedstat_v1_Task& task,
                                            const std::vector<uint64_t>& task_data,
                                            EmulatedClient& data, uint64_t seed, uint64_t id);

// "keys", "shares", "masking", "reveals", "report" → the body tag a device drops before.
pb_size_t drop_point_tag(const std::string& name);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_SIM_EMULATED_DEVICE_H_
