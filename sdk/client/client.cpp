#include "sdk/client/client.h"

#include <string.h>

#include "platform/platform.h"
#include "sdk/base/arena.h"
#include "sdk/base/bytes.h"
#include "sdk/base/checked_size.h"
#include "sdk/base/crc32.h"
#include "sdk/base/crypto.h"
#include "sdk/base/random_bits.h"
#include "sdk/client/contribution.h"
#include "sdk/secagg/graph.h"
#include "sdk/version.h"

namespace fedstat {
namespace client {
namespace {

constexpr uint8_t kMarkerMagic[4] = {'F', 'C', 'R', '1'};

void copy_string(char* out, size_t capacity, const char* text) {
  size_t n = 0;
  for (; text != nullptr && text[n] != '\0' && n + 1 < capacity; ++n) out[n] = text[n];
  out[n] = '\0';
}

Status server_status(uint32_t status_code) {
  const uint32_t last = static_cast<uint32_t>(StatusCode::kInternal);
  const StatusCode code = status_code >= 1 && status_code <= last
                              ? static_cast<StatusCode>(status_code)
                              : StatusCode::kInternal;
  return Status(code, "the server ended the session with a ServerError (last_server_detail())");
}

}  // namespace

uint32_t Client::roster_size(const fedstat_v1_Task& task) {
  return secagg::neighbourhood_size(task.max_clients, task.secagg_degree);
}

Result<size_t> Client::memory_bytes(const fedstat_v1_Task& task, size_t local_size) {
  return memory_bytes(task, local_size, all_task_kinds());
}

Result<size_t> Client::memory_bytes(const fedstat_v1_Task& task, size_t local_size,
                                    const TaskKinds& kinds) {
  Result<size_t> scratch = scratch_bytes(task, local_size, kinds);
  if (!scratch.ok()) return scratch.status();
  size_t bytes = size_add(size_mul(8, task.vector_length), size_mul(8, task.data_words));
  // DIST: the roster — the neighbourhood of a sparse graph (k + 1 entries), else max_clients.
  if (is_dist(task)) bytes = size_add(bytes, secagg::secagg_client_memory_bytes(roster_size(task)));
  bytes = size_add(bytes, scratch.value());
  if (bytes == kSizeOverflow) {
    return resource_exhausted("the task's memory does not fit this device's address space");
  }
  return bytes;
}

Status Client::forget_interrupted_round(const char* round_blob_name) {
  const Status removed = platform::remove_blob(round_blob_name);
  return removed.code() == StatusCode::kNotFound ? Status() : removed;
}

namespace {
bool valid_report_window(uint8_t window) {
  return window >= 1 && window <= kMaxReportWindow;
}
}  // namespace

Status Client::set_report_window(uint8_t window) {
  if (!valid_report_window(window)) {
    return invalid_argument("report_window must be in [1, kMaxReportWindow = 16]");
  }
  config_.report_window = window;
  return Status();
}

Status Client::set_task_policy(const TaskPolicy& policy) {
  FEDSTAT_RETURN_IF_ERROR(validate_task_policy(policy));
  config_.task_policy = policy;
  return Status();
}

Status Client::init(const ClientConfig& config, const TaskKinds& kinds, MutableByteSpan memory,
                    ClientData& data, privacy::BudgetLedger& ledger, RandomSource& random) {
  if (config.device_id == 0 || config.device_id > 0x80000000u) {
    return invalid_argument("ClientConfig.device_id must be in [1, 2^31]");
  }
  if (config.wall_clock_seconds == nullptr) {
    return invalid_argument("ClientConfig.wall_clock_seconds is required (the ledger's clock)");
  }
  if (config.round_blob_name == nullptr || config.round_blob_name[0] == '\0') {
    return invalid_argument("ClientConfig.round_blob_name must name a blob");
  }
  if (reinterpret_cast<uintptr_t>(memory.data()) % 8 != 0) {
    return invalid_argument("the Client's memory must be 8-byte aligned");
  }
  if (!valid_report_window(config.report_window)) {
    return invalid_argument("ClientConfig.report_window must be in [1, kMaxReportWindow = 16]");
  }
  FEDSTAT_RETURN_IF_ERROR(validate_task_policy(config.task_policy));
  if (kinds.kinds.size() > kMaxTaskKinds) {
    return invalid_argument("TaskKinds: at most one entry per kind (kMaxTaskKinds)");
  }
  for (size_t i = 0; i < kinds.kinds.size(); ++i) {
    if (kinds.kinds[i] == nullptr) return invalid_argument("TaskKinds: a null entry");
    for (size_t j = 0; j < i; ++j) {
      if (kinds.kinds[j]->kind == kinds.kinds[i]->kind) {
        return invalid_argument("TaskKinds: one kind twice");
      }
    }
  }
  RoundMarker interrupted;
  Result<size_t> loaded =
      platform::load_blob(config.round_blob_name, MutableByteSpan(marker_bytes_, kMarkerBytes));
  if (loaded.ok()) {
    if (loaded.value() != kMarkerBytes || memcmp(marker_bytes_, kMarkerMagic, 4) != 0) {
      return data_loss("the stored round marker is corrupt (forget_interrupted_round to drop it)");
    }
    interrupted.task_id = load_le32(marker_bytes_ + 4);
    interrupted.stage = marker_bytes_[8];
    if (interrupted.stage != kRoundAccepted && interrupted.stage != kRoundUnmasking) {
      return data_loss("the stored round marker is corrupt (forget_interrupted_round to drop it)");
    }
    interrupted.session = load_le64(marker_bytes_ + 9);
    memcpy(interrupted.u2, marker_bytes_ + 17, sizeof(interrupted.u2));
    memcpy(interrupted.u3, marker_bytes_ + 17 + sizeof(interrupted.u2), sizeof(interrupted.u3));
  } else if (loaded.status().code() == StatusCode::kResourceExhausted) {
    return data_loss("the stored round marker is corrupt (forget_interrupted_round to drop it)");
  } else if (loaded.status().code() != StatusCode::kNotFound) {
    return loaded.status();
  }
  config_ = config;
  drop_pending();  // a report held before this init is never resumed (a reboot, new memory)
  for (size_t i = 0; i < kMaxTaskKinds; ++i) {
    kind_table_[i] = i < kinds.kinds.size() ? kinds.kinds[i] : nullptr;
  }
  kinds_ = TaskKinds{Span<const TaskKindSupport* const>(kind_table_, kinds.kinds.size()),
                     kinds.secure_aggregation};
  memory_ = memory;
  data_ = &data;
  ledger_ = &ledger;
  random_ = &random;
  interrupted_ = interrupted;
  ready_ = true;
  return Status();
}

Result<SessionOutcome> Client::run_session(FrameChannel& channel) {
  if (!ready_) return failed_precondition("Client::init has not succeeded");
  round_ended_ = false;
  channel_lost_ = false;
  server_detail_[0] = '\0';
  memset(&task_, 0, sizeof(task_));
  Result<SessionOutcome> result = session(channel);
  if (!result.ok() && round_ended_) {
    drop_pending();
    clear_marker();
    result = SessionOutcome{SessionResult::kAborted, task_.task_id};
  }
  // Only a lost channel leaves a report to resume: the channel itself failed to send or
  // receive. Any other failure — a confused exchange, a refusal, and also a storage or entropy
  // failure, though those say kUnavailable too — ends it: nothing more is sent for that round.
  if (!result.ok() && !(channel_lost_ && is_link_loss(result.status()))) drop_pending();
  // Still pending: the channel was lost. What the next session resumes from must be what this
  // one left (the app must not reuse that memory): checked before anything is sent again.
  if (pending_) pending_crc_ = held_crc();
  channel.close();
  // The last messages in and out may be plaintext a device keeps to itself (an exact Report
  // chunk, a secret share): not left in the Client's memory between sessions.
  crypto::wipe(&in_, sizeof(in_));
  crypto::wipe(&out_, sizeof(out_));
  return result;
}

Result<Client::RoundBuffers> Client::round_buffers(const fedstat_v1_Task& task, Arena& arena,
                                                   bool fresh) {
  // The first bytes of the caller memory, in this order: contribution, TaskData, [DIST] peers.
  // Fresh: zeroed (allocate_array). Held (a resume): as they were (allocate_bytes, no zeroing).
  RoundBuffers b;
  const size_t peer_count = is_dist(task) ? roster_size(task) : 0;
  if (fresh) {
    Result<Span<uint64_t>> contribution = arena.allocate_array<uint64_t>(task.vector_length);
    Result<Span<uint64_t>> data = arena.allocate_array<uint64_t>(task.data_words);
    Result<Span<secagg::SecAggPeer>> peers = arena.allocate_array<secagg::SecAggPeer>(peer_count);
    if (!contribution.ok() || !data.ok() || !peers.ok()) {
      return internal_error("memory_bytes did not cover the task's buffers");
    }
    b.contribution = contribution.value();
    b.data = data.value();
    b.peers = peers.value();
    return b;
  }
  Result<void*> contribution = arena.allocate_bytes(size_mul(8, task.vector_length), 8);
  Result<void*> data = arena.allocate_bytes(size_mul(8, task.data_words), 8);
  Result<void*> peers = arena.allocate_bytes(secagg::secagg_client_memory_bytes(peer_count),
                                             alignof(secagg::SecAggPeer));
  if (!contribution.ok() || !data.ok() || !peers.ok()) {
    return internal_error("the held round is not in memory");
  }
  b.contribution = Span<uint64_t>(static_cast<uint64_t*>(contribution.value()), task.vector_length);
  b.data = Span<uint64_t>(static_cast<uint64_t*>(data.value()), task.data_words);
  b.peers = Span<secagg::SecAggPeer>(static_cast<secagg::SecAggPeer*>(peers.value()), peer_count);
  return b;
}

uint32_t Client::held_crc() {
  // Over the contribution (masked in place once masking began) and the secure-aggregation
  // roster (the peers' keys, their shares for this device, what was revealed about whom).
  Arena arena(memory_);
  Result<RoundBuffers> b = round_buffers(pending_task_, arena, /*fresh=*/false);
  if (!b.ok()) return 0;
  Crc32 crc;
  crc.update(ByteSpan(reinterpret_cast<const uint8_t*>(b.value().contribution.data()),
                      8 * b.value().contribution.size()));
  crc.update(ByteSpan(reinterpret_cast<const uint8_t*>(b.value().peers.data()),
                      sizeof(secagg::SecAggPeer) * b.value().peers.size()));
  return crc.value();
}

Status Client::send(FrameChannel& channel) {
  const Status sent = channel.send(out_);
  note_channel_failure(sent);
  return sent;
}

bool Client::is_link_loss(const Status& status) {
  return status.code() == StatusCode::kUnavailable ||
         status.code() == StatusCode::kDeadlineExceeded;
}

void Client::note_channel_failure(const Status& status) {
  if (is_link_loss(status)) channel_lost_ = true;
}

void Client::start_message(pb_size_t tag) {
  memset(&out_, 0, sizeof(out_));  // = init_zero, in place: no Envelope temporary on the stack
  out_.protocol_version = wire::kProtocolVersion;
  out_.which_body = tag;
}

Status Client::receive(FrameChannel& channel) {
  memset(&in_, 0, sizeof(in_));  // in place: no 544-byte temporary on a small stack
  const Status received = channel.receive(in_, config_.receive_timeout_ms);
  note_channel_failure(received);
  FEDSTAT_RETURN_IF_ERROR(received);
  if (in_.which_body == fedstat_v1_Envelope_server_error_tag) {
    copy_string(server_detail_, sizeof(server_detail_), in_.body.server_error.detail);
    // Whatever its code, a ServerError ends a pending report: it is never resumed after one.
    drop_pending();
    return server_status(in_.body.server_error.status_code);
  }
  return Status();
}

Status Client::receive_expect(FrameChannel& channel, pb_size_t tag, pb_size_t other_tag) {
  FEDSTAT_RETURN_IF_ERROR(receive(channel));
  if (in_.which_body == tag || (other_tag != 0 && in_.which_body == other_tag)) return Status();
  if (in_.which_body == fedstat_v1_Envelope_round_outcome_tag &&
      in_.body.round_outcome.task_id == task_.task_id && !in_.body.round_outcome.completed) {
    round_ended_ = true;
    return aborted("the server aborted the round");
  }
  if (in_.which_body == fedstat_v1_Envelope_secagg_abort_tag) {
    secagg_.on_abort();
    round_ended_ = true;
    return aborted("the server abandoned secure aggregation (SecAggAbort)");
  }
  return failed_precondition(
      "the server sent a message this point of the protocol does not expect");
}

Status Client::decline(FrameChannel& channel, fedstat_v1_ErrorAction reason) {
  // The reason code only: a free-text detail would make declines' lengths differ from an
  // accept's (and from each other) on the wire. The detail stays with the app, in the status
  // its caller returns.
  start_message(fedstat_v1_Envelope_task_reply_tag);
  out_.body.task_reply.task_id = task_.task_id;
  out_.body.task_reply.accept = false;
  out_.body.task_reply.reason = reason;
  return send(channel);
}

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

// Not inlined: the accountants (a DIST MODEL_UPDATE's per-batch sensitivities) stay off the
// stack while the contribution is built and aggregated.
__attribute__((noinline)) Result<PolicyRefusal> Client::check_policy(FrameChannel& channel) {
  // Rule 0, the kinds the app answers: on the Task alone, before the charge is computed.
  if (!answers_kind(config_.task_policy, wire_enum_value(task_.kind))) {
    FEDSTAT_RETURN_IF_ERROR(decline(channel, fedstat_v1_ErrorAction_POLICY));
    return PolicyRefusal::kTaskKind;
  }
  // What the device's own noise guarantees, never less than the task declares: what the policy
  // weighs and what the ledger is charged (charge_ledger), computed once.
  Result<DeviceSpend> owed = device_spend(task_, kinds_, config_.task_policy.assumed_honest_shares);
  if (!owed.ok()) {
    FEDSTAT_RETURN_IF_ERROR(decline(channel, fedstat_v1_ErrorAction_REFUSED));
    return owed.status();
  }
  spend_ = owed.value();
  spend_.task_id = task_.task_id;
  const PolicyRefusal refusal = check_task_policy(config_.task_policy, wire_enum_value(task_.trust),
                                                  policy_charge(spend_, task_.delta));
  if (refusal != PolicyRefusal::kNotRefused) {
    FEDSTAT_RETURN_IF_ERROR(decline(channel, fedstat_v1_ErrorAction_POLICY));
  }
  return refusal;
}

__attribute__((noinline)) Result<bool> Client::charge_ledger(FrameChannel& channel) {
  if (task_.trust == fedstat_v1_TrustModel_NONE) return true;  // spend_ is (0, 0)
  const Status charged = ledger_->charge(spend_, config_.wall_clock_seconds());
  if (charged.code() == StatusCode::kResourceExhausted) {
    FEDSTAT_RETURN_IF_ERROR(decline(channel, fedstat_v1_ErrorAction_BUDGET_EXHAUSTED));
    return false;
  }
  if (!charged.ok()) {
    decline(channel, fedstat_v1_ErrorAction_DEVICE_FAILURE).ignore();
    return charged;
  }
  return true;
}

Status Client::receive_task_data(FrameChannel& channel, Span<uint64_t> data) {
  size_t received = 0;
  while (received < data.size()) {
    FEDSTAT_RETURN_IF_ERROR(receive_expect(channel, fedstat_v1_Envelope_task_data_tag));
    const fedstat_v1_TaskData& chunk = in_.body.task_data;
    if (chunk.task_id != task_.task_id) return failed_precondition("TaskData for another task");
    if (chunk.offset != received || chunk.words_count == 0 ||
        chunk.words_count > data.size() - received) {
      return failed_precondition("TaskData out of order, empty or past data_words");
    }
    for (pb_size_t i = 0; i < chunk.words_count; ++i) data[received + i] = chunk.words[i];
    received += chunk.words_count;
  }
  return Status();
}

Status Client::send_report(FrameChannel& channel, Span<const uint64_t> contribution,
                           size_t offset) {
  constexpr size_t kChunk = sizeof(out_.body.report.words) / sizeof(out_.body.report.words[0]);
  const size_t size = contribution.size();
  const size_t window = config_.report_window * kChunk;  // words unacknowledged, at most
  size_t sent = offset;  // chunks start at `offset`, then every kChunk words
  while (offset < size) {
    while (sent < size && sent - offset < window) {
      const size_t count = size - sent < kChunk ? size - sent : kChunk;
      start_message(fedstat_v1_Envelope_report_tag);
      out_.body.report.task_id = task_.task_id;
      out_.body.report.offset = static_cast<uint32_t>(sent);
      out_.body.report.words_count = static_cast<pb_size_t>(count);
      for (size_t i = 0; i < count; ++i) out_.body.report.words[i] = contribution[sent + i];
      FEDSTAT_RETURN_IF_ERROR(send(channel));
      sent += count;
    }
    // The oldest chunk in flight is [offset, offset + its count): its Ack names the end.
    const size_t acked = offset + (size - offset < kChunk ? size - offset : kChunk);
    FEDSTAT_RETURN_IF_ERROR(receive_expect(channel, fedstat_v1_Envelope_ack_tag));
    if (in_.body.ack.task_id != task_.task_id || in_.body.ack.offset != acked) {
      return failed_precondition("Ack for another task or with the wrong offset");
    }
    offset = acked;
  }
  return Status();
}

void Client::wipe_scratch(MutableByteSpan scratch, size_t task_memory) {
  // The round buffers sit before `scratch`; task_memory (memory_bytes(task)) covers them and the
  // scratch the task's builder may use, so the wipe costs what the task needs, not the whole
  // caller memory.
  const size_t before = static_cast<size_t>(scratch.data() - memory_.data());
  size_t span = scratch.size();
  if (task_memory > before && task_memory - before < span) span = task_memory - before;
  crypto::wipe(scratch.data(), span);
}

void Client::drop_pending() {
  // Wiped, not only forgotten: an exact TRUSTED report does not linger in RAM.
  if (pending_) {
    // The contribution and (DIST) the roster with the peers' shares; the SecAggClient's secrets.
    Arena arena(memory_);
    if (round_buffers(pending_task_, arena, /*fresh=*/false).ok()) {
      crypto::wipe(memory_.data(), arena.used());
    }
    if (is_dist(pending_task_)) secagg_.on_abort();
  }
  pending_ = false;
  pending_crc_ = 0;
}

Status Client::save_marker() {
  uint8_t* p = marker_bytes_;
  memcpy(p, kMarkerMagic, 4);
  store_le32(p + 4, marker_.task_id);
  p[8] = marker_.stage;
  store_le64(p + 9, marker_.session);
  memcpy(p + 17, marker_.u2, sizeof(marker_.u2));
  memcpy(p + 17 + sizeof(marker_.u2), marker_.u3, sizeof(marker_.u3));
  return platform::save_blob(config_.round_blob_name, ByteSpan(marker_bytes_, kMarkerBytes));
}

void Client::clear_marker() {
  // Ignored on purpose: a marker left behind only makes init() decline a round that already
  // ended (it fails closed).
  platform::remove_blob(config_.round_blob_name).ignore();
  if (interrupted_.task_id == task_.task_id) interrupted_ = RoundMarker();
}

}  // namespace client
}  // namespace fedstat
