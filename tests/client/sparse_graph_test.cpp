// The device's side of the sparse secure-aggregation graph (SecAgg+, issue 40): validate_task's
// checks of Task.secagg_degree and the threshold against the bound at the policy's floor, the
// 2^−40 the charge adds to δ (also for a heterogeneity stage's RDP spend, in the ledger), the
// roster memory of k + 1 entries, and a SecAggStart that must name the Task's graph.
#include <gtest/gtest.h>

#include <thread>

#include "sdk/client/contribution.h"
#include "sdk/client/task_policy.h"
#include "sdk/secagg/graph.h"
#include "sdk/secagg/graph_parameters.h"
#include "sdk/secagg/secagg_client.h"
#include "tests/client/client_test_support.h"
#include "tests/client/in_memory_channel.h"
#include "tests/client/scripted_server.h"

namespace fedstat {
namespace client_test {
namespace {

using client::SessionResult;

// λ raised until the charge is the declared ε (as a server calibrates it for `threshold` shares):
// a default policy then weighs it below its ceiling.
void fit_lambda(fedstat_v1_Task& t) {
  while (client::device_spend(t).value().epsilon > t.epsilon) t.device_noise_lambda *= 2;
}

// A DIST KL task of the sparse graph for `n` devices, (k, t) as choose_sparse_graph gives them at
// `dropout_ppm` and `corrupt_ppm` (declared in the Task).
fedstat_v1_Task sparse_kl(uint32_t n, std::vector<uint64_t>& points, uint32_t dropout_ppm = 50000,
                          uint32_t corrupt_ppm = 50000) {
  fedstat_v1_Task t = kl_task(fedstat_v1_TrustModel_DIST, points);
  make_dist(t, n, 2);
  secagg::SecAggThreatModel model;
  model.dropout_ppm = dropout_ppm;
  model.corrupt_ppm = corrupt_ppm;
  const Result<secagg::SecAggGraph> graph = secagg::choose_sparse_graph(n, model);
  EXPECT_TRUE(graph.ok());
  t.secagg_degree = graph.value().degree;
  t.threshold = graph.value().threshold;
  t.min_clients = t.threshold;
  t.secagg_dropout_ppm = dropout_ppm;
  t.secagg_corrupt_ppm = corrupt_ppm;
  fit_lambda(t);
  return t;
}

Status check(const fedstat_v1_Task& t) {
  return client::validate_task(t, client::all_task_kinds(), secagg::SecAggThreatModel());
}

TEST(SparseGraph, TheChosenGraphOfTenThousandDevicesIsAccepted) {
  std::vector<uint64_t> points;
  const fedstat_v1_Task t = sparse_kl(10000, points);
  EXPECT_GT(t.secagg_degree, 0u);
  EXPECT_LT(t.secagg_degree + 1, 10000u);
  EXPECT_TRUE(check(t).ok()) << check(t).message();
  EXPECT_TRUE(client::validate_task(t).ok());
}

TEST(SparseGraph, EveryShapeCheckRefusesNamingTheField) {
  std::vector<uint64_t> points;
  const fedstat_v1_Task good = sparse_kl(10000, points);
  struct Case {
    const char* what;
    void (*edit)(fedstat_v1_Task&);
    const char* names;
  };
  const Case cases[] = {
      {"odd degree",
       [](fedstat_v1_Task& t) {
         t.secagg_degree = 3;
         t.threshold = 3;
       },
       "secagg_degree"},
      {"degree above kMaxGraphDegree",
       [](fedstat_v1_Task& t) {
         t.secagg_degree = secagg::kMaxGraphDegree + 2;
         t.threshold = t.secagg_degree;
       },
       "secagg_degree"},
      {"threshold above degree + 1", [](fedstat_v1_Task& t) { t.threshold = t.secagg_degree + 2; },
       "threshold"},
      {"threshold not more than half the holders",
       [](fedstat_v1_Task& t) { t.threshold = (t.secagg_degree + 1) / 2; }, "threshold"},
      {"max_clients above kMaxSparseClients",
       [](fedstat_v1_Task& t) { t.max_clients = secagg::kMaxSparseClients + 1; }, "max_clients"},
      {"dropout rate of one", [](fedstat_v1_Task& t) { t.secagg_dropout_ppm = 1000000; },
       "secagg_dropout_ppm"},
      {"corrupt fraction of one", [](fedstat_v1_Task& t) { t.secagg_corrupt_ppm = 1000000; },
       "secagg_corrupt_ppm"},
      {"a complete graph above 1024",
       [](fedstat_v1_Task& t) {
         t.secagg_degree = 0;
         t.threshold = t.max_clients / 2 + 1;
       },
       "max_clients"},
  };
  for (const Case& c : cases) {
    fedstat_v1_Task t = good;
    c.edit(t);
    const Status s = check(t);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.what;
    EXPECT_NE(std::string(s.message()).find(c.names), std::string::npos)
        << c.what << ": " << s.message();
  }
  // A degree outside DIST: a server cannot smuggle a graph into a task without one.
  fedstat_v1_Task trusted = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  trusted.max_clients = 10;
  trusted.secagg_degree = 4;
  EXPECT_EQ(client::validate_task(trusted).code(), StatusCode::kInvalidArgument);
}

// The bound (condition (2) of graph_parameters.h): a threshold one below the least that passes is
// refused by the device, though it is still more than half of the k + 1 holders.
TEST(SparseGraph, AThresholdBelowTheBoundIsRefusedByTheDevice) {
  std::vector<uint64_t> points;
  fedstat_v1_Task t = sparse_kl(10000, points);
  const secagg::SecAggThresholdRange range =
      secagg::sparse_threshold_range(t.max_clients, t.secagg_degree, secagg::SecAggThreatModel())
          .value();
  t.threshold = range.min_threshold;
  ASSERT_TRUE(check(t).ok()) << check(t).message();
  t.threshold = range.min_threshold - 1;
  ASSERT_GT(2 * t.threshold, t.secagg_degree + 1) << "the shape check would refuse it first";
  const Status s = check(t);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            std::string(secagg::check_sparse_graph(t.max_clients, t.secagg_degree, t.threshold,
                                                   secagg::SecAggThreatModel())
                            .message()));
  // A degree too small for the round: refused too.
  fedstat_v1_Task small = sparse_kl(10000, points);
  small.secagg_degree = 4;
  small.threshold = 3;
  EXPECT_EQ(check(small).code(), StatusCode::kInvalidArgument);
}

// A server declaring no dropouts and no corruption gets a tiny graph from the bound (k = 2 for a
// thousand devices); the device judges it at its floor (5 % each by default) and refuses it.
// Without a floor (the declared rates alone) the same task is consistent.
TEST(SparseGraph, TheDeviceJudgesTheGraphAtLeastAtItsFloor) {
  std::vector<uint64_t> points;
  const fedstat_v1_Task rosy = sparse_kl(1000, points, 0, 0);
  EXPECT_TRUE(client::validate_task(rosy).ok()) << client::validate_task(rosy).message();
  EXPECT_EQ(check(rosy).code(), StatusCode::kInvalidArgument);
  secagg::SecAggThreatModel no_floor;
  no_floor.dropout_ppm = 0;
  no_floor.corrupt_ppm = 0;
  EXPECT_TRUE(client::validate_task(rosy, client::all_task_kinds(), no_floor).ok());
  // The floor applies rate by rate: the corrupt fraction alone at the floor is enough to refuse.
  secagg::SecAggThreatModel corrupt_only = no_floor;
  corrupt_only.corrupt_ppm = 50000;
  EXPECT_EQ(client::validate_task(rosy, client::all_task_kinds(), corrupt_only).code(),
            StatusCode::kInvalidArgument);
}

class SparseGraphClient : public StorageTest {};

// The Client passes its TaskPolicy's floor: the default declines the rosy task (REFUSED, nothing
// charged); a policy whose floor is 0 lets it past check 1 (it then declines for memory, check 4,
// given too little on purpose).
TEST_F(SparseGraphClient, TheClientsFloorIsItsTaskPolicys) {
  std::vector<uint64_t> points;
  fedstat_v1_Task rosy = sparse_kl(1000, points, 0, 0);
  OwnedHistogram histogram(1);
  HistogramData app(&histogram.histogram);
  {
    Device device(1, 256, app);
    ASSERT_TRUE(device.init_status.ok());
    const Session s = run(device, rosy, points);
    ASSERT_FALSE(s.outcome.ok());
    EXPECT_EQ(s.outcome.status().code(), StatusCode::kInvalidArgument);
    ASSERT_TRUE(s.seen.replied);
    EXPECT_EQ(s.seen.reply.reason, fedstat_v1_ErrorAction_REFUSED);
    EXPECT_EQ(device.ledger.size(), 0u);
  }
  {
    Device device(2, 256, app);
    ASSERT_TRUE(device.init_status.ok());
    client::TaskPolicy policy;
    policy.min_assumed_dropout_ppm = 0;
    policy.min_assumed_corrupt_ppm = 0;
    ASSERT_TRUE(device.client.set_task_policy(policy).ok());
    const Session s = run(device, rosy, points);
    ASSERT_TRUE(s.outcome.ok()) << s.outcome.status().message();
    EXPECT_EQ(s.outcome.value().result, SessionResult::kDeclinedMemory);
  }
}

TEST(SparseGraph, ThePolicysFloorsMustBeBelowOne) {
  client::TaskPolicy policy;
  EXPECT_EQ(policy.min_assumed_dropout_ppm, 50000u);
  EXPECT_EQ(policy.min_assumed_corrupt_ppm, 50000u);
  policy.min_assumed_dropout_ppm = 1000000;
  EXPECT_EQ(client::validate_task_policy(policy).code(), StatusCode::kInvalidArgument);
  policy.min_assumed_dropout_ppm = 999999;
  EXPECT_TRUE(client::validate_task_policy(policy).ok());
  policy.min_assumed_corrupt_ppm = 1000000;
  EXPECT_EQ(client::validate_task_policy(policy).code(), StatusCode::kInvalidArgument);
}

// SecAgg+'s guarantee fails with probability 2^−40: added to the δ charged, on top of what the
// complete graph's charge is.
TEST(SparseGraph, TheChargeAddsTwoToTheMinusFortyToDelta) {
  std::vector<uint64_t> points;
  const fedstat_v1_Task sparse = sparse_kl(10000, points);
  fedstat_v1_Task complete = sparse;
  complete.secagg_degree = 0;
  complete.secagg_dropout_ppm = complete.secagg_corrupt_ppm = 0;
  complete.max_clients = 2 * sparse.threshold - 1;  // the same threshold, a complete graph
  const client::DeviceSpend a = client::device_spend(sparse).value();
  const client::DeviceSpend b = client::device_spend(complete).value();
  EXPECT_EQ(b.delta, sparse.delta);
  EXPECT_EQ(a.delta, sparse.delta + std::ldexp(1.0, -40));
  EXPECT_EQ(a.epsilon, b.epsilon) << "the noise's ε does not depend on the graph";
  EXPECT_EQ(client::policy_charge(a, sparse.delta).delta, sparse.delta + std::ldexp(1.0, -40));
}

// A heterogeneity stage is charged an RDP curve with ε = δ = 0: the 2^−40 rides as its δ, which
// the ledger counts beside the curve (it converts the curves at its δ budget less every spend's
// δ). A ledger whose whole δ budget is 2^−40 has nothing left to convert the sparse stage's curve
// at, and refuses it; the complete graph's stage fits.
TEST_F(SparseGraphClient, AHeterogeneityStagesTwoToTheMinusFortyReachesTheLedger) {
  fedstat_v1_Task stage = heterogeneity_task(fedstat_v1_TrustModel_DIST, 1);
  make_dist(stage, 1000, 2);
  const secagg::SecAggGraph graph =
      secagg::choose_sparse_graph(1000, secagg::SecAggThreatModel()).value();
  stage.secagg_degree = graph.degree;
  stage.threshold = graph.threshold;
  stage.secagg_dropout_ppm = stage.secagg_corrupt_ppm = 50000;
  fedstat_v1_Task complete = stage;
  complete.secagg_degree = 0;
  complete.secagg_dropout_ppm = complete.secagg_corrupt_ppm = 0;
  complete.max_clients = 2 * stage.threshold - 1;
  ASSERT_TRUE(check(stage).ok()) << check(stage).message();
  ASSERT_TRUE(check(complete).ok()) << check(complete).message();
  const client::DeviceSpend sparse_spend = client::device_spend(stage).value();
  const client::DeviceSpend complete_spend = client::device_spend(complete).value();
  ASSERT_TRUE(sparse_spend.has_rdp);
  EXPECT_EQ(sparse_spend.epsilon, 0);
  EXPECT_EQ(sparse_spend.delta, std::ldexp(1.0, -40));
  EXPECT_EQ(complete_spend.delta, 0);
  const double curve_epsilon = client::policy_charge(complete_spend, std::ldexp(1.0, -40)).epsilon;
  ASSERT_TRUE(std::isfinite(curve_epsilon));
  for (const client::DeviceSpend* spend : {&sparse_spend, &complete_spend}) {
    std::vector<privacy::PrivacySpend> entries(4);
    std::vector<uint8_t> scratch(privacy::BudgetLedger::blob_bytes(entries.size()));
    privacy::LedgerConfig config;
    config.epsilon_budget = 2 * curve_epsilon;  // room for the curve, not for a lost δ
    config.delta_budget = std::ldexp(1.0, -40);
    const std::string blob = spend == &sparse_spend ? "ledger-sparse" : "ledger-complete";
    config.blob_name = blob.c_str();
    privacy::BudgetLedger ledger;
    ASSERT_TRUE(ledger
                    .init(config, Span<privacy::PrivacySpend>(entries.data(), entries.size()),
                          MutableByteSpan(scratch.data(), scratch.size()))
                    .ok());
    ASSERT_TRUE(ledger.load().ok());
    privacy::PrivacySpend charge = *spend;
    charge.task_id = 7;
    charge.time_seconds = kNow;
    const Status charged = ledger.charge(charge, kNow);
    if (spend == &sparse_spend) {
      EXPECT_FALSE(charged.ok()) << "the 2^-40 left the ledger no δ for the curve";
    } else {
      EXPECT_TRUE(charged.ok()) << charged.message();
    }
  }
}

// A device holds its neighbourhood: k + 1 roster entries, whatever max_clients.
TEST(SparseGraph, TheRosterMemoryIsTheNeighbourhood) {
  std::vector<uint64_t> points;
  const fedstat_v1_Task t = sparse_kl(10000, points);
  EXPECT_EQ(client::Client::roster_size(t), t.secagg_degree + 1);
  fedstat_v1_Task trusted = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  trusted.device_noise_lambda = 0;
  trusted.max_clients = 10;
  const size_t roster =
      client::Client::memory_bytes(t).value() - client::Client::memory_bytes(trusted).value();
  EXPECT_EQ(roster, secagg::secagg_client_memory_bytes(t.secagg_degree + 1));
  // Ten million devices: still the neighbourhood (its k is larger, the bound's O(log n)).
  const fedstat_v1_Task huge = sparse_kl(secagg::kMaxSparseClients, points);
  EXPECT_EQ(
      client::Client::memory_bytes(huge).value() - client::Client::memory_bytes(trusted).value(),
      secagg::secagg_client_memory_bytes(huge.secagg_degree + 1));
  EXPECT_LT(huge.secagg_degree, 128u);
  fedstat_v1_Task complete = t;
  complete.secagg_degree = 0;
  complete.secagg_dropout_ppm = complete.secagg_corrupt_ppm = 0;
  complete.max_clients = 2 * t.threshold - 1;
  EXPECT_EQ(client::Client::roster_size(complete), complete.max_clients);
  EXPECT_EQ(client::Client::memory_bytes(complete).value() -
                client::Client::memory_bytes(trusted).value(),
            secagg::secagg_client_memory_bytes(complete.max_clients));
}

// The SecAggStart must name the Task's graph: a device that checked a complete-graph task must
// not run a sparse round (nor one with another threat model). It sends no keys for it.
TEST_F(SparseGraphClient, ASecAggStartOfAnotherGraphIsRefused) {
  std::vector<uint64_t> points;
  fedstat_v1_Task task = kl_task(fedstat_v1_TrustModel_DIST, points);
  make_dist(task, 3, 2);
  fit_lambda(task);
  OwnedHistogram histogram(3);
  HistogramData app(&histogram.histogram);
  struct Case {
    const char* what;
    void (*edit)(fedstat_v1_SecAggStart&);
    bool keys;
  };
  const Case cases[] = {
      {"the task's graph", [](fedstat_v1_SecAggStart&) {}, true},
      {"degree 2", [](fedstat_v1_SecAggStart& s) { s.degree = 2; }, false},
      {"dropout_ppm", [](fedstat_v1_SecAggStart& s) { s.dropout_ppm = 1; }, false},
      {"corrupt_ppm", [](fedstat_v1_SecAggStart& s) { s.corrupt_ppm = 1; }, false},
  };
  uint64_t id = 10;
  for (const Case& c : cases) {
    const size_t need = client::Client::memory_bytes(task, histogram.histogram.capacity()).value();
    Device device(++id, need, app);
    ASSERT_TRUE(device.init_status.ok());
    auto ends = make_channel_pair();
    bool keys = false;
    std::thread server([&] {
      wire::Envelope in;
      if (!ends.second->receive(in, 20000).ok()) return;
      send_task(*ends.second, task, points);
      if (!ends.second->receive(in, 20000).ok() || !in.body.task_reply.accept) return;
      wire::Envelope start = envelope_of(fedstat_v1_Envelope_secagg_start_tag);
      fedstat_v1_SecAggStart& s = start.body.secagg_start;
      s.session = task.secagg_session;
      s.threshold = task.threshold;
      s.vector_length = task.vector_length;
      s.bits = task.bits;
      s.max_clients = task.max_clients;
      c.edit(s);
      if (!ends.second->send(start).ok()) return;
      keys = ends.second->receive(in, 20000).ok() &&
             in.which_body == fedstat_v1_Envelope_secagg_keys_tag;
      ends.second->close();
    });
    const Result<client::SessionOutcome> outcome = device.client.run_session(*ends.first);
    server.join();
    EXPECT_EQ(keys, c.keys) << c.what;
    if (!c.keys) {
      ASSERT_FALSE(outcome.ok()) << c.what;
      EXPECT_EQ(outcome.status().code(), StatusCode::kFailedPrecondition) << c.what;
    }
  }
}

}  // namespace
}  // namespace client_test
}  // namespace fedstat
