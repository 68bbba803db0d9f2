// The privacy review of issue 39 item 1 (tests/audit/review_privacy on branch review-privacy),
// findings F2–F4 against the device, as a malicious or curious server would try them:
//   F2  TRUSTED or TAGG tasks of kinds no honest fedstat-server noises (model update,
//       heterogeneity) must be refused by the device itself, as a TRUSTED data-shift task
//       without local noise is: otherwise a default Client sends exact words for ε = 0.1.
//   F3  a DIST task's charge assumes `threshold` honest noise shares; an app that trusts fewer
//       (TaskPolicy::assumed_honest_shares) is charged, and weighs, the ε of the noise it trusts.
//   F4  a decline that depends on the app's data (none held, unusable, too few examples, too
//       large for the memory) costs what an answer costs and looks the same on the wire; only the
//       checks on the task and the device's configuration stay free.
// Against the scripted one-connection server of tests/client. Paper: none.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "sdk/client/client.h"
#include "sdk/client/contribution.h"
#include "sdk/client/task_policy.h"
#include "sdk/privacy/accountants.h"
#include "sdk/tasks/kl_answer_task.h"
#include "sdk/tasks/model_update_task.h"
#include "tests/client/client_test_support.h"
#include "tests/client/in_memory_channel.h"
#include "tests/client/scripted_server.h"

