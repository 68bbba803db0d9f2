// Client (client.h): the messages over the FrameChannel — sending, receiving what the
// protocol expects next (a ServerError, an aborted round or secure aggregation end it), a
// decline, the TaskData received and the Report sent within the report window.
#include "sdk/client/client.h"

#include <string.h>

#include "sdk/client/client_internal.h"

namespace fedstat {
namespace client {

namespace {

Status server_status(uint32_t status_code) {
  const uint32_t last = static_cast<uint32_t>(StatusCode::kInternal);
  const StatusCode code = status_code >= 1 && status_code <= last
                              ? static_cast<StatusCode>(status_code)
                              : StatusCode::kInternal;
  return Status(code, "the server ended the session with a ServerError (last_server_detail())");
}

}  // namespace

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

}  // namespace client
}  // namespace fedstat
