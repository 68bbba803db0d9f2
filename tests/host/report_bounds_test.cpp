// The largest honest word per task kind (host_server/tasks/report_bounds.h): the extremes an
// honest device's SDK builder reaches pass, one step beyond is refused naming the word, and DIST
// (whose words the server never sees) has no check. The whole path through the rounds, with
// every kind, is tests/audit/rounds/word_bounds_test.cpp's.
#include "host_server/tasks/report_bounds.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "host_server/estimate/host_common.h"
#include "host_server/tasks/task_plan.h"
#include "nlohmann/json.hpp"
#include "sdk/client/contribution.h"
#include "sdk/quantise/quantise.h"

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

TEST(ReportBounds, KlCountsLieBetweenZeroAndTheDevicesOwnTotal) {
  const ReportCheck check = report_check(kl_task(fedstat_v1_TrustModel_TRUSTED, 3, 4));
  ASSERT_TRUE(check);
  EXPECT_FALSE(check({0, 7, 7, 7}));  // every count at its most: the total
  EXPECT_FALSE(check({0, 0, 0, 0}));
  const auto above = check({0, 8, 7, 7});
  ASSERT_TRUE(above);
  EXPECT_EQ(above->rfind("word 1 ", 0), 0u) << *above;
  const auto negative = check({~uint64_t{0}, 0, 0, 7});  // −1 as int64
  ASSERT_TRUE(negative);
  EXPECT_EQ(negative->rfind("word 0 ", 0), 0u) << *negative;
  // Four devices' totals must sum below 2^63: at most (2^63 − 1)/4 each.
  const uint64_t largest = static_cast<uint64_t>(std::numeric_limits<int64_t>::max() / 4);
  EXPECT_FALSE(check({0, 0, 0, largest}));
  const auto wraps = check({0, 0, 0, largest + 1});
  ASSERT_TRUE(wraps);
  EXPECT_EQ(wraps->rfind("word 3 ", 0), 0u) << *wraps;
}

TEST(ReportBounds, DistAndUnknownKindsHaveNoCheck) {
  EXPECT_FALSE(report_check(kl_task(fedstat_v1_TrustModel_DIST, 3, 4)));
  fedstat_v1_Task unknown = kl_task(fedstat_v1_TrustModel_NONE, 3, 4);
  unknown.kind = fedstat_v1_TaskKind_TASK_KIND_UNSPECIFIED;
  EXPECT_FALSE(report_check(unknown));
}

TEST(ReportBounds, ASketchRowIsBoundedByTheTotalTimesTheLargestWeight) {
  fedstat_v1_Task t = fedstat_v1_Task_init_zero;
  t.kind = fedstat_v1_TaskKind_DATA_SHIFT;
  t.trust = fedstat_v1_TrustModel_NONE;
  t.which_parameters = fedstat_v1_Task_data_shift_tag;
  t.parameters.data_shift.rows = 2;
  t.parameters.data_shift.width = 2;
  t.bits = 64;
  t.vector_length = 5;
  t.max_clients = 2;
  const ReportCheck check = report_check(t);
  ASSERT_TRUE(check);
  const int64_t w = int64_t{1} << 35;  // one item of the largest weight, counted 3 times
  const auto word = [](int64_t v) { return static_cast<uint64_t>(v); };
  EXPECT_FALSE(check({word(3 * w), 0, 0, word(-3 * w), 3}));
  EXPECT_FALSE(check({word(w), word(-2 * w), word(2 * w), word(w), 3}));
  const auto beyond = check({word(w), word(-2 * w - 1), 0, 0, 3});
  ASSERT_TRUE(beyond);
  EXPECT_EQ(beyond->rfind("word 1 ", 0), 0u) << *beyond;
  const auto second_row = check({0, 0, word(2 * w), word(w + 1), 3});
  ASSERT_TRUE(second_row);
  EXPECT_EQ(second_row->rfind("word 3 ", 0), 0u) << *second_row;
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
