// OperatorView: what the collector's status page and /metrics read (status_page.h) — kept beside
// the serving mode, never in the rounds' way — and the page's HTTP listener (http_server.h) on
// the config's status_listen, a loopback address (off when the field is absent).
//
// Where each figure comes from, the cheapest read that is also the truth after a restart:
//   - per task, from the store's own events (TallyingStore): the store is wrapped, every event the
//     rounds append is folded into per-task tallies (devices checked in, accepted, declined,
//     reported; secure aggregation's senders per stage; the round's transitions), after one pass
//     over every stored task's events the first time the page is asked for — so nothing is
//     decoded, and nothing costs anything, while nobody looks;
//   - the round's live stage from the Coordinator (Coordinator::round, TaskRound::stage, secagg);
//   - states and published results from Store::tasks and Store::result (a result is published
//     once: it is read once and kept);
//   - connections and check-ins from the listener's callbacks (ConnectionCounter, counting since
//     this process started).
// Threads: the io_context's, like everything in the serving mode (the store is read and written
// on that one thread). Errors: serve() throws what binding throws (std::system_error), before
// serving. Memory: per task a few sets of device ids (accepted, reported, each stage's senders);
// the published results. Paper: none.
#ifndef FEDSTAT_HOST_STATUS_OPERATOR_VIEW_H_
#define FEDSTAT_HOST_STATUS_OPERATOR_VIEW_H_

#include <array>
#include <asio.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "host_server/net/tls_server.h"
#include "host_server/rounds/coordinator.h"
#include "host_server/server_config.h"
#include "host_server/status/http_server.h"
#include "host_server/status/status_page.h"
#include "host_server/store/store.h"

namespace fedstat {
namespace host {

// One task's events, folded.
struct TaskTally {
  std::set<uint64_t> checked_in;  // a ClientHello stored under the task (offered, or resumed)
  std::set<uint64_t> accepted, declined;
  // The decliners by their TaskReply.reason (decline_reason_name: "policy", "budget_exhausted",
  // ...): a fleet whose task policy refuses the task shows as "policy".
  std::map<std::string, std::set<uint64_t>> declined_by_reason;
  // Devices that failed on their own side: a TaskReply declining with DEVICE_FAILURE (storage,
  // ledger, entropy or the computation failed; sdk/client/client.h). Counted here, not among the
  // declined: a decline is the device's choice (its budget, policy, memory, data), a failure is
  // not. The wire carries no other device-side error (a device never sends SecAggAbort; one that
  // fails after its accept just goes silent, and is a dropout).
  std::set<uint64_t> failed;
  std::set<uint64_t> reported;               // sent a Report chunk (clear path)
  std::array<std::set<uint64_t>, 4> secagg;  // senders of keys, shares, masked input, reveals
  std::set<uint64_t> reports_refused;        // a "report_refused" note (a word out of bounds)
  std::vector<std::pair<std::string, uint64_t>> transitions;  // (word, unix seconds)
  std::string abort_reason;
  // DIST: devices excluded from secure aggregation (server notes "excluded <reason>"), in order.
  std::vector<std::pair<uint64_t, std::string>> excluded;
  // DIST: disputed shares (server notes "disputed <owner> <self|key> …", client = the holder).
  std::vector<TaskStatus::DisputedShare> disputed;
};

// A Store that forwards every call and, once load() ran, folds what is appended.
class TallyingStore final : public Store {
 public:
  explicit TallyingStore(Store& inner) : inner_(inner) {}

  void put_task(uint32_t task_id, const std::string& definition) override {
    inner_.put_task(task_id, definition);
  }
  std::vector<StoredTask> tasks() override { return inner_.tasks(); }
  void set_task_state(uint32_t task_id, const std::string& state) override {
    inner_.set_task_state(task_id, state);
  }
  uint64_t append_events(const std::vector<NewEvent>& events) override;
  std::vector<StoredEvent> events(uint32_t task_id) override { return inner_.events(task_id); }
  void put_result(uint32_t task_id, const std::string& result_json) override {
    inner_.put_result(task_id, result_json);
  }
  std::optional<std::string> result(uint32_t task_id) override { return inner_.result(task_id); }
  std::string integrity_check() override { return inner_.integrity_check(); }

  // The first call folds every stored task's events; later appends are folded as they happen.
  void load();
  const std::map<uint32_t, TaskTally>& tallies() const { return tallies_; }
  uint64_t device_messages() const { return device_messages_; }
  uint64_t reports() const { return reports_; }

 private:
  void fold(uint32_t task_id, uint64_t client_id, EventKind kind,
            const std::vector<uint8_t>& payload);

  Store& inner_;
  bool loaded_ = false;
  std::map<uint32_t, TaskTally> tallies_;
  uint64_t device_messages_ = 0, reports_ = 0;
};

// A FrameHandler in front of another: counts connections, check-ins and frames.
class ConnectionCounter final : public net::FrameHandler {
 public:
  explicit ConnectionCounter(net::FrameHandler& inner) : inner_(inner) {}
  void on_authenticated(net::ConnectionId id, const net::PeerAuthentication& how) override;
  void on_open(net::ConnectionId id, const std::string& identity) override;
  void on_frame(net::ConnectionId id, const wire::Envelope& message) override;
  void on_close(net::ConnectionId id, const std::string& reason) override;

  size_t open() const { return open_.size(); }
  uint64_t opened() const { return opened_; }
  uint64_t never_opened() const { return never_opened_; }
  uint64_t check_ins() const { return check_ins_; }
  uint64_t frames() const { return frames_; }
  // Completed handshakes by how the device authenticated (net::AuthenticationMethod).
  uint64_t by_psk() const { return by_psk_; }
  uint64_t by_certificate() const { return by_certificate_; }

 private:
  net::FrameHandler& inner_;
  std::unordered_set<net::ConnectionId> open_;
  uint64_t opened_ = 0, never_opened_ = 0, check_ins_ = 0, frames_ = 0;
  uint64_t by_psk_ = 0, by_certificate_ = 0;  // PSK: full or resumed
};

class OperatorView {
 public:
  // `store` and `handler` are what the rounds and the listener would use without the view.
  OperatorView(Store& store, net::FrameHandler& handler);

  Store& store() { return store_; }                  // give this to the Coordinator
  net::FrameHandler& handler() { return counter_; }  // and this to the TlsServer

  // Serves the page and /metrics on config.status_listen; nothing when it is empty. Logs
  // {"event": "status_listening", "address", "port"}.
  void serve(asio::io_context& io, const ServerConfig& config, const Coordinator& coordinator,
             std::ostream& log);
  void stop();  // closes the status listener (SIGTERM); nothing when not serving

  ServerStatus snapshot(const Coordinator* coordinator, uint64_t now_unix_seconds);
  // Where the snapshot reads the listener's TLS counts (TlsServer::stats, on the io thread).
  void set_tls_stats(std::function<net::TlsServerStats()> tls_stats) {
    tls_stats_ = std::move(tls_stats);
  }

 private:
  TallyingStore store_;
  ConnectionCounter counter_;
  uint64_t started_;
  std::function<net::TlsServerStats()> tls_stats_;
  std::map<uint32_t, std::string> results_;  // published results (immutable once published)
  std::unique_ptr<StatusHttpServer> http_;
  struct Rendered {  // a page as last rendered, reused within the same second
    bool valid = false;
    uint64_t at = 0;
    HttpResponse response;
  };
  Rendered html_cache_, metrics_cache_;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_STATUS_OPERATOR_VIEW_H_
