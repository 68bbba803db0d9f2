// Task plans: the Task message, data and estimator each declared kind gets (host_server/tasks).
#include "host_server/tasks/task_plan.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "host_server/estimate/client_emulation.h"
#include "host_server/estimate/dist_shift.h"
#include "host_server/estimate/host_common.h"
#include "host_server/estimate/kl_estimator.h"
#include "host_server/estimate/tv_estimator.h"
#include "sdk/client/contribution.h"
#include "sdk/quantise/quantise.h"
#include "sdk/secagg/graph_parameters.h"
#include "sdk/secagg/signed_keys.h"
#include "sdk/tasks/model_update_task.h"

namespace fedstat {
namespace host {
namespace {

using nlohmann::json;

// A Zipf-like item-count file over [0, n) with counts scale/(i+1), shifted by `offset` ids.
std::string write_counts(const std::string& name, uint32_t n, uint64_t scale, uint32_t offset) {
  // Per process: ctest runs tests in parallel processes that write the same names.
  const std::string path = ::testing::TempDir() + std::to_string(getpid()) + "_" + name;
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

// trust "dist" (issue 41): the hashed histogram's Task — B buckets of 32 bits, T = Δ/ε, s = the
// threshold — and an estimate from an emulated fleet's noised, wrapped 32-bit sum.
json dist_shift_task(const std::string& reference) {
  json task = base_task("data_shift", "dist");
  task["epsilon"] = 3.0;
  task["delta"] = 0.0;
  task["data_shift"] = {{"reference", reference}};
  return task;
}

TEST(TaskPlan, DistDataShiftPlansTheHashedHistogramAndEstimatesFromTheNoisedSum) {
  const std::string reference = write_counts("plan_dist_reference.txt", 300, 60000, 0);
  const TaskPlan plan = plan_task(dist_shift_task(reference), "", 1000, /*noise_seed=*/3);
  const fedstat_v1_Task& t = plan.task;
  EXPECT_EQ(t.kind, fedstat_v1_TaskKind_DATA_SHIFT);
  ASSERT_EQ(t.which_parameters, fedstat_v1_Task_data_shift_tag);
  const fedstat_v1_DataShiftParameters& d = t.parameters.data_shift;
  EXPECT_EQ(d.buckets, 40960u);  // 160 KiB of 32-bit words
  EXPECT_EQ(t.vector_length, 40960u);
  EXPECT_EQ(t.bits, 32u);
  EXPECT_DOUBLE_EQ(d.noise_scale, 1.0 / 3);  // item level: T = 1/ε
  EXPECT_EQ(t.threshold, 7u);                // max(⌈2·9/3⌉, ⌊12/2⌋ + 1)
  EXPECT_EQ(d.noise_shares, t.threshold);    // threshold shares make one discrete Laplace(T)
  EXPECT_EQ(d.max_events, 0u);
  EXPECT_EQ(d.rows + d.width + d.heap_capacity + d.k + d.domain, 0u);  // no sketch
  EXPECT_EQ(d.local_epsilon, 0.0);
  EXPECT_EQ(t.data_words, 0u);
  EXPECT_EQ(t.device_noise_lambda, 0.0);
  EXPECT_TRUE(plan.data.empty());
  // The device takes the Task and, with the threshold's shares honest (the semi-honest server),
  // is charged exactly the declared ε = 3, pure DP; were s more than the threshold, a device
  // would be charged more than declared (ln(s/threshold) per event).
  const Status valid = client::validate_task(t, client::all_task_kinds());
  EXPECT_TRUE(valid.ok()) << valid.message();
  const Result<client::DeviceSpend> spend = client::device_spend(t, client::all_task_kinds());
  ASSERT_TRUE(spend.ok()) << spend.status().message();
  EXPECT_NEAR(spend.value().epsilon, 3.0, 1e-9);
  EXPECT_EQ(spend.value().delta, 0.0);

  // 12 emulated devices as the Task says (clamp ⌊(2^31 − 1)/12⌋, 7 shares each): a fleet holding
  // the reference estimates ≈ 0, a shifted one close to the exact D_TV. The words are read as
  // signed 32-bit numbers: read unsigned, every negative noise share would be ≈ 2^32 of mass.
  // (At 4,096 buckets, declared as such, to keep the test quick under ASan.)
  json small = dist_shift_task(reference);
  small["data_shift"]["buckets"] = 4096;
  const TaskPlan plan4 = plan_task(small, "", 1000, /*noise_seed=*/3);
  DistShiftConfig config;
  config.buckets = plan4.task.parameters.data_shift.buckets;
  config.bits = t.bits;
  config.max_clients = t.max_clients;
  config.shares = d.noise_shares;
  config.noise_scale = d.noise_scale;
  Seed256 seed;
  std::memcpy(seed.bytes, t.seed.bytes, 32);
  auto fleet = [&](const ItemCounts& counts) {
    SeededBits split(3, 7);
    NoiseBits noise = NoiseBits::seeded(5);
    return dist_shift_fleet_sum(split_across_clients(counts, 12, split.bits()), seed, config, noise,
                                false);
  };
  const ItemCounts same = read_item_counts(reference);
  const json zero = plan4.estimate(fleet(same), 12);
  EXPECT_LT(zero["estimate"].get<double>(), 0.02) << zero.dump();
  const ItemCounts shifted =
      read_item_counts(write_counts("plan_dist_shifted.txt", 300, 60000, 30));
  const double exact = exact_tv(same, shifted);
  const json moved = plan4.estimate(fleet(shifted), 12);
  EXPECT_NEAR(moved["estimate"].get<double>(), exact, 0.03) << moved.dump();
  EXPECT_EQ(moved["contributors"].get<uint32_t>(), 12u);
  EXPECT_EQ(moved["buckets"].get<uint32_t>(), 4096u);
  // The same sum gives the same bytes (no noise drawn on the host).
  EXPECT_EQ(plan4.estimate(fleet(shifted), 12).dump(), moved.dump());
  EXPECT_THROW(plan.estimate(std::vector<uint64_t>(100, 0), 12), std::invalid_argument);
  // A sum with no positive bucket publishes no estimate.
  const json none = plan.estimate(std::vector<uint64_t>(40960, 0xFFFFFFFFu), 12);
  EXPECT_TRUE(none["estimate"].is_null()) << none.dump();

  // Up to 10^7 devices (the sparse graph): each bucket clamped to ⌊(2^31 − 1)/10^7⌋ = 214, so the
  // fleet's exact sum fits a 32-bit word's positive half; s is the sparse threshold; the device
  // takes the Task.
  json big = dist_shift_task(reference);
  big["min_clients"] = 1000000;
  big["max_clients"] = 10000000;
  const fedstat_v1_Task b = plan_task(big, "", 0).task;
  EXPECT_NE(b.secagg_degree, 0u);
  EXPECT_EQ(b.parameters.data_shift.noise_shares, b.threshold);
  EXPECT_EQ(client::data_shift_dist_bucket_limit(b), 214u);
  EXPECT_LE(client::data_shift_dist_bucket_limit(b) * b.max_clients, (uint64_t{1} << 31) - 1);
  const Status big_valid = client::validate_task(b, client::all_task_kinds());
  EXPECT_TRUE(big_valid.ok()) << big_valid.message();

  // User level: m = 100 events per device, T = 2m/ε (Δ = 2m: two bounded histograms of one
  // device are 2m apart); a smaller B as declared.
  json user = dist_shift_task(reference);
  user["data_shift"]["max_events"] = 100;
  user["data_shift"]["buckets"] = 2048;
  const fedstat_v1_Task u = plan_task(user, "", 0).task;
  EXPECT_DOUBLE_EQ(u.parameters.data_shift.noise_scale, 200.0 / 3);
  // The device's charge for it is the declared ε: the planner's Δ is the device's.
  const Result<client::DeviceSpend> user_spend = client::device_spend(u, client::all_task_kinds());
  ASSERT_TRUE(user_spend.ok()) << user_spend.status().message();
  EXPECT_NEAR(user_spend.value().epsilon, 3.0, 1e-12);
  EXPECT_EQ(u.parameters.data_shift.max_events, 100u);
  EXPECT_EQ(u.vector_length, 2048u);
}

TEST(TaskPlan, DistDataShiftRefusesHostileDeclarationsByName) {
  const std::string reference = write_counts("plan_dist_reference2.txt", 10, 100, 0);
  auto refusal = [&](const json& task) {
    try {
      plan_task(task, "", 0);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refusal(dist_shift_task(reference)), "accepted");
  json task = dist_shift_task(reference);
  task["epsilon"] = 0.0;
  EXPECT_NE(refusal(task).find("epsilon/delta must be > 0"), std::string::npos) << refusal(task);
  task["epsilon"] = std::nan("");
  EXPECT_NE(refusal(task).find("task.epsilon must be"), std::string::npos) << refusal(task);
  task = dist_shift_task(reference);
  task["data_shift"]["buckets"] = 0;
  EXPECT_NE(refusal(task).find("data_shift.buckets must lie in [1, 4194304]"), std::string::npos)
      << refusal(task);
  task["data_shift"]["buckets"] = (1 << 22) + 1;
  EXPECT_NE(refusal(task).find("data_shift.buckets must lie in [1, 4194304]"), std::string::npos)
      << refusal(task);
  task["data_shift"]["buckets"] = -5;
  EXPECT_NE(refusal(task).find("data_shift.buckets"), std::string::npos) << refusal(task);
  for (const char* field : {"rows", "width", "heap_capacity", "k", "domain", "local_epsilon"}) {
    task = dist_shift_task(reference);
    task["data_shift"][field] = 1;
    EXPECT_NE(refusal(task).find(std::string("data_shift.") + field + " is a sketch field"),
              std::string::npos)
        << refusal(task);
  }
  task = dist_shift_task(reference);
  task["data_shift"]["max_events"] = 1 << 20;  // T = 2^20/3 > 10^4
  EXPECT_NE(refusal(task).find("noise scale T"), std::string::npos) << refusal(task);
  task["data_shift"]["max_events"] = -1;
  EXPECT_NE(refusal(task).find("data_shift.max_events"), std::string::npos) << refusal(task);
  task = dist_shift_task(reference);
  task["data_shift"]["bukets"] = 10;
  EXPECT_NE(refusal(task).find("unknown field 'bukets'"), std::string::npos) << refusal(task);
  task = dist_shift_task(reference);
  task["data_shift"].erase("reference");
  EXPECT_NE(refusal(task).find("data_shift.reference"), std::string::npos) << refusal(task);
  const std::string empty = write_counts("plan_dist_empty.txt", 0, 100, 0);
  try {
    plan_task(dist_shift_task(empty), "", 0);
    ADD_FAILURE() << "an empty reference was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no items"), std::string::npos) << e.what();
  }
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
  task["trust"] = "dist";  // a sketch under dist: the DIST task sends the hashed histogram
  task["epsilon"] = 1.0;
  task["delta"] = 1e-6;
  EXPECT_NE(refusal(task).find("data_shift.rows is a sketch field"), std::string::npos);
  // Nor trusted: the server adds no central noise to a sketch, so its exact counters would be
  // published (the device refuses such a task too: tests/audit/device).
  task["trust"] = "trusted";
  EXPECT_NE(refusal(task).find("data_shift.local_epsilon is 0"), std::string::npos);
  task = shift_task(reference);
  task["trust"] = "tagg";  // the TAgg noises kl aggregates only
  task["epsilon"] = 1.0;
  task["delta"] = 1e-6;
  EXPECT_NE(refusal(task).find("\"tagg\" is served for kl tasks only"), std::string::npos);
  task = shift_task(reference);
  task["epsilon"] = std::nan("");
  EXPECT_NE(refusal(task).find("task.epsilon must be"), std::string::npos);
  task = shift_task(reference);
  task["id"] = -1;
  EXPECT_NE(refusal(task).find("task.id must be a whole number"), std::string::npos);
  task = shift_task(reference);
  task["data_shift"]["rows"] = 16;
  EXPECT_NE(refusal(task).find("data_shift.rows must lie in [1, 15]"), std::string::npos);
  task = shift_task(reference);
  task["phase_timeout_seconds"] = 20;
  task["reconnect_grace_seconds"] = 21;  // longer than the phase it waits within
  EXPECT_NE(refusal(task).find("task.reconnect_grace_seconds must lie in [1, 20]"),
            std::string::npos);
  task["reconnect_grace_seconds"] = 0;
  EXPECT_NE(refusal(task).find("task.reconnect_grace_seconds must lie in [1, 20]"),
            std::string::npos);
  task = shift_task(reference);
  task["trust"] = "dist";  // 5 of up to 12 devices: two disjoint groups of 5 could exist
  task["epsilon"] = 1.0;
  task["delta"] = 1e-6;
  task["data_shift"] = {{"reference", reference}};
  task["threshold"] = 6;
  EXPECT_NE(refusal(task).find("needs more than half of max_clients (12)"), std::string::npos);
  task["threshold"] = 7;
  EXPECT_EQ(refusal(task), "accepted");
  task.erase("threshold");  // the default: ⌊12/2⌋ + 1, above ⌈2·9/3⌉
  EXPECT_EQ(plan_task(task, "", 0).task.threshold, 7u);
  task["max_clients"] = 18;  // no threshold within min_clients can be a majority of 18
  EXPECT_NE(refusal(task).find("needs more than half of max_clients (18)"), std::string::npos);
  // The default meets what signed sessions need (2t > max + ⌈5 %·max⌉): 200 devices, at least
  // 150: ⌈2·150/3⌉ = 100 and ⌊200/2⌋ + 1 = 101 are too few against 10 colluders, 106 is the
  // least that holds.
  task["max_clients"] = 200;
  task["min_clients"] = 150;
  const uint32_t t = plan_task(task, "", 0).task.threshold;
  EXPECT_EQ(t, 106u);
  EXPECT_TRUE(secagg::signed_complete_threshold_holds(t, 200, secagg::kDefaultCorruptFloorPpm));
  EXPECT_FALSE(
      secagg::signed_complete_threshold_holds(t - 1, 200, secagg::kDefaultCorruptFloorPpm));
  task = shift_task(reference);
  task["phase_timout_seconds"] = 20;  // misspelt: refused, not ignored
  EXPECT_NE(refusal(task).find("task: unknown field 'phase_timout_seconds'"), std::string::npos);
}

// DIST's secure-aggregation graph (task_plan.h): complete for small rounds, sparse (SecAgg+) by
// default from k + 1 ≤ max_clients / 8 and always above 1024, (k, t) from the SDK's bound, and a
// Task every device of default policy accepts.
TEST(TaskPlan, DistChoosesTheGraphAndTheDeviceAcceptsIt) {
  const std::string reference = write_counts("plan_reference_graph.txt", 10, 100, 0);
  auto refusal = [&](const json& task) {
    try {
      plan_task(task, "", 0);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  // A kl task: the graph is the same for every kind (kl's Task is one every device takes).
  auto dist = [&](uint32_t min_clients, uint32_t max_clients) {
    json task = base_task("kl", "dist");
    task["kl"] = {{"reference", reference}, {"rounds", 20}, {"lambda", 0.1}};
    task["min_clients"] = min_clients;
    task["max_clients"] = max_clients;
    return task;
  };
  const secagg::SecAggThreatModel defaults;
  auto device_accepts = [&](const fedstat_v1_Task& t) {
    const Status s = client::validate_task(t, client::all_task_kinds(), defaults);
    EXPECT_TRUE(s.ok()) << s.message();
  };
  // Small: the complete graph, the Task a protocol-3 device knows.
  fedstat_v1_Task t = plan_task(dist(9, 12), "", 0).task;
  EXPECT_EQ(t.secagg_degree, 0u);
  EXPECT_EQ(t.secagg_dropout_ppm, 0u);
  EXPECT_EQ(t.threshold, 7u);
  device_accepts(t);
  // Above 1024: sparse, (k, t) the bound's choice at 5 % / 5 %, written into the Task.
  t = plan_task(dist(100, 10000), "", 0).task;
  const secagg::SecAggGraph chosen = secagg::choose_sparse_graph(10000, defaults).value();
  EXPECT_EQ(t.secagg_degree, chosen.degree);
  EXPECT_EQ(t.threshold, chosen.threshold);
  EXPECT_EQ(t.secagg_dropout_ppm, 50000u);
  EXPECT_EQ(t.secagg_corrupt_ppm, 50000u);
  device_accepts(t);
  // The default's switch: sparse once the neighbourhood is an eighth of max_clients or less.
  for (uint32_t n : {300u, 500u, 1000u}) {
    const secagg::SecAggGraph g = secagg::choose_sparse_graph(n, defaults).value();
    const bool eighth = 8 * (g.degree + 1) <= n;
    EXPECT_EQ(plan_task(dist(200, n), "", 0).task.secagg_degree, eighth ? g.degree : 0u) << n;
  }
  EXPECT_EQ(plan_task(dist(200, 300), "", 0).task.secagg_degree, 0u);
  EXPECT_NE(plan_task(dist(200, 1000), "", 0).task.secagg_degree, 0u);
  // Declared: "complete" above 1024 is refused; "sparse" for a small round is taken.
  json task = dist(100, 2000);
  task["graph"] = "complete";
  EXPECT_NE(refusal(task).find("the complete graph allows at most 1024"), std::string::npos)
      << refusal(task);
  task = dist(40, 300);
  task["graph"] = "sparse";
  t = plan_task(task, "", 0).task;
  EXPECT_EQ(t.secagg_degree, secagg::choose_sparse_graph(300, defaults).value().degree);
  device_accepts(t);
  task["graph"] = "ring";
  EXPECT_NE(refusal(task).find("task.graph must be \"complete\" or \"sparse\""), std::string::npos);
  // A declared threshold must pass the bound: one below its range is refused with the range.
  task = dist(100, 10000);
  const secagg::SecAggThresholdRange range =
      secagg::sparse_threshold_range(10000, chosen.degree, defaults).value();
  task["threshold"] = range.min_threshold - 1;
  EXPECT_NE(refusal(task).find("thresholds " + std::to_string(range.min_threshold) + ".." +
                               std::to_string(range.max_threshold) + " pass"),
            std::string::npos)
      << refusal(task);
  task["threshold"] = range.max_threshold;
  EXPECT_EQ(plan_task(task, "", 0).task.threshold, range.max_threshold);
  // min_clients below the threshold: a round that could only abort.
  task = dist(10, 10000);
  EXPECT_NE(refusal(task).find("task.min_clients is 10, below the sparse graph's threshold"),
            std::string::npos)
      << refusal(task);
  // The threat model: more pessimistic rates give a larger neighbourhood; rates below the
  // device's default floor, or past γ + 2δ = 0.9, are refused.
  task = dist(1000, 10000);
  task["dropout_rate"] = 0.2;
  task["corrupt_fraction"] = 0.1;
  t = plan_task(task, "", 0).task;
  EXPECT_GT(t.secagg_degree, chosen.degree);
  EXPECT_EQ(t.secagg_dropout_ppm, 200000u);
  EXPECT_EQ(t.secagg_corrupt_ppm, 100000u);
  device_accepts(t);
  task["dropout_rate"] = 0.01;
  EXPECT_NE(refusal(task).find("task.dropout_rate is 0.01"), std::string::npos) << refusal(task);
  EXPECT_NE(refusal(task).find("min_assumed_dropout_ppm"), std::string::npos);
  task["dropout_rate"] = 0.3;
  task["corrupt_fraction"] = 0.4;
  EXPECT_NE(refusal(task).find("make no sparse graph possible"), std::string::npos)
      << refusal(task);
  task["corrupt_fraction"] = 1.0;
  EXPECT_NE(refusal(task).find("task.corrupt_fraction must be below 1"), std::string::npos)
      << refusal(task);
  // Outside DIST: no graph, and still at most 1024 devices.
  task = shift_task(reference);
  task["graph"] = "sparse";
  EXPECT_NE(refusal(task).find("task.graph is the secure-aggregation graph's"), std::string::npos);
  task = shift_task(reference);
  task["max_clients"] = 2000;
  EXPECT_NE(refusal(task).find("task.max_clients must lie in [9, 1024]"), std::string::npos);
}

// A signed server (ca_public_key) plans a sparse graph that also meets the devices' rule
// 2t > k + ⌈γ·max_clients⌉ (sdk/secagg/signed_keys.h: the server picks U1 knowing every ring
// position, so every colluder of the round can be one device's neighbour): the smallest such k,
// checked against a brute-force search over every smaller (k, t) and against the table the
// attack review computed independently (/work/notes/attack-d8.md: (16, 11), (60, 43), (98, 75)
// at 5 % / 5 %); none above the signed degree cap 126 (1,420 devices at 5 %).
TEST(TaskPlan, SignedSparseGraphMeetsTheDevicesRule) {
  const std::string reference = write_counts("plan_reference_signed.txt", 10, 100, 0);
  auto dist = [&](uint32_t min_clients, uint32_t max_clients) {
    json task = base_task("kl", "dist");
    task["kl"] = {{"reference", reference}, {"rounds", 20}, {"lambda", 0.1}};
    task["min_clients"] = min_clients;
    task["max_clients"] = max_clients;
    task["graph"] = "sparse";
    return task;
  };
  auto signed_refusal = [&](const json& task) {
    try {
      plan_task(task, "", 0, 0, /*signed_sessions=*/true);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const secagg::SecAggThreatModel defaults;
  const uint32_t floor_ppm = secagg::kDefaultCorruptFloorPpm;
  const std::map<uint32_t, std::pair<uint32_t, uint32_t>> expected = {
      {100, {16, 11}}, {500, {60, 43}}, {1000, {98, 75}}};
  for (const auto& [n, kt] : expected) {
    const fedstat_v1_Task t = plan_task(dist(n / 2, n), "", 0, 0, true).task;
    EXPECT_EQ(t.secagg_degree, kt.first) << n;
    EXPECT_EQ(t.threshold, kt.second) << n;
    EXPECT_TRUE(secagg::check_sparse_graph(n, t.secagg_degree, t.threshold, defaults).ok()) << n;
    EXPECT_TRUE(secagg::signed_sparse_threshold_holds(t.threshold, t.secagg_degree, n, floor_ppm));
    EXPECT_FALSE(
        secagg::signed_sparse_threshold_holds(t.threshold - 1, t.secagg_degree, n, floor_ppm) &&
        secagg::check_sparse_graph(n, t.secagg_degree, t.threshold - 1, defaults).ok())
        << n;
    for (uint32_t k = 2; k < t.secagg_degree; k += 2) {  // no smaller degree passes both
      for (uint32_t th = 2; th <= k + 1; ++th) {
        ASSERT_FALSE(secagg::check_sparse_graph(n, k, th, defaults).ok() &&
                     secagg::signed_sparse_threshold_holds(th, k, n, floor_ppm))
            << n << ": (" << k << ", " << th << ")";
      }
    }
    // Unsigned planning is unchanged: the bound's own choice.
    const secagg::SecAggGraph plain = secagg::choose_sparse_graph(n, defaults).value();
    EXPECT_EQ(plan_task(dist(n / 2, n), "", 0).task.secagg_degree, plain.degree) << n;
  }
  // 1,000 by default (no "graph"): still sparse for a signed server.
  json task = dist(500, 1000);
  task.erase("graph");
  EXPECT_EQ(plan_task(task, "", 0, 0, true).task.secagg_degree, 98u);
  // A declared threshold the bound takes but the devices' rule does not: refused, naming it.
  task["threshold"] = 74;
  EXPECT_NE(signed_refusal(task).find("too low for a signed sparse session"), std::string::npos)
      << signed_refusal(task);
  EXPECT_NE(signed_refusal(task).find("2 * threshold > degree + ceil(corrupt fraction"),
            std::string::npos);
  task["threshold"] = 75;
  EXPECT_EQ(signed_refusal(task), "accepted");
  // Above the cap: no signed sparse graph with k <= 126; the complete graph is refused above 1024.
  EXPECT_FALSE(secagg::choose_signed_sparse_graph(2000, defaults).ok());
  task = dist(1000, 2000);
  EXPECT_NE(signed_refusal(task).find("no signed sparse graph fits max_clients 2000"),
            std::string::npos)
      << signed_refusal(task);
  EXPECT_NE(signed_refusal(task).find("at most 1,420 devices"), std::string::npos);
  EXPECT_EQ(plan_task(task, "", 0).task.secagg_degree,
            secagg::choose_sparse_graph(2000, defaults).value().degree);  // unsigned: as before
}

TEST(TaskPlan, ReconnectGraceDefaultsToThirtySecondsWithinThePhase) {
  const std::string reference = write_counts("plan_reference_grace.txt", 10, 100, 0);
  json task = shift_task(reference);
  EXPECT_EQ(plan_task(task, "", 0).reconnect_grace_seconds, 30u);  // phase time-out 30 s
  task["phase_timeout_seconds"] = 12;
  EXPECT_EQ(plan_task(task, "", 0).reconnect_grace_seconds, 12u);
  task["reconnect_grace_seconds"] = 3;
  EXPECT_EQ(plan_task(task, "", 0).reconnect_grace_seconds, 3u);
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
  // DIST's default threshold: max(⌈2·9/3⌉, ⌊12/2⌋ + 1) = 7, a majority of max_clients.
  EXPECT_EQ(plan.task.threshold, 7u);
  EXPECT_DOUBLE_EQ(plan.task.device_noise_lambda, kl_dist_noise(kl_plan, options).sum_lambda / 7);

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

// A trusted (or tagg) task's aggregate is exact: its hash would single out the last unknown record,
// so only results whose aggregate is itself a release (none, dist) name it.
TEST(TaskPlan, OnlyReleasedAggregatesArePublishedWithTheirHash) {
  const std::string reference = write_counts("plan_pi2.txt", 20, 500, 0);
  std::vector<uint64_t> sum;
  for (const char* trust : {"trusted", "tagg", "dist", "none"}) {
    json task = base_task("kl", trust);
    task["kl"] = {{"reference", reference}, {"rounds", 50}, {"lambda", 0.1}};
    const TaskPlan plan = plan_task(task, "", 0, /*noise_seed=*/3);
    sum.assign(plan.task.vector_length, 40);
    const json result = plan.estimate(sum, 12);
    const bool exact = std::string(trust) == "trusted" || std::string(trust) == "tagg";
    EXPECT_EQ(result.contains("sum_sha256"), !exact) << trust;
  }
  EXPECT_EQ(sum_digest({}), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

// A separable data set at unit norm: label = sign(x0 − x1 + 0.1), rows through the bias (last
// feature 0.5). Written as "label,x1,...,x4".
std::string write_examples(const std::string& name, size_t rows, uint32_t salt) {
  // Per process: ctest runs tests in parallel processes that write the same names.
  const std::string path = ::testing::TempDir() + std::to_string(getpid()) + "_" + name;
  std::ofstream out(path);
  out.precision(17);
  for (size_t i = 0; i < rows; ++i) {
    const double a = std::sin(0.7 * i + salt), b = std::cos(1.3 * i + 2 * salt);
    double x[4] = {0.6 * a, 0.6 * b, 0.2 * std::sin(3.1 * i), 0.5};
    const double norm = std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3]) * 1.0001;
    out << (x[0] - x[1] + 0.1 * 0.5 > 0 ? 1 : -1);
    for (double v : x) out << "," << v / norm;
    out << "\n";
  }
  return path;
}

json model_task(const std::string& trust, const std::string& evaluation) {
  json task = base_task("model_update", trust);
  if (trust == "none") {
    task["epsilon"] = 0.0;
    task["delta"] = 0.0;
  }
  task["model_update"] = {{"dimension", 4},           {"epochs", 10},   {"batches", 2},
                          {"averaging_interval", 10}, {"eta0", 2.0},    {"mu", 0.001},
                          {"clip_norm", 10.0},        {"rotate", true}, {"gamma", 4096.0},
                          {"beta", 0.6065306597},     {"bits", 32},     {"examples_per_client", 40},
                          {"evaluation", evaluation}};
  return task;
}

// The app's examples as the Client reads them.
struct Examples final : client::ClientData {
  const LabelledExamples& rows;
  explicit Examples(const LabelledExamples& r) : rows(r) {}
  Result<tasks::Examples> examples() override { return rows.view(); }
};

std::vector<uint64_t> contribution(const TaskPlan& plan, const LabelledExamples& rows,
                                   uint64_t stream) {
  SeededBits bits(5, stream);
  const size_t scratch_size = client::scratch_bytes(plan.task, rows.count()).value();
  std::vector<uint64_t> scratch(scratch_size / 8 + 1), out(plan.task.vector_length);
  Examples app(rows);
  check(client::build_contribution(
            plan.task, app, Span<const uint64_t>(plan.data.data(), plan.data.size()), bits.bits(),
            MutableByteSpan(reinterpret_cast<uint8_t*>(scratch.data()), scratch_size),
            Span<uint64_t>(out.data(), out.size())),
        "contribution");
  return out;
}

TEST(TaskPlan, ModelUpdateAveragesTheFleetsUpdatesIntoTheGlobalModel) {
  const std::string evaluation = write_examples("plan_eval.csv", 400, 9);
  json declaration = model_task("none", evaluation);
  const std::vector<double> start = {0.25, -0.5, 0.0, 0.125};
  declaration["model_update"]["initial_model"] = start;
  const TaskPlan plan = plan_task(declaration, "", 0);
  EXPECT_EQ(plan.task.kind, fedstat_v1_TaskKind_MODEL_UPDATE);
  EXPECT_EQ(plan.task.bits, 32u);
  EXPECT_EQ(plan.task.vector_length, 4u);  // a power of two already
  EXPECT_EQ(plan.task.data_words, 4u);
  EXPECT_EQ(plan.task.device_noise_lambda, 0);
  ASSERT_EQ(plan.data.size(), 4u);
  for (size_t k = 0; k < 4; ++k) {  // TaskData: the doubles' bits
    double w;
    std::memcpy(&w, &plan.data[k], 8);
    EXPECT_EQ(w, start[k]);
  }
  ASSERT_TRUE(client::validate_task(plan.task).ok());

  // Four devices' reports (the SDK's builder, seeded): the published model is the start plus the
  // mean of the devices' local changes, each within the quantisation's β·√D/γ.
  constexpr uint32_t kDevices = 4;
  std::vector<uint64_t> sum(plan.task.vector_length, 0);
  std::vector<double> mean_local(4, 0);
  const tasks::ModelUpdateConfig config = client::model_update_config(plan.task);
  for (uint32_t c = 0; c < kDevices; ++c) {
    const LabelledExamples rows = read_labelled_examples(
        write_examples("plan_device" + std::to_string(c) + ".csv", 40, c), 4);
    const std::vector<uint64_t> words = contribution(plan, rows, c);
    for (size_t i = 0; i < sum.size(); ++i) sum[i] = (sum[i] + words[i]) & 0xFFFFFFFFu;
    // The device's local model: the trainer with the same bits (its shuffle is drawn first).
    SeededBits bits(5, c);
    std::vector<uint8_t> scratch(tasks::trainer_memory_bytes(rows.count(), 4) + 64);
    Arena arena(MutableByteSpan(scratch.data(), scratch.size()));
    std::vector<double> local(4);
    check(tasks::train_logistic(rows.view(), Span<const double>(start.data(), 4), config.trainer,
                                bits.bits(), arena, Span<double>(local.data(), 4)),
          "train");
    for (size_t k = 0; k < 4; ++k) mean_local[k] += local[k] / kDevices;
  }
  const json result = plan.estimate(sum, kDevices);
  EXPECT_EQ(result["kind"], "model_update");
  EXPECT_EQ(result["contributors"], kDevices);
  const std::vector<double> model = result["model"].get<std::vector<double>>();
  ASSERT_EQ(model.size(), 4u);
  // Each report's rounding moves it by at most β·√D (L2) in units of 1/γ; the mean of four by
  // at most that too (+ the float cast of the change).
  const double quantum = 0.6065306597 * 2 / 4096;
  double moved2 = 0;
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_NEAR(model[k], mean_local[k], quantum + 1e-6) << k;
    moved2 += (model[k] - start[k]) * (model[k] - start[k]);
  }
  EXPECT_GT(std::sqrt(moved2), 100 * quantum);  // the devices really moved the model
  // The evaluation: the SDK's loss and accuracy of the published model on the held-out rows.
  const LabelledExamples held_out = read_labelled_examples(evaluation, 4);
  const Span<const double> w(model.data(), 4);
  EXPECT_EQ(result["evaluation_examples"], 400);
  EXPECT_EQ(result["accuracy"].get<double>(), tasks::accuracy(held_out.view(), w));
  EXPECT_EQ(result["estimate"].get<double>(), result["accuracy"].get<double>());
  EXPECT_EQ(result["loss"].get<double>(), tasks::logistic_loss(held_out.view(), w, 0.001));
  EXPECT_GT(result["accuracy"].get<double>(), 0.9) << result.dump();
  EXPECT_TRUE(result.contains("sum_sha256"));
  // Without an evaluation set: the model only.
  declaration["model_update"].erase("evaluation");
  const json bare = plan_task(declaration, "", 0).estimate(sum, kDevices);
  EXPECT_EQ(bare["model"], result["model"]);
  EXPECT_FALSE(bare.contains("estimate"));
}

TEST(TaskPlan, ModelUpdateDistCalibratesTheSkellamShareAtThreshold) {
  const std::string evaluation = write_examples("plan_eval2.csv", 50, 3);
  const TaskPlan plan = plan_task(model_task("dist", evaluation), "", 0);
  EXPECT_EQ(plan.task.threshold, 7u);  // max(⌈2·9/3⌉, ⌊12/2⌋ + 1): a majority of max_clients 12
  const tasks::ModelUpdateConfig config = client::model_update_config(plan.task);
  const double at_threshold = tasks::model_update_lambda(config, 4, 7, 1.0, 1e-6).value();
  EXPECT_EQ(plan.task.device_noise_lambda, at_threshold);
  // Calibrated for max_clients shares each device would add less: a sum of only threshold
  // shares (all secure aggregation guarantees) would then carry too little noise.
  EXPECT_GT(at_threshold, 1.5 * tasks::model_update_lambda(config, 4, 12, 1.0, 1e-6).value());
  // What a device is charged for it is the declared ε.
  EXPECT_DOUBLE_EQ(client::device_spend(plan.task).value().epsilon, 1.0);
  const json result = plan.estimate(std::vector<uint64_t>(plan.task.vector_length, 0), 8);
  EXPECT_EQ(result["device_noise_lambda"].get<double>(), at_threshold);
}

TEST(TaskPlan, ModelUpdateRefusesEachBadFieldByName) {
  const std::string evaluation = write_examples("plan_eval3.csv", 20, 1);
  auto refusal = [&](const json& task) {
    try {
      plan_task(task, "", 0);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  auto with = [&](const std::string& field, const json& value, const std::string& trust = "dist") {
    json task = model_task(trust, evaluation);
    task["model_update"][field] = value;
    return refusal(task);
  };
  EXPECT_EQ(refusal(model_task("dist", evaluation)), "accepted");
  EXPECT_EQ(refusal(model_task("none", evaluation)), "accepted");
  const double nan = std::nan("");
  EXPECT_NE(with("eta0", nan).find("model_update.eta0 must be finite"), std::string::npos);
  EXPECT_NE(with("mu", -0.5).find("model_update.mu must be finite and in [0"), std::string::npos);
  EXPECT_NE(with("gamma", -1.0).find("model_update.gamma must be finite and in [0"),
            std::string::npos);
  EXPECT_NE(with("gamma", 0.0).find("model_update.gamma must be > 0"), std::string::npos);
  EXPECT_NE(with("clip_norm", nan).find("model_update.clip_norm must be finite"),
            std::string::npos);
  EXPECT_NE(with("beta", 0.4).find("model_update.beta must be finite and in [0.5"),
            std::string::npos);
  EXPECT_NE(with("epochs", -3).find("model_update.epochs must be a whole number"),
            std::string::npos);
  EXPECT_NE(with("bits", 33).find("model_update.bits must lie in [1, 32]"), std::string::npos);
  // 12 clients x γ·c = 491520 does not fit in 2^(18−1): the sum would wrap.
  EXPECT_NE(with("bits", 18).find("model_update.bits is too small"), std::string::npos);
  EXPECT_NE(with("eta0", 9.0).find("model_update.eta0/mu are refused by the trainer"),
            std::string::npos);
  EXPECT_NE(with("examples_per_client", 1)
                .find("model_update.examples_per_client must be >= "
                      "batches"),
            std::string::npos);
  EXPECT_NE(with("rotate", 1).find("model_update.rotate must be true or false"), std::string::npos);
  EXPECT_NE(with("initial_model", json::array({0.0, 1.0}))
                .find("model_update.initial_model must "
                      "be an array of dimension (4)"),
            std::string::npos);
  EXPECT_NE(with("initial_model", json::array({0.0, 1.0, nan, 0.0}))
                .find("model_update.initial_model[2] must be finite"),
            std::string::npos);
  json task = model_task("dist", evaluation);
  task["model_update"].erase("rotate");
  EXPECT_NE(refusal(task).find("model_update.rotate is missing"), std::string::npos);
  task = model_task("trusted", evaluation);
  EXPECT_NE(refusal(task).find("\"trusted\" is not served for model_update"), std::string::npos);
  task = model_task("dist", evaluation);
  task["delta"] = 0.0;  // the Skellam accountant needs δ > 0
  EXPECT_NE(refusal(task).find("epsilon/delta of this dist model_update task are refused"),
            std::string::npos);
  task = model_task("none", evaluation);
  task["epsilon"] = 1.0;  // nothing would pay for it
  EXPECT_NE(refusal(task).find("epsilon/delta must be 0"), std::string::npos);
  // An evaluation file of another dimension, or of rows the trainer could not take.
  EXPECT_NE(with("dimension", 3).find("plan_eval3.csv:1: 5 fields; a label and 3 features"),
            std::string::npos);
  const std::string long_rows = ::testing::TempDir() + "plan_long_rows.csv";
  std::ofstream(long_rows) << "1,0.5,0.5,0.5,0.5\n1,0.9,0.9,0,0\n";
  EXPECT_NE(with("evaluation", long_rows)
                .find("plan_long_rows.csv:2: the features' L2 norm is "
                      "above 1"),
            std::string::npos);
}

}  // namespace
}  // namespace host
}  // namespace fedstat
