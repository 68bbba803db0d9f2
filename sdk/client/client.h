/// @file
/// Client: the one object an app holds to take part in fedstat tasks. run_session() runs ONE task
/// session over a FrameChannel, exactly in the message order of docs/protocol.md:
///   ClientHello → Task (or ServerError) → TaskData × ⌈data_words/64⌉ → checks → TaskReply →
///   TRUSTED/TAGG/NONE: Report chunks (≤ 64 words), each answered by its Ack, at most
///   ClientConfig::report_window of them unacknowledged (1: each Ack before the next chunk);
///   DIST: secure aggregation (sdk/secagg/secagg_client.h) → RoundOutcome.
/// Order of the checks, each ending the session with a decline (TaskReply{accept = false}):
///   1. the task's fields (validate_task, contribution.h: kInvalidArgument naming the field, or
///      kUnimplemented, also for a kind or DIST the Client was not built with — task_kinds.h;
///      a sparse DIST graph judged at the policy's floor, TaskPolicy::min_assumed_dropout_ppm and
///      min_assumed_corrupt_ppm; reason REFUSED);
///   2. the app's task policy (ClientConfig::task_policy, task_policy.h): first the task's kind
///      (answered_kinds), then its trust model and what the ledger would be charged,
///      device_spend(task, kinds, assumed_honest_shares) (an accountant's refusal there: its
///      kInvalidArgument, REFUSED); outside it kDeclinedPolicy, reason POLICY,
///      SessionOutcome::policy_refusal naming the rule;
///   3. an interrupted round of this task recorded before a reboot (kDeclinedInterrupted, reason
///      TASK_CLOSED); then a task the ledger still holds a spend of (BudgetLedger::holds_task:
///      answered, or declined after the charge, in an earlier session — the same Task offered
///      again by a malicious server, or by an honest one whose decline was lost) —
///      kDeclinedAlreadyCharged, reason TASK_CLOSED, nothing charged again
///      and nothing computed: declining it again tells the server nothing new, and answering it
///      again would be a second release of the same data. (A round the channel cut off is
///      resumed before any of this, from ClientHello.resume_task_id; a heterogeneity task's two
///      stages carry two task ids, each charged once.) A task declined at check 4–6 or for its
///      budget was not charged, and is checked afresh when offered again; one declined after its
///      charge (check 7, or DEVICE_FAILURE) is not answered while the ledger holds that spend
///      (until a charge after its window drops it);
///   4. memory_bytes(task, 0) — the task's buffers and fixed scratch, whatever the app holds — >
///      the memory given (kDeclinedMemory, INSUFFICIENT_MEMORY);
///   5. the TaskData (chunks in order for this task, else kFailedPrecondition with no reply;
///      content per validate_task_data, else its status and REFUSED);
///   6. the ledger is charged device_spend(task, ...) (contribution.h: at least the task's (ε, δ),
///      more when the noise gives less; DIST at the shares the policy assumes honest; DIST
///      HETEROGENEITY: the stage's RDP curve, composed with the other stage's in the ledger; trust
///      NONE — only when the policy accepts it —: nothing), the same spend the policy weighed — a
///      refusal is kDeclinedBudget, BUDGET_EXHAUSTED, the ledger unchanged;
///   7. the app's data, after the charge and keeping it: none for the kind (kDeclinedNoData), data
///      that does not fit the task (validate_examples / validate_unit_vector's status: e.g.
///      kFailedPrecondition for fewer examples than calibrated), or memory_bytes(task,
///      local_size) > the memory given (kDeclinedMemory) — each with reason NO_DATA. After the
///      charge the device can also fail on its own: storing the round marker (kUnavailable) or
///      building the contribution (its error) declines DEVICE_FAILURE, and that charge is kept
///      too (the build may have read the data; the ledger cannot tell).
/// Checks 1–6 depend only on the task, the TaskData, the app's configuration (its policy, its
/// memory, which the ClientHello announces) and its ledger: those declines are free, and 1–4 come
/// at once, the TaskData left unread. Check 7 depends on the app's data, and a free answer to it
/// would let a server read the data off declines (lowering examples_per_client one task at a
/// time reads a device's example count): so it comes after the TaskData is read and the ledger
/// charged, as an acceptance does, and every data decline sends the same reason (NO_DATA), so
/// each charged session tells the server one bit. Trust NONE charges nothing, so its data
/// declines stay free (the app opted in to exact words). Only then the Client records the round,
/// computes the contribution, accepts (TaskReply) and sends it. What a server still sees: the time
/// from the last TaskData to the TaskReply. It tells more than the reply's bit: an accept builds
/// its contribution first, and how long that takes depends on the data's size (a model update's
/// training time grows with the examples, a data-shift task's stability histogram and sketch
/// with the histogram's distinct items), so the delay can say roughly how much data an accepting
/// device holds (docs/protocol.md, "Threat model": what still shows). The charge covers the
/// answer, not this timing channel; nothing pads the build to a fixed time.
/// The charge makes data declines costly to provoke, but it also lets a server drain a device's
/// budget with tasks of a kind it holds no data for, each charged and declined NO_DATA (second
/// review of issue 39, B1): an app that never answers a kind says so in
/// TaskPolicy::answered_kinds (task_policy.h, rule 0), which declines those tasks for free at
/// check 2.
///
/// Errors: a ServerError ends the session with its status code (detail: last_server_detail()); a
/// message of the wrong kind, for another task, or an Ack with the wrong offset is
/// kFailedPrecondition, and the Client sends nothing more that session (never a reveal on a
/// confused state); channel errors (kUnavailable, kDeadlineExceeded after receive_timeout_ms, a
/// malformed frame) are returned as they are. A RoundOutcome{completed = false} or SecAggAbort
/// at any point is the outcome kAborted. The channel is closed when run_session returns.
///
/// Persistence across a reboot (platform::save_blob, blob ClientConfig::round_blob_name): the
/// round marker {task id, secagg session, stage, U2 and U3 bitmaps}.
///   * Written when the Client accepts a task (stage "accepted"), before TaskReply is sent.
///   * DIST: rewritten with stage "unmasking" and the U2/U3 rosters — which fix, for each peer,
///     which secret it will reveal (U3: self-mask share, U2 \ U3: key share) — before the first
///     SecAggReveal is sent; if that write fails, nothing is revealed.
///   * Removed when the round ends (RoundOutcome or SecAggAbort received).
/// A lost channel, without a reboot, is resumed, for every trust model: when a session ends with
/// kUnavailable or kDeadlineExceeded after the contribution was built, the next session's
/// ClientHello names the task in resume_task_id; the server answers Task + TaskData (the Task must
/// equal the one reported for, byte for byte, else kFailedPrecondition), then
///   * TRUSTED/TAGG/NONE: an Ack of the words it holds, and the Client sends the rest of the SAME
///     contribution (kept in its memory: no noise drawn again, nothing charged again);
///   * DIST: SecAggResume{round, held} and that round's opening again (or, the server still
///     admitting, round 0's SecAggStart later). The Client's SecAggClient, kept in memory, checks
///     what it already holds against what arrives — the same U1, shares, U2 and U3, else
///     kFailedPrecondition and nothing more is sent — and sends only the messages of that round
///     the server does not hold, the same bytes again: the same keys, one masked input (masked
///     once, for the first U2) and reveals for the first U3 only, so a resume never reveals both
///     kinds of secret for one peer. A signed round (ClientConfig::credential) has one more
///     server round: SecAggResume.round 3 is the consistency round (U3 again; the device sends
///     its SecAggConsistency unless held = 1, the same bytes, then takes the forwarded ones) and
///     4 the reveals (U3, the forwarded SecAggConsistency messages and the SecAggRoster of round
///     4 that ends them, again; then the reveals not held); unsigned rounds keep 3 = reveals;
/// and waits for the RoundOutcome. A ServerError instead (the round is over, or the device was
/// dropped from it), the task's deadline passing, or a new init() ends the pending round and wipes
/// it (the contribution, the peers' shares, the secure-aggregation secrets). While a round is
/// pending the first bytes of the Client's memory belong to it (8·vector_length + 8·data_words +
/// [DIST] secagg_client_memory_bytes(R), R = roster_size(task)): the app must not reuse them (a
/// CRC-32 taken when the channel was lost is checked before anything is sent again; a mismatch
/// drops the round, kDataLoss, nothing sent). A rebooted device does not resume
/// (ClientHello.resume_task_id is 0): init() reads the marker and the next session offered that
/// task declines it (kDeclinedInterrupted), so a device that rebooted mid-round drops out cleanly
/// and never sends shares or reveals for that round again. A marker stays until another task is
/// accepted. A corrupt marker fails init() (kDataLoss, fail closed); forget_interrupted_round()
/// deletes it deliberately.
///
/// @memory sizeof(Client) (two Envelopes, the Task, the SecAggClient, the marker, the task policy
/// and the task's ledger spend: 3,808 bytes on a 64-bit host, with ClientConfig::credential) plus
/// the caller memory of memory_bytes(task, local_size), 8-byte aligned:
///     8·L (the contribution) + 8·data_words (TaskData) + [DIST] secagg_client_memory_bytes(R)
///     + scratch_bytes(task, local_size) (contribution.h: sketch, points, trainer; none for a
///     DIST data-shift task, whose L = B buckets are built in place)
/// where R, the roster a device holds, is roster_size(task) = secagg::neighbourhood_size(
/// max_clients, secagg_degree): k + 1 entries for a sparse graph of degree k (SecAgg+: its k
/// neighbours and itself, O(log n) — whatever the round's size), max_clients for the complete
/// graph (208 bytes each on a 64-bit host, secagg_client.h),
/// and local_size is the app's histogram capacity (DATA_SHIFT) or example count
/// (MODEL_UPDATE), 0 otherwise (KL_ANSWERS, HETEROGENEITY). Stack (Cortex-M4, -Os, own frames):
/// run_session's deepest frame 496 bytes (after_task), a builder under 1 KB (a ShiftSketch object,
/// a RandomBits, a noise sampler), plus the SDK routines they call; before the builder runs, the
/// ledger charge (charge_ledger 248 bytes, device_spend 376, BudgetLedger::charge 472 + 248); the
/// charge of a DIST MODEL_UPDATE (device_spend → tasks::model_update_epsilon) holds the per-batch
/// sensitivities for up to 256 batches, 6 KiB (a host-side figure: not yet measured on the M4).
/// @paper none (the protocol around 000–004's device routines and Bonawitz et al. 2017).
#ifndef FEDSTAT_SDK_CLIENT_CLIENT_H_
#define FEDSTAT_SDK_CLIENT_CLIENT_H_

