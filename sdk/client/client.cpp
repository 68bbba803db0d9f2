// Client (client.h): its set-up and memory (init, memory_bytes, the round buffers), and what
// it holds between sessions — a pending report, its CRC, and the round marker on storage.
// The session's exchange is in client_session.cpp, the policy check and the ledger charge in
// client_policy.cpp, the messages over the channel in client_messages.cpp.
#include "sdk/client/client.h"

#include <string.h>

#include "platform/platform.h"
#include "sdk/base/arena.h"
#include "sdk/base/bytes.h"
#include "sdk/base/checked_size.h"
#include "sdk/base/crc32.h"
#include "sdk/base/crypto.h"
#include "sdk/client/contribution.h"
#include "sdk/secagg/graph.h"

namespace fedstat {
namespace client {

namespace {

constexpr uint8_t kMarkerMagic[4] = {'F', 'C', 'R', '1'};

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

Status Client::set_credential(const credential::DeviceCredential* credential) {
  if (pending_report_task() != 0) {
    return failed_precondition(
        "set_credential: a round is pending (the next session resumes it with the credential it "
        "started with): change the credential after it ends");
  }
  config_.credential = credential;
  return Status();
}

Status Client::init(const ClientConfig& config, const TaskKinds& kinds, MutableByteSpan memory,
                    ClientData& data, privacy::BudgetLedger& ledger, RandomSource& random) {
  if (config.device_id == 0 || config.device_id > kMaxDeviceId) {
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
