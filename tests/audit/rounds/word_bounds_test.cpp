// Issue 39 item 7: on the clear path (TRUSTED, TAGG, NONE) the server refuses a report holding a
// word no honest device of the task's kind can send, names the device and the word, and sums
// the honest devices only. Before the fix the only check was word < 2^bits: a trusted KL device
// adding 2^40 to one count moved the estimate from 4.41 to 15,954,392.
//
// Every kind, planned by the server's own planner: three honest devices whose words are what
// their SDK Client builds (host_server/sim expected_contribution: the SDK's builders on emulated
// data) — never refused — and a fourth whose report is an honest one with one word pushed past
// the kind's largest honest word:
//   kl (trusted, tagg)        a count + 2^40: above the device's own total (its last word)
//   data_shift (none)         a counter + 2^62: above total × the largest sampling weight 2^35
//   model_update (none)       a word + 2^30 (mod 2^32): far outside γ·(clip + rounding) + β·√D
//   heterogeneity (none, st1) a coordinate + 2^61: above round(scale · 1) for x in [0, 1]
// Its last chunk (the report complete) is refused kOutOfRange naming word 0, the connection is
// closed, and the round publishes (or, tagg, forwards) the sum of the three honest devices.
#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "host_server/estimate/client_emulation.h"
#include "host_server/estimate/item_counts.h"
#include "host_server/estimate/labelled_examples.h"
#include "host_server/rounds/coordinator.h"
#include "host_server/sim/emulated_device.h"
#include "nlohmann/json.hpp"
#include "tests/audit/rounds/planned_tasks.h"
#include "tests/rounds/fake_outbox.h"
#include "tests/rounds/fake_store.h"
#include "tests/store/temp_dir.h"