#include <stddef.h>
#include <stdint.h>

#include "fedstat/v1/envelope.pb.h"
#include "sdk/base/arena.h"
#include "sdk/base/random_source.h"
#include "sdk/base/result.h"
#include "sdk/base/span.h"
#include "sdk/client/client_data.h"
#include "sdk/client/frame_channel.h"
#include "sdk/client/task_kinds.h"
#include "sdk/client/task_policy.h"
#include "sdk/credential/device_credential.h"
#include "sdk/histogram/sparse_histogram.h"
#include "sdk/privacy/budget_ledger.h"
#include "sdk/secagg/secagg_client.h"
#include "sdk/tasks/logistic_trainer.h"
#include "sdk/wire/envelope_codec.h"

namespace fedstat {
namespace client {

/// The most Report chunks ClientConfig::report_window lets be in flight.
constexpr uint8_t kMaxReportWindow = 16;

/// The largest device id (ClientConfig::device_id lies in [1, kMaxDeviceId]): also the
/// secure-aggregation client id, and that has 31 bits.
constexpr uint64_t kMaxDeviceId = uint64_t{1} << 31;

/// The Client's settings (copied by init()).
struct ClientConfig {
  uint64_t device_id = 0;               ///< [1, 2^31]: also the secure-aggregation client id
  uint32_t receive_timeout_ms = 30000;  ///< per received message
  /// Wall-clock seconds for the ledger (sdk/privacy/budget_ledger.h: an RTC or network time);
  /// required.
  uint64_t (*wall_clock_seconds)() = nullptr;
  /// The platform blob that holds the round marker; must outlive the Client.
  const char* round_blob_name = "fedstat-client-round";
  /// Report chunks sent before the Client waits for the oldest one's Ack, [1, kMaxReportWindow].
  /// 1 (stop-and-wait) suits every transport, a microcontroller's UART included. Over TCP a
  /// larger window sends a report of n chunks in about n / window round trips instead of n (a
  /// 40-chunk sketch: 8 gives 5); the server stores and acknowledges each chunk in order, so
  /// what is sent, stored and resumed after a lost channel is the same, and no more than the
  /// window's chunks are ever unacknowledged.
  uint8_t report_window = 1;
  /// What the app accepts (task_policy.h): trust models, the largest ε and δ charged per task,
  /// the smallest ε of a TRUSTED/TAGG task. The default accepts TRUSTED, TAGG and DIST tasks
  /// charged at most (10, 1e-5), TRUSTED/TAGG ones at least ε = 0.1; NONE tasks only when the
  /// app adds kAcceptNone.
  TaskPolicy task_policy;
  /// The device's credential for signed DIST rounds (protocol 5, issue 42;
  /// sdk/credential/device_credential.h: its certificate from the fleet CA and its ECDSA P-256
  /// key), or nullptr (the default) for none. Not copied: the app keeps it alive and unchanged
  /// while the Client may run a round, and checks it once when the device is provisioned
  /// (credential::check_credential). With a credential the device takes part only in signed
  /// secure aggregation (SecAggStart.signed_keys): it signs its keys, agrees keys only with
  /// certified peers, signs its view of U3 and reveals only after `threshold` members' consistency
  /// signatures verified (secagg_client.h). A DIST round whose session is not signed ends that
  /// session with kPermissionDenied ("joins signed sessions only"; the device has accepted and
  /// been charged by then — the Task does not say whether its session is signed — and sends
  /// nothing more: the server counts it a dropout). Without a credential a signed session ends
  /// with kFailedPrecondition ("no device credential"). Trusted, TAGG and NONE tasks do not use
  /// it. Client::set_credential changes it between rounds (the C ABI's
  /// fedstat_client_set_credential; the Python binding does not set it yet).
  const credential::DeviceCredential* credential = nullptr;
};

/// How a session ended when it did not end with an error.
enum class SessionResult : uint8_t {
  kNoTask,               ///< ServerError RETRY_LATER (or TASK_CLOSED) before a task: check in later
  kVersionTooOld,        ///< ServerError VERSION_TOO_OLD: the SDK must be updated
  kDeclinedInterrupted,  ///< this task's round was interrupted by a reboot: not rejoined
  kDeclinedNoData,       ///< the app holds no data for the task's kind (charged: check 7)
  /// memory_bytes(task, local_size) > the memory given to init() (free when it is the task's
  /// fixed part, check 4; charged when the app's data size makes it so, check 7)
  kDeclinedMemory,
  kDeclinedBudget,  ///< the privacy ledger refused the task's (ε, δ)
  kCompleted,       ///< RoundOutcome{completed = true}
  kAborted,         ///< RoundOutcome{completed = false} or SecAggAbort
  kDeclinedPolicy,  ///< outside ClientConfig::task_policy (SessionOutcome::policy_refusal)
  /// the ledger already holds a spend of this task (check 3): declined TASK_CLOSED, free
  kDeclinedAlreadyCharged,
};

/// The result of a session that ended without an error.
struct SessionOutcome {
  SessionResult result = SessionResult::kNoTask;  ///< how the session ended
  uint32_t task_id = 0;                           ///< 0 when no task was offered
  /// kDeclinedPolicy: the rule that refused the task (policy_refusal_text); else kNotRefused.
  PolicyRefusal policy_refusal = PolicyRefusal::kNotRefused;
};

/// The round marker persisted across reboots (see the file description). Blob: "FCR1", task id
/// (LE32), stage, session (LE64), U2 bitmap, U3 bitmap (128 bytes each; zeros before they are
/// known).
struct RoundMarker {
  uint32_t task_id = 0;  ///< the task whose round this is (0: none)
  /// kRoundAccepted, or kRoundUnmasking (the rosters fix what is revealed about whom)
  uint8_t stage = 0;
  uint64_t session = 0;  ///< the task's secure-aggregation session
  uint8_t u2[sizeof(fedstat_v1_SecAggRoster_members_t::bytes)] = {};  ///< the U2 roster bitmap
  uint8_t u3[sizeof(fedstat_v1_SecAggRoster_members_t::bytes)] = {};  ///< the U3 roster bitmap
};
/// RoundMarker::stage: the Client accepted the task (written before TaskReply).
constexpr uint8_t kRoundAccepted = 1;
/// RoundMarker::stage: DIST unmasking; U2 and U3 are recorded (written before the first reveal).
constexpr uint8_t kRoundUnmasking = 2;

/// The one object an app holds to take part in fedstat tasks (see the file description).
class Client {
 public:
  /// The caller memory the task needs (the formula of the file description), for an app
  /// histogram capacity or example count `local_size`.
  /// @errors kInvalidArgument or kUnimplemented: validate_task refuses the task.
  /// kResourceExhausted: the size does not fit in size_t.
  static Result<size_t> memory_bytes(const fedstat_v1_Task& task, size_t local_size = 0);
  /// memory_bytes for a Client built with `kinds`.
  /// @errors memory_bytes's; kUnimplemented also for a kind, or DIST, `kinds` lacks.
  static Result<size_t> memory_bytes(const fedstat_v1_Task& task, size_t local_size,
                                     const TaskKinds& kinds);
  /// The roster entries a DIST task's device holds: secagg::neighbourhood_size(max_clients,
  /// secagg_degree) — k + 1 (its neighbourhood) for a sparse graph of degree k < max_clients,
  /// else max_clients. Reads the fields only (0 is not refused: no roster).
  /// @errors none.
  static uint32_t roster_size(const fedstat_v1_Task& task);
  /// Deletes a recorded interrupted round (the app's deliberate choice, e.g. after kDataLoss);
  /// OK when there is none.
  /// @errors platform::remove_blob's errors other than kNotFound: kInvalidArgument for a name
  /// it refuses, kUnavailable when storage fails.
  static Status forget_interrupted_round(const char* round_blob_name);
  /// Sets ClientConfig::report_window for the sessions that follow.
  /// @errors kInvalidArgument: `window` outside [1, kMaxReportWindow] (the window is unchanged).
  Status set_report_window(uint8_t window);
  /// Sets ClientConfig::task_policy for the tasks offered from the next session on (a round
  /// already accepted is resumed under the policy it was accepted with).
  /// @errors kInvalidArgument: validate_task_policy refuses `policy` (the policy is unchanged).
  Status set_task_policy(const TaskPolicy& policy);
  /// Sets ClientConfig::credential (nullptr: none) for the rounds started from the next session
  /// on; not copied, not checked (the app checks it once: credential::check_credential). A round
  /// under way keeps the credential it started with, so this is refused while one is pending.
  /// @errors kFailedPrecondition: a round is pending (pending_report_task() != 0: the next
  /// session resumes it); the credential is unchanged.
  Status set_credential(const credential::DeviceCredential* credential);

