// fedstat-netfault's check-in attacks (netfault_attacks.h): hello_flood and drop_every_round —
// devices checking in through the SDK's TlsPskChannel, and what the server answered.
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "host_server/testing/netfault_attacks.h"
#include "sdk/version.h"
#include "sdk/wire/envelope_codec.h"

namespace fedstat {
namespace netfault {

namespace {

// ---- hello_flood, drop_every_round ------------------------------------------------------------

struct SessionCounts {
  size_t sessions = 0, handshake_failures = 0, offered = 0, rate_limited = 0, refused = 0,
         errors = 0;
  std::optional<size_t> offered_before_first_limit;
  uint32_t task_id = 0;
  std::map<std::string, size_t> refusals, error_details;
};

wire::Envelope client_hello(uint64_t id) {
  wire::Envelope e = wire::make_envelope();
  e.which_body = fedstat_v1_Envelope_client_hello_tag;
  fedstat_v1_ClientHello& hello = e.body.client_hello;
  hello.client_id = id;
  std::snprintf(hello.sdk_version, sizeof(hello.sdk_version), "%s", FEDSTAT_VERSION_STRING);
  hello.memory_bytes = 4u << 20;
  hello.word_bits = 64;
  return e;
}

// One check-in: connect, ClientHello, the first answer (and with `take_data`, the TaskData after
// a Task), close without a reply. Adds what happened to `counts` (under `mutex`).
void check_in_once(const std::string& server, uint64_t id, const net::DevicePsk& psk,
                   bool take_data, SessionCounts& counts, std::mutex& mutex) {
  const std::string identity = std::to_string(id);
  tls::TlsPskChannel channel;
  const Status connected = channel.connect(
      server.c_str(), ByteSpan(reinterpret_cast<const uint8_t*>(identity.data()), identity.size()),
      ByteSpan(psk.data(), psk.size()), 10000);
  std::string error;
  bool offered = false, limited = false;
  std::string refusal;
  uint32_t task_id = 0;
  if (!connected.ok()) {
    error = std::string("connect: ") + connected.message();
  } else {
    Status status = channel.send(client_hello(id));
    wire::Envelope answer{};
    if (status.ok()) status = channel.receive(answer, 10000);
    if (!status.ok()) {
      error = std::string("hello: ") + status.message();
    } else if (answer.which_body == fedstat_v1_Envelope_task_tag) {
      offered = true;
      task_id = answer.body.task.task_id;
      uint32_t words = 0;
      while (take_data && words < answer.body.task.data_words) {
        wire::Envelope data{};
        if (!channel.receive(data, 10000).ok() ||
            data.which_body != fedstat_v1_Envelope_task_data_tag) {
          error = "the TaskData did not follow the Task";
          break;
        }
        words += data.body.task_data.words_count;
      }
    } else if (answer.which_body == fedstat_v1_Envelope_server_error_tag) {
      const fedstat_v1_ServerError& e = answer.body.server_error;
      const std::string detail = e.detail;
      limited = e.action == fedstat_v1_ErrorAction_RETRY_LATER &&
                e.status_code == static_cast<uint32_t>(StatusCode::kResourceExhausted) &&
                detail.find("check-ins a minute") != std::string::npos;
      if (!limited) refusal = detail.empty() ? "(no detail)" : detail;
    } else {
      error = "an answer other than Task or ServerError";
    }
  }
  channel.close();  // a drop: no TaskReply, no close of the round
  std::lock_guard<std::mutex> lock(mutex);
  ++counts.sessions;
  if (!connected.ok()) ++counts.handshake_failures;
  if (offered) {
    ++counts.offered;
    counts.task_id = task_id;
  }
  if (limited) {
    if (!counts.offered_before_first_limit) counts.offered_before_first_limit = counts.offered;
    ++counts.rate_limited;
  }
  if (!refusal.empty()) {
    ++counts.refused;
    ++counts.refusals[refusal];
  }
  if (!error.empty()) {
    ++counts.errors;
    ++counts.error_details[error];
  }
}

}  // namespace

json check_in_attack(const std::string& server, uint64_t id, const net::DevicePsk& psk,
                     double seconds, size_t workers, uint32_t interval_ms, bool take_data,
                     const std::string& ready_file, const std::string& stop_file) {
  SessionCounts counts;
  std::mutex mutex;
  std::atomic<bool> ready{false};
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> threads;
  for (size_t w = 0; w < workers; ++w) {
    threads.emplace_back([&]() {
      do {
        const Clock::time_point session_start = Clock::now();
        check_in_once(server, id, psk, take_data, counts, mutex);
        if (!ready.exchange(true)) write_ready(ready_file);
        const auto next = session_start + std::chrono::milliseconds(interval_ms);
        if (next > Clock::now()) std::this_thread::sleep_until(next);  // the device's pace
      } while (going_on(start, seconds, stop_file));
    });
  }
  for (auto& t : threads) t.join();
  const double elapsed = ms_since(start) / 1000;
  json out{{"seconds", elapsed},
           {"connections", counts.sessions},
           {"connect_failures", counts.handshake_failures},
           {"sessions", counts.sessions},
           {"sessions_per_second", counts.sessions / std::max(elapsed, 1e-9)},
           {"handshake_failures", counts.handshake_failures},
           {"offered", counts.offered},
           {"rate_limited", counts.rate_limited},
           {"refused", counts.refused},
           {"refusals", counts.refusals},
           {"errors", counts.errors},
           {"error_details", counts.error_details},
           {"task_id", counts.task_id}};
  out["offered_before_first_limit"] =
      counts.offered_before_first_limit ? json(*counts.offered_before_first_limit) : json();
  return out;
}

}  // namespace netfault
}  // namespace fedstat
