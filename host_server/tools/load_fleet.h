// The device side of fedstat-loadgen: M emulated devices (real Clients, sdk/client, over real
// TLS-PSK, sdk/tls; one thread each) that report into one task after another for a bounded time,
// timing each report's acknowledgement.
//
// Each device loops: check in, take the Task offered, report (Report chunks, each answered by an
// Ack once the server stored it), wait for the RoundOutcome, then check in for the next task —
// a fresh Client per task over the same privacy ledger, as a device app does. The server offers
// each device a task at most once, so the fleet needs one task per round; with every task
// declared min_clients = max_clients = M, all M devices take part in each round and the rounds
// run in lockstep (fedstat-loadgen declares them; see its header). Only trust "none" tasks can
// be repeated like this: any other charges the device's privacy ledger each round. The devices'
// task policy accepts trust "none" and nothing else (ClientConfig::task_policy).
//
// Stopping: once `seconds` have passed, the first device to finish a round fixes the next round
// as the last; every device finishes that one and stops (a device stopping earlier would leave
// the others' round short of max_clients until its admission time-out). A device offered no task
// stops at once ("out_of_tasks").
//
// Acknowledgement latency of a report: from the moment its last Report chunk is handed to the TLS
// channel (send returns; the Client's stop-and-wait means every earlier chunk is already
// acknowledged) to the moment the Ack for the whole report (offset = the task's vector_length) is
// decoded — the server's persist-then-acknowledge time for that chunk plus loopback and TLS.
// Errors: std::runtime_error from setup (a device's ledger). Memory: per device its Client's
// memory (Client::memory_bytes), a 256 KiB stack, one latency sample (4 bytes) per report.
// Paper: none (emulation).
#ifndef FEDSTAT_HOST_SERVER_TOOLS_LOAD_FLEET_H_
#define FEDSTAT_HOST_SERVER_TOOLS_LOAD_FLEET_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "host_server/estimate/client_emulation.h"

namespace fedstat {
namespace host {

struct LoadOptions {
  std::string endpoint;  // "127.0.0.1:7443"
  std::array<uint8_t, 32> fleet_secret{};
  uint64_t first_id = 1;  // device i is first_id + i (its PSK: HKDF(fleet_secret, id))
  double seconds = 10;
  uint64_t seed = 1;        // device id draws its k-th round's randomness from (seed, id + k·2^32)
  size_t memory_bytes = 0;  // what each device gives its Client
  uint32_t receive_timeout_ms = 120000;
  uint8_t report_window = 1;  // ClientConfig::report_window
};

struct LoadResult {
  uint64_t reports = 0;                    // reports acknowledged whole (their last chunk's Ack)
  uint64_t rounds = 0;                     // RoundOutcomes received, over all devices
  uint64_t aborted = 0;                    // ... of which said "aborted"
  uint32_t rounds_per_device = 0;          // the most rounds one device took part in
  uint64_t sessions = 0;                   // TLS connections the devices made
  uint64_t resumed = 0;                    // ... of which resumed the device's last session
  double wall_seconds = 0;                 // the devices' start to the last device's stop
  std::vector<uint32_t> latency_us;        // one per acknowledged report
  bool out_of_tasks = false;               // some device was offered no task
  std::map<std::string, uint32_t> errors;  // device errors by message (the device then stopped)
};

LoadResult run_load(const LoadOptions& options, EmulatedClients& devices);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_SERVER_TOOLS_LOAD_FLEET_H_
