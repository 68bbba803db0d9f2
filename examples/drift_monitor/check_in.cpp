// Answering the server for fedstat-drift-monitor (check_in.h).
#include "examples/drift_monitor/check_in.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <thread>

#include "sdk/base/csprng.h"
#include "sdk/client/client.h"
#include "sdk/privacy/budget_ledger.h"
#include "sdk/tls/tls_channel.h"

namespace drift_monitor {
namespace {

using fedstat::ByteSpan;
using fedstat::MutableByteSpan;
using fedstat::Status;
using fedstat::StatusCode;
namespace client = fedstat::client;
namespace privacy = fedstat::privacy;

constexpr size_t kLedgerEntries = 64;

uint64_t wall_clock_seconds() {
  return static_cast<uint64_t>(std::time(nullptr));
}

std::string describe(const Status& status) {
  return std::string(fedstat::status_code_name(status.code())) + ": " + status.message();
}

// The app's data as the Client reads it: the histogram, or nothing while it is empty (the Client
// then declines a data-shift task with kDeclinedNoData — after charging the ledger for a private
// task, as it would for an answer: whether the app holds data is its data, sdk/client/client.h).
class MonitorData final : public client::ClientData {
 public:
  explicit MonitorData(fedstat::histogram::SparseHistogram& histogram) : histogram_(histogram) {}
  const fedstat::histogram::SparseHistogram* histogram() override {
    return histogram_.total() == 0 ? nullptr : &histogram_;
  }

