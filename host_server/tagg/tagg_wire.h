// The collector ↔ TAgg messages (proto/fedstat/v1/envelope.proto: TaggAggregate, TaggResult):
// an exact aggregate cut into chunks of ≤ 56 words and put back together, its canonical bytes
// (what the TAgg stores and compares: one aggregate per task), and the TaggResult builder.
//
// AggregateAssembly takes one connection's chunks in order: the first fixes task, contributors
// and length (the TAgg checks that header against the task before any word is buffered); each
// later chunk must repeat them and continue at offset = words so far, without running past the
// length. Errors: a Refusal (rounds/messages.h; REFUSED, the connection is closed) naming what
// was wrong; tagg_result throws std::invalid_argument for a result longer than the field.
// Memory: one vector_length words per assembly. Paper: none.
#ifndef FEDSTAT_HOST_TAGG_TAGG_WIRE_H_
#define FEDSTAT_HOST_TAGG_TAGG_WIRE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fedstat/v1/envelope.pb.h"
#include "host_server/rounds/messages.h"

namespace fedstat {
namespace host {

// One completed TAGG round: the sum of the devices' reports (mod 2^bits) and how many it sums.
struct ExactAggregate {
  uint32_t task_id = 0;
  uint32_t contributors = 0;
  std::vector<uint64_t> words;
};

// TaggAggregate envelopes, ascending offsets, ≤ 56 words each (one, empty, for no words).
std::vector<fedstat_v1_Envelope> aggregate_chunks(const ExactAggregate& aggregate);
// task id, contributors, length (little-endian 32 bits each), then the words (64 bits each).
std::vector<uint8_t> aggregate_bytes(const ExactAggregate& aggregate);
ExactAggregate aggregate_from_bytes(const std::vector<uint8_t>& bytes);  // throws runtime_error

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
