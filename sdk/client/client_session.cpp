// Client (client.h): one session in the order of docs/protocol.md — the ClientHello, a Task
// or a resumed report, the checks, the contribution built and sent (plainly or through
// secure aggregation), and the round's outcome.
#include "sdk/client/client.h"

#include <string.h>

#include "sdk/base/arena.h"
#include "sdk/base/crypto.h"
#include "sdk/base/random_bits.h"
#include "sdk/client/client_internal.h"
#include "sdk/client/contribution.h"
#include "sdk/secagg/graph.h"
#include "sdk/version.h"

namespace fedstat {
namespace client {

Result<SessionOutcome> Client::session(FrameChannel& channel) {
  start_message(fedstat_v1_Envelope_client_hello_tag);
  fedstat_v1_ClientHello& hello = out_.body.client_hello;
  hello.client_id = config_.device_id;
  copy_string(hello.sdk_version, sizeof(hello.sdk_version), FEDSTAT_VERSION_STRING);
  hello.memory_bytes = memory_.size();
  hello.word_bits = static_cast<uint32_t>(8 * sizeof(void*));
  // A report the channel cut off is resumed (client.h) until the task's deadline; a round
  // interrupted by a reboot is not.
  if (pending_ && pending_task_.deadline_unix_seconds != 0 &&
      config_.wall_clock_seconds() >= pending_task_.deadline_unix_seconds) {
    drop_pending();
  }
  hello.resume_task_id = pending_ ? pending_task_.task_id : 0;
  FEDSTAT_RETURN_IF_ERROR(send(channel));

  const Status answered = receive(channel);  // a ServerError: detail kept, pending report dropped
  if (in_.which_body == fedstat_v1_Envelope_server_error_tag) {
    // The action as a number: nanopb stores whatever the wire said in the enum field.
    switch (wire_enum_value(in_.body.server_error.action)) {
      case fedstat_v1_ErrorAction_RETRY_LATER:
      case fedstat_v1_ErrorAction_TASK_CLOSED:
        return SessionOutcome{SessionResult::kNoTask, 0};
      case fedstat_v1_ErrorAction_VERSION_TOO_OLD:
        return SessionOutcome{SessionResult::kVersionTooOld, 0};
      default:
        return answered;
    }
  }
  FEDSTAT_RETURN_IF_ERROR(answered);
  if (in_.which_body != fedstat_v1_Envelope_task_tag) {
    return failed_precondition("the server answered the ClientHello with neither Task nor error");
  }
  if (pending_) return resume_report(channel);
  memcpy(&task_, &in_.body.task, sizeof(task_));  // padding too: resume compares the bytes
  return after_task(channel);
}

Result<SessionOutcome> Client::resume_report(FrameChannel& channel) {
  // Byte-for-byte the task the contribution was computed for. Padding is compared too: equal
  // bytes always mean equal fields, so this can only fail closed (a spurious refusal drops the
  // report), never accept a different Task.
  if (memcmp(&in_.body.task, &pending_task_, sizeof(pending_task_)) != 0) {
    drop_pending();
    return failed_precondition("the server resumed a task other than the one reported for");
  }
  memcpy(&task_, &pending_task_, sizeof(task_));
  // The layout of after_task: the contribution first, then the TaskData (read, not used: the
  // contribution is not recomputed, so its noise is drawn and its ledger charged only once).
  Arena arena(memory_);
  Result<RoundBuffers> held = round_buffers(task_, arena, /*fresh=*/false);
  if (!held.ok()) return held.status();
  const Span<uint64_t> contribution = held.value().contribution;
  // The memory must still hold what was charged for: nothing else is ever sent in its place.
  if (held_crc() != pending_crc_) {
    drop_pending();
    return data_loss("the held report changed in the Client's memory: dropped, nothing sent");
  }
  FEDSTAT_RETURN_IF_ERROR(receive_task_data(channel, held.value().data));
  if (is_dist(task_)) {
    if (kinds_.secure_aggregation == nullptr) {  // init() drops a held round: not reached
      return failed_precondition("a DIST round to resume, but no secure aggregation");
    }
    FEDSTAT_RETURN_IF_ERROR(
        kinds_.secure_aggregation->run(*this, channel, contribution, /*resume=*/true));
    return finish_round(channel);
  }
  FEDSTAT_RETURN_IF_ERROR(receive_expect(channel, fedstat_v1_Envelope_ack_tag));
  const fedstat_v1_Ack& ack = in_.body.ack;
  if (ack.task_id != task_.task_id || ack.offset > contribution.size()) {
    return failed_precondition("the resumed round's Ack names another task or a bad offset");
  }
  FEDSTAT_RETURN_IF_ERROR(send_report(channel, contribution, ack.offset));
  return finish_round(channel);
}

Result<SessionOutcome> Client::finish_round(FrameChannel& channel) {
  const uint32_t id = task_.task_id;
  FEDSTAT_RETURN_IF_ERROR(receive_expect(channel, fedstat_v1_Envelope_round_outcome_tag));
  if (in_.body.round_outcome.task_id != id) {
    return failed_precondition("RoundOutcome for another task");
  }
  drop_pending();
  clear_marker();
  return SessionOutcome{
      in_.body.round_outcome.completed ? SessionResult::kCompleted : SessionResult::kAborted, id};
}

Result<SessionOutcome> Client::after_task(FrameChannel& channel) {
  const uint32_t id = task_.task_id;
  // The sparse graph judged at least at the policy's threat model (task_policy.h).
  secagg::SecAggThreatModel floor;
  floor.dropout_ppm = config_.task_policy.min_assumed_dropout_ppm;
  floor.corrupt_ppm = config_.task_policy.min_assumed_corrupt_ppm;
  const Status valid = validate_task(task_, kinds_, floor);
  if (!valid.ok()) {
    FEDSTAT_RETURN_IF_ERROR(decline(channel, fedstat_v1_ErrorAction_REFUSED));
    return valid;
  }
  // The app's policy, on what the ledger would be charged: before anything else is read.
  Result<PolicyRefusal> refusal = check_policy(channel);
  if (!refusal.ok()) return refusal.status();
  if (refusal.value() != PolicyRefusal::kNotRefused) {
    return SessionOutcome{SessionResult::kDeclinedPolicy, id, refusal.value()};
  }
  // A round a reboot interrupted, or a task the ledger already paid for (answered, or declined
  // after the charge) is not looked at again: declining it again says nothing new, and
  // answering it again would be a second release. The ledger's record depends on checks 1–6
  // only, never on the app's data.
  const bool interrupted = interrupted_.task_id != 0 && id == interrupted_.task_id;
  if (interrupted || ledger_->holds_task(id)) {
    FEDSTAT_RETURN_IF_ERROR(decline(channel, fedstat_v1_ErrorAction_TASK_CLOSED));
    return SessionOutcome{
        interrupted ? SessionResult::kDeclinedInterrupted : SessionResult::kDeclinedAlreadyCharged,
        id};
  }
  // The memory the task needs whatever the app holds (local size 0): its buffers and fixed
  // scratch. A function of the task and of the memory the ClientHello announced, so declining
  // here tells the server nothing it did not know: at once, the TaskData left unread, free.
  const Result<size_t> fixed = memory_bytes(task_, 0, kinds_);
  if (!fixed.ok() || fixed.value() > memory_.size()) {
    FEDSTAT_RETURN_IF_ERROR(decline(channel, fedstat_v1_ErrorAction_INSUFFICIENT_MEMORY));
    return SessionOutcome{SessionResult::kDeclinedMemory, id};
  }
  // Caller memory: contribution, TaskData, [DIST] peers, then the builders' scratch.
  Arena arena(memory_);
  Result<RoundBuffers> buffers = round_buffers(task_, arena, /*fresh=*/true);
  if (!buffers.ok()) return buffers.status();
  const Span<uint64_t> contribution = buffers.value().contribution;
  const Span<uint64_t> data = buffers.value().data;
  const MutableByteSpan scratch(memory_.data() + arena.used(), arena.remaining());

  FEDSTAT_RETURN_IF_ERROR(receive_task_data(channel, data));
  const Status data_valid = validate_task_data(task_, data, kinds_);
  if (!data_valid.ok()) {
    FEDSTAT_RETURN_IF_ERROR(decline(channel, fedstat_v1_ErrorAction_REFUSED));
    return data_valid;
  }

  // The ledger pays before the app's data is looked at; a refusal changes nothing.
  Result<bool> paid = charge_ledger(channel);
  if (!paid.ok()) return paid.status();
  if (!paid.value()) return SessionOutcome{SessionResult::kDeclinedBudget, id};
  // From here a decline depends on the app's data (whether it holds any, whether it fits the
  // task, how much scratch its size needs): it keeps the charge — else a server would read the
  // data off free declines, one task a session — and it says NO_DATA whatever the reason, so
  // a charged session tells the server one bit (answered or not). The app's outcome says which.
  const AppData app = kinds_.support_for(task_)->app_data(task_, *data_);
  if (!app.held) {
    FEDSTAT_RETURN_IF_ERROR(decline(channel, fedstat_v1_ErrorAction_NO_DATA));
    return SessionOutcome{SessionResult::kDeclinedNoData, id};
  }
  if (!app.usable.ok()) {
    decline(channel, fedstat_v1_ErrorAction_NO_DATA).ignore();
    return app.usable;
  }
  const Result<size_t> need = memory_bytes(task_, app.local_size, kinds_);
  if (!need.ok() || need.value() > memory_.size()) {
    FEDSTAT_RETURN_IF_ERROR(decline(channel, fedstat_v1_ErrorAction_NO_DATA));
    return SessionOutcome{SessionResult::kDeclinedMemory, id};
  }
  marker_ = RoundMarker();
  marker_.task_id = id;
  marker_.stage = kRoundAccepted;
  marker_.session = task_.secagg_session;
  const Status saved = save_marker();
  if (!saved.ok()) {
    decline(channel, fedstat_v1_ErrorAction_DEVICE_FAILURE).ignore();
    return saved;
  }
  // The contribution is built before the device accepts, so that from the TaskReply on a lost
  // channel leaves a round to resume (were the TaskReply itself lost, the resume is the
  // acceptance: TaskRound::admit_resumed) — never a second computation for the same task.
  RandomBits noise(*random_);
  Status built = build_contribution(task_, *data_, data, noise, scratch, contribution, kinds_);
  // The builder's scratch held un-noised intermediates of the app's data: wiped now, as far as
  // the task's memory formula reaches.
  wipe_scratch(scratch, need.value());
  if (built.ok() && is_dist(task_)) {  // validate_task: DIST only with secure aggregation
    built = kinds_.secure_aggregation->start(*this, buffers.value().peers);
  }
  if (!built.ok()) {
    // A builder that failed part-way (e.g. the entropy source, in the middle of the noise) leaves
    // exact words of the app's data in the contribution: wiped, as drop_pending wipes a report.
    crypto::wipe(contribution.data(), contribution.size() * sizeof(uint64_t));
    decline(channel, fedstat_v1_ErrorAction_DEVICE_FAILURE).ignore();
    return built;
  }
  memcpy(&pending_task_, &task_, sizeof(task_));
  pending_ = true;
  start_message(fedstat_v1_Envelope_task_reply_tag);
  out_.body.task_reply.task_id = id;
  out_.body.task_reply.accept = true;
  FEDSTAT_RETURN_IF_ERROR(send(channel));
  if (is_dist(task_)) {
    FEDSTAT_RETURN_IF_ERROR(
        kinds_.secure_aggregation->run(*this, channel, contribution, /*resume=*/false));
  } else {
    FEDSTAT_RETURN_IF_ERROR(send_report(channel, contribution, 0));
  }
  return finish_round(channel);
}

}  // namespace client
}  // namespace fedstat
