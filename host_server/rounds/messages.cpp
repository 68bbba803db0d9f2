#include "host_server/rounds/messages.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "sdk/wire/envelope_codec.h"

namespace fedstat {
namespace host {
namespace {

template <size_t N>
void copy_text(char (&out)[N], const std::string& text) {
  const size_t n = std::min(text.size(), N - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

}  // namespace

Refusal refused(StatusCode code, const std::string& detail) {
  Refusal r;
  r.code = code;
  r.detail = detail;
  return r;
}

Refusal refused(const Status& status) {
  return refused(status.code(), status.message());
}

Refusal task_closed() {
  Refusal r = refused(StatusCode::kFailedPrecondition, "the task is over");
  r.action = fedstat_v1_ErrorAction_TASK_CLOSED;
  return r;
}

Refusal retry_later(StatusCode code, const std::string& detail) {
  Refusal r = refused(code, detail);
  r.action = fedstat_v1_ErrorAction_RETRY_LATER;
  r.close = true;
  return r;
}

fedstat_v1_Envelope server_error(const Refusal& refusal) {
  fedstat_v1_Envelope e = wire::make_envelope();
  e.which_body = fedstat_v1_Envelope_server_error_tag;
  e.body.server_error.status_code = static_cast<uint32_t>(refusal.code);
  e.body.server_error.action = refusal.action;
  copy_text(e.body.server_error.detail, refusal.detail);
  return e;
}

fedstat_v1_Envelope ack(uint32_t task_id, uint32_t offset) {
  fedstat_v1_Envelope e = wire::make_envelope();
  e.which_body = fedstat_v1_Envelope_ack_tag;
  e.body.ack.task_id = task_id;
  e.body.ack.offset = offset;
  return e;
}

fedstat_v1_Envelope secagg_resume(uint32_t task_id, uint32_t round, uint32_t held) {
  fedstat_v1_Envelope e = wire::make_envelope();
  e.which_body = fedstat_v1_Envelope_secagg_resume_tag;
  e.body.secagg_resume.task_id = task_id;
  e.body.secagg_resume.round = round;
  e.body.secagg_resume.held = held;
  return e;
}

fedstat_v1_Envelope round_outcome(uint32_t task_id, bool completed, const std::string& detail) {
  fedstat_v1_Envelope e = wire::make_envelope();
  e.which_body = fedstat_v1_Envelope_round_outcome_tag;
  e.body.round_outcome.task_id = task_id;
  e.body.round_outcome.completed = completed;
  copy_text(e.body.round_outcome.detail, detail);
  return e;
}

std::vector<fedstat_v1_Envelope> task_offer(const fedstat_v1_Task& task,
                                            const std::vector<uint64_t>& data) {
  std::vector<fedstat_v1_Envelope> out;
  fedstat_v1_Envelope t = wire::make_envelope();
  t.which_body = fedstat_v1_Envelope_task_tag;
  t.body.task = task;
  t.body.task.data_words = static_cast<uint32_t>(data.size());
  out.push_back(t);
  constexpr size_t kChunk = sizeof(fedstat_v1_TaskData{}.words) / sizeof(uint64_t);
  for (size_t offset = 0; offset < data.size(); offset += kChunk) {
    fedstat_v1_Envelope d = wire::make_envelope();
    d.which_body = fedstat_v1_Envelope_task_data_tag;
    d.body.task_data.task_id = task.task_id;
    d.body.task_data.offset = static_cast<uint32_t>(offset);
    const size_t n = std::min(kChunk, data.size() - offset);
    d.body.task_data.words_count = static_cast<pb_size_t>(n);
    std::copy(data.begin() + offset, data.begin() + offset + n, d.body.task_data.words);
    out.push_back(d);
  }
  return out;
}

std::vector<uint8_t> encode_bytes(const fedstat_v1_Envelope& envelope) {
  std::vector<uint8_t> buffer(wire::kMaxEnvelopeBytes);
  auto size = wire::encode_envelope(envelope, MutableByteSpan(buffer.data(), buffer.size()));
  if (!size.ok())
    throw std::runtime_error(std::string("encode envelope: ") + size.status().message());
  buffer.resize(size.value());
  return buffer;
}

fedstat_v1_Envelope decode_bytes(const std::vector<uint8_t>& bytes) {
  fedstat_v1_Envelope e = fedstat_v1_Envelope_init_zero;
  Status s = wire::decode_envelope(ByteSpan(bytes.data(), bytes.size()), e);
  if (!s.ok()) throw std::runtime_error(std::string("decode stored envelope: ") + s.message());
  return e;
}

}  // namespace host
}  // namespace fedstat