  /// A Client that takes part in nothing until init().
  Client() = default;
  Client(const Client&) = delete;             ///< Not copyable.
  Client& operator=(const Client&) = delete;  ///< Not copyable.

  /// Sets the Client up: `memory` (8-byte aligned) is where rounds are computed, and the round
  /// marker is read from storage. Drops a report held for a resume. The references must
  /// outlive the Client.
  /// @errors kInvalidArgument: device id outside [1, 2^31], no wall clock, no blob name, memory
  /// not 8-byte aligned, a report window outside [1, kMaxReportWindow], a task policy
  /// validate_task_policy refuses (the message names the field). kDataLoss: the stored round marker
  /// is corrupt (forget_interrupted_round drops it). Any other error of platform::load_blob (e.g.
  /// kUnavailable, or kInvalidArgument for a blob name it refuses). On every error the Client keeps
  /// its earlier settings.
  Status init(const ClientConfig& config, MutableByteSpan memory, ClientData& data,
              privacy::BudgetLedger& ledger, RandomSource& random) {
    return init(config, all_task_kinds(), memory, data, ledger, random);
  }
  /// init() for a Client that computes only `kinds` (task_kinds.h): tasks of other kinds, and
  /// DIST tasks when `kinds` holds no secure aggregation, are declined (REFUSED,
  /// kUnimplemented) before anything is charged; the code of what `kinds` does not name is not
  /// linked. The pointers in `kinds` are copied.
  /// @errors init()'s; kInvalidArgument also when `kinds` holds more than kMaxTaskKinds
  /// entries, a null entry or one kind twice.
  Status init(const ClientConfig& config, const TaskKinds& kinds, MutableByteSpan memory,
              ClientData& data, privacy::BudgetLedger& ledger, RandomSource& random);
  /// Runs ONE task session over `channel`, in the message order and with the checks of the file
  /// description; the channel is closed when it returns. A decline, a completed or aborted
  /// round, or no task is an outcome, not an error.
  /// @errors kFailedPrecondition: init() has not succeeded; the server sent a message of the
  /// wrong kind, for another task, TaskData out of order, an Ack with the wrong offset, a
  /// resumed Task other than the one reported for, or secure-aggregation messages that do not
  /// match (the Client then sends nothing more that session). kInvalidArgument or
  /// kUnimplemented: validate_task (declined, REFUSED) or the TaskData check refuses the task;
  /// also the accountant's refusal (device_spend). kInvalidArgument also when the app's examples
  /// or vector do not fit the task, and kFailedPrecondition when the app holds fewer examples
  /// than calibrated: both declined NO_DATA after the ledger was charged (the charge is kept:
  /// the file description, check 7). kDataLoss: the
  /// held report changed in memory before a resume (dropped, nothing sent). The channel's
  /// errors as they are (kUnavailable, kDeadlineExceeded after receive_timeout_ms, a malformed
  /// frame's kDataLoss, kOutOfRange, kInvalidArgument or kUnimplemented); after the contribution
  /// was built, kUnavailable or kDeadlineExceeded from the channel leave the round pending for
  /// the next session. A ServerError (other than RETRY_LATER, TASK_CLOSED or VERSION_TOO_OLD
  /// in answer to the ClientHello, which are outcomes): its status code (kInternal for a code out
  /// of range; detail in last_server_detail()). Errors of the ledger's charge other than
  /// kResourceExhausted, of storing the round marker (kUnavailable), of building the
  /// contribution (contribution.h) and of secure aggregation (secagg_client.h), as they are.
  /// kInternal: memory_bytes did not cover the round's buffers (a bug).
  Result<SessionOutcome> run_session(FrameChannel& channel);

