// A kl task declared trust "tagg" for the TAgg's tests: Π on disk, the declaration, its plan
// (seeded noise when asked) and a fleet's sums at the plan's points. Paper: 000 §4.
#ifndef FEDSTAT_TESTS_TAGG_TAGG_FIXTURE_H_
#define FEDSTAT_TESTS_TAGG_TAGG_FIXTURE_H_

#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "host_server/estimate/item_counts.h"
#include "host_server/tagg/tagg_wire.h"
#include "host_server/tasks/task_plan.h"
#include "nlohmann/json.hpp"

namespace fedstat {
namespace host {
namespace testing {

constexpr uint32_t kTaggTask = 7;

// Π: 40 items, counts 4000/(i+1).
inline std::string write_reference() {
  // One file per process: ctest runs the tests in parallel processes, and a file another one is
  // rewriting (truncated, then written) reads short.
  const std::string path =
      ::testing::TempDir() + "tagg_pi_" + std::to_string(static_cast<long>(getpid())) + ".txt";
  std::ofstream out(path);
  for (uint32_t i = 0; i < 40; ++i) out << i << " " << 4000 / (i + 1) << "\n";
  return path;
}

inline nlohmann::json kl_declaration(uint32_t id, const std::string& trust) {
  return nlohmann::json{
      {"id", id},
      {"kind", "kl"},
      {"trust", trust},
      {"epsilon", 2.0},
      {"delta", 1e-6},
      {"min_clients", 5},
      {"max_clients", 10},
      {"deadline_seconds", 600},
      {"seed", std::string(62, '0') + "2b"},
      {"kl", {{"reference", write_reference()}, {"rounds", 60}, {"lambda", 0.1}}}};
}

// The fleet's sums when it holds P(x) ∝ 3000/(x+2) items: counts at the plan's points, total.
inline ExactAggregate fleet_aggregate(const TaskPlan& plan, uint32_t contributors) {
  ExactAggregate a;
  a.task_id = plan.task.task_id;
  a.contributors = contributors;
  uint64_t total = 0;
  for (uint32_t i = 0; i < 40; ++i) total += 3000 / (i + 2);
  for (uint64_t x : plan.data) a.words.push_back(3000 / (x + 2));
  a.words.push_back(total);
  a.task_fingerprint = task_fingerprint(plan.task, plan.data);
  return a;
}

}  // namespace testing
}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_TAGG_TAGG_FIXTURE_H_
