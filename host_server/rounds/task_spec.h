// TaskSpec: one task the server runs — the Task message the planner filled, its TaskData words,
// the admission window and phase time-out, the estimator that turns the aggregate into the
// published result JSON (or, TAGG, where the aggregate goes instead), the check of a clear-path
// report's words, and the task that follows it, if any. Errors: none (checked by the
// Coordinator). Memory: data.size() words. Paper: none.
#ifndef FEDSTAT_HOST_ROUNDS_TASK_SPEC_H_
#define FEDSTAT_HOST_ROUNDS_TASK_SPEC_H_

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fedstat/v1/envelope.pb.h"
#include "sdk/base/random_bits.h"

namespace fedstat {
namespace host {

struct TaskSpec {
  fedstat_v1_Task task = fedstat_v1_Task_init_zero;
  std::vector<uint64_t> data;  // TaskData words (task.data_words is set to data.size())
  uint32_t admission_seconds = 60;
  uint32_t phase_timeout_seconds = 60;
  // DIST: after a restart (TaskRound::recover), the members of a running secure aggregation that
  // have not reconnected within this many seconds are dropouts of its current stage, as if their
  // connections had closed: a dropout the server saw before the crash left no trace in the store.
  uint32_t reconnect_grace_seconds = 30;
  // DIST: the fleet CA's public key (65 bytes, SEC1 uncompressed; the server config's
  // ca_public_key) — with it the round runs a signed session (SecAggStart.signed_keys, protocol
  // 5: certified keys only, the consistency stage before the reveals; rounds/secagg_phase.h);
  // without it an unsigned one. Ignored by the other trust models.
  std::optional<std::array<uint8_t, 65>> secagg_ca_public_key;
  // The aggregate (mod 2^bits) and how many devices it sums → the result JSON, drawing any
  // central noise from `noise` and from nothing else. The round passes a stream of a secret seed
  // it drew from the CSPRNG and stored (durably) before estimating, once per aggregate: a re-run
  // after a crash or power cut publishes the same bytes, never a second noise draw (TaskRound).
  std::function<std::string(const std::vector<uint64_t>& sum, uint32_t contributors,
                            RandomBits& noise)>
      estimate;
  // Clear path (TRUSTED, TAGG, NONE): why a device's complete report is one no honest device of
  // the task's kind sends — a word beyond the kind's largest honest word (tasks/report_bounds.h)
  // — naming the word; nothing when it is honest. Null: only each word < 2^bits is checked.
  std::function<std::optional<std::string>(const std::vector<uint64_t>& report)> check_report;
  // TAGG (host_server/tagg/): instead of `estimate`, the exact aggregate goes to the trusted
  // aggregator — handed over when the round completes and again after every restart until the
  // result is in the store (the round's events rebuild the same sum). The round then leaves the
  // task in state "awaiting_tagg"; whoever receives the TAgg's noised result publishes it.
  std::function<void(const std::vector<uint64_t>& sum, uint32_t contributors)> forward;
  std::string definition_json;  // stored with Store::put_task
  // A task that follows this one (a two-stage kind): once this task's result is published —
  // and again after a restart, from the stored result — the Coordinator asks for the follow-up's
  // spec and runs it as one of its tasks. Never asked when this task aborted.
  std::function<TaskSpec(const std::string& result_json, uint64_t now)> follow_up;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_ROUNDS_TASK_SPEC_H_
