// Device-side message builders and task specs for the rounds' tests. Paper: none.
#ifndef FEDSTAT_TESTS_ROUNDS_ROUND_MESSAGES_H_
#define FEDSTAT_TESTS_ROUNDS_ROUND_MESSAGES_H_

#include <algorithm>
#include <string>
#include <vector>

#include "host_server/rounds/task_spec.h"
#include "sdk/wire/envelope_codec.h"

namespace fedstat {
namespace host {
namespace testing {

constexpr uint64_t kT0 = 1700000000;  // the tests' clock at construction

// The result JSON the tests' estimator publishes: the sum and the contributor count. A TaskSpec
// estimator (it is also given the round's noise, and draws none) and, with two arguments, the
// expected result.
struct SumJson {
  std::string operator()(const std::vector<uint64_t>& sum, uint32_t contributors) const {
    std::string s = "{\"contributors\":" + std::to_string(contributors) + ",\"sum\":[";
    for (size_t i = 0; i < sum.size(); ++i) s += (i ? "," : "") + std::to_string(sum[i]);
    return s + "]}";
  }
  std::string operator()(const std::vector<uint64_t>& sum, uint32_t contributors,
                         RandomBits&) const {
    return (*this)(sum, contributors);
  }
};
inline constexpr SumJson sum_json{};

inline TaskSpec make_spec(uint32_t id, fedstat_v1_TrustModel trust, uint32_t length, uint32_t bits,
                          uint32_t min_clients, uint32_t max_clients, uint32_t threshold = 0) {
  TaskSpec spec;
  spec.task.task_id = id;
  spec.task.kind = fedstat_v1_TaskKind_KL_ANSWERS;
  spec.task.trust = trust;
  spec.task.vector_length = length;
  spec.task.bits = bits;
  spec.task.min_clients = min_clients;
  spec.task.max_clients = max_clients;
  spec.task.threshold = threshold;
  spec.task.secagg_session = 0x5E55107ULL + id;
  spec.task.deadline_unix_seconds = kT0 + 3600;
  for (uint64_t w = 0; w < 70; ++w) spec.data.push_back(w * 3 + 1);  // two TaskData chunks
  spec.admission_seconds = 30;
  spec.phase_timeout_seconds = 20;
  spec.estimate = sum_json;
  spec.definition_json = "{\"task\":" + std::to_string(id) + "}";
  return spec;
}

inline fedstat_v1_Envelope hello(uint64_t client, uint32_t resume = 0) {
  fedstat_v1_Envelope e = wire::make_envelope();
  e.which_body = fedstat_v1_Envelope_client_hello_tag;
  e.body.client_hello.client_id = client;
  e.body.client_hello.word_bits = 64;
  e.body.client_hello.memory_bytes = 1 << 20;
  e.body.client_hello.resume_task_id = resume;
  return e;
}

inline fedstat_v1_Envelope reply(uint32_t task, bool accept) {
  fedstat_v1_Envelope e = wire::make_envelope();
  e.which_body = fedstat_v1_Envelope_task_reply_tag;
  e.body.task_reply.task_id = task;
  e.body.task_reply.accept = accept;
  if (!accept) e.body.task_reply.reason = fedstat_v1_ErrorAction_BUDGET_EXHAUSTED;
  return e;
}

inline fedstat_v1_Envelope report(uint32_t task, const std::vector<uint64_t>& words,
                                  uint32_t offset, uint32_t count) {
  fedstat_v1_Envelope e = wire::make_envelope();
  e.which_body = fedstat_v1_Envelope_report_tag;
  e.body.report.task_id = task;
  e.body.report.offset = offset;
  e.body.report.words_count = static_cast<pb_size_t>(count);
  std::copy(words.begin() + offset, words.begin() + offset + count, e.body.report.words);
  return e;
}

}  // namespace testing
}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_ROUNDS_ROUND_MESSAGES_H_
