// The second privacy review of issue 39's device fixes, finding B1 (branch review2,
// tests/review2/device_review_test.cpp, Attack_ChargedNoDataDeclinesDrainTheBudgetOfADevice-
// ThatNeverAnswers): a decline that depends on the app's data is charged (issue 39's first
// review, F4), so a server could drain the budget of a device that holds no examples with model-
// update offers it never answers — four at ε 2.5 used up the default ε 10, and the device then
// declined the KL task it held data for. The remedy is configuration, which is free to consult:
// TaskPolicy::answered_kinds (default every kind) names the task kinds the app answers, and a
// task of another kind is declined POLICY (PolicyRefusal::kTaskKind) before the TaskData is read,
// the charge computed or anything drawn. An app that never holds model-update examples says so
// and is not drained. Against the scripted one-connection server of tests/client. Paper: none.
#include <gtest/gtest.h>

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

class AuditAnsweredKinds : public StorageTest {};

// B1. Default budget (ε 10 per window). The app holds a histogram (it answers KL) and no
// examples, and says so: it answers KL and data-shift tasks only.
TEST_F(AuditAnsweredKinds, Property_AnAppThatAnswersNoModelUpdatesIsNotDrainedByThem) {
  OwnedHistogram h(1);
  HistogramData data(&h.histogram);   // examples(): none (ClientData's default)
  Device device(201, 1 << 20, data);  // budget ε = 10
  ASSERT_TRUE(device.init_status.ok());
  client::TaskPolicy policy;
  policy.answered_kinds = client::kAnswerKlAnswers | client::kAnswerDataShift;
  ASSERT_TRUE(device.client.set_task_policy(policy).ok());
  ASSERT_LE(client::device_spend(dist_model_task(1, 2.5)).value().epsilon, policy.max_epsilon)
      << "the policy's other rules must take the task: only its kind declines it";
  for (uint32_t id = 1; id <= 8; ++id) {
    Session s = run(device, dist_model_task(id, 2.5), model_bits({0, 0, 0, 0}));
    ASSERT_TRUE(s.outcome.ok()) << s.outcome.status().message();
    EXPECT_EQ(s.outcome.value().result, SessionResult::kDeclinedPolicy) << "offer " << id;
    EXPECT_EQ(s.outcome.value().policy_refusal, PolicyRefusal::kTaskKind) << "offer " << id;
    ASSERT_TRUE(s.seen.replied);
    EXPECT_FALSE(s.seen.reply.accept);
    EXPECT_EQ(s.seen.reply.reason, fedstat_v1_ErrorAction_POLICY);
  }
  EXPECT_EQ(device.spent(), 0) << "a model-update offer the app does not answer was charged";
  EXPECT_EQ(device.random->drawn, 0u) << "something was computed for a declined kind";
  // The task it holds data for is answered.
  std::vector<uint64_t> points;
  const fedstat_v1_Task kl = kl_task(fedstat_v1_TrustModel_TRUSTED, points);  // ε = 1
  Session s = run(device, kl, points);
  ASSERT_TRUE(s.outcome.ok()) << s.outcome.status().message();
  EXPECT_EQ(s.outcome.value().result, SessionResult::kCompleted);
  EXPECT_DOUBLE_EQ(device.spent(), kl.epsilon);
}

// The kind rule comes first: a kind the app does not answer is declined POLICY naming it even
// when its trust model or charge would also be refused (the device never weighs its charge).
TEST_F(AuditAnsweredKinds, TheKindIsCheckedBeforeTheTrustModelAndTheCharge) {
  HistogramData data(nullptr);
  Device device(205, 1 << 20, data);
  ASSERT_TRUE(device.init_status.ok());
  client::TaskPolicy policy;
  policy.answered_kinds = client::kAnswerKlAnswers;
  ASSERT_TRUE(device.client.set_task_policy(policy).ok());
  fedstat_v1_Task costly = dist_model_task(9, 2.5);
  costly.epsilon = 50;  // above max_epsilon too
  const fedstat_v1_Task none = as_none(model_task(fedstat_v1_TrustModel_NONE));  // NONE too
  for (const fedstat_v1_Task& task : {costly, none}) {
    Session s = run(device, task, model_bits({0, 0, 0, 0}));
    ASSERT_TRUE(s.outcome.ok()) << s.outcome.status().message();
    EXPECT_EQ(s.outcome.value().result, SessionResult::kDeclinedPolicy);
    EXPECT_EQ(s.outcome.value().policy_refusal, PolicyRefusal::kTaskKind);
  }
  EXPECT_EQ(device.spent(), 0);
}

TEST_F(AuditAnsweredKinds, TheDefaultAnswersEveryKindAndAMalformedSetIsRefused) {
  const client::TaskPolicy defaults;
  EXPECT_EQ(defaults.answered_kinds, client::kAnswerAllKinds);
  for (fedstat_v1_TaskKind kind :
       {fedstat_v1_TaskKind_DATA_SHIFT, fedstat_v1_TaskKind_KL_ANSWERS,
        fedstat_v1_TaskKind_MODEL_UPDATE, fedstat_v1_TaskKind_HETEROGENEITY}) {
    EXPECT_TRUE(client::answers_kind(defaults, kind)) << kind;
  }
  EXPECT_FALSE(client::answers_kind(defaults, fedstat_v1_TaskKind_TASK_KIND_UNSPECIFIED));
  EXPECT_FALSE(client::answers_kind(defaults, 77));
  client::TaskPolicy kl_only;
  kl_only.answered_kinds = client::kAnswerKlAnswers;
  EXPECT_TRUE(client::answers_kind(kl_only, fedstat_v1_TaskKind_KL_ANSWERS));
  EXPECT_FALSE(client::answers_kind(kl_only, fedstat_v1_TaskKind_MODEL_UPDATE));
  for (uint32_t bad : {0u, 1u, client::kAnswerAllKinds | (1u << 5)}) {
    client::TaskPolicy p;
    p.answered_kinds = bad;
    const Status s = client::validate_task_policy(p);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(std::string(s.message()).find("answered_kinds"), std::string::npos) << s.message();
  }
  EXPECT_EQ(client::parse_answered_kinds("kl,model_update").value(),
            client::kAnswerKlAnswers | client::kAnswerModelUpdate);
  EXPECT_EQ(client::parse_answered_kinds("all").value(), client::kAnswerAllKinds);
  EXPECT_EQ(client::parse_answered_kinds("data_shift,heterogeneity").value(),
            client::kAnswerDataShift | client::kAnswerHeterogeneity);
  for (const char* bad : {"", "kl,", "models", "kl,,data_shift"}) {
    EXPECT_EQ(client::parse_answered_kinds(bad).status().code(), StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_EQ(client::parse_answered_kinds(nullptr).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace client_test
}  // namespace fedstat