namespace fedstat {
namespace host {
namespace testing {
namespace {

constexpr uint32_t kHonest = 3;
constexpr uint64_t kFirstId = 11;

struct Case {
  const char* name;
  const char* kind;
  const char* trust;
  uint64_t added;  // to word 0 of the fourth device's report (mod 2^bits)
};

void PrintTo(const Case& c, std::ostream* out) {
  *out << c.kind << " " << c.trust << " +" << c.added;
}

// The declaration of `c`, with every file it names written into `dir`.
json declaration_of(const Case& c, const TempDir& dir) {
  const std::string kind = c.kind;
  if (kind == "kl") return kl_declaration(dir, 1, c.trust, kHonest, kHonest + 1);
  json d = declared(1, kind, c.trust, kHonest, kHonest + 1);
  if (kind == "data_shift") {
    write_item_counts(dir.file("reference.txt"), 60, 60000);
    d["data_shift"] = {
        {"rows", 3},     {"width", 64},          {"heap_capacity", 16},         {"k", 256},
        {"domain", 100}, {"local_epsilon", 0.0}, {"reference", "reference.txt"}};
  } else if (kind == "model_update") {
    d["model_update"] = {{"dimension", 4},           {"epochs", 10},   {"batches", 2},
                         {"averaging_interval", 10}, {"eta0", 2.0},    {"mu", 0.001},
                         {"clip_norm", 10.0},        {"rotate", true}, {"gamma", 4096.0},
                         {"beta", 0.6065306597},     {"bits", 32},     {"examples_per_client", 40}};
  } else {
    d["heterogeneity"] = {{"dimension", 3}, {"p", 2}, {"max_weight", 8}, {"stage2_id", 9}};
  }
  return d;
}

// The four devices' data, as fedstat-sim deals it out.
EmulatedClients fleet_of(const Case& c, const TempDir& dir) {
  const std::string kind = c.kind;
  if (kind == "kl" || kind == "data_shift") {
    write_item_counts(dir.file("items.txt"), 80, 40000, 5);
    SeededBits split(3, 7);
    return split_across_clients(read_item_counts(dir.file("items.txt")), kHonest + 1, split.bits());
  }
  if (kind == "model_update") {
    write_examples(dir.file("examples.csv"), 40 * (kHonest + 1), 3);
    return split_examples(read_labelled_examples(dir.file("examples.csv"), 4), kHonest + 1, 40);
  }
  const std::vector<std::vector<double>> x = {
      {0.05, 0.5, 0.95}, {0.9, 0.1, 0.2}, {0.2, 0.8, 0.1}, {0.4, 0.4, 0.6}};
  EmulatedClients out;
  for (const auto& v : x) {
    out.push_back(std::make_unique<EmulatedClient>());
    out.back()->vector = v;
  }
  return out;
}

class AuditWordBounds : public ::testing::TestWithParam<Case> {};

TEST_P(AuditWordBounds, AWordNoHonestDeviceSendsIsRefusedAndTheHonestAreSummed) {
  const Case& param = GetParam();
  TempDir dir;
  const json tasks = json::array({declaration_of(param, dir)});
  FakeStore store;
  FakeOutbox out(store);
  std::vector<ExactAggregate> forwarded;
  std::vector<TaskSpec> specs = plan_tasks(
      dir, tasks, store, kT0, [&](ExactAggregate a) { forwarded.push_back(std::move(a)); });
  ASSERT_EQ(specs.size(), 1u);
  const fedstat_v1_Task task = specs[0].task;
  const std::vector<uint64_t> task_data = specs[0].data;
  Coordinator c(store, out, std::move(specs), kT0);
  EmulatedClients fleet = fleet_of(param, dir);
  for (uint32_t i = 0; i <= kHonest; ++i) {
    const uint64_t id = kFirstId + i;
    std::vector<uint64_t> words = expected_contribution(task, task_data, *fleet[i], 5, id);
    const uint32_t chunks = (task.vector_length + 63) / 64;
    if (i < kHonest) {
      const SentReport r = send_contribution(c, out, id, i + 1, 1, words);
      EXPECT_FALSE(r.refused) << "honest device " << id << " refused: " << r.detail;
      EXPECT_EQ(r.acks, chunks) << "honest device " << id;
      continue;
    }
    const uint64_t mask = task.bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << task.bits) - 1;
    words[0] = (words[0] + param.added) & mask;
    const SentReport r = send_contribution(c, out, id, i + 1, 1, words);
    ASSERT_TRUE(r.refused) << "the report with word 0 out of bounds was acknowledged";
    EXPECT_EQ(r.status, static_cast<uint32_t>(StatusCode::kOutOfRange)) << r.detail;
    EXPECT_NE(r.detail.find("word 0"), std::string::npos) << r.detail;
    EXPECT_EQ(r.refused_at, 64 * (chunks - 1)) << "refused when the report became complete";
    EXPECT_TRUE(r.closed);
  }
  c.on_tick(kT0 + 1);
  std::string log;
  for (const std::string& line : c.take_log()) log += line + "\n";
  EXPECT_NE(log.find("device " + std::to_string(kFirstId + kHonest)), std::string::npos) << log;
  if (std::string(param.trust) == "tagg") {
    ASSERT_EQ(forwarded.size(), 1u) << log;
    EXPECT_EQ(forwarded[0].contributors, kHonest);
    return;
  }
  ASSERT_EQ(c.task_state(1), "completed") << log;
  const json result = json::parse(store.result(1).value_or("{}"));
  EXPECT_EQ(result.value("contributors", 0u), kHonest) << result.dump();
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, AuditWordBounds,
    ::testing::Values(Case{"KlTrusted", "kl", "trusted", uint64_t{1} << 40},
                      Case{"KlTagg", "kl", "tagg", uint64_t{1} << 40},
                      Case{"DataShiftNone", "data_shift", "none", uint64_t{1} << 62},
                      Case{"ModelUpdateNone", "model_update", "none", uint64_t{1} << 30},
                      Case{"HeterogeneityNone", "heterogeneity", "none", uint64_t{1} << 61}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace testing
}  // namespace host
}  // namespace fedstat
