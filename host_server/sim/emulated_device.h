// An emulated device for fedstat-sim and the emulation tests: a real `Client` (sdk/client) with
// its own histogram, examples or heterogeneity vector (EmulatedClient, the app's ClientData),
// privacy ledger (platform storage, blob "ledger-<id>") and random source, talking to a real
// fedstat-server over real TLS-PSK (sdk/tls) on loopback, or mutual TLS with certificates. It takes
// part in `tasks` tasks one after the other (the stages of a chained task), a fresh Client per task
// over the same ledger. It may drop out of a task's round on purpose: just before it would send its
// first message of a chosen kind (its keys, its shares, its masked input, its consistency
// signature, its reveals, or its report), it closes the connection — and then checks in for its
// next task, if any.
//
// Randomness: with a seed, device `id` draws everything (noise, secure-aggregation keys) for its
// k-th task from SeededStream(seed, id + k·2^32), so its contribution can be recomputed in-process
// (expected_contribution); without one, from a Csprng. A connection lost mid-round (the server
// restarted) is checked in again and the Client resumes its report or its secure-aggregation
// round (sdk/client/client.h). Memory:
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
#include "sdk/client/client_data.h"
#include "sdk/client/task_policy.h"
#include "sdk/credential/device_credential.h"
#include "sdk/tls/tls_certificate_channel.h"
#include "sdk/tls/tls_channel.h"

namespace fedstat {
namespace host {

// An emulated device's data as its app hands it to the Client (client::ClientData): the
// histogram, the examples or the vector EmulatedClient holds; kNotFound for what it holds none of.
class EmulatedData final : public client::ClientData {
 public:
  explicit EmulatedData(EmulatedClient& data) : data_(data) {}
  const histogram::SparseHistogram* histogram() override {
    return data_.table.empty() ? nullptr : &data_.histogram;
  }
  Result<tasks::Examples> examples() override {
    if (data_.examples.count() == 0) return not_found("the emulated device holds no examples");
    return data_.examples.view();
  }
  Result<Span<const double>> unit_vector() override {
    if (data_.vector.empty()) return not_found("the emulated device holds no vector");
    return Span<const double>(data_.vector.data(), data_.vector.size());
  }

 private:
  EmulatedClient& data_;
};

struct DeviceSetup {
  uint64_t id = 1;
  std::string endpoint;         // "127.0.0.1:7443"
  std::array<uint8_t, 32> psk;  // the device's key
  uint64_t seed = 0;            // 0: Csprng
  size_t memory_bytes = 4u << 20;
  // Tasks to take part in, one after the other (2: both stages of a chained task). Task k's
  // outcome ends it — completed, aborted, dropped or declined — and the device checks in for the
  // next; an error, or no task in max_sessions check-ins, ends the device.
  uint32_t tasks = 1;
  // Per task k: an Envelope body tag the device drops before (e.g.
  // fedstat_v1_Envelope_secagg_keys_tag); 0 or absent: no dropout.
  std::vector<pb_size_t> drop_before;
  double epsilon_budget = 10, delta_budget = 1e-3;
  uint32_t max_sessions = 600;  // check-ins per task before giving up while none is offered
  uint32_t retry_millis = 50;   // wait between check-ins that found no task (first task)
  uint32_t next_task_retry_millis = 50;  // ... while waiting for a later task
  uint32_t receive_timeout_ms = 120000;
  uint8_t report_window = 1;  // ClientConfig::report_window: Report chunks unacknowledged
  // ClientConfig::task_policy.accepted_trust (sdk/client/task_policy.h): the SDK's default takes
  // no trust-NONE task; a fleet that answers them opts in (fedstat-sim --accept-trust).
  uint32_t accepted_trust = client::kAcceptPrivate;
  // ClientConfig::task_policy.answered_kinds: every kind unless fedstat-sim --answer-kinds.
  uint32_t answered_kinds = client::kAnswerAllKinds;
  // The device's TLS channel, kept by the caller across calls so that a device that comes back
  // resumes its TLS session (sdk/tls/tls_channel.h); null: one channel for this call's sessions.
  tls::TlsPskChannel* channel = nullptr;
  // The device's credential (ClientConfig::credential; fedstat-sim --credentials): it then takes
  // part in signed DIST sessions only. Null: none. Kept alive by the caller.
  const credential::DeviceCredential* credential = nullptr;
  // Mutual TLS (fedstat-sim --tls-certificates): the device connects with its X.509 certificate
  // (PEM, from fedstat-ca issue's fleet.crt) and the private key of `tls_key` (its credential:
  // the certificate is for that key), checking the server's certificate against `tls_ca` (ca.crt)
  // and `tls_server_name`. Null: the PSK channel with `psk`. Kept alive by the caller.
  const std::string* tls_certificate = nullptr;
  const std::string* tls_ca = nullptr;
  const credential::DeviceCredential* tls_key = nullptr;
  std::string tls_server_name;
};

struct DeviceTaskReport {
  uint32_t index = 0;    // k: the device drew this task's randomness from stream id + k·2^32
  uint32_t task_id = 0;  // the task it was offered (0: none)
  // "completed", "aborted", "dropped", "declined-budget", "declined-policy", ..., "error"
  std::string outcome;
  std::string detail;
};

struct DeviceReport {
  uint64_t id = 0;
  // The last task's: "completed", "aborted", "dropped", "declined-budget", ..., "error";
  // "unconfirmed": the device lost its connection with its report sent, and the round was over
  // when it came back.
  std::string outcome;
  uint32_t task_id = 0;
  std::vector<DeviceTaskReport> tasks;  // one per task taken part in, in order
  double epsilon_spent = 0;             // the ledger's total when the device stopped
  uint64_t frame_bytes_sent = 0;
  uint32_t sessions = 0;
  uint32_t reconnects = 0;  // sessions the connection was lost in, then checked in again
  uint32_t resumed = 0;     // sessions whose TLS handshake resumed the last session
  std::string detail;
};

// Runs check-ins until `setup.tasks` task outcomes (or an error, or max_sessions found none).
DeviceReport run_emulated_device(const DeviceSetup& setup, EmulatedClient& data);

// The SeededStream id device `id` draws its k-th task's randomness from: id + k·2^32 (a fresh
// Client per task, so a task's draws do not depend on how far an earlier one got).
uint64_t device_stream(uint64_t id, uint32_t task_index);

// The local size the Client's memory formula reads (sdk/client/client.h): the histogram's capacity
// for DATA_SHIFT, the example count for MODEL_UPDATE, 0 otherwise.
size_t local_size(const fedstat_v1_Task& task, const EmulatedClient& data);

// The contribution device `id` sends for `task`, its `task_index`-th, with `seed` (as its Client
// computes it).
std::vector<uint64_t> expected_contribution(const fedstat_v1_Task& task,
                                            const std::vector<uint64_t>& task_data,
                                            EmulatedClient& data, uint64_t seed, uint64_t id,
                                            uint32_t task_index = 0);

// "keys", "shares", "masking", "consistency" (signed sessions), "reveals", "report" → the body
// tag a device drops before.
pb_size_t drop_point_tag(const std::string& name);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_SIM_EMULATED_DEVICE_H_