  /// The ServerError detail that ended the last session ("" if none).
  const char* last_server_detail() const { return server_detail_; }
  /// The round interrupted before a reboot, as init() found it (task_id 0: none).
  const RoundMarker& interrupted_round() const { return interrupted_; }
  /// interrupted_round().task_id: the task whose round a reboot interrupted (0: none).
  uint32_t interrupted_task() const { return interrupted_.task_id; }
  /// A round the channel cut off (kUnavailable or kDeadlineExceeded after the contribution was
  /// built; any trust model): the next run_session resumes it. 0: none.
  uint32_t pending_report_task() const { return pending_ ? pending_task_.task_id : 0; }

 private:
  friend struct ClientSecureAggregation;  // client_secagg.cpp: the DIST rounds
  static constexpr size_t kMarkerBytes = 4 + 4 + 1 + 8 + 2 * sizeof(RoundMarker::u2);

  Result<SessionOutcome> session(FrameChannel& channel);
  Result<SessionOutcome> after_task(FrameChannel& channel);
  Status receive(FrameChannel& channel);
  // OK when the message is of `tag` (or `other_tag`); kAborted (round_ended_) on a RoundOutcome
  // {false} or SecAggAbort; kFailedPrecondition on any other kind.
  Status receive_expect(FrameChannel& channel, pb_size_t tag, pb_size_t other_tag = 0);
  void start_message(pb_size_t tag);  // out_ ← an empty envelope of kind `tag`
  Status send(FrameChannel& channel);
  Status decline(FrameChannel& channel, fedstat_v1_ErrorAction reason);
  // spend_ ← device_spend(task_), weighed against config_.task_policy: the rule that refuses
  // the task (declined POLICY) or kNotRefused, or device_spend's error (declined REFUSED).
  Result<PolicyRefusal> check_policy(FrameChannel& channel);
  // Charges spend_ (trust NONE: nothing): true when paid, false when the ledger refused it
  // (declined BUDGET_EXHAUSTED), or the error (declined as well).
  Result<bool> charge_ledger(FrameChannel& channel);
  Status receive_task_data(FrameChannel& channel, Span<uint64_t> data);
  Status send_report(FrameChannel& channel, Span<const uint64_t> contribution, size_t offset);
  Result<SessionOutcome> resume_report(FrameChannel& channel);
  Result<SessionOutcome> finish_round(FrameChannel& channel);
  // Where a DIST round (re)starts: the server's round and how many of this device's messages of
  // it the server holds; a fresh round starts at round 0 with nothing held.
  struct SecAggResumePoint {
    uint32_t round = 0;
    uint32_t held = 0;
    bool start_received = false;  // round 0's SecAggStart is already in in_
  };
  Status resume_secagg(FrameChannel& channel, Span<uint64_t> contribution);
  Status secagg_rounds(FrameChannel& channel, Span<uint64_t> contribution, SecAggResumePoint at);
  // Signed sessions: the consistency round between U3 and the reveals (client_secagg.cpp).
  Status consistency_round(FrameChannel& channel, SecAggResumePoint at);
  // The first bytes of the caller memory during a round (contribution, TaskData, [DIST] peers).
  struct RoundBuffers {
    Span<uint64_t> contribution;
    Span<uint64_t> data;
    Span<secagg::SecAggPeer> peers;
  };
  static Result<RoundBuffers> round_buffers(const fedstat_v1_Task& task, Arena& arena, bool fresh);
  uint32_t held_crc();  // CRC-32 of the pending round's contribution and peers
  Status save_marker();
  void clear_marker();
  void drop_pending();  // forgets AND wipes a held round (and a DIST round's secrets)
  // Wipes the builders' scratch after a build, up to the task's memory formula.
  void wipe_scratch(MutableByteSpan scratch, size_t task_memory);
  // The codes of a link that is gone (kUnavailable, kDeadlineExceeded) — from the channel they
  // mean the link; from storage or entropy kUnavailable means something else (channel_lost_).
  static bool is_link_loss(const Status& status);
  // Marks the session's channel as lost when a send or receive failed for want of the link.
  void note_channel_failure(const Status& status);

