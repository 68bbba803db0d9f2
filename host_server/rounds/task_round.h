// TaskRound: one task's round, without I/O — admission (TaskReply accept/decline up to
// max_clients or until admission_seconds after the task opened), then either the clear Report
// path (TrustedSum) or secure aggregation (SecAggPhase), then the outcome: the result published
// (estimate → Store::put_result, state "completed") or the round aborted (state "aborted"), and
// RoundOutcome to every connected member. A TAGG task (TaskSpec::forward) publishes nothing
// here: its aggregate is forwarded and it stays "awaiting_tagg" until the TAgg's result is in.
//
// Persist, then answer: an accepted device message is appended to the store (kDeviceMessage,
// its encoded Envelope) before anything that depends on it is sent; a stage change is appended
// (kTransition, "<word> <unix seconds>") before its messages go out. replay() feeds stored events
// back through the same handlers with sends and appends muted, so a restarted server continues
// the round; stages close during replay only where a kTransition says they did. An accepted
// ClientHello is stored too (under the task it was offered); replay notes who checked in.
//
// One release per aggregate (issue 39 item 2). Before estimating, the round draws a 256-bit noise
// seed from the CSPRNG and appends it as a server note ("noise_seed <hex>"; the store commits a
// note, and the result, so that it survives a power cut: store.h); the estimator draws its
// central noise from a SeededStream of that seed (AES-256-CTR: as unpredictable as the CSPRNG to
// anyone without the store). A replay that finds the seed and no result (the result lost)
// estimates the same aggregate with the same seed and publishes the same bytes; a published
// result is kept. A sparse DIST round's ring seed (sdk/secagg/graph.h) is drawn and stored the
// same way ("graph_seed <hex>") when admission ends, before SecAggStart commits to it: a
// restarted server opens the seed it committed to. The result is put (Store::put_result) before
// anything shows it: the log line,
// the state "completed", the RoundOutcome. The seed is as secret as the store, which holds every
// clear-path device's exact words anyway.
//
// min_clients (issue 39 item 4): admission, and each secure-aggregation stage that decides who is
// in the sum (keys, shares, masked input: U1 ⊇ U2 ⊇ U3), abort the round when fewer than
// min_clients remain; the clear path when fewer complete their reports. The reveals stage needs
// `threshold` only: the sum is over U3, whoever reveals.
//
// Clear-path bounds (issue 39 item 7): a report whose words no honest device of the kind sends
// (TaskSpec::check_report) is refused when its last chunk arrives (kOutOfRange, naming the word,
// and the connection closed); it is never summed, the device is out of the round (its other
// messages and a resume are refused, it is not waited for, it gets no RoundOutcome), and a server
// note "report_refused <why>" under its id records it (replayed; the status page counts them).
//
// Errors: a refused message returns a Refusal (messages.h) and changes nothing — the wrong task
// or trust path (kFailedPrecondition), a non-member (kPermissionDenied), a duplicate reply
// (kAlreadyExists), admission over (RETRY_LATER, kResourceExhausted), the round over
// (TASK_CLOSED, kFailedPrecondition), TrustedSum's and SecAggPhase's checks; a DIST member
// whose message excludes it (secagg_phase.h) gets TASK_CLOSED naming the reason and is closed,
// the exclusion stored as a server note ("excluded <reason>", replayed by recover) and logged
// ("task T: device D excluded from secure aggregation: <reason>"). A share found off a verified
// secret's polynomial when the reveals close excludes nobody: a server note per share
// ("disputed <owner> <self|key> <text>", client id = the holder; not replayed) and a log line per
// holder ("task T: disputed: the share(s) device H revealed of device V's … "). Store failures
// propagate as exceptions. Memory: TrustedSum's or SecAggPhase's, plus a few words per device.
// Paper: Bonawitz et al. 2017 §4 (DIST); none otherwise.
#ifndef FEDSTAT_HOST_ROUNDS_TASK_ROUND_H_
#define FEDSTAT_HOST_ROUNDS_TASK_ROUND_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "host_server/rounds/messages.h"
#include "host_server/rounds/secagg_phase.h"
#include "host_server/rounds/task_spec.h"
#include "host_server/rounds/trusted_sum.h"
#include "host_server/store/store.h"
#include "sdk/base/seeded_stream.h"

