// The operator's view of a collector, as text: a snapshot of the server (ServerStatus: its
// connections and check-ins, and per task its round's state, devices, dropouts and published
// result) rendered as one HTML page with an inline SVG chart per task series (no script), and as
// Prometheus' text exposition format (version 0.0.4) for /metrics.
//
// A series is the tasks that measure the same thing again: the same kind, trust model and kind
// parameters (e.g. the same reference), differing in id, seed or opening time — one round each
// (a task runs exactly one round here). Its chart has one x slot per round, in opening order, and
// one <circle class="estimate-point"> per round whose published result has a numeric "estimate".
//
// Everything that comes from the store or the config (task kinds, parameters, abort reasons,
// result JSON) is HTML-escaped; label values in /metrics are escaped as the format requires.
// Errors: none (what cannot be read is shown as "–"). Memory: the page. Paper: none.
#ifndef FEDSTAT_HOST_STATUS_STATUS_PAGE_H_
#define FEDSTAT_HOST_STATUS_STATUS_PAGE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fedstat {
namespace host {

struct TaskStatus {
  uint32_t id = 0;
  std::string kind = "?", trust = "?";  // from the stored declaration
  std::string series;                   // the series key (see above); series_label: its caption
  std::string series_label;
  uint32_t follows = 0;  // a chained task's first stage (0: none)
  uint64_t opened_unix_seconds = 0;
  // "running" (the store's "open"), "completed", "aborted", "awaiting_tagg", "declared"; a state
  // this build does not know is shown as it is.
  std::string state;
  std::string stage;   // running: "admission", "reports", "secure aggregation: shares", ...
  std::string detail;  // aborted: the reason stored with the transition
  std::optional<uint32_t> min_clients, max_clients;
  size_t checked_in = 0;  // devices offered the task (their ClientHello stored under it)
  // The task's privacy parameters per round, as its declaration states them (what each device's
  // ledger is charged for it: task_plan.h); shown as "–" for trust "none" (no privacy claimed).
  std::optional<double> epsilon, delta;
  size_t accepted = 0, declined = 0;
  std::map<std::string, size_t> declined_by_reason;  // decline_reason_name → devices
  // Devices that failed on their own side (TaskReply reason DEVICE_FAILURE: storage, ledger,
  // entropy or computation), apart from the declined (their choice: budget, policy, memory, data).
  size_t failed = 0;
  std::optional<size_t> contributors;  // completed: the result's "contributors"
  // Accepted devices that are not in the sum: completed, accepted − contributors; DIST while
  // secure aggregation runs, accepted − the current stage's members; aborted, accepted − the
  // senders of the last step the round reached (a report; a secure aggregation stage). Else
  // unknown.
  std::optional<size_t> dropouts;
  // Clear path: devices whose report was refused for a word beyond the task kind's largest honest
  // word (tasks/report_bounds.h); never summed (counted among the dropouts).
  size_t reports_refused = 0;
  std::optional<double> estimate, estimate_sd;
  std::optional<std::string> result_json;                     // the published result, as stored
  std::vector<std::pair<std::string, uint64_t>> transitions;  // (word, unix seconds)
  // DIST: devices excluded from secure aggregation for what they sent (id, reason), in order.
  std::vector<std::pair<uint64_t, std::string>> excluded;
  // DIST: shares found off a verified secret's polynomial, in order: the holder revealed other
  // than it was dealt, or the owner dealt it a bad share (nobody is excluded for it).
  struct DisputedShare {
    uint64_t holder = 0, owner = 0;
    bool self_mask = true;  // the owner's self-mask seed; false: its masking key
  };
  std::vector<DisputedShare> disputed;
};

struct ServerStatus {
  std::string version;
  uint64_t now_unix_seconds = 0, started_unix_seconds = 0;
  size_t connections_open = 0;           // TLS connections past the handshake, not closed
  uint64_t connections_total = 0;        // ... since this process started
  uint64_t handshake_failures = 0;       // connections closed in or for their handshake
  uint64_t resumed_handshakes = 0;       // of the completed ones, resumed TLS sessions
  uint64_t psk_connections = 0;          // of the completed ones, devices that used their PSK
  uint64_t certificate_connections = 0;  // ... and devices with an X.509 certificate (mTLS)
  uint64_t refused_peers = 0;            // connections dropped by the per-address handshake limit
  size_t tls_sessions_held = 0;          // sessions the listener holds for resumption
  uint64_t refused_full = 0;             // closed at accept: max_connections held, all checked in
  uint64_t refused_per_address = 0;      // likewise for max_connections_per_address
  uint64_t evicted_full = 0;             // not checked in, closed for a newcomer (max_connections)
  uint64_t evicted_per_address = 0;      // likewise at max_connections_per_address
  uint64_t replaced_per_identity = 0;    // closed for a newer one: max_connections_per_identity
  uint64_t not_checked_in = 0;           // closed: no ClientHello within handshake_timeout_ms
  uint64_t revoked = 0;                  // closed: their credential was removed (SIGHUP reload)
  uint64_t checkins_total = 0;           // ClientHello frames received (refused ones too)
  uint64_t frames_received = 0;          // every frame from a device
  uint64_t device_messages_stored = 0;   // accepted device messages in the store (all time)
  uint64_t reports_stored = 0;           // of which contributions: Report and SecAggMaskedChunk
  std::vector<TaskStatus> tasks;         // ascending id
};

// A TaskReply.reason (ErrorAction, as the wire's number) as the status page and /metrics name
// it: "policy", "budget_exhausted", "no_data", ...; "reason_<n>" for a number this build does
// not know.
std::string decline_reason_name(int64_t reason);

std::string html_escape(std::string_view text);
// A Prometheus label value: backslash, double quote and newline escaped.
std::string metric_label_escape(std::string_view text);

std::string render_status_html(const ServerStatus& status);
std::string render_metrics(const ServerStatus& status);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_STATUS_STATUS_PAGE_H_
