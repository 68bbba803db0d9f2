// The second privacy review of issue 39's device fixes, finding B2 (branch review2,
// tests/review2/device_review_test.cpp): a task the device was already charged for, offered
// again byte for byte (a malicious server, or an honest one whose earlier decline was lost on the
// wire), was charged again although declining it again need not look at the app's data: the
// ledger keeps the task id of every spend. The Client now declines such a task TASK_CLOSED
// (SessionResult::kDeclinedAlreadyCharged) before it reads the TaskData, charges nothing and
// computes nothing. The paths that legitimately see one task id twice keep working: a round the
// channel cut off is resumed before this check (tests/client: the resume tests), a round a reboot
// interrupted is still declined kDeclinedInterrupted, and a heterogeneity task's two stages carry
// two ids (host_server/tasks/heterogeneity_plan.h refuses stage2_id = id).
// Against the scripted one-connection server of tests/client. Paper: none.
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

using client::SessionResult;

class AuditRepeatOffer : public StorageTest {};

// B2, the reviewer's test: the same Task three times to a device without examples. The first
// offer is charged and declined NO_DATA (issue 39's first review, F4: a data decline costs what
// an answer costs); the two repeats are declined TASK_CLOSED for nothing.
TEST_F(AuditRepeatOffer, Property_TheSameTaskDeclinedTwiceIsChargedOnce) {
  HistogramData data(nullptr);
  Device device(202, 1 << 20, data, /*budget=*/100);
  ASSERT_TRUE(device.init_status.ok());
  const fedstat_v1_Task task = dist_model_task(7, 3.0);
  const double charge = client::device_spend(task).value().epsilon;
  for (int offer = 0; offer < 3; ++offer) {
    Session s = run(device, task, model_bits({0, 0, 0, 0}));
    ASSERT_TRUE(s.outcome.ok()) << s.outcome.status().message();
    ASSERT_TRUE(s.seen.replied) << "offer " << offer;
    EXPECT_FALSE(s.seen.reply.accept);
    if (offer == 0) {
      EXPECT_EQ(s.outcome.value().result, SessionResult::kDeclinedNoData);
      EXPECT_EQ(s.seen.reply.reason, fedstat_v1_ErrorAction_NO_DATA);
    } else {
      EXPECT_EQ(s.outcome.value().result, SessionResult::kDeclinedAlreadyCharged)
          << "offer " << offer;
      EXPECT_EQ(s.seen.reply.reason, fedstat_v1_ErrorAction_TASK_CLOSED) << "offer " << offer;
    }
  }
  EXPECT_DOUBLE_EQ(device.spent(), charge)
      << "the byte-identical task 7 was charged " << device.spent() / charge << " times";
}

// A task the device answered, offered again: not answered twice (a second release of the same
// data, with fresh noise, would cost a second charge), declined free before anything is computed.
TEST_F(AuditRepeatOffer, AnAnsweredTaskOfferedAgainIsDeclinedWithoutASecondChargeOrReport) {
  OwnedHistogram h(3);
  HistogramData data(&h.histogram);
  Device device(203, 1 << 20, data);
  ASSERT_TRUE(device.init_status.ok());
  std::vector<uint64_t> points;
  const fedstat_v1_Task kl = kl_task(fedstat_v1_TrustModel_TRUSTED, points);  // ε = 1
  Session first = run(device, kl, points);
  ASSERT_TRUE(first.outcome.ok()) << first.outcome.status().message();
  ASSERT_EQ(first.outcome.value().result, SessionResult::kCompleted);
  ASSERT_EQ(first.seen.report.size(), kl.vector_length);
  const double spent = device.spent();
  EXPECT_DOUBLE_EQ(spent, kl.epsilon);
  const size_t drawn = device.random->drawn;

  Session again = run(device, kl, points);
  ASSERT_TRUE(again.outcome.ok()) << again.outcome.status().message();
  EXPECT_EQ(again.outcome.value().result, SessionResult::kDeclinedAlreadyCharged);
  EXPECT_EQ(again.outcome.value().task_id, kl.task_id);
  ASSERT_TRUE(again.seen.replied);
  EXPECT_FALSE(again.seen.reply.accept);
  EXPECT_EQ(again.seen.reply.reason, fedstat_v1_ErrorAction_TASK_CLOSED);
  EXPECT_TRUE(again.seen.report.empty()) << "the task was answered twice";
  EXPECT_DOUBLE_EQ(device.spent(), spent) << "the repeat was charged";
  EXPECT_EQ(device.random->drawn, drawn) << "the repeat drew randomness: something was computed";

  // Another task (another id) is charged and answered as before.
  fedstat_v1_Task next = kl;
  next.task_id = kl.task_id + 1;
  Session other = run(device, next, points);
  ASSERT_TRUE(other.outcome.ok()) << other.outcome.status().message();
  EXPECT_EQ(other.outcome.value().result, SessionResult::kCompleted);
  EXPECT_DOUBLE_EQ(device.spent(), spent + next.epsilon);
}