namespace fedstat {
namespace host {

// How a round reaches its devices: the Coordinator maps a client id to its live connection.
struct RoundLinks {
  std::function<void(uint64_t client, const fedstat_v1_Envelope&)> send;
  std::function<void(uint64_t client)> close;
  std::function<void(const std::string&)> log;
};

// The stored state of a TAGG task whose round completed and whose noised result has not come
// back from the TAgg yet (TaskSpec::forward).
inline constexpr char kAwaitingTagg[] = "awaiting_tagg";

class TaskRound {
 public:
  enum class Stage { kAdmission, kReports, kSecAgg, kCompleted, kAborted };

  TaskRound(TaskSpec spec, Store& store, RoundLinks links);

  uint32_t id() const { return spec_.task.task_id; }
  Stage stage() const { return stage_; }
  bool finished() const { return stage_ == Stage::kCompleted || stage_ == Stage::kAborted; }
  bool dist() const { return spec_.task.trust == fedstat_v1_TrustModel_DIST; }
  // The longest a member may wait on the server between two of its messages: admission closing
  // or a phase's time-out, plus kWaitSlackSeconds for the once-a-tick, whole-second clock.
  static constexpr uint32_t kWaitSlackSeconds = 10;
  uint32_t longest_wait_seconds() const {
    return std::max(spec_.admission_seconds, spec_.phase_timeout_seconds) + kWaitSlackSeconds;
  }
  const SecAggPhase* secagg() const { return secagg_.get(); }

  // A fresh task: appends "open <now>".
  void open(uint64_t now);
  // Rebuilds the round from the store's events (muted), then gives the current stage a fresh
  // time-out from `now`. DIST, secure aggregation running: its members are awaited for
  // reconnect_grace_seconds; those not back by then are dropouts of the stage (on_tick).
  // Throws std::runtime_error naming the task for an event it cannot replay: a device message that
  // does not decode, an unknown transition, one that does not fit the stage reached (a second
  // "open", a stage closed twice or out of order), or a message or transition before the task's
  // "open", or no "open" at all (a history this server did not write: its first event is always
  // "open").
  void recover(const std::vector<StoredEvent>& events, uint64_t now);
  // A task already over in the store (state "completed" or "aborted").
  void mark_finished(bool completed);

  // Check-in: may `client` be offered this task? (RETRY_LATER when full or it already replied.)
  std::optional<Refusal> can_offer(uint64_t client) const;
  bool replied(uint64_t client) const { return replies_.count(client) != 0; }
  // Stores the accepted ClientHello, then sends Task + TaskData to a newly checked-in client.
  void offer(uint64_t client, const fedstat_v1_Envelope& hello);
  // May `client`, which replied, resume? TASK_CLOSED when the round is over, it declined, its
  // report was refused (out of bounds), or (DIST) secure aggregation runs and it is not among the
  // current stage's members (it dropped out of an earlier stage: it has nothing left to send).
  std::optional<Refusal> can_resume(uint64_t client) const;
  // A member reconnected: Task + TaskData again, then an Ack of the words stored (clear path),
  // or (DIST, secure aggregation running) SecAggResume{stage, messages held from it} and the
  // current stage's opening messages again; (DIST, still admitting) nothing more until
  // SecAggStart. It is no longer a dropout of the current stage.
  void resume(uint64_t client, const fedstat_v1_Envelope& hello);
  // A device resumes a contribution for this task, but the server holds no TaskReply from it (a
  // crash lost it before it was stored). Its resume is its acceptance: if admission is still
  // open with room, a TaskReply{accept} is stored for it, then Task + TaskData (+ Ack(0) on the
  // clear path; DIST: SecAggStart follows when admission closes) are sent. Refused (nothing
  // stored) as a TaskReply would be: admission over, or no room; and REFUSED kPermissionDenied
  // when the task was never offered to it (no ClientHello of it stored under the task): a device
  // does not pick its task by naming it (issue 39 item 10).
  std::optional<Refusal> admit_resumed(uint64_t client, const fedstat_v1_Envelope& hello,
                                       uint64_t now);
  // A message from `client` for this task (TaskReply, Report, SecAgg*).
  std::optional<Refusal> on_message(uint64_t client, const fedstat_v1_Envelope& envelope,
                                    uint64_t now);
  void on_disconnect(uint64_t client, uint64_t now);
  void on_tick(uint64_t now);
  // Devices whose report was refused for a word out of the kind's bounds (this round, replayed).
  size_t reports_refused() const { return refused_reports_.size(); }