 private:
  fedstat::histogram::SparseHistogram& histogram_;
};

const char* outcome_name(client::SessionResult result) {
  switch (result) {
    case client::SessionResult::kNoTask:
      return "no task offered";
    case client::SessionResult::kVersionTooOld:
      return "refused: this SDK version is too old for the server";
    case client::SessionResult::kDeclinedInterrupted:
      return "declined (its round was interrupted by a restart of this device)";
    case client::SessionResult::kDeclinedNoData:
      return "declined (no data for this kind of task)";
    case client::SessionResult::kDeclinedMemory:
      return "declined (needs more than --client-memory)";
    case client::SessionResult::kDeclinedBudget:
      return "declined (privacy budget exhausted)";
    case client::SessionResult::kCompleted:
      return "completed";
    case client::SessionResult::kAborted:
      return "aborted by the server (too few devices, or a device failed)";
    case client::SessionResult::kDeclinedPolicy:
      return "declined (outside this device's task policy: the rule above)";
    case client::SessionResult::kDeclinedAlreadyCharged:
      return "declined (this device was already charged for this task)";
  }
  return "unknown";
}

double ledger_epsilon(privacy::BudgetLedger& ledger) {
  const fedstat::Result<privacy::Spent> spent = ledger.spent(wall_clock_seconds());
  return spent.ok() ? spent.value().epsilon : -1;
}

void pause(uint32_t millis) {
  std::this_thread::sleep_for(std::chrono::milliseconds(millis));
}

}  // namespace

CheckInEnd check_in(const CheckInOptions& options, fedstat::histogram::SparseHistogram& histogram,
                    CheckInSummary& summary, std::string& error) {
  privacy::LedgerConfig ledger_config;
  ledger_config.epsilon_budget = options.epsilon_budget;
  ledger_config.delta_budget = options.delta_budget;
  ledger_config.blob_name = kLedgerBlob;
  std::vector<privacy::PrivacySpend> entries(kLedgerEntries);
  std::vector<uint8_t> ledger_scratch(privacy::BudgetLedger::blob_bytes(kLedgerEntries));
  privacy::BudgetLedger ledger;
  Status status = ledger.init(ledger_config,
                              fedstat::Span<privacy::PrivacySpend>(entries.data(), entries.size()),
                              MutableByteSpan(ledger_scratch.data(), ledger_scratch.size()));
  if (status.ok()) status = ledger.load();
  if (!status.ok()) {
    error = std::string("the privacy ledger (blob '") + kLedgerBlob + "'): " + describe(status);
    return CheckInEnd::kStateError;
  }

  fedstat::Csprng random;
  const std::string identity = std::to_string(options.device_id);
  status =
      random.init(ByteSpan(reinterpret_cast<const uint8_t*>(identity.data()), identity.size()));
  if (!status.ok()) {
    error = "entropy: " + describe(status);
    return CheckInEnd::kStateError;
  }
  client::ClientConfig config;
  config.device_id = options.device_id;
  config.receive_timeout_ms = options.receive_timeout_ms;
  config.wall_clock_seconds = wall_clock_seconds;
  config.round_blob_name = kRoundBlob;
  // Over TCP, up to 8 Report chunks in flight: a 40-chunk sketch goes in about 5 round trips.
  config.report_window = 8;
  config.task_policy.accepted_trust = options.accepted_trust;
  // It holds a histogram only: a task of another kind is declined free, before any charge (else
  // each one's "no data" decline would be charged: task_policy.h, rule 0).
  config.task_policy.answered_kinds = client::kAnswerDataShift | client::kAnswerKlAnswers;
  const size_t words = (options.client_memory + 7) / 8;
  std::unique_ptr<uint64_t[]> memory(new uint64_t[words]);
  MonitorData data(histogram);
  client::Client client;
  status = client.init(config, MutableByteSpan(reinterpret_cast<uint8_t*>(memory.get()), words * 8),
                       data, ledger, random);
  if (!status.ok()) {
    error = std::string("the Client (round marker blob '") + kRoundBlob + "'): " + describe(status);
    return status.code() == StatusCode::kDataLoss ? CheckInEnd::kStateError
                                                  : CheckInEnd::kNetworkError;
  }

  const double epsilon_before = ledger_epsilon(ledger);
  bool unreachable = false;  // the last check-in could not connect
  const ByteSpan identity_bytes(reinterpret_cast<const uint8_t*>(identity.data()), identity.size());
  for (uint32_t session = 1; session <= options.max_sessions; ++session) {
    if (session > 1) pause(options.retry_ms);
    summary.sessions = session;
    fedstat::tls::TlsPskChannel channel;
    const Status connected =
        channel.connect(options.endpoint.c_str(), identity_bytes,
                        ByteSpan(options.psk.data(), options.psk.size()), 10000);
    unreachable = !connected.ok();
    if (!connected.ok()) {
      error = "connecting to " + options.endpoint + ": " + describe(connected);
      std::fprintf(options.log, "check-in %u: %s\n", session, error.c_str());
      if (connected.code() == StatusCode::kPermissionDenied) return CheckInEnd::kNetworkError;
      continue;
    }
    const uint32_t resuming = client.pending_report_task();
    const fedstat::Result<client::SessionOutcome> outcome = client.run_session(channel);
    channel.close();
    if (!outcome.ok()) {
      const StatusCode code = outcome.status().code();
      error = "session: " + describe(outcome.status());
      if (client.last_server_detail()[0] != '\0') {
        error += std::string(" (server: ") + client.last_server_detail() + ")";
      }
      std::fprintf(options.log, "check-in %u: %s\n", session, error.c_str());
      // A lost connection: check in again while a report waits to be resumed (clear path).
      const bool lost = code == StatusCode::kUnavailable || code == StatusCode::kDeadlineExceeded;
      if (lost && client.pending_report_task() != 0) continue;
      return CheckInEnd::kNetworkError;
    }
    const client::SessionOutcome& o = outcome.value();
    if (o.result == client::SessionResult::kNoTask) {
      if (resuming != 0) {
        std::fprintf(
            options.log,
            "outcome: task %u unconfirmed (report sent; the round ended while reconnecting)\n",
            resuming);
        summary.task_id = resuming;
        summary.outcome = "unconfirmed";
        summary.ledger_epsilon = ledger_epsilon(ledger);
        return CheckInEnd::kOutcome;
      }
      std::fprintf(options.log, "check-in %u: no task offered%s%s\n", session,
                   client.last_server_detail()[0] ? ": " : "", client.last_server_detail());
      continue;
    }
    if (o.result == client::SessionResult::kVersionTooOld) {
      error = outcome_name(o.result);
      return CheckInEnd::kNetworkError;
    }
    const double epsilon_after = ledger_epsilon(ledger);
    if (o.result == client::SessionResult::kDeclinedPolicy) {
      std::fprintf(options.log, "check-in %u: task %u: %s\n", session, o.task_id,
                   client::policy_refusal_text(o.policy_refusal));
    }
    std::fprintf(options.log, "outcome: task %u %s; epsilon spent %g (ledger: %g of %g spent)\n",
                 o.task_id, outcome_name(o.result), epsilon_after - epsilon_before, epsilon_after,
                 options.epsilon_budget);
    summary.task_id = o.task_id;
    summary.outcome = outcome_name(o.result);
    summary.epsilon_spent = epsilon_after - epsilon_before;
    summary.ledger_epsilon = epsilon_after;
    return CheckInEnd::kOutcome;
  }
  if (unreachable) return CheckInEnd::kNetworkError;
  std::fprintf(options.log, "outcome: no task offered in %u check-ins\n", options.max_sessions);
  summary.outcome = "no task";
  summary.ledger_epsilon = ledger_epsilon(ledger);
  return CheckInEnd::kOutcome;
}

}  // namespace drift_monitor
