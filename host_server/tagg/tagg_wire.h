// The collector ↔ TAgg messages (proto/fedstat/v1/envelope.proto: TaggAggregate, TaggResult):
// an exact aggregate cut into chunks of ≤ 56 words and put back together, its canonical bytes
// (what the TAgg stores and compares: one aggregate per task), and the TaggResult builder.
//
// AggregateAssembly takes one connection's chunks in order: the first fixes task, contributors,
// length and task fingerprint (the TAgg checks that header against the task before a second
// chunk is taken); each
// later chunk must repeat them and continue at offset = words so far, without running past the
// length. Errors: a Refusal (rounds/messages.h; REFUSED) naming what was wrong; tagg_result throws
// std::invalid_argument for a result longer than the field. Memory: one vector_length words per
// assembly. Paper: none.
#ifndef FEDSTAT_HOST_TAGG_TAGG_WIRE_H_
#define FEDSTAT_HOST_TAGG_TAGG_WIRE_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fedstat/v1/envelope.pb.h"
#include "host_server/rounds/messages.h"

namespace fedstat {
namespace host {

using TaskFingerprint = std::array<uint8_t, 32>;

// One completed TAGG round: the sum of the devices' reports (mod 2^bits) and how many it sums,
// and the fingerprint of the task the devices answered (not part of aggregate_bytes).
struct ExactAggregate {
  uint32_t task_id = 0;
  uint32_t contributors = 0;
  std::vector<uint64_t> words;
  TaskFingerprint task_fingerprint{};
};

// SHA-256 of "fedstat tagg task v1", the Task's id, kind, trust, ε, δ (IEEE bits), min_clients,
// max_clients, vector_length, bits, seed, and the TaskData words — what a device was charged for
// and computed from; not the deadline (each server counts it from its own opening time).
TaskFingerprint task_fingerprint(const fedstat_v1_Task& task, const std::vector<uint64_t>& data);

// TaggAggregate envelopes, ascending offsets, ≤ 56 words each (one, empty, for no words).
std::vector<fedstat_v1_Envelope> aggregate_chunks(const ExactAggregate& aggregate);
// task id, contributors, length (little-endian 32 bits each), then the words (64 bits each).
std::vector<uint8_t> aggregate_bytes(const ExactAggregate& aggregate);

fedstat_v1_Envelope tagg_result(uint32_t task_id, const std::string& result_json);

class AggregateAssembly {
 public:
  // `chunk` is the next TaggAggregate of the connection. After an accepted chunk, complete()
  // says whether the aggregate is whole.
  std::optional<Refusal> add(const fedstat_v1_TaggAggregate& chunk);
  bool started() const { return started_; }
  bool complete() const { return started_ && aggregate_.words.size() == length_; }
  uint32_t length() const { return length_; }
  const ExactAggregate& aggregate() const { return aggregate_; }

 private:
  bool started_ = false;
  uint32_t length_ = 0;
  ExactAggregate aggregate_;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_TAGG_TAGG_WIRE_H_
