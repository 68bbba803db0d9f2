// Issue 39 item 1: the device accepted whatever trust model and (ε, δ) the server named. A
// default-configured Client must decline a trust-NONE task, a TRUSTED task declared at ε = 1e-9,
// a task whose ledger charge exceeds the policy's ε or δ ceiling — each with TaskReply.reason
// POLICY, nothing read past the Task, charged, drawn or sent beyond the decline — and refuse a
// TRUSTED/TAGG data-shift task without local noise (no one noises its exact sketch). An app that
// opts in to NONE answers such a task as before. Against the scripted one-connection server of
// tests/client. Paper: none.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "sdk/client/client.h"
#include "sdk/client/contribution.h"
#include "sdk/client/task_policy.h"
#include "tests/client/client_test_support.h"
#include "tests/client/in_memory_channel.h"
#include "tests/client/scripted_server.h"

namespace fedstat {
namespace client_test {
namespace {

using client::PolicyRefusal;
using client::SessionResult;

class DevicePolicyTest : public StorageTest {};

// The session ended in a POLICY decline for `rule`, and the device did nothing else: no report,
// no message after the TaskReply, nothing charged, no randomness drawn.
void expect_policy_decline(const Session& s, Device& device, PolicyRefusal rule) {
  ASSERT_TRUE(s.outcome.ok()) << s.outcome.status().message();
  EXPECT_EQ(s.outcome.value().result, SessionResult::kDeclinedPolicy);
  EXPECT_EQ(s.outcome.value().policy_refusal, rule);
  ASSERT_TRUE(s.seen.replied);
  EXPECT_FALSE(s.seen.reply.accept);
  EXPECT_EQ(s.seen.reply.reason, fedstat_v1_ErrorAction_POLICY);
  EXPECT_STREQ(s.seen.reply.detail, "") << "the reason code only, no detail";
  EXPECT_TRUE(s.seen.report.empty());
  EXPECT_EQ(s.seen.extra_messages, 0u);
  EXPECT_EQ(device.ledger.size(), 0u);
  EXPECT_EQ(device.spent(), 0);
  EXPECT_EQ(device.random->drawn, 0u);
}

fedstat_v1_Task none_shift_task() {
  fedstat_v1_Task t = data_shift_task(fedstat_v1_TrustModel_NONE);
  t.epsilon = 0;
  t.delta = 0;
  return t;
}

TEST_F(DevicePolicyTest, NoneTaskIsDeclinedByADefaultClient) {
  OwnedHistogram h(1);
  HistogramData data(&h.histogram);
  Device device(21, 1 << 16, data);
  ASSERT_TRUE(device.init_status.ok());
  expect_policy_decline(run(device, none_shift_task(), {}), device, PolicyRefusal::kTrustModel);
  // A NONE KL task with TaskData: declined before the TaskData is read (the scripted server
  // stops sending once the device has closed), the same way.
  std::vector<uint64_t> points;
  fedstat_v1_Task kl = kl_task(fedstat_v1_TrustModel_NONE, points);
  kl.epsilon = 0;
  kl.delta = 0;
  expect_policy_decline(run(device, kl, points), device, PolicyRefusal::kTrustModel);
}

TEST_F(DevicePolicyTest, TrustedOrTaggTaskAtATinyEpsilonIsDeclined) {
  OwnedHistogram h(1);
  HistogramData data(&h.histogram);
  Device device(22, 1 << 16, data);
  std::vector<uint64_t> points;
  for (auto trust : {fedstat_v1_TrustModel_TRUSTED, fedstat_v1_TrustModel_TAGG}) {
    fedstat_v1_Task task = kl_task(trust, points);
    task.epsilon = 1e-9;  // exact words for a charge of nothing, as often as the server likes
    expect_policy_decline(run(device, task, points), device, PolicyRefusal::kExactEpsilonBelow);
  }
  // At the floor the same task is answered and charged the floor.
  fedstat_v1_Task at_floor = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  at_floor.epsilon = client::TaskPolicy().min_exact_epsilon;
  Session s = run(device, at_floor, points);
  ASSERT_TRUE(s.outcome.ok()) << s.outcome.status().message();
  EXPECT_EQ(s.outcome.value().result, SessionResult::kCompleted);
  EXPECT_DOUBLE_EQ(device.spent(), at_floor.epsilon);
}

TEST_F(DevicePolicyTest, ATaskChargedAboveTheEpsilonCeilingIsDeclinedLedgerUnchanged) {
  OwnedHistogram h(1);
  HistogramData data(&h.histogram);
  Device device(23, 1 << 20, data, /*budget=*/1000);  // the ledger alone would pay either task
  const double ceiling = client::TaskPolicy().max_epsilon;
  std::vector<uint64_t> points;
  // Declared above the ceiling.
  fedstat_v1_Task trusted = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  trusted.epsilon = 1.5 * ceiling;
  expect_policy_decline(run(device, trusted, points), device, PolicyRefusal::kEpsilonAboveMax);
  // Declared below it, but the device's own noise gives far more: the charge is what counts.
  fedstat_v1_Task dist = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  make_dist(dist, 10, 6);
  dist.device_noise_lambda = 1e-3;
  ASSERT_LT(dist.epsilon, ceiling);
  ASSERT_GT(client::device_spend(dist).value().epsilon, ceiling);
  expect_policy_decline(run(device, dist, points), device, PolicyRefusal::kEpsilonAboveMax);
  // A sketch whose local noise costs more than the ceiling, declared at ε = 0.5.
  fedstat_v1_Task shift = data_shift_task(fedstat_v1_TrustModel_TRUSTED, 15.0);
  ASSERT_LT(shift.epsilon, ceiling);
  expect_policy_decline(run(device, shift, {}), device, PolicyRefusal::kEpsilonAboveMax);
}

TEST_F(DevicePolicyTest, ADeltaAboveTheBoundIsDeclined) {
  OwnedHistogram h(1);
  HistogramData data(&h.histogram);
  Device device(24, 1 << 16, data);
  std::vector<uint64_t> points;
  fedstat_v1_Task task = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  task.delta = 1e-3;  // a 1-in-1000 chance that the guarantee fails outright
  ASSERT_GT(task.delta, client::TaskPolicy().max_delta);
  expect_policy_decline(run(device, task, points), device, PolicyRefusal::kDeltaAboveMax);
  // At the bound it is answered.
  task.delta = client::TaskPolicy().max_delta;
  Session s = run(device, task, points);
  ASSERT_TRUE(s.outcome.ok()) << s.outcome.status().message();
  EXPECT_EQ(s.outcome.value().result, SessionResult::kCompleted);
}

TEST_F(DevicePolicyTest, TrustedOrTaggDataShiftWithoutLocalNoiseIsRefused) {
  OwnedHistogram h(1);
  HistogramData data(&h.histogram);
  Device device(25, 1 << 16, data);
  // Accepting every trust model: the refusal is the task's own, not the policy's.
  client::TaskPolicy everything;
  everything.accepted_trust = client::kAcceptAll;
  ASSERT_TRUE(device.client.set_task_policy(everything).ok());
  for (auto trust : {fedstat_v1_TrustModel_TRUSTED, fedstat_v1_TrustModel_TAGG}) {
    const fedstat_v1_Task task = data_shift_task(trust, /*local_epsilon=*/0);
    const Status valid = client::validate_task(task);
    EXPECT_EQ(valid.code(), StatusCode::kInvalidArgument) << trust;
    EXPECT_NE(std::strstr(valid.message(), "local_epsilon"), nullptr) << valid.message();
    Session s = run(device, task, {});
    ASSERT_FALSE(s.outcome.ok()) << trust;
    EXPECT_EQ(s.outcome.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(std::strstr(s.outcome.status().message(), "local_epsilon"), nullptr);
    ASSERT_TRUE(s.seen.replied);
    EXPECT_FALSE(s.seen.reply.accept);
    EXPECT_EQ(s.seen.reply.reason, fedstat_v1_ErrorAction_REFUSED);
    EXPECT_TRUE(s.seen.report.empty());
    EXPECT_EQ(device.spent(), 0);
    EXPECT_EQ(device.random->drawn, 0u);
  }
}

TEST_F(DevicePolicyTest, AClientThatOptsInToNoneAnswersAsBefore) {
  OwnedHistogram h(1);
  HistogramData data(&h.histogram);
  Device device(26, 1 << 16, data);
  // Opted in through ClientConfig at init, as an app does.
  client::ClientConfig config;
  config.device_id = 26;
  config.wall_clock_seconds = fixed_clock;
  config.round_blob_name = device.round_name.c_str();
  config.task_policy.accepted_trust = client::kAcceptAll;
  ASSERT_TRUE(device.client
                  .init(config,
                        MutableByteSpan(reinterpret_cast<uint8_t*>(device.memory.data()),
                                        8 * device.memory.size()),
                        data, device.ledger, *device.random)
                  .ok());
  const fedstat_v1_Task task = none_shift_task();
  Session s = run(device, task, {});
  ASSERT_TRUE(s.outcome.ok()) << s.outcome.status().message();
  EXPECT_EQ(s.outcome.value().result, SessionResult::kCompleted);
  EXPECT_EQ(s.outcome.value().policy_refusal, PolicyRefusal::kNotRefused);
  ASSERT_TRUE(s.seen.reply.accept);
  SeededStream unused(test_seed(1), 0);  // no local noise: the exact sketch
  EXPECT_EQ(s.seen.report, expected_sketch(task, h.histogram, unused));
  EXPECT_EQ(device.spent(), 0);
}

TEST_F(DevicePolicyTest, AMalformedPolicyIsRefusedAndTheEarlierOneStays) {
  OwnedHistogram h(1);
  HistogramData data(&h.histogram);
  Device device(27, 1 << 16, data);
  ASSERT_TRUE(device.init_status.ok());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    const char* field;
    void (*mutate)(client::TaskPolicy&);
  };
  static double bad;
  const Case cases[] = {
      {"accepted_trust", [](client::TaskPolicy& p) { p.accepted_trust = 0; }},
      {"accepted_trust", [](client::TaskPolicy& p) { p.accepted_trust |= 1u << 7; }},
      {"max_epsilon", [](client::TaskPolicy& p) { p.max_epsilon = bad; }},
      {"max_epsilon", [](client::TaskPolicy& p) { p.max_epsilon = -1; }},
      {"max_epsilon", [](client::TaskPolicy& p) { p.max_epsilon = 0; }},
      {"max_delta", [](client::TaskPolicy& p) { p.max_delta = bad; }},
      {"max_delta", [](client::TaskPolicy& p) { p.max_delta = -1e-9; }},
      {"max_delta", [](client::TaskPolicy& p) { p.max_delta = 1; }},
      {"min_exact_epsilon", [](client::TaskPolicy& p) { p.min_exact_epsilon = bad; }},
      {"min_exact_epsilon", [](client::TaskPolicy& p) { p.min_exact_epsilon = -0.5; }},
      {"min_exact_epsilon", [](client::TaskPolicy& p) { p.min_exact_epsilon = 11; }},
  };
  for (double value : {nan, inf}) {
    bad = value;
    for (const Case& c : cases) {
      client::TaskPolicy policy;
      policy.accepted_trust = client::kAcceptAll;  // would accept the NONE task below
      c.mutate(policy);
      client::ClientConfig config;
      config.device_id = 27;
      config.wall_clock_seconds = fixed_clock;
      config.round_blob_name = device.round_name.c_str();
      config.task_policy = policy;
      const Status init =
          device.client.init(config,
                             MutableByteSpan(reinterpret_cast<uint8_t*>(device.memory.data()),
                                             8 * device.memory.size()),
                             data, device.ledger, *device.random);
      EXPECT_EQ(init.code(), StatusCode::kInvalidArgument) << c.field << " " << value;
      EXPECT_NE(std::strstr(init.message(), c.field), nullptr) << init.message();
      const Status set = device.client.set_task_policy(policy);
      EXPECT_EQ(set.code(), StatusCode::kInvalidArgument) << c.field << " " << value;
      EXPECT_NE(std::strstr(set.message(), c.field), nullptr) << set.message();
    }
  }
  // Neither refusal changed the Client: it still runs under the default policy.
  expect_policy_decline(run(device, none_shift_task(), {}), device, PolicyRefusal::kTrustModel);
}

TEST_F(DevicePolicyTest, ThePolicyIsCheckedBeforeTheInterruptedRoundAndTheAppData) {
  // A NONE task to a device that holds no data for it: the policy's refusal is the one
  // reported (the order of checks of client.h), not NO_DATA.
  HistogramData none_held(nullptr);
  Device device(28, 1 << 16, none_held);
  expect_policy_decline(run(device, none_shift_task(), {}), device, PolicyRefusal::kTrustModel);
}

}  // namespace
}  // namespace client_test
}  // namespace fedstat
