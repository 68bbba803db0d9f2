// Task plans: the Task message, data and estimator each declared kind gets (host_server/tasks).
#include "host_server/tasks/task_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <string>

#include "host_server/estimate/client_emulation.h"
#include "host_server/estimate/host_common.h"
#include "host_server/estimate/kl_estimator.h"
#include "host_server/estimate/tv_estimator.h"

namespace fedstat {
namespace host {
namespace {

using nlohmann::json;

// A Zipf-like item-count file over [0, n) with counts scale/(i+1), shifted by `offset` ids.
std::string write_counts(const std::string& name, uint32_t n, uint64_t scale, uint32_t offset) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream out(path);
  for (uint32_t i = 0; i < n; ++i) out << (i + offset) << " " << scale / (i + 1) << "\n";
  return path;
}

json base_task(const std::string& kind, const std::string& trust) {
  return json{{"id", 7},
              {"kind", kind},
              {"trust", trust},
              {"epsilon", 1.0},
              {"delta", 1e-6},
              {"min_clients", 9},
              {"max_clients", 12},
              {"deadline_seconds", 600},
              {"seed", std::string(62, '0') + "2a"}};
}

json shift_task(const std::string& reference) {
  json task = base_task("data_shift", "none");
  task["epsilon"] = 0.0;
  task["delta"] = 0.0;
  task["data_shift"] = {
      {"rows", 5},     {"width", 256},         {"heap_capacity", 64},   {"k", 1024},
      {"domain", 400}, {"local_epsilon", 0.0}, {"reference", reference}};
  return task;
}

// The sum a fleet holding `counts` (split over `clients` devices) sends: every device's sketch
// counters and total, summed modulo 2^64.
std::vector<uint64_t> fleet_sum(const ItemCounts& counts, uint32_t clients,
                                const fedstat_v1_Task& task) {
  sketch::ShiftSketchParams params;
  params.rows = task.parameters.data_shift.rows;
  params.width = task.parameters.data_shift.width;
  params.heap_capacity = task.parameters.data_shift.heap_capacity;
  params.k = task.parameters.data_shift.k;
  std::memcpy(params.seed.bytes, task.seed.bytes, 32);
  SeededBits split(3, 7);
  NoiseBits noise = NoiseBits::seeded(5);
  const auto reports =
      sketch_clients(split_across_clients(counts, clients, split.bits()), params, 0, noise);
  std::vector<uint64_t> sum(task.vector_length, 0);
  for (const auto& report : parse_reports(reports)) {
    for (size_t i = 0; i + 1 < sum.size(); ++i) sum[i] += static_cast<uint64_t>(report.counter(i));
    sum.back() += static_cast<uint64_t>(report.total);
  }
  return sum;
}

TEST(TaskPlan, DataShiftLaysOutCountersThenTotalAndEstimatesTheShift) {
  const std::string reference = write_counts("plan_reference.txt", 300, 60000, 0);
  const TaskPlan plan = plan_task(shift_task(reference), "", 1000);
  EXPECT_EQ(plan.task.kind, fedstat_v1_TaskKind_DATA_SHIFT);
  EXPECT_EQ(plan.task.vector_length, 5u * 256u + 1u);
  EXPECT_EQ(plan.task.bits, 64u);
  EXPECT_EQ(plan.task.deadline_unix_seconds, 1600u);
  EXPECT_EQ(plan.task.threshold, 6u);  // ⌈2·9/3⌉
  EXPECT_TRUE(plan.data.empty());
  // The session id is a PRF of the seed, not the seed.
  EXPECT_NE(plan.task.secagg_session, 0x2au);

  // A fleet holding the reference itself: D_TV ≈ 0; a fleet shifted by 30 ids: close to exact.
  const ItemCounts same = read_item_counts(reference);
  const json zero = plan.estimate(fleet_sum(same, 10, plan.task), 10);
  EXPECT_LT(zero["estimate"].get<double>(), 0.02) << zero.dump();
  const ItemCounts shifted = read_item_counts(write_counts("plan_shifted.txt", 300, 60000, 30));
  const double exact = exact_tv(same, shifted);
  const json moved = plan.estimate(fleet_sum(shifted, 10, plan.task), 10);
  EXPECT_NEAR(moved["estimate"].get<double>(), exact, 0.1 * exact) << moved.dump();
  EXPECT_EQ(moved["items"].get<int64_t>(), static_cast<int64_t>(shifted.total));
}

TEST(TaskPlan, RefusesEachBadFieldByName) {
  const std::string reference = write_counts("plan_reference2.txt", 10, 100, 0);
  auto refusal = [&](json task) {
    try {
      plan_task(task, "", 0);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  json task = shift_task(reference);
  task.erase("seed");
  EXPECT_NE(refusal(task).find("task.seed is missing"), std::string::npos);
  task = shift_task(reference);
  task["seed"] = "xyz";
  EXPECT_NE(refusal(task).find("seed must be 64 hex digits"), std::string::npos);
  task = shift_task(reference);
  task["max_clients"] = 3;  // below min_clients
  EXPECT_NE(refusal(task).find("task.max_clients must lie in [9, 1024]"), std::string::npos);
  task = shift_task(reference);
  task["trust"] = "dist";  // no local DP: a "private" task that is not
  task["epsilon"] = 1.0;
  task["delta"] = 1e-6;
  EXPECT_NE(refusal(task).find("data_shift.local_epsilon is 0"), std::string::npos);
  task = shift_task(reference);
  task["trust"] = "tagg";
  EXPECT_NE(refusal(task).find("not served yet"), std::string::npos);
  task = shift_task(reference);
  task["epsilon"] = std::nan("");
  EXPECT_NE(refusal(task).find("task.epsilon must be"), std::string::npos);
  task = shift_task(reference);
  task["id"] = -1;
  EXPECT_NE(refusal(task).find("task.id must be a whole number"), std::string::npos);
  task = shift_task(reference);
  task["data_shift"]["rows"] = 16;
  EXPECT_NE(refusal(task).find("data_shift.rows must lie in [1, 15]"), std::string::npos);
}

TEST(TaskPlan, KlSendsDistinctPointsAndSplitsTheSkellamMeanOverTheThreshold) {
  const std::string reference = write_counts("plan_pi.txt", 50, 5000, 0);
  json task = base_task("kl", "dist");
  task["kl"] = {{"reference", reference}, {"rounds", 200}, {"lambda", 0.1}};
  const TaskPlan plan = plan_task(task, "", 0, /*noise_seed=*/9);
  EXPECT_EQ(plan.task.kind, fedstat_v1_TaskKind_KL_ANSWERS);
  ASSERT_FALSE(plan.data.empty());
  EXPECT_EQ(plan.task.vector_length, plan.data.size() + 1);
  EXPECT_EQ(plan.task.data_words, plan.data.size());
  // μ/threshold per device: the same μ the estimator's accountant gives for this plan.
  const ItemCounts pi = read_item_counts(reference);
  Seed256 seed;
  seed.bytes[31] = 0x2a;
  SeededStream stream(seed, 1);
  RandomBits bits(stream);
  const KlPlan kl_plan = plan_kl(pi, 200, 12, 1.0, bits);
  const std::set<uint64_t> asked(kl_plan.points.begin(), kl_plan.points.end());
  EXPECT_EQ(plan.data, std::vector<uint64_t>(asked.begin(), asked.end()));  // ascending
  KlOptions options;
  options.model = KlModel::kDist;
  options.lambda = 0.1;
  EXPECT_DOUBLE_EQ(plan.task.device_noise_lambda, kl_dist_noise(kl_plan, options).sum_lambda / 6);

  // Exact counts of P = Π at the points (no noise in the answers): D_KL(Π‖Π) ≈ 0 within the
  // noise the accountant's μ adds to each sum.
  std::vector<uint64_t> sum(plan.task.vector_length, 0);
  for (size_t i = 0; i < plan.data.size(); ++i) {
    sum[i] = pi.count(static_cast<uint32_t>(plan.data[i]));
  }
  sum.back() = pi.total;
  const json result = plan.estimate(sum, 12);
  ASSERT_TRUE(result["estimate"].is_number()) << result.dump();
  EXPECT_LT(std::abs(result["estimate"].get<double>()), 0.05) << result.dump();
}

}  // namespace
}  // namespace host
}  // namespace fedstat

namespace fedstat {
namespace host {
namespace {

// A trusted task's aggregate is exact: its hash would single out the last unknown record, so only
// results whose aggregate is itself a release (none, dist) name it.
TEST(TaskPlan, OnlyReleasedAggregatesArePublishedWithTheirHash) {
  const std::string reference = write_counts("plan_pi2.txt", 20, 500, 0);
  std::vector<uint64_t> sum;
  for (const char* trust : {"trusted", "dist", "none"}) {
    json task = base_task("kl", trust);
    task["kl"] = {{"reference", reference}, {"rounds", 50}, {"lambda", 0.1}};
    const TaskPlan plan = plan_task(task, "", 0, /*noise_seed=*/3);
    sum.assign(plan.task.vector_length, 40);
    const json result = plan.estimate(sum, 12);
    EXPECT_EQ(result.contains("sum_sha256"), std::string(trust) != "trusted") << trust;
  }
  EXPECT_EQ(sum_digest({}), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

}  // namespace
}  // namespace host
}  // namespace fedstat
