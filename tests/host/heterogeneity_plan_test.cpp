// HETEROGENEITY through the server: the declaration's checks, the two stages' Tasks, the ledger
// charge of the pair, and the chaining of stage 2 after stage 1 in the Coordinator (opens with
// the means of stage 1's released sum; never after an abort; the same after a restart).
#include "host_server/tasks/heterogeneity_plan.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "host_server/estimate/heterogeneity.h"
#include "host_server/estimate/host_common.h"
#include "host_server/rounds/coordinator.h"
#include "host_server/server_app.h"
#include "platform/posix/posix_platform.h"
#include "sdk/client/contribution.h"
#include "sdk/noise/rational.h"
#include "sdk/privacy/budget_ledger.h"
#include "tests/rounds/fake_outbox.h"
#include "tests/rounds/fake_store.h"
#include "tests/rounds/trusted_device.h"

namespace fedstat {
namespace host {
namespace testing {
namespace {

using nlohmann::json;

constexpr uint32_t kStage1 = 21, kStage2 = 22;

json declaration(const std::string& trust) {
  const bool dist = trust == "dist";
  return json{
      {"id", kStage1},
      {"kind", "heterogeneity"},
      {"trust", trust},
      {"epsilon", dist ? 8.0 : 0.0},
      {"delta", dist ? 1e-5 : 0.0},
      {"min_clients", 3},
      {"max_clients", 3},
      {"threshold", 2},
      {"deadline_seconds", 600},
      {"admission_seconds", 30},
      {"phase_timeout_seconds", 20},
      {"seed", std::string(62, '0') + "5c"},
      {"heterogeneity", {{"dimension", 3}, {"p", 2}, {"max_weight", 8}, {"stage2_id", kStage2}}}};
}

// Three devices' vectors, spread enough that Q > n − 1 (I² > 0).
const ClientVectors kVectors = {{0.05, 0.5, 0.95}, {0.9, 0.1, 0.2}, {0.2, 0.8, 0.1}};

tasks::HeterogeneityConfig config_of() {
  tasks::HeterogeneityConfig c;
  c.p = 2;
  c.max_weight = 8;
  return c;
}

// A device's contribution, through the SDK's builder (no noise is drawn in trust none).
std::vector<uint64_t> contribution(const fedstat_v1_Task& task, const std::vector<double>& x,
                                   const std::vector<uint64_t>& data) {
  SeededStream stream(seed_from_u64(3), 1);
  RandomBits bits(stream);
  std::vector<uint64_t> out(task.vector_length);
  std::vector<uint64_t> scratch(client::scratch_bytes(task, 0).value() / 8 + 1);
  const Status s = client::build_heterogeneity(
      task, Span<const double>(x.data(), x.size()), Span<const uint64_t>(data.data(), data.size()),
      bits, MutableByteSpan(reinterpret_cast<uint8_t*>(scratch.data()), scratch.size() * 8),
      Span<uint64_t>(out.data(), out.size()));
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

std::vector<uint64_t> sum_words(const std::vector<std::vector<uint64_t>>& words) {
  std::vector<uint64_t> sum(words.at(0).size(), 0);
  for (const auto& w : words) {
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += w[i];
  }
  return sum;
}

std::vector<uint64_t> mean_bits(const HeterogeneityRound1& r) {
  std::vector<uint64_t> bits;
  for (const auto* v : {&r.mean, &r.weighted_mean}) {
    for (double x : *v) {
      uint64_t b = 0;
      std::memcpy(&b, &x, 8);
      bits.push_back(b);
    }
  }
  return bits;
}

void expect_refused(json d, const std::string& field) {
  try {
    plan_task(d, "", 0);
    ADD_FAILURE() << "accepted: " << d.dump();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(HeterogeneityPlan, RefusesEachBadFieldByName) {
  EXPECT_NO_THROW(plan_task(declaration("dist"), "", 0));
  EXPECT_NO_THROW(plan_task(declaration("none"), "", 0));
  json d = declaration("dist");
  d.erase("heterogeneity");
  expect_refused(d, "heterogeneity is missing");
  for (const auto& [name, value] : std::vector<std::pair<std::string, json>>{{"dimension", 0},
                                                                             {"dimension", 4097},
                                                                             {"dimension", "3"},
                                                                             {"p", 0.5},
                                                                             {"p", nullptr},
                                                                             {"max_weight", 3.9},
                                                                             {"max_weight", 1e7},
                                                                             {"stage2_id", 0},
                                                                             {"stage2_id", kStage1},
                                                                             {"stage2_id", -4}}) {
    json bad = declaration("dist");
    bad["heterogeneity"][name] = value;
    expect_refused(bad, "heterogeneity." + name);
  }
  for (const std::string name : {"dimension", "p", "max_weight", "stage2_id"}) {
    json bad = declaration("dist");
    bad["heterogeneity"].erase(name);
    expect_refused(bad, "heterogeneity." + name + " is missing");
  }
  json trusted = declaration("dist");
  trusted["trust"] = "trusted";
  expect_refused(trusted, "trust of a heterogeneity task must be \"none\" or \"dist\"");
  json noisy_none = declaration("none");
  noisy_none["epsilon"] = 1.0;
  expect_refused(noisy_none, "epsilon/delta");
  json no_delta = declaration("dist");
  no_delta["delta"] = 0.0;
  expect_refused(no_delta, "epsilon/delta");
}

// Stage 1's Task, and stage 2's from stage 1's published result: the calibration's per-stage
// scales, λ = μ/threshold, the means of the released sum as TaskData, a session of its own.
TEST(HeterogeneityPlan, StageTwoIsDerivedFromStageOnesPublishedResult) {
  const json d = declaration("dist");
  const TaskPlan one = plan_task(d, "", 1000);
  const SkellamCalibration c =
      calibrate_heterogeneity_skellam(3, config_of(), 8, 1e-5, FixedPointScales::kPerStage);
  const fedstat_v1_Task& t1 = one.task;
  EXPECT_EQ(t1.kind, fedstat_v1_TaskKind_HETEROGENEITY);
  EXPECT_EQ(t1.parameters.heterogeneity.stage, 1u);
  EXPECT_EQ(t1.vector_length, 8u);
  EXPECT_EQ(t1.data_words, 0u);
  EXPECT_EQ(t1.parameters.heterogeneity.scale, c.scale[0]);
  EXPECT_EQ(t1.device_noise_lambda, c.sum_lambda / 2);
  EXPECT_EQ(one.next_task_id, kStage2);
  ASSERT_TRUE(one.next_stage);
  // One scale per stage: 1024 over the stage's combined L2 (Σx with Σw·x, Σw, Σ1/w; D with Q).
  const tasks::HeterogeneitySensitivities s = tasks::heterogeneity_sensitivities(3, config_of());
  EXPECT_DOUBLE_EQ(c.scale[0], 1024 / std::hypot(s.l2[0], s.l2[1]));
  EXPECT_DOUBLE_EQ(c.scale[1], c.scale[0]);
  EXPECT_DOUBLE_EQ(c.scale[2], 1024 / std::hypot(s.l2[2], s.l2[3]));

  // A released stage-1 sum (any words: the derivation reads only the release).
  std::vector<std::vector<uint64_t>> words;
  std::vector<uint64_t> none;
  for (const auto& x : kVectors) words.push_back(contribution(t1, x, none));
  const std::vector<uint64_t> sum = sum_words(words);
  const json result = one.estimate(sum, 3);
  EXPECT_EQ(result["stage"], 1);
  EXPECT_TRUE(result["estimate"].is_null());
  EXPECT_EQ(result["sum_sha256"], sum_digest(sum));
  const HeterogeneityRound1 r1 =
      finish_heterogeneity_round1(decode_fixed_point_sums(sum, c.scale[0]), 3, config_of());
  EXPECT_EQ(result["mean"].get<std::vector<double>>(), r1.mean);

  const TaskPlan two = one.next_stage(result.dump(), 5000);
  const fedstat_v1_Task& t2 = two.task;
  EXPECT_EQ(t2.task_id, kStage2);
  EXPECT_EQ(t2.parameters.heterogeneity.stage, 2u);
  EXPECT_EQ(t2.vector_length, 2u);
  EXPECT_EQ(t2.data_words, 6u);
  EXPECT_EQ(t2.parameters.heterogeneity.scale, c.scale[2]);
  EXPECT_EQ(t2.device_noise_lambda, t1.device_noise_lambda);
  EXPECT_EQ(t2.deadline_unix_seconds, 5600u);
  EXPECT_NE(t2.secagg_session, t1.secagg_session);
  EXPECT_EQ(two.data, mean_bits(r1));
  EXPECT_FALSE(two.next_stage);
  // The same result, the same stage 2 (a restart derives it again).
  EXPECT_EQ(one.next_stage(result.dump(), 5000).data, two.data);
  // The Task alone, from the declaration, before stage 1 ran (what Python's TaskPolicy.check
  // weighs): byte for byte the one stage 2 sends.
  const fedstat_v1_Task alone = heterogeneity_stage2_task(d, "", 5000);
  EXPECT_EQ(alone.task_id, t2.task_id);
  EXPECT_EQ(alone.kind, t2.kind);
  EXPECT_EQ(alone.trust, t2.trust);
  EXPECT_EQ(alone.epsilon, t2.epsilon);
  EXPECT_EQ(alone.delta, t2.delta);
  EXPECT_EQ(alone.threshold, t2.threshold);
  EXPECT_EQ(alone.max_clients, t2.max_clients);
  EXPECT_EQ(alone.secagg_session, t2.secagg_session);
  EXPECT_EQ(alone.deadline_unix_seconds, t2.deadline_unix_seconds);
  EXPECT_EQ(alone.device_noise_lambda, t2.device_noise_lambda);
  EXPECT_EQ(alone.vector_length, t2.vector_length);
  EXPECT_EQ(alone.data_words, t2.data_words);
  EXPECT_EQ(alone.bits, t2.bits);
  EXPECT_EQ(alone.parameters.heterogeneity.stage, 2u);
  EXPECT_EQ(alone.parameters.heterogeneity.scale, t2.parameters.heterogeneity.scale);
  EXPECT_EQ(std::memcmp(alone.seed.bytes, t2.seed.bytes, 32), 0);
  EXPECT_THROW(heterogeneity_stage2_task(json::parse(R"({"id": 1})"), "", 0),
               std::invalid_argument);

  // Not stage 1's release: refused by name.
  json forged = result;
  forged["sum"][0] = forged["sum"][0].get<int64_t>() + 1;
  EXPECT_THROW(one.next_stage(forged.dump(), 5000), std::invalid_argument);
  json wrong = result;
  wrong["stage"] = 2;
  EXPECT_THROW(one.next_stage(wrong.dump(), 5000), std::invalid_argument);
}

// The pair costs a device what the four releases composed in RDP give — about the declared ε —
// not the declared ε once per stage.
TEST(HeterogeneityPlan, TheTwoStagesCostTheDeviceTheComposedEpsilonOnce) {
  char pattern[] = "/tmp/fedstat-het-ledger-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  ASSERT_TRUE(platform::posix::set_storage_directory(pattern).ok());
  const json d = declaration("dist");
  const TaskPlan one = plan_task(d, "", 1000);
  std::vector<uint64_t> sum(8, 0);
  sum[0] = 1000;
  const TaskPlan two = one.next_stage(one.estimate(sum, 3).dump(), 2000);

  auto ledger_after = [&](const std::vector<const fedstat_v1_Task*>& tasks, const char* blob) {
    privacy::LedgerConfig lc;
    lc.epsilon_budget = 100;
    lc.delta_budget = 1e-5;  // the declared δ
    lc.blob_name = blob;
    std::vector<privacy::PrivacySpend> entries(4);
    std::vector<uint8_t> scratch(privacy::BudgetLedger::blob_bytes(4));
    privacy::BudgetLedger ledger;
    EXPECT_TRUE(ledger
                    .init(lc, Span<privacy::PrivacySpend>(entries.data(), 4),
                          MutableByteSpan(scratch.data(), scratch.size()))
                    .ok());
    EXPECT_TRUE(ledger.load().ok());
    for (const fedstat_v1_Task* t : tasks) {
      client::DeviceSpend spend = client::device_spend(*t).value();  // as the Client charges it
      spend.task_id = t->task_id;
      EXPECT_TRUE(ledger.charge(spend, privacy::kLedgerMinClockSeconds + 10).ok());
    }
    return ledger.spent(privacy::kLedgerMinClockSeconds + 10).value().epsilon;
  };
  const double both = ledger_after({&one.task, &two.task}, "both");
  const double first = ledger_after({&one.task}, "first");
  // The accountant's ε of the four releases at the devices' noise (at threshold shares).
  const SkellamCalibration c =
      calibrate_heterogeneity_skellam(3, config_of(), 8, 1e-5, FixedPointScales::kPerStage);
  const double composed =
      privacy::skellam_epsilon_composed(one.task.device_noise_lambda, one.task.threshold,
                                        Span<const privacy::Sensitivity>(c.encoded, 4), 1e-5)
          .value()
          .epsilon;
  EXPECT_LE(composed, 8 * (1 + 1e-9));
  EXPECT_GE(both, composed * (1 - 1e-12));  // the ledger's orders are a subset: never less
  EXPECT_LE(both, 8 * 1.01);                // the declared ε (not 16)
  EXPECT_GT(both, 7.5);
  EXPECT_LT(first, 0.8 * both);  // one stage alone costs less
  EXPECT_GT(first, 0.3 * both);
  ASSERT_EQ(std::system(("rm -rf '" + std::string(pattern) + "'").c_str()), 0);
}

// ---- Chaining in the Coordinator (trust none: clear reports, exact sums) -----------------------

struct Offer {
  fedstat_v1_Envelope first = fedstat_v1_Envelope_init_zero;  // Task or ServerError
  std::vector<uint64_t> data;
};

Offer check_in_for(Coordinator& c, FakeOutbox& out, TrustedDevice& d, ConnectionId conn) {
  d.conn = conn;
  d.sent = 0;
  c.on_open(conn, std::to_string(d.id));
  c.on_frame(conn, hello(d.id));
  Offer o;
  if (out.empty(conn)) {
    ADD_FAILURE() << "no answer to hello";
    return o;
  }
  o.first = out.pop(conn);
  if (o.first.which_body != fedstat_v1_Envelope_task_tag) return o;
  while (o.data.size() < o.first.body.task.data_words && !out.empty(conn)) {
    const fedstat_v1_Envelope e = out.pop(conn);
    EXPECT_EQ(e.which_body, fedstat_v1_Envelope_task_data_tag);
    o.data.insert(o.data.end(), e.body.task_data.words,
                  e.body.task_data.words + e.body.task_data.words_count);
  }
  return o;
}

ServerConfig config_with(const json& d) {
  ServerConfig config;
  config.tasks = json::array({d});
  return config;
}

// Every device checks in, accepts and reports its contribution to the task it was offered;
// returns the contributions.
std::vector<std::vector<uint64_t>> run_stage(Coordinator& c, FakeOutbox& out,
                                             std::vector<TrustedDevice>& devices,
                                             ConnectionId first_conn, uint32_t expected_task,
                                             std::vector<uint64_t>* task_data = nullptr) {
  std::vector<std::vector<uint64_t>> words;
  for (size_t i = 0; i < devices.size(); ++i) {
    const Offer o = check_in_for(c, out, devices[i], first_conn + i);
    EXPECT_EQ(o.first.which_body, fedstat_v1_Envelope_task_tag);
    const fedstat_v1_Task& task = o.first.body.task;
    EXPECT_EQ(task.task_id, expected_task);
    if (task_data != nullptr) *task_data = o.data;
    accept(c, out, devices[i], task.task_id);
    devices[i].words = contribution(task, kVectors[i], o.data);
    words.push_back(devices[i].words);
  }
  for (auto& d : devices) send_reports(c, out, d, expected_task, d.words.size());
  return words;
}

std::vector<TrustedDevice> three_devices() {
  std::vector<TrustedDevice> devices(3);
  for (uint64_t i = 0; i < 3; ++i) devices[i].id = 40 + i;
  return devices;
}

TEST(HeterogeneityChain, StageTwoOpensWithTheMeansOfStageOnesSumAndPublishesIsquared) {
  FakeStore store;
  FakeOutbox out(store);
  const json d = declaration("none");
  const ServerConfig config = config_with(d);
  Coordinator c(store, out, plan_declared_tasks(config, store, kT0), kT0);
  EXPECT_EQ(c.task_state(kStage2), "unknown");  // not before stage 1 is released
  std::vector<TrustedDevice> devices = three_devices();
  const auto first = run_stage(c, out, devices, 1, kStage1);
  ASSERT_EQ(c.task_state(kStage1), "completed");
  EXPECT_EQ(c.task_state(kStage2), "open");
  for (auto& dev : devices) {
    ASSERT_FALSE(out.empty(dev.conn));
    EXPECT_EQ(out.pop(dev.conn).which_body, fedstat_v1_Envelope_round_outcome_tag);
  }
  // Stage 1's result publishes the released (here exact) sum and the means derived from it.
  const std::vector<uint64_t> sum1 = sum_words(first);
  const json result1 = json::parse(*store.result(kStage1));
  EXPECT_EQ(result1["sum_sha256"], sum_digest(sum1));

  std::vector<uint64_t> task_data;
  const auto second = run_stage(c, out, devices, 10, kStage2, &task_data);
  // TaskData: μ′ and μ̄′ of stage 1's sum, bit for bit, and near the exact means.
  const TaskPlan one = plan_task(d, "", kT0);
  const HeterogeneityRound1 r1 = finish_heterogeneity_round1(
      decode_fixed_point_sums(sum1, one.task.parameters.heterogeneity.scale), 3, config_of());
  EXPECT_EQ(task_data, mean_bits(r1));
  const HeterogeneityExact exact = exact_heterogeneity(kVectors, config_of());
  ASSERT_GT(exact.i2, 0.2);
  for (size_t j = 0; j < 3; ++j) {
    EXPECT_NEAR(r1.mean[j], exact.mean[j], 0.01) << j;
    EXPECT_NEAR(r1.weighted_mean[j], exact.weighted_mean[j], 0.01) << j;
  }
  ASSERT_EQ(c.task_state(kStage2), "completed");
  const json result2 = json::parse(*store.result(kStage2));
  EXPECT_EQ(result2["stage"], 2);
  EXPECT_EQ(result2["contributors"], 3);
  EXPECT_EQ(result2["sum_sha256"], sum_digest(sum_words(second)));
  EXPECT_EQ(result2["estimate"], result2["i2"]["estimate"]);
  // Fixed-point rounding only (trust none): the exact values within a few grid steps.
  EXPECT_NEAR(result2["estimate"].get<double>(), exact.i2, 0.02);
  EXPECT_NEAR(result2["dispersion"]["estimate"].get<double>(), exact.dispersion, 0.01);
  EXPECT_NEAR(result2["q"]["estimate"].get<double>(), exact.q, 0.05);
  // The stored follow-up names the declaration, the task it follows, its TaskData, its opening.
  const std::vector<StoredTask> stored = store.tasks();
  const auto stage2 = std::find_if(stored.begin(), stored.end(),
                                   [](const StoredTask& t) { return t.task_id == kStage2; });
  ASSERT_NE(stage2, stored.end()) << "stage 2 was not stored";
  const json def = json::parse(stage2->definition);
  EXPECT_EQ(def["declaration"], d);
  EXPECT_EQ(def["follows"], kStage1);
  EXPECT_EQ(def["opened_unix_seconds"], kT0);
  EXPECT_EQ(def["task_data"].size(), 6u);
}

TEST(HeterogeneityChain, NoStageTwoAfterStageOneAborted) {
  FakeStore store;
  FakeOutbox out(store);
  const ServerConfig config = config_with(declaration("none"));
  {
    Coordinator c(store, out, plan_declared_tasks(config, store, kT0), kT0);
    std::vector<TrustedDevice> devices = three_devices();
    devices.pop_back();  // two of min_clients = 3
    for (size_t i = 0; i < devices.size(); ++i) {
      ASSERT_EQ(check_in_for(c, out, devices[i], 1 + i).first.which_body,
                fedstat_v1_Envelope_task_tag);
      accept(c, out, devices[i], kStage1);
    }
    c.on_tick(kT0 + 31);  // admission over with too few
    ASSERT_EQ(c.task_state(kStage1), "aborted");
    EXPECT_EQ(c.task_state(kStage2), "unknown");
    TrustedDevice late;
    late.id = 99;
    const Offer o = check_in_for(c, out, late, 50);
    ASSERT_EQ(o.first.which_body, fedstat_v1_Envelope_server_error_tag);
    EXPECT_EQ(o.first.body.server_error.action, fedstat_v1_ErrorAction_RETRY_LATER);
  }
  // Nor after a restart.
  Coordinator again(store, out, plan_declared_tasks(config, store, kT0 + 100), kT0 + 100);
  EXPECT_EQ(again.task_state(kStage1), "aborted");
  EXPECT_EQ(again.task_state(kStage2), "unknown");
  for (const StoredTask& t : store.tasks()) EXPECT_NE(t.task_id, kStage2);
}

TEST(HeterogeneityChain, ARestartedServerRunsTheSameStageTwo) {
  FakeStore store;
  FakeOutbox out(store);
  const ServerConfig config = config_with(declaration("none"));
  fedstat_v1_Task before = fedstat_v1_Task_init_zero;
  std::vector<uint64_t> data_before;
  std::vector<TrustedDevice> devices = three_devices();
  {
    Coordinator c(store, out, plan_declared_tasks(config, store, kT0), kT0);
    c.on_tick(kT0 + 7);  // stage 2 opens at the clock of the last report
    run_stage(c, out, devices, 1, kStage1);
    ASSERT_EQ(c.task_state(kStage2), "open");
    // One device already checked in and accepted stage 2 before the crash.
    const Offer o = check_in_for(c, out, devices[0], 20);
    before = o.first.body.task;
    data_before = o.data;
    accept(c, out, devices[0], kStage2);
  }
  Coordinator c(store, out, plan_declared_tasks(config, store, kT0 + 100), kT0 + 100);
  ASSERT_EQ(c.task_state(kStage2), "open");
  TrustedDevice fresh = devices[1];
  const Offer o = check_in_for(c, out, fresh, 30);
  ASSERT_EQ(o.first.which_body, fedstat_v1_Envelope_task_tag);
  EXPECT_EQ(o.first.body.task.task_id, kStage2);
  EXPECT_EQ(o.data, data_before);
  EXPECT_EQ(o.first.body.task.deadline_unix_seconds, kT0 + 7 + 600);  // its stored opening
  EXPECT_EQ(o.first.body.task.deadline_unix_seconds, before.deadline_unix_seconds);
  EXPECT_EQ(o.first.body.task.secagg_session, before.secagg_session);
  EXPECT_TRUE(c.round(kStage2)->replied(devices[0].id));  // the stored reply, replayed
}

// A crash after stage 1's result was stored and before stage 2 was: the restarted server derives
// stage 2 from the stored result alone and opens it then.
TEST(HeterogeneityChain, StageTwoIsDerivedFromTheStoredResultAlone) {
  FakeStore store;
  FakeOutbox out(store);
  const json d = declaration("none");
  const TaskPlan one = plan_task(d, "", kT0);
  std::vector<std::vector<uint64_t>> words;
  std::vector<uint64_t> none;
  for (const auto& x : kVectors) words.push_back(contribution(one.task, x, none));
  const std::vector<uint64_t> sum = sum_words(words);
  store.put_task(kStage1, json{{"declaration", d}, {"opened_unix_seconds", kT0}}.dump());
  store.put_result(kStage1, one.estimate(sum, 3).dump());
  store.set_task_state(kStage1, "completed");

  Coordinator c(store, out, plan_declared_tasks(config_with(d), store, kT0 + 50), kT0 + 50);
  ASSERT_EQ(c.task_state(kStage2), "open");
  TrustedDevice dev;
  dev.id = 7;
  const Offer o = check_in_for(c, out, dev, 1);
  ASSERT_EQ(o.first.which_body, fedstat_v1_Envelope_task_tag);
  EXPECT_EQ(o.first.body.task.deadline_unix_seconds, kT0 + 50 + 600);
  const HeterogeneityRound1 r1 = finish_heterogeneity_round1(
      decode_fixed_point_sums(sum, one.task.parameters.heterogeneity.scale), 3, config_of());
  EXPECT_EQ(o.data, mean_bits(r1));

  // A stored result that is not the release (its words changed) is refused at start-up.
  FakeStore tampered;
  FakeOutbox out2(tampered);
  json forged = one.estimate(sum, 3);
  forged["sum"][1] = 12345;
  tampered.put_task(kStage1, json{{"declaration", d}, {"opened_unix_seconds", kT0}}.dump());
  tampered.put_result(kStage1, forged.dump());
  tampered.set_task_state(kStage1, "completed");
  EXPECT_THROW(
      Coordinator(tampered, out2, plan_declared_tasks(config_with(d), tampered, kT0 + 50), kT0),
      std::invalid_argument);
}

TEST(HeterogeneityChain, AFollowUpIdNamesOneTaskOnly) {
  FakeStore store;
  const json d = declaration("none");
  // Declared as a task itself.
  json other = declaration("none");
  other["id"] = kStage2;
  other["heterogeneity"]["stage2_id"] = 30;
  ServerConfig both;
  both.tasks = json::array({d, other});
  EXPECT_THROW(plan_declared_tasks(both, store, kT0), std::invalid_argument);
  // Two chains to one follow-up.
  json twin = declaration("none");
  twin["id"] = 25;
  ServerConfig twins;
  twins.tasks = json::array({d, twin});
  EXPECT_THROW(plan_declared_tasks(twins, store, kT0), std::invalid_argument);
  // Held by the store for another task.
  store.put_task(kStage2, R"({"declaration":{"id":22}})");
  EXPECT_THROW(plan_declared_tasks(config_with(d), store, kT0), std::invalid_argument);
}

// Several servers on one store (docs/scale_out.md, failure case 10): each plans stage 2 when it
// sees stage 1 completed, with its own clock. The follow-up's opening time comes from stage 1's
// stored "completed" transition, so a server planning it later — before the first one's
// declaration reached the store — plans the same definition. (With each server's `now`, as
// before, the definitions differ and the second put_task is refused.)
TEST(ColdStart, AFollowUpPlannedLaterByAnotherServerIsTheSameDefinition) {
  FakeStore store;
  FakeOutbox out(store);
  const ServerConfig config = config_with(declaration("none"));
  Coordinator c(store, out, plan_declared_tasks(config, store, kT0), kT0);
  std::vector<TrustedDevice> devices = three_devices();
  run_stage(c, out, devices, 1, kStage1);
  ASSERT_EQ(c.task_state(kStage1), "completed");
  std::string first;
  for (const StoredTask& t : store.tasks()) {
    if (t.task_id == kStage2) first = t.definition;
  }
  ASSERT_FALSE(first.empty()) << "stage 2 was not declared";
  // Another server's view: stage 1 as stored, stage 2 not yet declared.
  FakeStore other;
  for (const StoredTask& t : store.tasks()) {
    if (t.task_id == kStage1) other.put_task(kStage1, t.definition);
  }
  for (const StoredEvent& e : store.events(kStage1)) {
    NewEvent copy;
    copy.task_id = e.task_id;
    copy.client_id = e.client_id;
    copy.kind = e.kind;
    copy.payload = e.payload;
    other.append_event(copy);
  }
  other.put_result(kStage1, *store.result(kStage1));
  for (const uint64_t later : {kT0 + 100, kT0 + 5000}) {
    const std::vector<TaskSpec> specs = plan_declared_tasks(config, other, later);
    ASSERT_TRUE(specs.at(0).follow_up);
    const TaskSpec next = specs[0].follow_up(*other.result(kStage1), later);
    EXPECT_EQ(next.definition_json, first) << "planned at " << later;
  }
}

// A store on which another server declares its definition just before this one's first put_task:
// the race of servers started at once, made deterministic.
class RaceLosingStore : public FakeStore {
 public:
  std::function<void()> before_first_put;
  void put_task(uint32_t task_id, const std::string& definition) override {
    if (before_first_put) {
      const std::function<void()> other = std::move(before_first_put);
      before_first_put = nullptr;
      other();
    }
    FakeStore::put_task(task_id, definition);
  }
};

// Servers started at once on one empty store each plan with their own `now`. Before, the later
// one's Coordinator was refused by the store (a task id names one task forever). declare_tasks
// declares before any round opens and adopts the stored definition when only the opening time
// differs (planned again at the stored time); a different declaration is refused by name.
TEST(ColdStart, AServerLosingTheDeclarationRaceAdoptsTheStoredOpeningTimeAndStarts) {
  const json d = declaration("none");
  const ServerConfig config = config_with(d);
  FakeStore scratch;
  const std::vector<TaskSpec> winner = declare_tasks(config, scratch, kT0);  // the other server
  {
    FakeStore store;  // what happened before: planned on the empty store, then the other declared
    const std::vector<TaskSpec> late = plan_declared_tasks(config, store, kT0 + 7);
    store.put_task(kStage1, winner.at(0).definition_json);
    FakeOutbox out(store);
    EXPECT_THROW(Coordinator(store, out, late, kT0 + 7), std::invalid_argument);
  }
  RaceLosingStore shared;
  shared.before_first_put = [&] {
    shared.FakeStore::put_task(kStage1, winner.at(0).definition_json);
  };
  const std::vector<TaskSpec> mine = declare_tasks(config, shared, kT0 + 7);
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].definition_json, winner[0].definition_json);
  EXPECT_EQ(json::parse(mine[0].definition_json)["opened_unix_seconds"], kT0);
  FakeOutbox out(shared);
  Coordinator second(shared, out, mine, kT0 + 7);  // starts: the store holds its definition
  EXPECT_EQ(second.task_state(kStage1), "open");
  // Another declaration of the same id is refused by name, not adopted.
  json changed = d;
  changed["min_clients"] = 2;
  RaceLosingStore other;
  other.before_first_put = [&] {
    other.FakeStore::put_task(kStage1, winner.at(0).definition_json);
  };
  try {
    declare_tasks(config_with(changed), other, kT0 + 9);
    FAIL() << "a different declaration of a stored task id was adopted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("another declaration of this task id"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace testing
}  // namespace host
}  // namespace fedstat