 private:
  std::optional<Refusal> check_and_apply(uint64_t client, const fedstat_v1_Envelope& e);
  void persist_message(uint64_t client, const fedstat_v1_Envelope& e);
  void transition(const std::string& word, uint64_t now);  // append, then apply
  void apply_transition(const std::string& word, uint64_t at);
  void close_admission();
  void close_secagg_stage();
  // Stores (kServerNote "excluded <reason>") and logs the SecAggPhase's exclusions from `from` on.
  void record_exclusions(size_t from);
  // Stores (kServerNote "disputed …", one batch) and logs the SecAggPhase's disputes from `from`.
  void record_disputes(size_t from);
  void finish_reports();
  void complete(const std::vector<uint64_t>& sum, uint32_t contributors);
  // The aggregate's noise seed: the stored one, else one drawn from the CSPRNG and stored first.
  Seed256 noise_seed();
  // The seed `name` ("noise_seed" or "graph_seed") held in `held`: the one read from the store,
  // else drawn from the CSPRNG and stored as a note "<name> <hex>" first.
  Seed256 stored_seed(const char* name, std::optional<Seed256>& held);
  // Refuses `client`'s report as out of bounds (`why`): stored as a note, never summed.
  Refusal refuse_report(uint64_t client, const std::string& why);
  // A stored server note, replayed (recover): a refused report; a seed is read before the replay.
  void apply_note(const StoredEvent& event);
  void abort(const std::string& reason);
  void advance(uint64_t now);  // closes what may close now
  void send(uint64_t client, const fedstat_v1_Envelope& e);
  void send_opening(uint64_t member);
  void rejoined(uint64_t client);  // back on a live connection: not a dropout, not awaited
  size_t accepted() const { return accepted_; }  // devices that accepted the task
  std::vector<uint64_t> members_to_notify() const;

  TaskSpec spec_;
  Store& store_;
  RoundLinks links_;
  bool replaying_ = false;
  bool opened_ = false;  // "open" applied (once: a task opens once)
  Stage stage_ = Stage::kAdmission;
  uint64_t opened_at_ = 0, stage_started_ = 0;
  std::map<uint64_t, bool> replies_;    // client → accepted
  size_t accepted_ = 0;                 // the true entries of replies_
  std::set<uint64_t> offered_;          // got the Task, not yet replied
  std::set<uint64_t> checked_in_;       // its ClientHello stored under this task (ever offered it)
  std::set<uint64_t> refused_reports_;  // clear path: its report refused (out of bounds)
  std::optional<Seed256> noise_seed_;   // the aggregate's, once drawn or read from the store
  std::optional<Seed256> graph_seed_;   // a sparse DIST round's ring seed (sdk/secagg/graph.h)
  bool disputes_stored_ = false;        // a replay found this round's "disputed" notes stored
  std::set<uint32_t> dropped_;          // DIST: connection lost in this session
  std::set<uint32_t> awaited_;          // DIST: not reconnected since a restart ...
  uint64_t awaited_until_ = 0;          // ... and dropouts from this time on (0: not yet counting)
  TrustedSum trusted_;
  std::unique_ptr<SecAggPhase> secagg_;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_ROUNDS_TASK_ROUND_H_