// What the ledger's record answers is a fact about charges, which depend only on the Task and the
// device's configuration (checks 1–6), never on the app's data: a task refused for its budget
// was not charged, and is checked again (and charged) once the budget allows it.
TEST_F(AuditRepeatOffer, ATaskDeclinedBeforeTheChargeIsCheckedAgainWhenReoffered) {
  OwnedHistogram h(4);
  HistogramData data(&h.histogram);
  std::vector<uint64_t> points;
  fedstat_v1_Task kl = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  kl.epsilon = 2;
  Device device(204, 1 << 20, data, /*budget=*/1.5);
  ASSERT_TRUE(device.init_status.ok());
  Session refused = run(device, kl, points);
  ASSERT_TRUE(refused.outcome.ok()) << refused.outcome.status().message();
  EXPECT_EQ(refused.outcome.value().result, SessionResult::kDeclinedBudget);
  EXPECT_EQ(device.spent(), 0);
  kl.epsilon = 1;  // the server lowers it: the same id, now within the budget
  Session answered = run(device, kl, points);
  ASSERT_TRUE(answered.outcome.ok()) << answered.outcome.status().message();
  EXPECT_EQ(answered.outcome.value().result, SessionResult::kCompleted);
  EXPECT_DOUBLE_EQ(device.spent(), 1);
}

// Third review of B2 (R3-3): the ledger keeps task id 0 for spends of no task
// (BudgetLedger::holds_task(0) is false), so a Task numbered 0 escaped the check above — charged
// and answered again at every offer (before the fix: three answers, ε 3 spent; and a DIST offer
// of id 0 to a device without examples charged 3 × 3). Now validate_task refuses id 0: declined
// REFUSED, free, at every offer, the data never read.
TEST_F(AuditRepeatOffer, ATaskNumberedZeroIsRefusedFreeAtEveryOffer) {
  OwnedHistogram h(1);
  HistogramData data(&h.histogram);
  Device device(303, 1 << 20, data, /*budget=*/100);
  ASSERT_TRUE(device.init_status.ok());
  std::vector<uint64_t> points;
  fedstat_v1_Task kl = kl_task(fedstat_v1_TrustModel_TRUSTED, points);  // ε = 1
  kl.task_id = 0;
  HistogramData none(nullptr);
  Device empty(304, 1 << 20, none, /*budget=*/100);
  ASSERT_TRUE(empty.init_status.ok());
  fedstat_v1_Task dist = dist_model_task(1, 3.0);  // calibrated as id 1, then numbered 0
  dist.task_id = 0;
  for (int offer = 0; offer < 3; ++offer) {
    for (Session s : {run(device, kl, points), run(empty, dist, model_bits({0, 0, 0, 0}))}) {
      ASSERT_FALSE(s.outcome.ok()) << "offer " << offer << ": task 0 was not refused";
      EXPECT_EQ(s.outcome.status().code(), StatusCode::kInvalidArgument);
      ASSERT_TRUE(s.seen.replied);
      EXPECT_FALSE(s.seen.reply.accept);
      EXPECT_EQ(s.seen.reply.reason, fedstat_v1_ErrorAction_REFUSED);
      EXPECT_TRUE(s.seen.report.empty());
    }
  }
  EXPECT_EQ(device.spent(), 0) << "task 0 was charged";
  EXPECT_EQ(empty.spent(), 0) << "task 0 was charged";
  EXPECT_EQ(device.ledger.size(), 0u);
}

}  // namespace
}  // namespace client_test
}  // namespace fedstat
