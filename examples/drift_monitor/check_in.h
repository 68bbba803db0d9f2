// Answering the server for fedstat-drift-monitor: check-ins with the SDK's Client over TLS-PSK
// (sdk/tls/tls_channel.h) until one ends with a task outcome, exactly as a phone app would —
// the same Client across check-ins (so a report cut off by a lost connection is resumed), the
// privacy ledger loaded from platform storage (blob kLedgerBlob) and charged by the Client, the
// round marker in blob kRoundBlob.
//
// A check-in that finds no task (the server has none open for this device) waits retry_ms and
// checks in again, at most max_sessions times. One that cannot connect (refused, no route) is
// retried the same way, except a refused key (kPermissionDenied), which ends at once. What
// happened is printed to options.log (stdout unless --json), one line per check-in and a last
// "outcome:" line, and returned in a CheckInSummary:
//   outcome: task 7 completed; epsilon spent 0 (ledger: 0 of 10 spent)
// Memory: the Client (about 3.3 KiB) and the TLS channel (about 3 KiB; mbedTLS allocates its
// record buffers, 2 × 16.3 KiB, while connected) on the stack, the ledger's 64 entries and their
// scratch (about 21 KiB) and client_memory bytes for the Client on the heap.
#ifndef FEDSTAT_EXAMPLES_DRIFT_MONITOR_CHECK_IN_H_
#define FEDSTAT_EXAMPLES_DRIFT_MONITOR_CHECK_IN_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "sdk/client/task_policy.h"
#include "sdk/histogram/sparse_histogram.h"

namespace drift_monitor {

constexpr const char* kLedgerBlob = "drift-ledger";
constexpr const char* kRoundBlob = "drift-round";

struct CheckInOptions {
  std::string endpoint;  // "127.0.0.1:7443"
  uint64_t device_id = 0;
  std::vector<uint8_t> psk;
  double epsilon_budget = 10;
  double delta_budget = 1e-5;
  uint32_t max_sessions = 10;
  uint32_t retry_ms = 1000;
  uint32_t receive_timeout_ms = 60000;
  size_t client_memory = 1u << 20;
  // The trust models the Client takes tasks of (sdk/client/task_policy.h; --accept-trust): the
  // SDK's default, every private model; a server's trust-none task needs kAcceptNone.
  uint32_t accepted_trust = fedstat::client::kAcceptPrivate;
  std::FILE* log = stdout;  // the per-check-in lines
};

// What the check-ins ended with (for --json).
struct CheckInSummary {
  uint32_t sessions = 0;      // check-ins made
  uint32_t task_id = 0;       // the task of the outcome (0: none offered)
  std::string outcome;        // completed, declined, aborted, unconfirmed, no task, or empty
  double epsilon_spent = 0;   // by this run
  double ledger_epsilon = 0;  // spent in the ledger's window after it
};

enum class CheckInEnd {
  kOutcome,       // a session ended with an outcome (completed, declined, aborted), or none found
  kStateError,    // the ledger or the round marker in storage is corrupt
  kNetworkError,  // the server refused the key, could not be reached, or a session failed
};

CheckInEnd check_in(const CheckInOptions& options, fedstat::histogram::SparseHistogram& histogram,
                    CheckInSummary& summary, std::string& error);

}  // namespace drift_monitor

#endif  // FEDSTAT_EXAMPLES_DRIFT_MONITOR_CHECK_IN_H_