  ClientConfig config_;
  const TaskKindSupport* kind_table_[kMaxTaskKinds] = {};
  TaskKinds kinds_;  // its kinds span kind_table_
  MutableByteSpan memory_;
  ClientData* data_ = nullptr;
  privacy::BudgetLedger* ledger_ = nullptr;
  RandomSource* random_ = nullptr;
  bool ready_ = false;
  bool round_ended_ = false;   // a RoundOutcome{false} or SecAggAbort arrived
  bool channel_lost_ = false;  // the channel failed to send or receive (kUnavailable, deadline)
  bool pending_ = false;       // a clear-path report the channel cut off (pending_task_)
  fedstat_v1_Task pending_task_ = fedstat_v1_Task_init_zero;
  uint32_t pending_crc_ = 0;  // held_crc() when the channel was lost (resumed only if equal)
  fedstat_v1_Task task_ = fedstat_v1_Task_init_zero;
  DeviceSpend spend_;        // device_spend(task_), from check_policy to charge_ledger
  RoundMarker marker_;       // the current session's round
  RoundMarker interrupted_;  // the round found in storage by init() (task_id 0: none)
  uint8_t marker_bytes_[kMarkerBytes] = {};
  char server_detail_[sizeof(fedstat_v1_ServerError::detail)] = {};
  wire::Envelope in_ = fedstat_v1_Envelope_init_zero;
  wire::Envelope out_ = fedstat_v1_Envelope_init_zero;
  secagg::SecAggClient secagg_;
};

}  // namespace client
}  // namespace fedstat

#endif  // FEDSTAT_SDK_CLIENT_CLIENT_H_
