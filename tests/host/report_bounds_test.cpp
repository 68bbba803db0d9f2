// The largest honest word per task kind (host_server/tasks/report_bounds.h): the extremes an
// honest device's SDK builder reaches pass, one step beyond is refused naming the word, and DIST
// (whose words the server never sees) has no check. The whole path through the rounds, with
// every kind, is tests/audit/rounds/word_bounds_test.cpp's.
#include "host_server/tasks/report_bounds.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "host_server/estimate/host_common.h"
#include "host_server/tasks/task_plan.h"
#include "nlohmann/json.hpp"
#include "sdk/client/contribution.h"
#include "sdk/histogram/sparse_histogram.h"
#include "sdk/quantise/quantise.h"
#include "sdk/sketch/shift_sketch.h"
#include "tests/store/temp_dir.h"

namespace fedstat {
namespace host {
namespace {

using nlohmann::json;

fedstat_v1_Task kl_task(fedstat_v1_TrustModel trust, uint32_t points, uint32_t max_clients) {
  fedstat_v1_Task t = fedstat_v1_Task_init_zero;
  t.kind = fedstat_v1_TaskKind_KL_ANSWERS;
  t.trust = trust;
  t.bits = 64;
  t.vector_length = points + 1;
  t.max_clients = max_clients;
  return t;
}

// A count is one of the device's items at a query point, and the points are distinct: each count
// and their sum at most the total. (This test once called {7, 7, 7, 7} honest: 21 items counted
// out of 7 — the privacy review's F5.)
TEST(ReportBounds, KlCountsLieBetweenZeroAndTheDevicesOwnTotal) {
  const ReportCheck check = report_check(kl_task(fedstat_v1_TrustModel_TRUSTED, 3, 4));
  ASSERT_TRUE(check);
  EXPECT_FALSE(check({0, 7, 0, 7}));  // one count at its most: the total
  EXPECT_FALSE(check({2, 3, 2, 7}));  // every item at a query point
  EXPECT_FALSE(check({0, 0, 0, 0}));
  const auto above = check({0, 8, 0, 7});
  ASSERT_TRUE(above);
  EXPECT_EQ(above->rfind("word 1 ", 0), 0u) << *above;
  const auto summed = check({3, 2, 3, 7});  // 8 items counted out of 7
  ASSERT_TRUE(summed);
  EXPECT_EQ(summed->rfind("word 2 ", 0), 0u) << *summed;
  EXPECT_TRUE(check({7, 7, 7, 7}));
  const auto negative = check({~uint64_t{0}, 0, 0, 7});  // −1 as int64
  ASSERT_TRUE(negative);
  EXPECT_EQ(negative->rfind("word 0 ", 0), 0u) << *negative;
  // Four devices' totals must sum below 2^63: at most (2^63 − 1)/4 each.
  const uint64_t largest = static_cast<uint64_t>(std::numeric_limits<int64_t>::max() / 4);
  EXPECT_FALSE(check({largest, 0, 0, largest}));
  const auto wraps = check({0, 0, 0, largest + 1});
  ASSERT_TRUE(wraps);
  EXPECT_EQ(wraps->rfind("word 3 ", 0), 0u) << *wraps;
  // Counts whose sum passes 2^64 do not wrap into range.
  const uint64_t huge = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  const ReportCheck one = report_check(kl_task(fedstat_v1_TrustModel_NONE, 3, 1));
  EXPECT_FALSE(one({huge, 0, 0, huge}));
  EXPECT_TRUE(one({huge, huge, huge, huge}));
}

TEST(ReportBounds, DistAndUnknownKindsHaveNoCheck) {
  EXPECT_FALSE(report_check(kl_task(fedstat_v1_TrustModel_DIST, 3, 4)));
  fedstat_v1_Task unknown = kl_task(fedstat_v1_TrustModel_NONE, 3, 4);
  unknown.kind = fedstat_v1_TaskKind_TASK_KIND_UNSPECIFIED;
  EXPECT_FALSE(report_check(unknown));
}

// A data-shift task (trust none, or trusted with local noise) of R = 3, w = 16, k = 64 over the
// candidates [0, 40): the SDK's builder on `items` (id, count).
fedstat_v1_Task data_shift_task(fedstat_v1_TrustModel trust) {
  const bool none = trust == fedstat_v1_TrustModel_NONE;
  const json declaration = {{"id", 3},
                            {"kind", "data_shift"},
                            {"trust", none ? "none" : "trusted"},
                            {"epsilon", none ? 0.0 : 2.0},
                            {"delta", none ? 0.0 : 1e-6},
                            {"min_clients", 2},
                            {"max_clients", 4},
                            {"deadline_seconds", 600},
                            {"seed", std::string(62, '0') + "7e"},
                            {"data_shift",
                             {{"rows", 3},
                              {"width", 16},
                              {"heap_capacity", 8},
                              {"k", 64},
                              {"domain", 40},
                              {"local_epsilon", none ? 0.0 : 2.0},
                              {"reference", "reference.txt"}}}};
  fedstat::testing::TempDir dir;
  std::ofstream(dir.file("reference.txt")) << "1 10\n7 5\n";
  return plan_task(declaration, dir.file(""), 0).task;
}

std::vector<uint64_t> sketch_of(const fedstat_v1_Task& task,
                                const std::vector<std::pair<uint32_t, uint32_t>>& items,
                                uint64_t noise_seed = 1) {
  std::vector<histogram::SparseEntry> table(256);
  histogram::SparseHistogram h;
  EXPECT_TRUE(h.init(Span<histogram::SparseEntry>(table.data(), table.size())).ok());
  for (const auto& [id, count] : items) EXPECT_TRUE(h.add(id, count).ok());
  std::vector<uint64_t> scratch(client::scratch_bytes(task, h.capacity()).value() / 8 + 1);
  std::vector<uint64_t> out(task.vector_length);
  SeededBits bits(noise_seed, 4);
  const Status s = client::build_data_shift(
      task, h, bits.bits(),
      MutableByteSpan(reinterpret_cast<uint8_t*>(scratch.data()), scratch.size() * 8),
      Span<uint64_t>(out.data(), out.size()));
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

// Each counter's heaviest candidate M_b (the SDK's hashes and weights, one id at a time).
std::vector<uint64_t> heaviest_per_counter(const fedstat_v1_Task& task) {
  sketch::ShiftSketchParams p;
  p.rows = task.parameters.data_shift.rows;
  p.width = task.parameters.data_shift.width;
  p.heap_capacity = task.parameters.data_shift.heap_capacity;
  p.k = task.parameters.data_shift.k;
  std::copy(task.seed.bytes, task.seed.bytes + 32, p.seed.bytes);
  const sketch::SketchHashes hashes(p);
  std::vector<uint64_t> m(size_t{p.rows} * p.width, 0);
  for (uint32_t i = 0; i < task.parameters.data_shift.domain; ++i) {
    for (uint32_t r = 0; r < p.rows; ++r) {
      uint32_t bucket = 0;
      int sign = 1;
      hashes.locate(i, r, bucket, sign);
      m[size_t{r} * p.width + bucket] = std::max(m[size_t{r} * p.width + bucket], hashes.weight(i));
    }
  }
  return m;
}

// The honest extremes pass: every candidate at once, counts at the histogram's most (2^32 − 1:
// the total 40·(2^32 − 1) is above 2^28, yet no counter wraps), items far outside the domain
// (counted in the total, never sketched), the heaviest candidate of a counter alone, and with
// local noise every (noised) count. A row needing one item more than the total is refused,
// naming the counter, and so is a counter no candidate reaches that is not 0.
TEST(ReportBounds, ASketchRowNeedsNoMoreItemsThanTheDevicesTotal) {
  const fedstat_v1_Task task = data_shift_task(fedstat_v1_TrustModel_NONE);
  const ReportCheck check = report_check(task);
  ASSERT_TRUE(check);
  const uint32_t width = task.parameters.data_shift.width;
  std::vector<std::pair<uint32_t, uint32_t>> all, most, outside;
  for (uint32_t i = 0; i < 40; ++i) {
    all.push_back({i, 1 + i % 5});
    most.push_back({i, UINT32_MAX});
    outside.push_back({40 + i * 997, UINT32_MAX});
  }
  for (const auto& items : {all, most, outside}) {
    const std::vector<uint64_t> words = sketch_of(task, items);
    EXPECT_FALSE(check(words)) << *check(words);
  }
  EXPECT_EQ(sketch_of(task, outside)[3 * width], 40 * uint64_t{UINT32_MAX});
  for (int salt = 0; salt < 20; ++salt) {  // trusted: the stability histogram's noised counts
    const fedstat_v1_Task trusted = data_shift_task(fedstat_v1_TrustModel_TRUSTED);
    const ReportCheck private_check = report_check(trusted);
    const std::vector<uint64_t> words = sketch_of(trusted, all, 100 + salt);
    EXPECT_FALSE(private_check(words))
        << "noise seed " << 100 + salt << ": " << *private_check(words);
  }
  // The heaviest candidate of the whole domain, 5 times: the row holds 5·M in one counter.
  const std::vector<uint64_t> m = heaviest_per_counter(task);
  const auto heaviest = std::max_element(m.begin(), m.begin() + width);
  std::vector<uint64_t> words(task.vector_length, 0);
  words.back() = 5;
  words[static_cast<size_t>(heaviest - m.begin())] = 5 * *heaviest;
  // Rows 1 and 2: one counter each, at 5 × its own M (any counter a candidate reaches).
  for (uint32_t r = 1; r < 3; ++r) {
    for (uint32_t b = 0; b < width; ++b) {
      if (m[size_t{r} * width + b] != 0) {
        words[size_t{r} * width + b] = 0 - 5 * m[size_t{r} * width + b];
        break;
      }
    }
  }
  EXPECT_FALSE(check(words)) << *check(words);
  std::vector<uint64_t> beyond = words;
  beyond[static_cast<size_t>(heaviest - m.begin())] += 1;  // needs a sixth item
  const auto refused = check(beyond);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->rfind("word " + std::to_string(heaviest - m.begin()) + " ", 0), 0u)
      << *refused;
  // Spread over two counters of row 0: 3 items' worth and 2 items' worth pass, 3 and 2 + 1 not.
  std::vector<size_t> reached;
  for (uint32_t b = 0; b < width; ++b) {
    if (m[b] != 0) reached.push_back(b);
  }
  ASSERT_GE(reached.size(), 2u);
  std::vector<uint64_t> spread = words;
  for (uint32_t b = 0; b < width; ++b) spread[b] = 0;
  spread[reached[0]] = 3 * m[reached[0]];
  spread[reached[1]] = 0 - 2 * m[reached[1]];
  EXPECT_FALSE(check(spread)) << *check(spread);
  spread[reached[1]] -= 1;
  ASSERT_TRUE(check(spread));
  EXPECT_EQ(check(spread)->rfind("word " + std::to_string(reached[1]) + " ", 0), 0u);
  // A counter no candidate reaches (40 candidates over 48 counters leave some empty).
  const auto empty = std::find(m.begin(), m.end(), 0u);
  ASSERT_NE(empty, m.end());
  std::vector<uint64_t> stray(task.vector_length, 0);
  stray.back() = 1000;
  stray[static_cast<size_t>(empty - m.begin())] = 1;
  ASSERT_TRUE(check(stray));
  EXPECT_NE(check(stray)->find("no candidate"), std::string::npos) << *check(stray);
}

// A data-shift task no device takes (a domain of 0) is refused when its check is made.
TEST(ReportBounds, ADataShiftTaskNoDeviceTakesHasNoCheck) {
  fedstat_v1_Task task = data_shift_task(fedstat_v1_TrustModel_NONE);
  task.parameters.data_shift.domain = 0;
  EXPECT_THROW(report_check(task), std::invalid_argument);
}

// Heterogeneity (trust none), both stages: the SDK's builder at the extremes of [0, 1]^d — a
// vector of one 1 and zeros (the largest w·x entries), the constant vectors (w = W, 1/w = 1/W)
// and the half-half vector (variance 1/4: w = 4, 1/w = 1/4) — passes; one more unit beyond an
// entry's limit is refused.
TEST(ReportBounds, HeterogeneityEntriesStayInTheFixedPointRangeOfTheUnitCube) {
  const json declaration = {
      {"id", 21},
      {"kind", "heterogeneity"},
      {"trust", "none"},
      {"epsilon", 0.0},
      {"delta", 0.0},
      {"min_clients", 2},
      {"max_clients", 4},
      {"deadline_seconds", 600},
      {"seed", std::string(62, '0') + "5c"},
      {"heterogeneity", {{"dimension", 4}, {"p", 3}, {"max_weight", 8}, {"stage2_id", 22}}}};
  const TaskPlan one = plan_task(declaration, "", 1000);
  const std::vector<std::vector<double>> extremes = {
      {1, 0, 0, 0}, {0, 0, 0, 0}, {1, 1, 1, 1}, {1, 1, 0, 0}, {0.5, 0.25, 1, 0}};
  const auto build = [](const fedstat_v1_Task& task, const std::vector<double>& x,
                        const std::vector<uint64_t>& data) {
    SeededBits bits(3, 1);
    std::vector<uint64_t> out(task.vector_length);
    std::vector<uint64_t> scratch(client::scratch_bytes(task, 0).value() / 8 + 1);
    const Status s = client::build_heterogeneity(
        task, Span<const double>(x.data(), x.size()),
        Span<const uint64_t>(data.data(), data.size()), bits.bits(),
        MutableByteSpan(reinterpret_cast<uint8_t*>(scratch.data()), scratch.size() * 8),
        Span<uint64_t>(out.data(), out.size()));
    EXPECT_TRUE(s.ok()) << s.message();
    return out;
  };
  const ReportCheck first = report_check(one.task);
  ASSERT_TRUE(first);
  std::vector<uint64_t> sum(one.task.vector_length, 0);
  for (const auto& x : extremes) {
    const std::vector<uint64_t> words = build(one.task, x, {});
    EXPECT_FALSE(first(words)) << *first(words);
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += words[i];
  }
  const double scale = one.task.parameters.heterogeneity.scale;
  std::vector<uint64_t> x_above = build(one.task, {1, 0, 0, 0}, {});
  x_above[0] = static_cast<uint64_t>(scale * (1 + 0x1p-40)) + 2;
  ASSERT_TRUE(first(x_above));
  EXPECT_EQ(first(x_above)->rfind("word 0 ", 0), 0u);

  // Stage 2, from stage 1's published result: means in the middle, so the extremes' distances
  // are large.
  const TaskPlan two = one.next_stage(one.estimate(sum, 5).dump(), 2000);
  const ReportCheck second = report_check(two.task);
  ASSERT_TRUE(second);
  for (const auto& x : extremes) {
    const std::vector<uint64_t> words = build(two.task, x, two.data);
    EXPECT_FALSE(second(words)) << *second(words);
  }
  const double scale2 = two.task.parameters.heterogeneity.scale;
  std::vector<uint64_t> beyond = build(two.task, {1, 1, 1, 1}, two.data);
  beyond[1] = static_cast<uint64_t>(scale2 * 8 * 4 * (1 + 0x1p-40)) + 2;  // above W·d
  ASSERT_TRUE(second(beyond));
  EXPECT_EQ(second(beyond)->rfind("word 1 ", 0), 0u);
}

// A model update (trust none): the quantiser's output for updates far beyond the clip norm, in
// every direction tried, passes; a word pushed 3·γ·c further (the norm is then at least
// 3·γ·c minus the reach, about twice the reach) is refused.
TEST(ReportBounds, AModelUpdateStaysWithinTheQuantisersReach) {
  json declaration = {{"id", 7},
                      {"kind", "model_update"},
                      {"trust", "none"},
                      {"epsilon", 0.0},
                      {"delta", 0.0},
                      {"min_clients", 2},
                      {"max_clients", 4},
                      {"deadline_seconds", 600},
                      {"seed", std::string(62, '0') + "2a"}};
  declaration["model_update"] = {
      {"dimension", 5},  {"epochs", 10},         {"batches", 2},      {"averaging_interval", 10},
      {"eta0", 2.0},     {"mu", 0.001},          {"clip_norm", 10.0}, {"rotate", true},
      {"gamma", 4096.0}, {"beta", 0.6065306597}, {"bits", 32},        {"examples_per_client", 40}};
  const TaskPlan plan = plan_task(declaration, "", 0);
  const ReportCheck check = report_check(plan.task);
  ASSERT_TRUE(check);
  const quantise::QuantiseConfig q = client::model_update_config(plan.task).quantise;
  const size_t d = 5, D = plan.task.vector_length;
  SeededBits bits(11, 2);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<float> update(D, 0.0f);
    for (size_t k = 0; k < d; ++k) {
      update[k] = static_cast<float>(1000 * std::sin(1.7 * trial + 2.3 * k + 0.1));
    }
    std::vector<uint32_t> words32(D);
    ASSERT_TRUE(quantise::quantise(Span<float>(update.data(), D), d, q, nullptr, bits.bits(),
                                   Span<uint32_t>(words32.data(), D))
                    .ok());
    std::vector<uint64_t> words(words32.begin(), words32.end());
    EXPECT_FALSE(check(words)) << "trial " << trial << ": " << *check(words);
    words[2] = (words[2] + static_cast<uint64_t>(3 * q.gamma * q.clip_norm)) & 0xFFFFFFFFu;
    const auto refused = check(words);
    ASSERT_TRUE(refused) << "trial " << trial;
    EXPECT_NE(refused->find("word "), std::string::npos);
  }
}

}  // namespace
}  // namespace host
}  // namespace fedstat
