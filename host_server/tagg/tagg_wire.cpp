// Collector ↔ TAgg messages (tagg_wire.h).
#include "host_server/tagg/tagg_wire.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "sdk/base/bytes.h"
#include "sdk/base/crypto.h"
#include "sdk/wire/envelope_codec.h"

namespace fedstat {
namespace host {

TaskFingerprint task_fingerprint(const fedstat_v1_Task& task, const std::vector<uint64_t>& data) {
  static const char kLabel[] = "fedstat tagg task v1";
  std::vector<uint8_t> bytes(kLabel, kLabel + sizeof(kLabel) - 1);
  auto put32 = [&bytes](uint32_t v) {
    uint8_t b[4];
    store_le32(b, v);
    bytes.insert(bytes.end(), b, b + 4);
  };
  auto put64 = [&bytes](uint64_t v) {
    uint8_t b[8];
    store_le64(b, v);
    bytes.insert(bytes.end(), b, b + 8);
  };
  auto put_double = [&put64](double x) {
    uint64_t v;
    std::memcpy(&v, &x, sizeof(v));
    put64(v);
  };
  put32(task.task_id);
  put32(static_cast<uint32_t>(task.kind));
  put32(static_cast<uint32_t>(task.trust));
  put_double(task.epsilon);
  put_double(task.delta);
  put32(task.min_clients);
  put32(task.max_clients);
  put32(task.vector_length);
  put32(task.bits);
  put32(task.seed.size);
  bytes.insert(bytes.end(), task.seed.bytes, task.seed.bytes + task.seed.size);
  put64(data.size());
  for (uint64_t word : data) put64(word);
  TaskFingerprint digest;
  const Status s = crypto::sha256(ByteSpan(bytes.data(), bytes.size()),
                                  Span<uint8_t>(digest.data(), digest.size()));
  if (!s.ok()) throw std::runtime_error(std::string("task fingerprint: ") + s.message());
  return digest;
}

std::vector<fedstat_v1_Envelope> aggregate_chunks(const ExactAggregate& aggregate) {
  constexpr size_t kChunk = sizeof(fedstat_v1_TaggAggregate{}.words) / sizeof(uint64_t);
  std::vector<fedstat_v1_Envelope> out;
  const size_t n = aggregate.words.size();
  size_t offset = 0;
  do {  // at least one chunk: an empty aggregate is one empty chunk
    fedstat_v1_Envelope e = wire::make_envelope();
    e.which_body = fedstat_v1_Envelope_tagg_aggregate_tag;
    fedstat_v1_TaggAggregate& chunk = e.body.tagg_aggregate;
    chunk.task_id = aggregate.task_id;
    chunk.contributors = aggregate.contributors;
    chunk.vector_length = static_cast<uint32_t>(n);
    chunk.offset = static_cast<uint32_t>(offset);
    chunk.task_fingerprint.size = static_cast<pb_size_t>(aggregate.task_fingerprint.size());
    std::memcpy(chunk.task_fingerprint.bytes, aggregate.task_fingerprint.data(),
                aggregate.task_fingerprint.size());
    const size_t count = std::min(kChunk, n - offset);
    chunk.words_count = static_cast<pb_size_t>(count);
    std::copy(aggregate.words.begin() + offset, aggregate.words.begin() + offset + count,
              chunk.words);
    out.push_back(e);
    offset += count;
  } while (offset < n);
  return out;
}

std::vector<uint8_t> aggregate_bytes(const ExactAggregate& aggregate) {
  std::vector<uint8_t> bytes(12 + 8 * aggregate.words.size());
  store_le32(bytes.data(), aggregate.task_id);
  store_le32(bytes.data() + 4, aggregate.contributors);
  store_le32(bytes.data() + 8, static_cast<uint32_t>(aggregate.words.size()));
  for (size_t i = 0; i < aggregate.words.size(); ++i) {
    store_le64(bytes.data() + 12 + 8 * i, aggregate.words[i]);
  }
  return bytes;
}

fedstat_v1_Envelope tagg_result(uint32_t task_id, const std::string& result_json) {
  fedstat_v1_Envelope e = wire::make_envelope();
  e.which_body = fedstat_v1_Envelope_tagg_result_tag;
  e.body.tagg_result.task_id = task_id;
  if (result_json.size() >= sizeof(e.body.tagg_result.result_json)) {
    throw std::invalid_argument("tagg result: " + std::to_string(result_json.size()) +
                                " bytes of JSON, more than a TaggResult holds");
  }
  std::memcpy(e.body.tagg_result.result_json, result_json.data(), result_json.size());
  e.body.tagg_result.result_json[result_json.size()] = '\0';
  return e;
}

std::optional<Refusal> AggregateAssembly::add(const fedstat_v1_TaggAggregate& chunk) {
  if (!started_) {
    if (chunk.offset != 0) {
      return refused(StatusCode::kFailedPrecondition, "tagg aggregate: the first chunk is at 0");
    }
    if (chunk.task_fingerprint.size != aggregate_.task_fingerprint.size()) {
      return refused(StatusCode::kInvalidArgument, "tagg aggregate: no task fingerprint");
    }
    started_ = true;
    length_ = chunk.vector_length;
    aggregate_.task_id = chunk.task_id;
    aggregate_.contributors = chunk.contributors;
    std::memcpy(aggregate_.task_fingerprint.data(), chunk.task_fingerprint.bytes,
                aggregate_.task_fingerprint.size());
  } else if (chunk.task_id != aggregate_.task_id || chunk.contributors != aggregate_.contributors ||
             chunk.vector_length != length_ ||
             chunk.task_fingerprint.size != aggregate_.task_fingerprint.size() ||
             std::memcmp(chunk.task_fingerprint.bytes, aggregate_.task_fingerprint.data(),
                         aggregate_.task_fingerprint.size()) != 0) {
    return refused(StatusCode::kInvalidArgument,
                   "tagg aggregate: a chunk names another task, contributor count, length or "
                   "fingerprint");
  } else if (complete()) {
    return refused(StatusCode::kFailedPrecondition, "tagg aggregate: already complete");
  }
  if (chunk.offset != aggregate_.words.size()) {
    return refused(StatusCode::kFailedPrecondition,
                   "tagg aggregate: chunk at " + std::to_string(chunk.offset) + ", expected " +
                       std::to_string(aggregate_.words.size()));
  }
  if (chunk.words_count == 0 && length_ != 0) {
    return refused(StatusCode::kOutOfRange, "tagg aggregate: an empty chunk");
  }
  if (uint64_t{chunk.offset} + chunk.words_count > length_) {
    return refused(StatusCode::kOutOfRange, "tagg aggregate: a chunk runs past the length");
  }
  aggregate_.words.insert(aggregate_.words.end(), chunk.words, chunk.words + chunk.words_count);
  return std::nullopt;
}

}  // namespace host
}  // namespace fedstat