namespace fedstat {
namespace client_test {
namespace {

using client::PolicyRefusal;
using client::SessionResult;

class ReviewFindingsTest : public StorageTest {};

// A policy that accepts every trust model and any ε: what refuses a task is then not the policy.
client::TaskPolicy everything() {
  client::TaskPolicy p;
  p.accepted_trust = client::kAcceptAll;
  p.max_epsilon = 1e6;
  return p;
}

// ---- F2 -------------------------------------------------------------------------------------

TEST_F(ReviewFindingsTest, TrustedOrTaggModelUpdateAndHeterogeneityAreRefused) {
  const std::vector<double> model = {0.1, -0.2, 0.05, 0.0};
  for (auto trust : {fedstat_v1_TrustModel_TRUSTED, fedstat_v1_TrustModel_TAGG}) {
    fedstat_v1_Task mu = model_task(trust);
    mu.epsilon = client::TaskPolicy().min_exact_epsilon;  // the floor: 10 of them per window
    fedstat_v1_Task h1 = heterogeneity_task(trust, 1);
    fedstat_v1_Task h2 = heterogeneity_task(trust, 2);
    h1.epsilon = h2.epsilon = mu.epsilon;
    const std::vector<double> means = {0.2, 0.4, 0.6, 0.5, 0.25, 0.45, 0.55, 0.5};
    struct Case {
      fedstat_v1_Task task;
      std::vector<uint64_t> data;
    };
    for (const Case& c : {Case{mu, model_bits(model)}, Case{h1, {}}, Case{h2, model_bits(means)}}) {
      const Status valid = client::validate_task(c.task);
      EXPECT_EQ(valid.code(), StatusCode::kInvalidArgument) << trust << " kind " << c.task.kind;
      EXPECT_NE(std::strstr(valid.message(), "Task.trust"), nullptr) << valid.message();
      ModelData model_data;
      VectorData vector_data(1);
      client::ClientData& data = c.task.kind == fedstat_v1_TaskKind_MODEL_UPDATE
                                     ? static_cast<client::ClientData&>(model_data)
                                     : static_cast<client::ClientData&>(vector_data);
      Device device(60 + 4 * trust + c.task.kind, 1 << 16, data);
      ASSERT_TRUE(device.init_status.ok());
      ASSERT_TRUE(device.client.set_task_policy(everything()).ok());
      Session s = run(device, c.task, c.data);
      ASSERT_FALSE(s.outcome.ok()) << "trust " << trust << " kind " << c.task.kind
                                   << ": answered, charged " << device.spent();
      EXPECT_EQ(s.outcome.status().code(), StatusCode::kInvalidArgument);
      ASSERT_TRUE(s.seen.replied);
      EXPECT_FALSE(s.seen.reply.accept);
      EXPECT_EQ(s.seen.reply.reason, fedstat_v1_ErrorAction_REFUSED);
      EXPECT_TRUE(s.seen.report.empty());
      EXPECT_EQ(device.ledger.size(), 0u);
      EXPECT_EQ(device.random->drawn, 0u);
    }
  }
  // What stays valid: those kinds in NONE and DIST; KL in every model (TAgg and trusted servers
  // noise it); data shift TRUSTED or TAGG with local noise (the device's own).
  fedstat_v1_Task none_model = model_task(fedstat_v1_TrustModel_NONE);
  none_model.epsilon = 0;
  none_model.delta = 0;
  fedstat_v1_Task dist_model = model_task(fedstat_v1_TrustModel_DIST);
  make_dist(dist_model, 3, 2);
  fedstat_v1_Task none_het = heterogeneity_task(fedstat_v1_TrustModel_NONE, 1);
  none_het.epsilon = 0;
  none_het.delta = 0;
  fedstat_v1_Task dist_het = heterogeneity_task(fedstat_v1_TrustModel_DIST, 2);
  make_dist(dist_het, 3, 2);
  std::vector<uint64_t> points;
  for (const fedstat_v1_Task& t :
       {none_model, dist_model, none_het, dist_het, kl_task(fedstat_v1_TrustModel_TRUSTED, points),
        kl_task(fedstat_v1_TrustModel_TAGG, points),
        data_shift_task(fedstat_v1_TrustModel_TRUSTED, 0.5),
        data_shift_task(fedstat_v1_TrustModel_TAGG, 0.5)}) {
    EXPECT_TRUE(client::validate_task(t).ok())
        << "kind " << t.kind << " trust " << t.trust << ": " << client::validate_task(t).message();
  }
}

// ---- F3 -------------------------------------------------------------------------------------

TEST_F(ReviewFindingsTest, ADistChargeCountsOnlyTheSharesTheAppAssumesHonest) {
  std::vector<uint64_t> points;
  fedstat_v1_Task task = kl_task(fedstat_v1_TrustModel_DIST, points);
  make_dist(task, /*max_clients=*/1000, /*threshold=*/501);
  const privacy::Sensitivity sensitivity = tasks::kl_answer_sensitivity(1, 1);
  // The smallest λ whose sum of 501 shares gives ε = 5: half the default ceiling.
  task.device_noise_lambda = privacy::skellam_lambda(5, task.delta, sensitivity, 501).value();
  ASSERT_TRUE(client::validate_task(task).ok()) << client::validate_task(task).message();
  auto epsilon_of = [&](uint32_t shares) {
    return privacy::skellam_epsilon(task.device_noise_lambda, shares, sensitivity, task.delta)
        .value()
        .epsilon;
  };
  const client::TaskKinds all = client::all_task_kinds();
  // 0 (the default) is the task's threshold: Bonawitz et al.'s semi-honest server, as before.
  EXPECT_EQ(client::TaskPolicy().assumed_honest_shares, 0u);
  const double at_threshold = client::device_spend(task, all, 0).value().epsilon;
  EXPECT_DOUBLE_EQ(at_threshold, client::device_spend(task).value().epsilon);
  EXPECT_DOUBLE_EQ(at_threshold, epsilon_of(501));
  // More than the threshold counts as the threshold: a sum may be released with t shares.
  EXPECT_DOUBLE_EQ(client::device_spend(task, all, 5000).value().epsilon, at_threshold);
  // Fewer: the ε of the noise the app trusts; 1, its own share alone.
  EXPECT_DOUBLE_EQ(client::device_spend(task, all, 250).value().epsilon, epsilon_of(250));
  const double own = client::device_spend(task, all, 1).value().epsilon;
  EXPECT_DOUBLE_EQ(own, epsilon_of(1));
  ASSERT_GT(own, 20 * client::TaskPolicy().max_epsilon);  // one share is almost nothing

  // The ceiling weighs that charge: a policy trusting only its own noise refuses the task...
  client::TaskPolicy own_only;
  own_only.assumed_honest_shares = 1;
  ASSERT_TRUE(client::validate_task_policy(own_only).ok());
  OwnedHistogram h(1);
  HistogramData data(&h.histogram);
  Device device(90, client::Client::memory_bytes(task).value(), data, /*budget=*/1000);
  ASSERT_TRUE(device.client.set_task_policy(own_only).ok());
  Session declined = run(device, task, points);
  ASSERT_TRUE(declined.outcome.ok()) << declined.outcome.status().message();
  EXPECT_EQ(declined.outcome.value().result, SessionResult::kDeclinedPolicy)
      << "the device's own share gives epsilon " << own << "; accepted";
  EXPECT_EQ(declined.outcome.value().policy_refusal, PolicyRefusal::kEpsilonAboveMax);
  EXPECT_EQ(declined.seen.reply.reason, fedstat_v1_ErrorAction_POLICY);
  EXPECT_EQ(device.ledger.size(), 0u);
  // ... and one that assumes 250 honest shares accepts it and is charged their ε, not 501's.
  client::TaskPolicy some;
  some.assumed_honest_shares = 250;
  ASSERT_LT(epsilon_of(250), some.max_epsilon);
  ASSERT_TRUE(device.client.set_task_policy(some).ok());
  Session accepted = run(device, task, points, Mode::kCloseAfterReply);
  ASSERT_TRUE(accepted.seen.replied);
  EXPECT_TRUE(accepted.seen.reply.accept);
  EXPECT_DOUBLE_EQ(device.spent(), epsilon_of(250));

  // The other DIST kinds the same way: a model update's mixture accountant and a heterogeneity
  // stage's RDP curve, at λ·min(threshold, assumed).
  fedstat_v1_Task model = model_task(fedstat_v1_TrustModel_DIST);
  make_dist(model, 3, 2);
  for (uint32_t assumed : {1u, 2u}) {
    const double noise = tasks::model_update_epsilon(client::model_update_config(model), 4, assumed,
                                                     model.device_noise_lambda, model.delta)
                             .value()
                             .epsilon;
    EXPECT_DOUBLE_EQ(client::device_spend(model, all, assumed).value().epsilon,
                     std::max(model.epsilon, noise))
        << assumed;
  }
  fedstat_v1_Task het = heterogeneity_task(fedstat_v1_TrustModel_DIST, 1);
  make_dist(het, 3, 2);
  const auto releases = heterogeneity_releases(het);
  const client::DeviceSpend own_curve = client::device_spend(het, all, 1).value();
  ASSERT_TRUE(own_curve.has_rdp);
  for (size_t k = 0; k < privacy::kLedgerOrderCount; ++k) {
    const uint32_t alpha = privacy::kLedgerOrders[k];
    const double expected =
        privacy::skellam_rdp(alpha, releases[0], het.device_noise_lambda).value() +
        privacy::skellam_rdp(alpha, releases[1], het.device_noise_lambda).value();
    EXPECT_DOUBLE_EQ(own_curve.rdp[k], expected) << "order " << alpha;
  }
}

// ---- F4 -------------------------------------------------------------------------------------

// The reviewer's demonstration: a server walks examples_per_client down one step per session and
// reads the device's example count off the first acceptance. Every decline on the way must cost.
TEST_F(ReviewFindingsTest, TheExampleCountCannotBeProbedForFree) {
  ModelData data;  // 40 examples
  Device device(81, 1 << 20, data, /*budget=*/1e9);
  ASSERT_TRUE(device.init_status.ok());
  ASSERT_TRUE(device.client.set_task_policy(everything()).ok());
  uint32_t learned = 0;
  size_t free_declines = 0, charged_declines = 0;
  for (uint32_t guess = 48; guess >= 1 && learned == 0; --guess) {
    fedstat_v1_Task task = model_task(fedstat_v1_TrustModel_DIST);
    make_dist(task, 3, 2);
    task.task_id = 1000 + guess;
    task.parameters.model_update.batches = 1;
    task.parameters.model_update.examples_per_client = guess;
    ASSERT_TRUE(client::validate_task(task).ok()) << client::validate_task(task).message();
    const double charge = client::device_spend(task).value().epsilon;
    const double before = device.spent();
    // The server closes after the reply: an acceptance then leaves the round pending (the last
    // session of the walk).
    Session s = run(device, task, model_bits({0, 0, 0, 0}), Mode::kCloseAfterReply);
    ASSERT_TRUE(s.seen.replied) << guess;
    if (s.seen.reply.accept) {
      learned = guess;
    } else if (device.spent() == before) {
      ++free_declines;
    } else {
      EXPECT_DOUBLE_EQ(device.spent() - before, charge) << guess;
      EXPECT_EQ(s.seen.reply.reason, fedstat_v1_ErrorAction_NO_DATA);
      ++charged_declines;
    }
  }
  EXPECT_EQ(learned, data.labels.size());
  EXPECT_EQ(free_declines, 0u) << "the server learned the device's example count (" << learned
                               << ") from " << free_declines << " uncharged declines";
  EXPECT_EQ(charged_declines, 48u - 40u);
}

// Every decline that depends on the app's data — none held, held but unusable, too few examples,
// too large for the memory given — comes after the ledger is charged, keeps the charge, and
// carries one reason code (NO_DATA): the server learns one bit per charged session.
TEST_F(ReviewFindingsTest, EveryDataDependentDeclineIsChargedAndCarriesOneReason) {
  std::vector<uint64_t> points;
  const fedstat_v1_Task kl = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  fedstat_v1_Task model = model_task(fedstat_v1_TrustModel_DIST);
  make_dist(model, 3, 2);
  fedstat_v1_Task het = heterogeneity_task(fedstat_v1_TrustModel_DIST, 1);
  make_dist(het, 3, 2);
  het.device_noise_lambda = 1e6;  // a stage charge the policy below takes
  const fedstat_v1_Task shift = data_shift_task(fedstat_v1_TrustModel_TRUSTED, 1.0);

  HistogramData no_histogram(nullptr);
  ModelData few;
  few.labels.resize(20);  // fewer than the 40 the task was calibrated for
  few.features.resize(20 * 4);
  ModelData other_dimension;
  other_dimension.d = 2;
  struct NoExamples : client::ClientData {
  } no_examples;
  VectorData outside(0);
  outside.x[1] = 1.5;
  OwnedHistogram h(3);
  HistogramData histogram(&h.histogram);

  struct Case {
    const char* what;
    fedstat_v1_Task task;
    std::vector<uint64_t> data;
    client::ClientData* app;
    size_t memory;
    SessionResult result;  // an outcome, or
    StatusCode error;      // the error the app's caller gets (kOk: an outcome)
  };
  const size_t shift_memory = client::Client::memory_bytes(shift, h.histogram.capacity()).value();
  ASSERT_LE(client::Client::memory_bytes(shift, 0).value(), shift_memory - 1);
  const Case cases[] = {
      {"no histogram", kl, points, &no_histogram, 1 << 16, SessionResult::kDeclinedNoData,
       StatusCode::kOk},
      {"no examples", model, model_bits({0, 0, 0, 0}), &no_examples, 1 << 20,
       SessionResult::kDeclinedNoData, StatusCode::kOk},
      {"too few examples", model, model_bits({0, 0, 0, 0}), &few, 1 << 20, SessionResult::kNoTask,
       StatusCode::kFailedPrecondition},
      {"examples of another dimension", model, model_bits({0, 0, 0, 0}), &other_dimension, 1 << 20,
       SessionResult::kNoTask, StatusCode::kInvalidArgument},
      {"a vector outside [0,1]",
       het,
       {},
       &outside,
       1 << 16,
       SessionResult::kNoTask,
       StatusCode::kInvalidArgument},
      {"a histogram too large for the memory",
       shift,
       {},
       &histogram,
       shift_memory - 1,
       SessionResult::kDeclinedMemory,
       StatusCode::kOk},
  };
  uint64_t id = 100;
  for (const Case& c : cases) {
    Device device(id++, c.memory, *c.app, /*budget=*/1e6);
    ASSERT_TRUE(device.init_status.ok()) << c.what;
    ASSERT_TRUE(device.client.set_task_policy(everything()).ok());
    const client::DeviceSpend charge = client::device_spend(c.task).value();
    Session s = run(device, c.task, c.data);
    if (c.error == StatusCode::kOk) {
      ASSERT_TRUE(s.outcome.ok()) << c.what << ": " << s.outcome.status().message();
      EXPECT_EQ(s.outcome.value().result, c.result) << c.what;
    } else {
      EXPECT_EQ(s.outcome.status().code(), c.error) << c.what;
    }
    ASSERT_TRUE(s.seen.replied) << c.what;
    EXPECT_FALSE(s.seen.reply.accept) << c.what;
    EXPECT_EQ(s.seen.reply.reason, fedstat_v1_ErrorAction_NO_DATA) << c.what;
    EXPECT_TRUE(s.seen.report.empty()) << c.what;
    ASSERT_EQ(device.ledger.size(), 1u) << c.what << ": the decline was free";
    EXPECT_EQ(device.entries[0].epsilon, charge.epsilon) << c.what;
    EXPECT_EQ(device.entries[0].delta, charge.delta) << c.what;
    EXPECT_EQ(device.entries[0].has_rdp, charge.has_rdp) << c.what;
    EXPECT_EQ(device.random->drawn, 0u) << c.what << ": nothing computed";
  }
}

// What the server sees of a device without data must be what it sees of one with data up to the
// TaskReply: the device reads the whole TaskData first. A server that sends a broken second
// TaskData chunk gets the same answer from both (the session ends, kFailedPrecondition, no
// reply); before, the device without data declined NO_DATA right after the Task. A refusal for
// the memory the task's own buffers need depends only on the task and on the ClientHello's
// memory_bytes, which the server already knows: it stays immediate and free.
TEST_F(ReviewFindingsTest, ADeviceWithoutDataReadsTheTaskDataLikeOneWithData) {
  std::vector<uint64_t> points;
  const fedstat_v1_Task task = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  ASSERT_GT(points.size(), 64u);  // two TaskData chunks
  // Hello → Task → the first chunk → a second chunk at a wrong offset → whatever comes back.
  auto serve_broken = [&](InMemoryChannel& server, Seen& seen) {
    wire::Envelope in;
    if (!server.receive(in, 20000).ok()) return;
    wire::Envelope t = envelope_of(fedstat_v1_Envelope_task_tag);
    t.body.task = task;
    if (!server.send(t).ok()) return;
    // Words [0, 64), then the rest claimed at offset 65 instead of 64.
    for (uint32_t offset : {0u, 64u}) {
      wire::Envelope d = envelope_of(fedstat_v1_Envelope_task_data_tag);
      d.body.task_data.task_id = task.task_id;
      d.body.task_data.offset = offset == 0 ? 0 : offset + 1;
      const size_t n = offset == 0 ? 64 : points.size() - 64;
      d.body.task_data.words_count = static_cast<pb_size_t>(n);
      for (size_t i = 0; i < n; ++i) d.body.task_data.words[i] = points[offset + i];
      server.send(d).ignore();
    }
    while (server.receive(in, 20000).ok()) {
      if (in.which_body == fedstat_v1_Envelope_task_reply_tag) {
        seen.replied = true;
        seen.reply = in.body.task_reply;
      } else {
        ++seen.extra_messages;
      }
    }
  };
  auto session = [&](Device& device) {
    auto ends = make_channel_pair();
    Session s;
    std::thread server([&] { serve_broken(*ends.second, s.seen); });
    s.outcome = device.client.run_session(*ends.first);
    server.join();
    return s;
  };
  OwnedHistogram h(2);
  HistogramData with(&h.histogram);
  HistogramData without(nullptr);
  Device has_data(110, 1 << 16, with);
  Device no_data(111, 1 << 16, without);
  const Session a = session(has_data);
  const Session b = session(no_data);
  for (const Session* s : {&a, &b}) {
    EXPECT_EQ(s->outcome.status().code(), StatusCode::kFailedPrecondition)
        << (s == &a ? "with data" : "without data") << ": "
        << (s->outcome.ok() ? "an outcome" : s->outcome.status().message());
    EXPECT_FALSE(s->seen.replied) << (s == &a ? "with data" : "without data") << " replied "
                                  << s->seen.reply.reason;
  }
  EXPECT_EQ(has_data.ledger.size(), 0u);
  EXPECT_EQ(no_data.ledger.size(), 0u);

  // Too little memory for the task's own buffers (what memory_bytes(task) needs whatever the
  // app holds): declined at once, before the TaskData, for nothing.
  const size_t buffers = client::Client::memory_bytes(task).value();
  Device small(112, buffers - 8, without);
  const Session m = session(small);
  ASSERT_TRUE(m.outcome.ok()) << m.outcome.status().message();
  EXPECT_EQ(m.outcome.value().result, SessionResult::kDeclinedMemory);
  ASSERT_TRUE(m.seen.replied);
  EXPECT_EQ(m.seen.reply.reason, fedstat_v1_ErrorAction_INSUFFICIENT_MEMORY);
  EXPECT_EQ(small.ledger.size(), 0u);
}

}  // namespace
}  // namespace client_test
}  // namespace fedstat
