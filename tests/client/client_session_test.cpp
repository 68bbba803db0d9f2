// The Client against a scripted one-connection server: declines, refusals, TRUSTED reports of
// each kind equal to the SDK routines' output, protocol confusion, and the reboot marker.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

#include "sdk/base/arena.h"
#include "sdk/client/contribution.h"
#include "sdk/privacy/accountants.h"
#include "sdk/quantise/quantise.h"
#include "sdk/tasks/kl_answer_task.h"
#include "sdk/tasks/model_update_task.h"
#include "sdk/version.h"
#include "tests/client/client_test_support.h"
#include "tests/client/in_memory_channel.h"
#include "tests/client/scripted_server.h"

namespace fedstat {
namespace client_test {
namespace {

using client::SessionResult;

class ClientSessionTest : public StorageTest {};

TEST_F(ClientSessionTest, RetryLaterIsNoTaskAndTheHelloDescribesTheDevice) {
  OwnedHistogram h(1);
  HistogramData data(&h.histogram);
  Device device(17, 4096, data);
  ASSERT_TRUE(device.init_status.ok());
  auto ends = make_channel_pair();
  fedstat_v1_ClientHello hello = fedstat_v1_ClientHello_init_zero;
  std::thread server([&] {
    wire::Envelope in;
    ASSERT_TRUE(ends.second->receive(in, 20000).ok());
    hello = in.body.client_hello;
    wire::Envelope e = envelope_of(fedstat_v1_Envelope_server_error_tag);
    e.body.server_error.action = fedstat_v1_ErrorAction_RETRY_LATER;
    e.body.server_error.status_code = static_cast<uint32_t>(StatusCode::kUnavailable);
    std::strcpy(e.body.server_error.detail, "no open task");
    ASSERT_TRUE(ends.second->send(e).ok());
  });
  auto outcome = device.client.run_session(*ends.first);
  server.join();
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_EQ(outcome.value().result, SessionResult::kNoTask);
  EXPECT_STREQ(device.client.last_server_detail(), "no open task");
  EXPECT_EQ(hello.client_id, 17u);
  EXPECT_EQ(hello.memory_bytes, 4096u);
  EXPECT_EQ(hello.word_bits, 8 * sizeof(void*));
  EXPECT_STREQ(hello.sdk_version, FEDSTAT_VERSION_STRING);
}

TEST_F(ClientSessionTest, VersionTooOldAndOtherServerErrors) {
  OwnedHistogram h(1);
  HistogramData data(&h.histogram);
  Device device(17, 4096, data);
  for (auto action : {fedstat_v1_ErrorAction_VERSION_TOO_OLD, fedstat_v1_ErrorAction_REFUSED}) {
    auto ends = make_channel_pair();
    std::thread server([&] {
      wire::Envelope in;
      ASSERT_TRUE(ends.second->receive(in, 20000).ok());
      wire::Envelope e = envelope_of(fedstat_v1_Envelope_server_error_tag);
      e.body.server_error.action = action;
      e.body.server_error.status_code = static_cast<uint32_t>(StatusCode::kPermissionDenied);
      ASSERT_TRUE(ends.second->send(e).ok());
    });
    auto outcome = device.client.run_session(*ends.first);
    server.join();
    if (action == fedstat_v1_ErrorAction_VERSION_TOO_OLD) {
      ASSERT_TRUE(outcome.ok());
      EXPECT_EQ(outcome.value().result, SessionResult::kVersionTooOld);
    } else {
      EXPECT_EQ(outcome.status().code(), StatusCode::kPermissionDenied);
    }
  }
}

TEST_F(ClientSessionTest, MalformedTaskFieldsAreRefusedNamingTheField) {
  OwnedHistogram h(1);
  HistogramData data(&h.histogram);
  Device device(17, 1 << 16, data);
  std::vector<uint64_t> points;
  const fedstat_v1_Task good = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  struct Case {
    const char* field;
    void (*mutate)(fedstat_v1_Task&);
    StatusCode code;
  };
  const Case cases[] = {
      {"Task.epsilon", [](fedstat_v1_Task& t) { t.epsilon = std::nan(""); },
       StatusCode::kInvalidArgument},
      {"Task.epsilon", [](fedstat_v1_Task& t) { t.epsilon = -1; }, StatusCode::kInvalidArgument},
      {"Task.delta", [](fedstat_v1_Task& t) { t.delta = 1; }, StatusCode::kInvalidArgument},
      {"Task.bits", [](fedstat_v1_Task& t) { t.bits = 0; }, StatusCode::kInvalidArgument},
      {"Task.bits", [](fedstat_v1_Task& t) { t.bits = 65; }, StatusCode::kInvalidArgument},
      {"Task.bits", [](fedstat_v1_Task& t) { t.bits = 32; }, StatusCode::kInvalidArgument},
      {"Task.vector_length", [](fedstat_v1_Task& t) { t.vector_length += 1; },
       StatusCode::kInvalidArgument},
      {"Task.vector_length", [](fedstat_v1_Task& t) { t.vector_length = 0xFFFFFFFFu; },
       StatusCode::kInvalidArgument},
      {"Task.data_words", [](fedstat_v1_Task& t) { t.data_words -= 1; },
       StatusCode::kInvalidArgument},
      {"Task.seed", [](fedstat_v1_Task& t) { t.seed.size = 31; }, StatusCode::kInvalidArgument},
      {"Task.device_noise_lambda", [](fedstat_v1_Task& t) { t.device_noise_lambda = 2; },
       StatusCode::kInvalidArgument},
      {"Task.kl.points", [](fedstat_v1_Task& t) { t.parameters.kl.points = 0; },
       StatusCode::kInvalidArgument},
      {"Task.kind", [](fedstat_v1_Task& t) { t.kind = static_cast<fedstat_v1_TaskKind>(99); },
       StatusCode::kUnimplemented},
      {"Task.parameters", [](fedstat_v1_Task& t) { t.kind = fedstat_v1_TaskKind_HETEROGENEITY; },
       StatusCode::kInvalidArgument},
  };
  for (const Case& c : cases) {
    fedstat_v1_Task bad = good;
    c.mutate(bad);
    Session s = run(device, bad, points);
    ASSERT_FALSE(s.outcome.ok()) << c.field;
    EXPECT_EQ(s.outcome.status().code(), c.code) << c.field;
    EXPECT_NE(std::strstr(s.outcome.status().message(), c.field), nullptr)
        << c.field << ": " << s.outcome.status().message();
    ASSERT_TRUE(s.seen.replied) << c.field;
    EXPECT_FALSE(s.seen.reply.accept);
    EXPECT_EQ(s.seen.reply.reason, fedstat_v1_ErrorAction_REFUSED);
    EXPECT_STREQ(s.seen.reply.detail, "") << c.field << ": the reason code only, no detail";
    EXPECT_EQ(s.seen.extra_messages, 0u);
    EXPECT_EQ(device.spent(), 0) << c.field;
    EXPECT_EQ(device.random->drawn, 0u) << c.field;
  }
  // The unmutated task runs, so each refusal above came from its one field.
  Session ok = run(device, good, points);
  ASSERT_TRUE(ok.outcome.ok()) << ok.outcome.status().message();
  EXPECT_EQ(ok.outcome.value().result, SessionResult::kCompleted);
}

// What a network observer sees of a TaskReply is its length: an accept and a decline for any
// reason the Client gives must encode to the same number of bytes (the Client sends no detail).
TEST(TaskReplyLength, AnAcceptAndEveryDeclineAreTheSameLengthOnTheWire) {
  auto frame_bytes = [](bool accept, fedstat_v1_ErrorAction reason) {
    wire::Envelope e = wire::make_envelope();
    e.which_body = fedstat_v1_Envelope_task_reply_tag;
    e.body.task_reply.task_id = 123456;
    e.body.task_reply.accept = accept;
    e.body.task_reply.reason = reason;
    uint8_t out[wire::kMaxFrameBytes];
    const Result<size_t> n = wire::encode_frame(e, MutableByteSpan(out, sizeof(out)));
    EXPECT_TRUE(n.ok());
    return n.ok() ? n.value() : 0;
  };
  const size_t accept = frame_bytes(true, fedstat_v1_ErrorAction_ERROR_ACTION_UNSPECIFIED);
  for (fedstat_v1_ErrorAction reason :
       {fedstat_v1_ErrorAction_BUDGET_EXHAUSTED, fedstat_v1_ErrorAction_TASK_CLOSED,
        fedstat_v1_ErrorAction_REFUSED, fedstat_v1_ErrorAction_INSUFFICIENT_MEMORY,
        fedstat_v1_ErrorAction_NO_DATA, fedstat_v1_ErrorAction_DEVICE_FAILURE,
        fedstat_v1_ErrorAction_POLICY}) {
    EXPECT_EQ(frame_bytes(false, reason), accept) << "reason " << reason;
  }
}

TEST_F(ClientSessionTest, BudgetExhaustedDeclinesAndComputesNothing) {
  OwnedHistogram h(1);
  HistogramData data(&h.histogram);
  Device device(17, 1 << 16, data, /*budget=*/0.75);
  std::vector<uint64_t> points;
  fedstat_v1_Task task = kl_task(fedstat_v1_TrustModel_TRUSTED, points);  // ε = 1 > 0.75
  Session s = run(device, task, points);
  ASSERT_TRUE(s.outcome.ok()) << s.outcome.status().message();
  EXPECT_EQ(s.outcome.value().result, SessionResult::kDeclinedBudget);
  ASSERT_TRUE(s.seen.replied);
  EXPECT_FALSE(s.seen.reply.accept);
  EXPECT_EQ(s.seen.reply.reason, fedstat_v1_ErrorAction_BUDGET_EXHAUSTED);
  EXPECT_TRUE(s.seen.report.empty());
  EXPECT_EQ(s.seen.extra_messages, 0u);
  EXPECT_EQ(device.spent(), 0);
  EXPECT_EQ(device.ledger.size(), 0u);
  EXPECT_EQ(device.random->drawn, 0u);
  // Within budget the same device accepts, and pays exactly the task's ε.
  task.epsilon = 0.5;
  Session paid = run(device, task, points);
  ASSERT_TRUE(paid.outcome.ok());
  EXPECT_EQ(paid.outcome.value().result, SessionResult::kCompleted);
  EXPECT_DOUBLE_EQ(device.spent(), 0.5);
}

// A server cannot under-charge a device: the ledger pays what the device's own noise gives.
// validate_examples is public on its own: a task nobody validated, with no batches, is refused
// (it divided by the batches: a crash on a division by zero).
TEST(ValidateExamples, ATaskWithNoBatchesIsRefusedNotDividedBy) {
  fedstat_v1_Task task = fedstat_v1_Task_init_zero;
  task.parameters.model_update.dimension = 2;
  task.parameters.model_update.batches = 0;
  task.parameters.model_update.examples_per_client = 1;
  const float features[2] = {0.5f, 0.5f};
  const int8_t labels[1] = {1};
  tasks::Examples examples;
  examples.features = Span<const float>(features, 2);
  examples.labels = Span<const int8_t>(labels, 1);
  examples.dimension = 2;
  EXPECT_EQ(client::validate_examples(task, examples).code(), StatusCode::kInvalidArgument);
  task.parameters.model_update.batches = 1;
  EXPECT_TRUE(client::validate_examples(task, examples).ok());
}

TEST(DeviceSpend, IsWhatTheDevicesNoiseGivesNeverLessThanDeclared) {
  std::vector<uint64_t> points;
  fedstat_v1_Task kl = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  make_dist(kl, 10, 6);
  const privacy::Sensitivity sensitivity = tasks::kl_answer_sensitivity(1, 1);  // 80 points
  // λ calibrated for (ε, δ) with `threshold` shares: charged the declared ε (the accountant's
  // bisection lands within 1e-9 of it, on the safe side of what it computes back).
  kl.device_noise_lambda =
      tasks::kl_dist_skellam_lambda(kl.epsilon, kl.delta, sensitivity, kl.threshold).value();
  const double calibrated = client::device_spend(kl).value().epsilon;
  EXPECT_GE(calibrated, kl.epsilon);
  EXPECT_NEAR(calibrated, kl.epsilon, 1e-6);
  // A tenth of that λ: ε is what Sk(λ·t) gives — far above the declared 1 — not the declared ε.
  kl.device_noise_lambda /= 10;
  const double weak = client::device_spend(kl).value().epsilon;
  EXPECT_DOUBLE_EQ(
      weak, privacy::skellam_epsilon(kl.device_noise_lambda, kl.threshold, sensitivity, kl.delta)
                .value()
                .epsilon);
  EXPECT_GT(weak, 3 * kl.epsilon);
  // Local DP of a sketch costs its local_epsilon and δ = 1e-6 even when the task says less.
  const fedstat_v1_Task shift = data_shift_task(fedstat_v1_TrustModel_TRUSTED, 2.0);
  const client::DeviceSpend local = client::device_spend(shift).value();
  EXPECT_DOUBLE_EQ(local.epsilon, 2.0);
  EXPECT_DOUBLE_EQ(local.delta, std::max(shift.delta, client::kStabilityDelta));
  // DIST sketches without local DP would be summed exact: refused, not charged.
  fedstat_v1_Task exact = data_shift_task(fedstat_v1_TrustModel_TRUSTED, 0.0);
  make_dist(exact, 10, 6);
  EXPECT_EQ(client::device_spend(exact).status().code(), StatusCode::kInvalidArgument);
  // DIST HETEROGENEITY: the stage's RDP curve, with ε = δ = 0 beside it, so the ledger composes
  // the two stages in RDP (before: the declared ε, once per stage, whatever the noise).
  fedstat_v1_Task het = heterogeneity_task(fedstat_v1_TrustModel_DIST, 1);
  make_dist(het, 10, 6);
  het.parameters.heterogeneity.scale = 2.5;
  het.device_noise_lambda = 1e6;
  const auto releases = heterogeneity_releases(het);
  const client::DeviceSpend stage1 = client::device_spend(het).value();
  EXPECT_TRUE(stage1.has_rdp);
  EXPECT_EQ(stage1.epsilon, 0);
  EXPECT_EQ(stage1.delta, 0);
  for (size_t i = 0; i < privacy::kLedgerOrderCount; ++i) {
    const uint32_t alpha = privacy::kLedgerOrders[i];
    EXPECT_DOUBLE_EQ(stage1.rdp[i], privacy::skellam_rdp(alpha, releases[0], 6e6).value() +
                                        privacy::skellam_rdp(alpha, releases[1], 6e6).value());
  }
  het.parameters.heterogeneity.stage = 2;  // the other two releases
  het.vector_length = 2;
  het.data_words = 8;
  const client::DeviceSpend stage2 = client::device_spend(het).value();
  EXPECT_DOUBLE_EQ(stage2.rdp[0], privacy::skellam_rdp(2, releases[2], 6e6).value() +
                                      privacy::skellam_rdp(2, releases[3], 6e6).value());
  // A tenth of the noise costs about ten times the RDP, whatever ε the task declares.
  het.device_noise_lambda /= 10;
  const client::DeviceSpend thin = client::device_spend(het).value();
  for (size_t i = 0; i < privacy::kLedgerOrderCount; ++i) {
    EXPECT_GT(thin.rdp[i], 9.9 * stage2.rdp[i]);
  }
  // TAGG (exact reports, the trusted aggregator adds the noise) charges the task's (ε, δ), as
  // TRUSTED does.
  const fedstat_v1_Task tagg = kl_task(fedstat_v1_TrustModel_TAGG, points);
  const client::DeviceSpend tagg_spend = client::device_spend(tagg).value();
  EXPECT_GT(tagg.epsilon, 0);
  EXPECT_EQ(tagg_spend.epsilon, tagg.epsilon);
  EXPECT_EQ(tagg_spend.delta, tagg.delta);
  // NONE charges nothing.
  fedstat_v1_Task none = kl_task(fedstat_v1_TrustModel_NONE, points);
  none.epsilon = 0;
  none.delta = 0;
  EXPECT_EQ(client::device_spend(none).value().epsilon, 0);
}

// A DIST model update is charged the ε its Skellam shares give at threshold shares, for the
// report's per-batch sensitivities (the accountant model_update_lambda inverts).
TEST(DeviceSpend, DistModelUpdateIsChargedTheEpsilonOfItsNoise) {
  fedstat_v1_Task model = model_task(fedstat_v1_TrustModel_DIST);
  make_dist(model, 10, 6);
  const tasks::ModelUpdateConfig config = config_of(model);
  model.device_noise_lambda =
      tasks::model_update_lambda(config, 4, model.threshold, model.epsilon, model.delta).value();
  EXPECT_DOUBLE_EQ(client::device_spend(model).value().epsilon, model.epsilon);
  // The accountant's ε of the calibrated λ is the declared one (its bisection rounds λ up).
  const double back = tasks::model_update_epsilon(config, 4, model.threshold,
                                                  model.device_noise_lambda, model.delta)
                          .value()
                          .epsilon;
  EXPECT_LE(back, model.epsilon);
  EXPECT_NEAR(back, model.epsilon, 1e-6);
  // A tenth of that λ: charged what Sk(λ·t) gives, far above the declared ε.
  model.device_noise_lambda /= 10;
  const double weak = client::device_spend(model).value().epsilon;
  EXPECT_DOUBLE_EQ(weak, tasks::model_update_epsilon(config, 4, model.threshold,
                                                     model.device_noise_lambda, model.delta)
                             .value()
                             .epsilon);
  EXPECT_GT(weak, 3 * model.epsilon);
  // The same λ counted at max_clients shares would be cheaper: the charge is at threshold.
  EXPECT_GT(weak, tasks::model_update_epsilon(config, 4, model.max_clients,
                                              model.device_noise_lambda, model.delta)
                      .value()
                      .epsilon);
  // δ = 0 gives the accountant nothing to convert with: refused, not charged.
  model.delta = 0;
  EXPECT_EQ(client::device_spend(model).status().code(), StatusCode::kInvalidArgument);
}

// The same through a session: a DIST task whose λ is too small for its declared ε costs the
// device what the noise really gives, so a ledger that could pay the declared ε declines it.
TEST_F(ClientSessionTest, DistTaskWithTooLittleNoiseIsChargedItsTrueCost) {
  OwnedHistogram h(1);
  HistogramData data(&h.histogram);
  Device device(18, 1 << 20, data, /*budget=*/5);
  // The task policy's ε ceiling (default 10) would decline this charge first (tests/audit/device):
  // lifted here, so that the ledger is what refuses it.
  client::TaskPolicy policy;
  policy.max_epsilon = 1e9;
  ASSERT_TRUE(device.client.set_task_policy(policy).ok());
  std::vector<uint64_t> points;
  fedstat_v1_Task task = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  make_dist(task, 10, 6);
  task.device_noise_lambda = 1e-3;  // declared ε = 1 ≤ budget 5; the noise gives far more
  Session s = run(device, task, points);
  ASSERT_TRUE(s.outcome.ok()) << s.outcome.status().message();
  EXPECT_EQ(s.outcome.value().result, SessionResult::kDeclinedBudget);
  EXPECT_EQ(s.seen.reply.reason, fedstat_v1_ErrorAction_BUDGET_EXHAUSTED);
  EXPECT_EQ(device.spent(), 0);
  EXPECT_EQ(device.random->drawn, 0u);
}

TEST_F(ClientSessionTest, DataShiftReportIsTheSketch) {
  uint64_t id = 21;
  for (double local_epsilon : {0.0, 1.0}) {
    OwnedHistogram h(2);
    HistogramData data(&h.histogram);
    // Without local noise the counters are exact: a trust-NONE task (a private trust model needs
    // local_epsilon > 0), which the app opts in to.
    const fedstat_v1_Task task = local_epsilon > 0
                                     ? data_shift_task(fedstat_v1_TrustModel_TRUSTED, local_epsilon)
                                     : data_shift_task(fedstat_v1_TrustModel_NONE);
    const size_t need = client::Client::memory_bytes(task, h.histogram.capacity()).value();
    Device device(id, need, data);
    ASSERT_TRUE(device.init_status.ok());
    if (local_epsilon == 0) device.accept_none();
    Session s = run(device, task, {});
    ASSERT_TRUE(s.outcome.ok()) << s.outcome.status().message();
    EXPECT_EQ(s.outcome.value().result, SessionResult::kCompleted);
    CountingSource same(test_seed(99), id++);
    const std::vector<uint64_t> expected = expected_sketch(task, h.histogram, same);
    EXPECT_EQ(s.seen.report, expected) << "local_epsilon " << local_epsilon;
    if (local_epsilon == 0) {
      EXPECT_EQ(expected.back(), h.histogram.total());
    }
    // The stability histogram spends local_epsilon whatever the task declares (here 0.5); NONE
    // spends nothing.
    EXPECT_DOUBLE_EQ(device.spent(), std::max(task.epsilon, local_epsilon));
    EXPECT_EQ(device.random->drawn > 0, local_epsilon > 0);  // noise only for the local DP
  }
}

TEST_F(ClientSessionTest, TrustedKlReportIsTheCountsThenTheTotal) {
  OwnedHistogram h(3);
  HistogramData data(&h.histogram);
  std::vector<uint64_t> points;
  const fedstat_v1_Task task = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  Device device(22, client::Client::memory_bytes(task).value(), data);
  Session s = run(device, task, points);
  ASSERT_TRUE(s.outcome.ok()) << s.outcome.status().message();
  CountingSource unused(test_seed(99), 22);
  EXPECT_EQ(s.seen.report, expected_kl(task, points, h.histogram, unused));
  EXPECT_EQ(s.seen.report.back(), h.histogram.total());
  uint64_t hits = 0;  // the data hits some points, so equal reports are not all zeros
  for (size_t i = 0; i + 1 < s.seen.report.size(); ++i) hits += s.seen.report[i];
  EXPECT_GT(hits, 0u);
}

TEST_F(ClientSessionTest, KlPointsMustBeDistinctAscending) {
  OwnedHistogram h(3);
  HistogramData data(&h.histogram);
  std::vector<uint64_t> points;
  const fedstat_v1_Task task = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  Device device(22, client::Client::memory_bytes(task).value(), data);
  std::vector<uint64_t> bad = points;
  bad[5] = bad[4];
  Session s = run(device, task, bad);
  EXPECT_EQ(s.outcome.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(s.seen.report.empty());
  // Refused before the ledger pays: a decline, nothing spent.
  ASSERT_TRUE(s.seen.replied);
  EXPECT_FALSE(s.seen.reply.accept);
  EXPECT_EQ(s.seen.reply.reason, fedstat_v1_ErrorAction_REFUSED);
  EXPECT_EQ(device.spent(), 0);
}

// Trust NONE (the app opted in): the exact update; TRUSTED/TAGG model updates are refused
// (validate_task: no server noises them centrally).
TEST_F(ClientSessionTest, ModelUpdateReportIsTheQuantisedUpdate) {
  ModelData data;
  fedstat_v1_Task task = as_none(model_task(fedstat_v1_TrustModel_NONE));
  const std::vector<double> model = {0.1, -0.2, 0.05, 0.0};
  const size_t need = client::Client::memory_bytes(task, data.labels.size()).value();
  Device device(23, need, data);
  device.accept_none();
  Session s = run(device, task, model_bits(model));
  ASSERT_TRUE(s.outcome.ok()) << s.outcome.status().message();

  CountingSource same(test_seed(99), 23);
  const std::vector<uint64_t> report = expected_model(task, model, data, same);
  EXPECT_EQ(s.seen.report, report);
  EXPECT_NE(s.seen.report, std::vector<uint64_t>(report.size(), 0));
}

TEST_F(ClientSessionTest, ModelUpdateRefusesANonFiniteGlobalModel) {
  ModelData data;
  fedstat_v1_Task task = model_task(fedstat_v1_TrustModel_DIST);
  make_dist(task, 3, 2);
  Device device(23, client::Client::memory_bytes(task, 40).value(), data, /*budget=*/1e6);
  client::TaskPolicy lifted;  // the charge of this small fleet's λ is above the default ceiling
  lifted.max_epsilon = 1e6;
  ASSERT_TRUE(device.client.set_task_policy(lifted).ok());
  Session s = run(device, task, model_bits({0.1, std::nan(""), 0, 0}));
  EXPECT_EQ(s.outcome.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(s.seen.report.empty());
  EXPECT_FALSE(s.seen.reply.accept);
  EXPECT_EQ(device.spent(), 0);
  EXPECT_EQ(device.random->drawn, 0u);
}

// Too few examples is refused after the ledger pays, and the charge is kept: whether the app
// holds enough examples is its data, which a free decline would let a server probe (issue 39
// item 1, privacy review F4; before, this test asserted the opposite — nothing charged).
TEST_F(ClientSessionTest, TooFewExamplesIsRefusedAfterTheLedgerPays) {
  ModelData data;
  data.labels.resize(20);  // 20 < the 40 examples the task was calibrated for
  data.features.resize(20 * 4);
  fedstat_v1_Task task = model_task(fedstat_v1_TrustModel_DIST);
  make_dist(task, 3, 2);
  Device device(28, 1 << 16, data, /*budget=*/1e6);
  client::TaskPolicy lifted;
  lifted.max_epsilon = 1e6;
  ASSERT_TRUE(device.client.set_task_policy(lifted).ok());
  Session s = run(device, task, model_bits({0, 0, 0, 0}));
  EXPECT_EQ(s.outcome.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(s.seen.reply.accept);
  EXPECT_EQ(s.seen.reply.reason, fedstat_v1_ErrorAction_NO_DATA);
  EXPECT_DOUBLE_EQ(device.spent(), client::device_spend(task).value().epsilon);
  EXPECT_EQ(device.random->drawn, 0u);
}

TEST_F(ClientSessionTest, HeterogeneityReportsAreTheFixedPointRounds) {
  VectorData data(0);
  for (uint32_t stage : {1u, 2u}) {
    const fedstat_v1_Task task = as_none(heterogeneity_task(fedstat_v1_TrustModel_NONE, stage));
    const std::vector<double> means = {0.2, 0.4, 0.6, 0.5, 0.25, 0.45, 0.55, 0.5};
    const std::vector<uint64_t> words = stage == 2 ? model_bits(means) : std::vector<uint64_t>();
    Device device(50 + stage, client::Client::memory_bytes(task).value(), data);
    device.accept_none();
    Session s = run(device, task, words);
    ASSERT_TRUE(s.outcome.ok()) << s.outcome.status().message();
    CountingSource unused(test_seed(99), 50 + stage);
    EXPECT_EQ(s.seen.report, expected_heterogeneity(task, data.x, means, unused)) << stage;
    EXPECT_EQ(s.seen.report.size(), stage == 1 ? 10u : 2u);
    EXPECT_EQ(device.random->drawn, 0u);  // NONE: the device draws no noise
  }
  // Out-of-range app data is refused after the ledger pays (the app's data: issue 39 item 1,
  // review F4; a DIST stage is charged its RDP curve); a non-finite host mean before (the
  // TaskData, which the server knows).
  client::TaskPolicy lifted;  // this small fleet's charge is above the default ceiling
  lifted.max_epsilon = 1e6;
  fedstat_v1_Task dist = heterogeneity_task(fedstat_v1_TrustModel_DIST, 1);
  make_dist(dist, 3, 2);
  dist.device_noise_lambda = 1e6;
  VectorData bad(0);
  bad.x[1] = 1.5;
  Device refuses(53, 1 << 16, bad, /*budget=*/1e6);
  ASSERT_TRUE(refuses.client.set_task_policy(lifted).ok());
  Session s = run(refuses, dist, {});
  EXPECT_EQ(s.outcome.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(s.seen.report.empty());
  EXPECT_FALSE(s.seen.reply.accept);
  EXPECT_EQ(s.seen.reply.reason, fedstat_v1_ErrorAction_NO_DATA);
  EXPECT_EQ(refuses.ledger.size(), 1u);
  Device nan_mean(54, 1 << 16, data, /*budget=*/1e6);
  ASSERT_TRUE(nan_mean.client.set_task_policy(lifted).ok());
  dist.parameters.heterogeneity.stage = 2;
  dist.vector_length = 2;
  dist.data_words = 8;
  Session m = run(nan_mean, dist, model_bits({0.1, 0.1, 0.1, 0.1, std::nan(""), 0.1, 0.1, 0.1}));
  EXPECT_EQ(m.outcome.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(m.seen.reply.reason, fedstat_v1_ErrorAction_REFUSED);
  EXPECT_EQ(nan_mean.ledger.size(), 0u);
}

// memory_bytes(task, local_size) is exactly enough. One byte short: a task whose memory does not
// grow with the app's data (KL: local size 0) is declined at once, INSUFFICIENT_MEMORY, for
// nothing; one whose scratch grows with the app's histogram or examples is declined after the
// ledger pays, NO_DATA, the charge kept (the size is the app's data: issue 39 item 1, privacy
// review F4; before, every memory decline was free and said INSUFFICIENT_MEMORY).
TEST_F(ClientSessionTest, MemoryFormulaIsExactlyEnough) {
  OwnedHistogram h(4);
  HistogramData hist(&h.histogram);
  ModelData model_data;
  std::vector<uint64_t> points;
  struct Case {
    fedstat_v1_Task task;
    std::vector<uint64_t> data;
    client::ClientData* app;
    size_t local;
    fedstat_v1_ErrorAction reason;  // of the decline one byte short
    double charged;                 // by it
  };
  std::vector<Case> cases = {
      {data_shift_task(fedstat_v1_TrustModel_TRUSTED, 1.0),
       {},
       &hist,
       h.histogram.capacity(),
       fedstat_v1_ErrorAction_NO_DATA,
       1.0},
      {kl_task(fedstat_v1_TrustModel_TRUSTED, points),
       {},
       &hist,
       0,
       fedstat_v1_ErrorAction_INSUFFICIENT_MEMORY,
       0},
      {as_none(model_task(fedstat_v1_TrustModel_NONE)), model_bits({0.1, -0.2, 0.05, 0}),
       &model_data, 40, fedstat_v1_ErrorAction_NO_DATA, 0},  // NONE: nothing to charge
  };
  cases[1].data = points;
  uint64_t id = 30;
  for (Case& c : cases) {
    const size_t need = client::Client::memory_bytes(c.task, c.local).value();
    Device enough(id++, need, *c.app);
    enough.accept_none();
    Session s = run(enough, c.task, c.data);
    ASSERT_TRUE(s.outcome.ok()) << c.task.kind << ": " << s.outcome.status().message();
    EXPECT_EQ(s.outcome.value().result, SessionResult::kCompleted);

    Device short_one(id++, need - 1, *c.app);
    short_one.accept_none();
    Session d = run(short_one, c.task, c.data);
    ASSERT_TRUE(d.outcome.ok()) << d.outcome.status().message();
    EXPECT_EQ(d.outcome.value().result, SessionResult::kDeclinedMemory);
    EXPECT_EQ(d.seen.reply.reason, c.reason) << c.task.kind;
    EXPECT_EQ(short_one.spent(), c.charged) << c.task.kind;
    EXPECT_EQ(short_one.random->drawn, 0u);
  }
}

// No data for the task's kind: declined after the ledger pays, the charge kept (issue 39 item 1,
// privacy review F4: whether the app holds data is its data; before, nothing was charged).
TEST_F(ClientSessionTest, NoDataDeclinesAfterTheCharge) {
  HistogramData none(nullptr);
  std::vector<uint64_t> points;
  const fedstat_v1_Task task = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  Device device(24, 1 << 16, none);
  Session s = run(device, task, points);
  ASSERT_TRUE(s.outcome.ok());
  EXPECT_EQ(s.outcome.value().result, SessionResult::kDeclinedNoData);
  EXPECT_FALSE(s.seen.reply.accept);
  EXPECT_EQ(s.seen.reply.reason, fedstat_v1_ErrorAction_NO_DATA);
  EXPECT_DOUBLE_EQ(device.spent(), task.epsilon);
}

TEST_F(ClientSessionTest, WrongAckOffsetEndsTheSessionAndNothingMoreIsSent) {
  OwnedHistogram h(5);
  HistogramData data(&h.histogram);
  const fedstat_v1_Task task = data_shift_task(fedstat_v1_TrustModel_TRUSTED);
  Device device(25, 1 << 16, data);
  Session s = run(device, task, {}, Mode::kWrongAckOffset);
  EXPECT_EQ(s.outcome.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.seen.report.size(), 64u);  // the first chunk only
  EXPECT_EQ(s.seen.extra_messages, 0u);
}

// The server side of a resumed session: the hello must name the task; Task + TaskData, then an
// Ack of `held` words (or, with `closed`, TASK_CLOSED instead), then the rest of the report.
Seen serve_resume(InMemoryChannel& server, const fedstat_v1_Task& task, uint32_t held,
                  bool closed = false) {
  Seen seen;
  wire::Envelope in;
  if (!server.receive(in, 20000).ok()) return seen;
  seen.hello = in.body.client_hello;
  if (closed) {
    wire::Envelope error = envelope_of(fedstat_v1_Envelope_server_error_tag);
    error.body.server_error.action = fedstat_v1_ErrorAction_TASK_CLOSED;
    error.body.server_error.status_code = static_cast<uint32_t>(StatusCode::kFailedPrecondition);
    server.send(error).ignore();
  } else {
    send_task(server, task, {});
    wire::Envelope ack = envelope_of(fedstat_v1_Envelope_ack_tag);
    ack.body.ack.task_id = task.task_id;
    ack.body.ack.offset = held;
    server.send(ack).ignore();
    size_t next = held;
    while (next < task.vector_length) {
      if (!server.receive(in, 20000).ok() || in.which_body != fedstat_v1_Envelope_report_tag) break;
      EXPECT_EQ(in.body.report.offset, next);
      seen.report.insert(seen.report.end(), in.body.report.words,
                         in.body.report.words + in.body.report.words_count);
      next += in.body.report.words_count;
      ack.body.ack.offset = static_cast<uint32_t>(next);
      server.send(ack).ignore();
    }
    wire::Envelope outcome = envelope_of(fedstat_v1_Envelope_round_outcome_tag);
    outcome.body.round_outcome.task_id = task.task_id;
    outcome.body.round_outcome.completed = true;
    server.send(outcome).ignore();
  }
  while (server.receive(in, 20000).ok()) ++seen.extra_messages;
  return seen;
}

Session run_resume(Device& device, const fedstat_v1_Task& task, uint32_t held,
                   bool closed = false) {
  auto ends = make_channel_pair();
  Session s;
  std::thread server([&] { s.seen = serve_resume(*ends.second, task, held, closed); });
  s.outcome = device.client.run_session(*ends.first);
  server.join();
  return s;
}

TEST_F(ClientSessionTest, ALostChannelResumesTheSameReportWithoutNewNoiseOrCharge) {
  OwnedHistogram h(6);
  HistogramData data(&h.histogram);
  // local_epsilon > 0: the report carries noise, so a recomputed report would differ.
  const fedstat_v1_Task task = data_shift_task(fedstat_v1_TrustModel_TRUSTED, 1.0);
  ASSERT_GT(task.vector_length, 128u);
  Device device(31, client::Client::memory_bytes(task, h.histogram.capacity()).value(), data);
  ASSERT_TRUE(device.init_status.ok());
  Session first = run(device, task, {}, Mode::kCloseAfterFirstAck);
  EXPECT_EQ(first.outcome.status().code(), StatusCode::kUnavailable);
  ASSERT_EQ(first.seen.report.size(), 64u);
  EXPECT_EQ(device.client.pending_report_task(), task.task_id);
  const double spent = device.spent();
  const size_t drawn = device.random->drawn;

  Session second = run_resume(device, task, 64);
  ASSERT_TRUE(second.outcome.ok()) << second.outcome.status().message();
  EXPECT_EQ(second.outcome.value().result, SessionResult::kCompleted);
  EXPECT_EQ(second.seen.hello.resume_task_id, task.task_id);
  std::vector<uint64_t> report = first.seen.report;
  report.insert(report.end(), second.seen.report.begin(), second.seen.report.end());
  CountingSource same(test_seed(99), 31);
  const std::vector<uint64_t> expected = expected_sketch(task, h.histogram, same);
  ASSERT_EQ(report.size(), expected.size());
  for (size_t i = 0; i < report.size(); ++i) {
    ASSERT_EQ(report[i], expected[i]) << "word " << i;  // one contribution, whole
  }
  EXPECT_EQ(device.spent(), spent);        // charged once
  EXPECT_EQ(device.random->drawn, drawn);  // no noise drawn again
  EXPECT_EQ(device.client.pending_report_task(), 0u);
  EXPECT_EQ(second.seen.extra_messages, 0u);
}

// The device's end of a connection, counting the Report chunks sent and not yet acknowledged.
class InFlightChannel : public client::FrameChannel {
 public:
  explicit InFlightChannel(client::FrameChannel& inner) : inner_(inner) {}
  Status send(const wire::Envelope& message) override {
    if (message.which_body == fedstat_v1_Envelope_report_tag) {
      most_ = std::max(most_, ++in_flight_);
    }
    return inner_.send(message);
  }
  Status receive(wire::Envelope& out, uint32_t timeout_ms) override {
    const Status s = inner_.receive(out, timeout_ms);
    if (s.ok() && out.which_body == fedstat_v1_Envelope_ack_tag) --in_flight_;
    return s;
  }
  void close() override { inner_.close(); }
  size_t most() const { return most_; }

 private:
  client::FrameChannel& inner_;
  size_t in_flight_ = 0, most_ = 0;
};

// report_window chunks go out before the Client waits, never more, and the report is the same
// whatever the window (a 3-chunk sketch).
TEST_F(ClientSessionTest, AReportWindowKeepsThatManyChunksUnacknowledgedAndTheSameReport) {
  const fedstat_v1_Task task = data_shift_task(fedstat_v1_TrustModel_TRUSTED, 1.0);
  ASSERT_EQ((task.vector_length + 63) / 64, 3u);
  uint64_t id = 41;
  for (uint8_t window : {uint8_t{1}, uint8_t{2}, uint8_t{3}, client::kMaxReportWindow}) {
    OwnedHistogram h(6);
    HistogramData data(&h.histogram);
    Device device(id, client::Client::memory_bytes(task, h.histogram.capacity()).value(), data, 10,
                  nullptr, window);
    ASSERT_TRUE(device.init_status.ok());
    auto ends = make_channel_pair();
    InFlightChannel counted(*ends.first);
    Session s;
    std::thread server([&] { s.seen = serve(*ends.second, task, {}, Mode::kNormal); });
    s.outcome = device.client.run_session(counted);
    server.join();
    ASSERT_TRUE(s.outcome.ok()) << s.outcome.status().message();
    EXPECT_EQ(s.outcome.value().result, SessionResult::kCompleted);
    EXPECT_EQ(counted.most(), std::min<size_t>(window, 3)) << "window " << int{window};
    CountingSource same(test_seed(99), id++);
    EXPECT_EQ(s.seen.report, expected_sketch(task, h.histogram, same)) << int{window};
  }
}

// A server that acknowledges only after it has read the whole report: a window of at least the
// report's chunks completes; stop-and-wait would wait for an Ack that never comes.
TEST_F(ClientSessionTest, AWindowAsLargeAsTheReportNeedsNoAckBeforeTheLastChunk) {
  OwnedHistogram h(6);
  HistogramData data(&h.histogram);
  const fedstat_v1_Task task = data_shift_task(fedstat_v1_TrustModel_TRUSTED);
  Device device(45, client::Client::memory_bytes(task, h.histogram.capacity()).value(), data, 10,
                nullptr, 3);
  Session s = run(device, task, {}, Mode::kAckAfterAll);
  ASSERT_TRUE(s.outcome.ok()) << s.outcome.status().message();
  EXPECT_EQ(s.outcome.value().result, SessionResult::kCompleted);
  EXPECT_EQ(s.seen.report.size(), task.vector_length);
}

// A channel lost with chunks in flight, the server holding more than it acknowledged: the resume
// sends the rest from what the server holds (its resume Ack, 128), the same contribution, charged
// once.
TEST_F(ClientSessionTest, AChannelLostWithAWindowInFlightResumesFromWhatTheServerHolds) {
  OwnedHistogram h(6);
  HistogramData data(&h.histogram);
  const fedstat_v1_Task task = data_shift_task(fedstat_v1_TrustModel_TRUSTED, 1.0);
  Device device(46, client::Client::memory_bytes(task, h.histogram.capacity()).value(), data, 10,
                nullptr, 3);
  Session first = run(device, task, {}, Mode::kTwoHeldOneAck);
  EXPECT_EQ(first.outcome.status().code(), StatusCode::kUnavailable);
  ASSERT_EQ(first.seen.report.size(), 128u);  // two chunks held, one acknowledged
  ASSERT_EQ(device.client.pending_report_task(), task.task_id);
  const double spent = device.spent();
  Session second = run_resume(device, task, 128);
  ASSERT_TRUE(second.outcome.ok()) << second.outcome.status().message();
  EXPECT_EQ(second.outcome.value().result, SessionResult::kCompleted);
  ASSERT_EQ(second.seen.report.size(), task.vector_length - 128);
  std::vector<uint64_t> report = first.seen.report;
  report.insert(report.end(), second.seen.report.begin(), second.seen.report.end());
  CountingSource same(test_seed(99), 46);
  EXPECT_EQ(report, expected_sketch(task, h.histogram, same));
  EXPECT_EQ(device.spent(), spent);
}

TEST_F(ClientSessionTest, AResumeTheServerRefusesOrAnotherTaskEndsThePendingReport) {
  OwnedHistogram h(7);
  HistogramData data(&h.histogram);
  fedstat_v1_Task task = data_shift_task(fedstat_v1_TrustModel_TRUSTED);
  Device device(32, 1 << 16, data);
  ASSERT_TRUE(device.init_status.ok());
  run(device, task, {}, Mode::kCloseAfterFirstAck);
  ASSERT_EQ(device.client.pending_report_task(), task.task_id);
  Session closed = run_resume(device, task, 64, /*closed=*/true);
  ASSERT_TRUE(closed.outcome.ok());
  EXPECT_EQ(closed.outcome.value().result, SessionResult::kNoTask);
  EXPECT_EQ(device.client.pending_report_task(), 0u);
  EXPECT_EQ(closed.seen.extra_messages, 0u);

  // Cut again, in another task (the ledger paid for this one: offered again, it is declined,
  // client.h check 3); this time the server "resumes" with a task that differs in one field.
  task.task_id += 1;
  run(device, task, {}, Mode::kCloseAfterFirstAck);
  ASSERT_EQ(device.client.pending_report_task(), task.task_id);
  fedstat_v1_Task other = task;
  other.epsilon = task.epsilon * 2;
  Session confused = run_resume(device, other, 64);
  EXPECT_EQ(confused.outcome.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(confused.seen.report.empty());  // nothing of the old report sent for it
  EXPECT_EQ(confused.seen.extra_messages, 0u);
  EXPECT_EQ(device.client.pending_report_task(), 0u);
}

TEST_F(ClientSessionTest, AHeldReportIsSentOnlyAsBuiltAndIsWipedWhenDropped) {
  OwnedHistogram h(8);
  HistogramData data(&h.histogram);
  fedstat_v1_Task task = data_shift_task(fedstat_v1_TrustModel_TRUSTED);
  Device device(33, 1 << 16, data);
  ASSERT_TRUE(device.init_status.ok());
  // The app's memory changes under a held report: nothing of it is sent, it is dropped.
  run(device, task, {}, Mode::kCloseAfterFirstAck);
  ASSERT_EQ(device.client.pending_report_task(), task.task_id);
  device.memory[70] ^= 1;
  Session changed = run_resume(device, task, 64);
  EXPECT_EQ(changed.outcome.status().code(), StatusCode::kDataLoss);
  EXPECT_TRUE(changed.seen.report.empty());
  EXPECT_EQ(device.client.pending_report_task(), 0u);
  // Dropped means wiped: the contribution's words are zero.
  for (size_t i = 0; i < task.vector_length; ++i) ASSERT_EQ(device.memory[i], 0u) << i;

  // A new init() never resumes what an earlier one held. (Another task id: the ledger paid for
  // the first, which is declined when offered again, client.h check 3.)
  task.task_id += 1;
  run(device, task, {}, Mode::kCloseAfterFirstAck);
  ASSERT_EQ(device.client.pending_report_task(), task.task_id);
  client::ClientConfig config;
  config.device_id = 33;
  config.wall_clock_seconds = fixed_clock;
  config.round_blob_name = device.round_name.c_str();
  ASSERT_TRUE(device.client
                  .init(config,
                        MutableByteSpan(reinterpret_cast<uint8_t*>(device.memory.data()),
                                        device.memory.size() * 8),
                        data, device.ledger, *device.random)
                  .ok());
  EXPECT_EQ(device.client.pending_report_task(), 0u);

  // Past the task's deadline a held report is dropped before the check-in names it.
  // (Another task id: the re-init found task 12's round marker, so 12 is declined from now on.)
  task.task_id += 100;
  task.deadline_unix_seconds = kNow;
  run(device, task, {}, Mode::kCloseAfterFirstAck);
  ASSERT_EQ(device.client.pending_report_task(), task.task_id);
  Session late = run_resume(device, task, 64, /*closed=*/true);
  EXPECT_EQ(late.seen.hello.resume_task_id, 0u);
  EXPECT_EQ(device.client.pending_report_task(), 0u);
}

// Refused by validate_task — before the ledger pays — rather than by a builder after it.
TEST(ValidateTask, RefusesWhatABuilderWouldRefuseAfterTheCharge) {
  std::vector<uint64_t> points;
  fedstat_v1_Task kl = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  make_dist(kl, 8, 5);
  kl.device_noise_lambda = 3.5;
  ASSERT_TRUE(client::validate_task(kl).ok()) << client::validate_task(kl).message();
  kl.device_noise_lambda = 1e30;  // finite, but no Skellam sampler takes it
  Status s = client::validate_task(kl);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::strstr(s.message(), "Task.device_noise_lambda"), nullptr) << s.message();

  fedstat_v1_Task model = as_none(model_task(fedstat_v1_TrustModel_NONE));
  ASSERT_TRUE(client::validate_task(model).ok());
  model.parameters.model_update.examples_per_client = model.parameters.model_update.batches - 1;
  s = client::validate_task(model);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::strstr(s.message(), "examples_per_client"), nullptr) << s.message();
}

TEST_F(ClientSessionTest, AnyServerErrorEndsAPendingReport) {
  OwnedHistogram h(9);
  HistogramData data(&h.histogram);
  const fedstat_v1_Task task = data_shift_task(fedstat_v1_TrustModel_TRUSTED);
  Device device(34, 1 << 16, data);
  ASSERT_TRUE(device.init_status.ok());
  run(device, task, {}, Mode::kCloseAfterFirstAck);
  ASSERT_EQ(device.client.pending_report_task(), task.task_id);
  // A ServerError whose code is kUnavailable, after the Task: not a lost channel.
  auto ends = make_channel_pair();
  std::thread server([&] {
    wire::Envelope in;
    if (!ends.second->receive(in, 20000).ok()) return;
    send_task(*ends.second, task, {});
    wire::Envelope error = envelope_of(fedstat_v1_Envelope_server_error_tag);
    error.body.server_error.status_code = static_cast<uint32_t>(StatusCode::kUnavailable);
    ends.second->send(error).ignore();
    while (ends.second->receive(in, 20000).ok()) {
    }
  });
  const auto outcome = device.client.run_session(*ends.first);
  server.join();
  EXPECT_EQ(outcome.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(device.client.pending_report_task(), 0u);
}

TEST_F(ClientSessionTest, AMessageOfTheWrongKindIsFailedPrecondition) {
  OwnedHistogram h(5);
  HistogramData data(&h.histogram);
  Device device(26, 1 << 16, data);
  auto ends = make_channel_pair();
  size_t after = 0;
  std::thread server([&] {
    wire::Envelope in;
    ASSERT_TRUE(ends.second->receive(in, 20000).ok());
    ASSERT_TRUE(ends.second->send(envelope_of(fedstat_v1_Envelope_ack_tag)).ok());
    while (ends.second->receive(in, 20000).ok()) ++after;
  });
  auto outcome = device.client.run_session(*ends.first);
  server.join();
  EXPECT_EQ(outcome.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(after, 0u);
}

TEST_F(ClientSessionTest, TaskDataForAnotherTaskIsFailedPrecondition) {
  OwnedHistogram h(5);
  HistogramData data(&h.histogram);
  std::vector<uint64_t> points;
  const fedstat_v1_Task task = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  Device device(27, 1 << 16, data);
  auto ends = make_channel_pair();
  size_t after = 0;
  std::thread server([&] {
    wire::Envelope in;
    ASSERT_TRUE(ends.second->receive(in, 20000).ok());
    fedstat_v1_Task other = task;
    wire::Envelope e = envelope_of(fedstat_v1_Envelope_task_tag);
    e.body.task = task;
    ASSERT_TRUE(ends.second->send(e).ok());
    wire::Envelope d = envelope_of(fedstat_v1_Envelope_task_data_tag);
    d.body.task_data.task_id = other.task_id + 1;
    d.body.task_data.words_count = 1;
    ASSERT_TRUE(ends.second->send(d).ok());
    while (ends.second->receive(in, 20000).ok()) ++after;
  });
  auto outcome = device.client.run_session(*ends.first);
  server.join();
  EXPECT_EQ(outcome.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(after, 0u);  // no TaskReply: nothing charged, nothing sent
  EXPECT_EQ(device.spent(), 0);
}

TEST_F(ClientSessionTest, ARebootMidRoundDeclinesThatRoundAndOnlyThatOne) {
  OwnedHistogram h(6);
  HistogramData data(&h.histogram);
  const fedstat_v1_Task task = data_shift_task(fedstat_v1_TrustModel_TRUSTED);
  {
    Device before(40, 1 << 16, data);
    ASSERT_EQ(before.client.interrupted_task(), 0u);
    Session s = run(before, task, {}, Mode::kCloseAfterReply);  // lost mid-round
    ASSERT_TRUE(s.seen.reply.accept);
    EXPECT_FALSE(s.outcome.ok());
    EXPECT_DOUBLE_EQ(before.spent(), task.epsilon);
  }
  // "Reboot": a new Client (and ledger object) on the same storage.
  Device after(40, 1 << 16, data);
  ASSERT_TRUE(after.init_status.ok());
  EXPECT_EQ(after.client.interrupted_task(), task.task_id);
  EXPECT_DOUBLE_EQ(after.spent(), task.epsilon);
  Session again = run(after, task, {});
  ASSERT_TRUE(again.outcome.ok()) << again.outcome.status().message();
  EXPECT_EQ(again.outcome.value().result, SessionResult::kDeclinedInterrupted);
  EXPECT_EQ(again.seen.reply.reason, fedstat_v1_ErrorAction_TASK_CLOSED);
  EXPECT_TRUE(again.seen.report.empty());
  EXPECT_DOUBLE_EQ(after.spent(), task.epsilon);  // not charged twice
  // Another task runs, and completing it clears the marker.
  fedstat_v1_Task next = task;
  next.task_id = task.task_id + 1;
  Session other = run(after, next, {});
  ASSERT_TRUE(other.outcome.ok());
  EXPECT_EQ(other.outcome.value().result, SessionResult::kCompleted);
  Device later(40, 1 << 16, data);
  EXPECT_EQ(later.client.interrupted_task(), 0u);
}

TEST_F(ClientSessionTest, ACorruptRoundMarkerFailsInitClosed) {
  ASSERT_TRUE(
      platform::save_blob("round-41", ByteSpan(reinterpret_cast<const uint8_t*>("junk"), 4)).ok());
  OwnedHistogram h(6);
  HistogramData data(&h.histogram);
  Device device(41, 1 << 16, data);
  EXPECT_EQ(device.init_status.code(), StatusCode::kDataLoss);
  ASSERT_TRUE(client::Client::forget_interrupted_round("round-41").ok());
  Device fresh(41, 1 << 16, data);
  EXPECT_TRUE(fresh.init_status.ok());
}

TEST_F(ClientSessionTest, InitRefusesBadConfig) {
  OwnedHistogram h(6);
  HistogramData data(&h.histogram);
  Device device(0, 64, data);
  EXPECT_EQ(device.init_status.code(), StatusCode::kInvalidArgument);
  Device huge((uint64_t{1} << 31) + 1, 64, data);
  EXPECT_EQ(huge.init_status.code(), StatusCode::kInvalidArgument);
  Device top(uint64_t{1} << 31, 64, data);
  EXPECT_TRUE(top.init_status.ok());
  for (int window : {0, client::kMaxReportWindow + 1}) {
    Device bad(7, 64, data, 10, nullptr, static_cast<uint8_t>(window));
    EXPECT_EQ(bad.init_status.code(), StatusCode::kInvalidArgument) << window;
  }
}

}  // namespace
}  // namespace client_test
}  // namespace fedstat
