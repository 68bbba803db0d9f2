// The C ABI's Client (c/client.h) against a scripted one-connection server: the app's channel is
// three C callbacks over a byte queue that hands frames out split into 7-byte pieces or joined
// with the next frame, the data is given with fedstat_client_set_*, the ledger and the random
// source are C ABI handles. The reports the server receives must equal what the SDK routines
// compute for the same data and seed (tests/client/client_test_support.h, independent of
// sdk/client/contribution.cpp), and the outcomes, charges and refusals must be the C++ Client's.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fedstat/fedstat.h"
#include "mbedtls/ctr_drbg.h"
#include "mbedtls/entropy.h"
#include "mbedtls/net_sockets.h"
#include "mbedtls/ssl.h"
#include "sdk/client/contribution.h"
#include "sdk/privacy/accountants.h"
#include "sdk/tls/tls_channel.h"
#include "tests/cabi/c_device.h"
#include "tests/client/client_test_support.h"
#include "tests/client/in_memory_channel.h"

namespace fedstat {
namespace client_test {
namespace {

// The device's end of the connection, as an app would write it over a socket.
struct Link {
  std::shared_ptr<Pipe> up = std::make_shared<Pipe>();    // device → server
  std::shared_ptr<Pipe> down = std::make_shared<Pipe>();  // server → device
  std::deque<uint8_t> pending;  // bytes received from the server, not yet handed out
  size_t chunk = 7;             // the most bytes one receive call hands out
  size_t fail_send_at = 0;      // the n-th send fails with FEDSTAT_UNAVAILABLE (0: never)
  size_t sends = 0;

  fedstat_channel channel() {
    fedstat_channel c;
    c.context = this;
    c.send = &Link::send;
    c.receive = &Link::receive;
    c.close = &Link::close;
    return c;
  }

  static fedstat_status send(void* context, const uint8_t* bytes, size_t size) {
    Link& link = *static_cast<Link*>(context);
    if (++link.sends == link.fail_send_at) return FEDSTAT_UNAVAILABLE;
    std::lock_guard<std::mutex> lock(link.up->mutex);
    if (link.up->closed) return FEDSTAT_UNAVAILABLE;
    link.up->frames.emplace_back(bytes, bytes + size);
    link.up->changed.notify_all();
    return FEDSTAT_OK;
  }

  // Every frame the server has sent joins the byte queue; at most `chunk` bytes go out per call.
  static fedstat_status receive(void* context, uint8_t* buffer, size_t capacity, size_t* received,
                                uint32_t timeout_ms) {
    Link& link = *static_cast<Link*>(context);
    if (link.pending.empty()) {
      std::unique_lock<std::mutex> lock(link.down->mutex);
      const bool ready = link.down->changed.wait_for(
          lock, std::chrono::milliseconds(timeout_ms),
          [&] { return !link.down->frames.empty() || link.down->closed; });
      if (!ready) return FEDSTAT_DEADLINE_EXCEEDED;
      if (link.down->frames.empty()) return FEDSTAT_UNAVAILABLE;
      for (const std::vector<uint8_t>& frame : link.down->frames) {
        link.pending.insert(link.pending.end(), frame.begin(), frame.end());
      }
      link.down->frames.clear();
    }
    const size_t n = std::min({capacity, link.chunk, link.pending.size()});
    std::copy(link.pending.begin(), link.pending.begin() + static_cast<std::ptrdiff_t>(n), buffer);
    link.pending.erase(link.pending.begin(), link.pending.begin() + static_cast<std::ptrdiff_t>(n));
    *received = n;
    return FEDSTAT_OK;
  }

  static void close(void* context) {
    Link& link = *static_cast<Link*>(context);
    for (Pipe* pipe : {link.up.get(), link.down.get()}) {
      std::lock_guard<std::mutex> lock(pipe->mutex);
      pipe->closed = true;
      pipe->changed.notify_all();
    }
  }
};

struct SessionRun {
  fedstat_status status = FEDSTAT_INTERNAL;
  fedstat_session_outcome outcome = {-1, 0};
  Seen seen;
};

SessionRun run(CDevice& device, Link& link, const fedstat_v1_Task& task,
               const std::vector<uint64_t>& data) {
  InMemoryChannel server(link.up, link.down);
  SessionRun r;
  std::thread thread([&] { r.seen = serve(server, task, data); });
  const fedstat_channel channel = link.channel();
  r.status = fedstat_client_run_session(device.client, &channel, &r.outcome);
  thread.join();
  return r;
}

// The app opts its Client in to trust-NONE tasks (the default task policy declines them).
void accept_none(CDevice& device) {
  fedstat_task_policy policy;
  ASSERT_EQ(fedstat_task_policy_default(&policy), FEDSTAT_OK);
  policy.accepted_trust |= FEDSTAT_TRUST_NONE;
  ASSERT_EQ(fedstat_client_set_task_policy(device.client, &policy), FEDSTAT_OK);
}

// A data-shift task without local noise: the exact sketch, trust NONE (a private trust model
// needs local_epsilon > 0: nothing else noises a sketch).
fedstat_v1_Task exact_shift_task() {
  fedstat_v1_Task task = data_shift_task(fedstat_v1_TrustModel_NONE);
  task.epsilon = 0;
  task.delta = 0;
  return task;
}

class CabiClientTest : public StorageTest {
 protected:
  void SetUp() override {
    StorageTest::SetUp();
    ASSERT_EQ(fedstat_set_storage_directory(directory_.c_str()), FEDSTAT_OK);
  }
};

TEST_F(CabiClientTest, DataShiftReportIsTheSketchWhateverHowTheBytesArrive) {
  uint64_t id = 200;
  for (double local_epsilon : {0.0, 1.0}) {
    for (size_t chunk : {size_t{7}, size_t{4096}}) {  // frames split, or joined with the next
      OwnedHistogram expected_data(2);
      CHistogram h(2);
      const fedstat_v1_Task task =
          local_epsilon > 0 ? data_shift_task(fedstat_v1_TrustModel_TRUSTED, local_epsilon)
                            : exact_shift_task();
      CDevice device(id, client::Client::memory_bytes(task, 256).value());
      if (local_epsilon == 0) accept_none(device);
      ASSERT_EQ(fedstat_client_set_histogram(device.client, h.histogram), FEDSTAT_OK);
      Link link;
      link.chunk = chunk;
      const SessionRun r = run(device, link, task, {});
      ASSERT_EQ(r.status, FEDSTAT_OK) << fedstat_client_last_error(device.client);
      EXPECT_EQ(r.outcome.result, FEDSTAT_SESSION_COMPLETED);
      EXPECT_EQ(r.outcome.task_id, task.task_id);
      SeededStream same(test_seed(99), id++);
      EXPECT_EQ(r.seen.report, expected_sketch(task, expected_data.histogram, same))
          << "local_epsilon " << local_epsilon << ", chunk " << chunk;
      EXPECT_DOUBLE_EQ(device.spent(), std::max(task.epsilon, local_epsilon));  // NONE: 0
    }
  }
}

TEST_F(CabiClientTest, KlModelUpdateAndHeterogeneityReportsAreTheSdkRoutines) {
  {  // KL: the counts at the points, then the total
    OwnedHistogram expected_data(3);
    CHistogram h(3);
    std::vector<uint64_t> points;
    const fedstat_v1_Task task = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
    CDevice device(210, client::Client::memory_bytes(task).value());
    ASSERT_EQ(fedstat_client_set_histogram(device.client, h.histogram), FEDSTAT_OK);
    Link link;
    const SessionRun r = run(device, link, task, points);
    ASSERT_EQ(r.status, FEDSTAT_OK) << fedstat_client_last_error(device.client);
    SeededStream unused(test_seed(99), 210);
    EXPECT_EQ(r.seen.report, expected_kl(task, points, expected_data.histogram, unused));
  }
  {  // MODEL_UPDATE: the examples given by pointer (trust NONE: exact; TRUSTED is refused)
    ModelData data;
    const fedstat_v1_Task task = as_none(model_task(fedstat_v1_TrustModel_NONE));
    const std::vector<double> model = {0.1, -0.2, 0.05, 0.0};
    CDevice device(211, client::Client::memory_bytes(task, data.labels.size()).value());
    accept_none(device);
    ASSERT_EQ(fedstat_client_set_examples(device.client, data.features.data(), data.labels.data(),
                                          data.labels.size(), data.d),
              FEDSTAT_OK);
    Link link;
    const SessionRun r = run(device, link, task, model_bits(model));
    ASSERT_EQ(r.status, FEDSTAT_OK) << fedstat_client_last_error(device.client);
    SeededStream same(test_seed(99), 211);
    EXPECT_EQ(r.seen.report, expected_model(task, model, data, same));
  }
  {  // HETEROGENEITY stage 1: the fixed-point round (trust NONE, as the model update)
    VectorData data(0);
    const fedstat_v1_Task task = as_none(heterogeneity_task(fedstat_v1_TrustModel_NONE, 1));
    CDevice device(212, client::Client::memory_bytes(task).value());
    accept_none(device);
    ASSERT_EQ(fedstat_client_set_unit_vector(device.client, data.x.data(), data.x.size()),
              FEDSTAT_OK);
    Link link;
    const SessionRun r = run(device, link, task, {});
    ASSERT_EQ(r.status, FEDSTAT_OK) << fedstat_client_last_error(device.client);
    SeededStream unused(test_seed(99), 212);
    EXPECT_EQ(r.seen.report, expected_heterogeneity(task, data.x, {}, unused));
  }
}

// Declines for memory and budget are free; a decline because the app holds no data comes after
// the ledger is charged and keeps the charge (issue 39 item 1, review F4: a free one would let a
// server read the app's data off declines), as the C++ Client does.
TEST_F(CabiClientTest, DeclinesForNoDataMemoryOrBudget) {
  std::vector<uint64_t> points;
  const fedstat_v1_Task task = kl_task(fedstat_v1_TrustModel_TRUSTED, points);  // ε = 1
  const size_t need = client::Client::memory_bytes(task).value();
  CHistogram h(4);
  struct Case {
    size_t work;
    double budget;
    bool data;
    int32_t result;
    double charged;
  };
  const Case cases[] = {{need, 10, false, FEDSTAT_SESSION_DECLINED_NO_DATA, task.epsilon},
                        {need - 1, 10, true, FEDSTAT_SESSION_DECLINED_MEMORY, 0},
                        {need, 0.5, true, FEDSTAT_SESSION_DECLINED_BUDGET, 0}};
  uint64_t id = 220;
  for (const Case& c : cases) {
    CDevice device(id++, c.work, c.budget);
    if (c.data) {
      ASSERT_EQ(fedstat_client_set_histogram(device.client, h.histogram), FEDSTAT_OK);
    }
    Link link;
    const SessionRun r = run(device, link, task, points);
    ASSERT_EQ(r.status, FEDSTAT_OK) << fedstat_client_last_error(device.client);
    EXPECT_EQ(r.outcome.result, c.result);
    EXPECT_TRUE(r.seen.hello);
    EXPECT_FALSE(r.seen.accepted);
    EXPECT_EQ(device.spent(), c.charged);
  }
}

TEST_F(CabiClientTest, ACallbackErrorEndsTheSessionWithItsCodeAndTheReportIsHeld) {
  CHistogram h(5);
  std::vector<uint64_t> points;
  const fedstat_v1_Task task = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  CDevice device(230, client::Client::memory_bytes(task).value());
  ASSERT_EQ(fedstat_client_set_histogram(device.client, h.histogram), FEDSTAT_OK);
  Link link;
  link.fail_send_at = 3;  // Hello, TaskReply, then the first Report fails
  InMemoryChannel server(link.up, link.down);
  std::thread thread([&] {
    wire::Envelope in;
    ASSERT_TRUE(server.receive(in, 20000).ok());
    send_task(server, task, points);
    while (server.receive(in, 20000).ok()) {
    }
  });
  const fedstat_channel channel = link.channel();
  fedstat_session_outcome outcome = {-1, 0};
  const fedstat_status status = fedstat_client_run_session(device.client, &channel, &outcome);
  thread.join();
  EXPECT_EQ(status, FEDSTAT_UNAVAILABLE);
  EXPECT_NE(std::string(fedstat_client_last_error(device.client)).find("callback"),
            std::string::npos)
      << fedstat_client_last_error(device.client);
  EXPECT_EQ(outcome.result, -1);  // untouched on an error
  fedstat_client_state state;
  ASSERT_EQ(fedstat_client_get_state(device.client, &state), FEDSTAT_OK);
  EXPECT_EQ(state.pending_report_task, task.task_id);  // the next session resumes it
  EXPECT_EQ(state.interrupted_task, 0u);
  EXPECT_DOUBLE_EQ(device.spent(), task.epsilon);  // charged once, when it accepted
}

TEST_F(CabiClientTest, CreateAndSettersRefuseBadArguments) {
  size_t bytes = 0;
  ASSERT_EQ(fedstat_client_size(4096, &bytes), FEDSTAT_OK);
  CDevice good(240, 4096);
  std::vector<uint64_t> memory(bytes / 8 + 1);
  fedstat_client* client = nullptr;
  fedstat_client_config config = {};
  config.device_id = 241;
  config.wall_clock_seconds = &fixed_clock;
  EXPECT_EQ(fedstat_client_create(memory.data(), bytes, &config, nullptr, good.random, &client),
            FEDSTAT_INVALID_ARGUMENT);
  EXPECT_EQ(fedstat_client_create(memory.data(), bytes, &config, good.ledger,
                                  reinterpret_cast<fedstat_random*>(good.ledger), &client),
            FEDSTAT_INVALID_ARGUMENT);
  EXPECT_EQ(fedstat_client_create(memory.data(), 100, &config, good.ledger, good.random, &client),
            FEDSTAT_RESOURCE_EXHAUSTED);
  config.device_id = 0;
  EXPECT_EQ(fedstat_client_create(memory.data(), bytes, &config, good.ledger, good.random, &client),
            FEDSTAT_INVALID_ARGUMENT);
  config.device_id = 241;
  config.wall_clock_seconds = nullptr;
  EXPECT_EQ(fedstat_client_create(memory.data(), bytes, &config, good.ledger, good.random, &client),
            FEDSTAT_INVALID_ARGUMENT);
  EXPECT_EQ(client, nullptr);

  std::vector<uint64_t> dense_memory(1024);
  fedstat_histogram* dense = nullptr;
  ASSERT_EQ(
      fedstat_histogram_create_dense(dense_memory.data(), 8 * dense_memory.size(), 100, &dense),
      FEDSTAT_OK);
  EXPECT_EQ(fedstat_client_set_histogram(good.client, dense), FEDSTAT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fedstat_client_last_error(good.client)).find("sparse"), std::string::npos);
  EXPECT_EQ(fedstat_client_set_examples(good.client, nullptr, nullptr, 3, 2),
            FEDSTAT_INVALID_ARGUMENT);
  EXPECT_EQ(fedstat_client_run_session(good.client, nullptr, nullptr), FEDSTAT_INVALID_ARGUMENT);
  EXPECT_EQ(fedstat_client_set_report_window(nullptr, 8), FEDSTAT_INVALID_ARGUMENT);
  EXPECT_EQ(fedstat_client_set_report_window(good.client, 0), FEDSTAT_INVALID_ARGUMENT);
  EXPECT_EQ(fedstat_client_set_report_window(good.client, 17), FEDSTAT_INVALID_ARGUMENT);
  EXPECT_EQ(fedstat_client_set_report_window(good.client, 16), FEDSTAT_OK);
}

// fedstat_client_create_with_kinds: a Client with the data-shift kind only declines a KL task
// (FEDSTAT_UNIMPLEMENTED) before anything is charged, and computes a data-shift task as a Client
// with every kind does; a bad table is refused.
TEST_F(CabiClientTest, AClientWithSomeKindsDeclinesTheOthersBeforeAnythingIsCharged) {
  const fedstat_task_kind* const shift_only[] = {fedstat_task_kind_data_shift()};
  OwnedHistogram expected_data(4);
  CHistogram h(4);
  CDevice device(220, 1 << 16, /*budget=*/10, shift_only, 1, nullptr);
  ASSERT_EQ(device.create_status, FEDSTAT_OK);
  ASSERT_EQ(fedstat_client_set_histogram(device.client, h.histogram), FEDSTAT_OK);
  std::vector<uint64_t> points;
  Link kl_link;
  const SessionRun kl =
      run(device, kl_link, kl_task(fedstat_v1_TrustModel_TRUSTED, points), points);
  EXPECT_EQ(kl.status, FEDSTAT_UNIMPLEMENTED);
  EXPECT_FALSE(kl.seen.accepted);
  EXPECT_TRUE(kl.seen.report.empty());
  EXPECT_EQ(device.spent(), 0);
  const fedstat_v1_Task shift = exact_shift_task();
  accept_none(device);
  Link shift_link;
  const SessionRun r = run(device, shift_link, shift, {});
  ASSERT_EQ(r.status, FEDSTAT_OK) << fedstat_client_last_error(device.client);
  EXPECT_EQ(r.outcome.result, FEDSTAT_SESSION_COMPLETED);
  SeededStream same(test_seed(99), 220);
  EXPECT_EQ(r.seen.report, expected_sketch(shift, expected_data.histogram, same));

  // The handles are the SDK's own kinds; a DIST task needs secure aggregation.
  EXPECT_EQ(reinterpret_cast<const void*>(fedstat_task_kind_kl_answers()),
            reinterpret_cast<const void*>(&client::kKlAnswersKind));
  EXPECT_EQ(reinterpret_cast<const void*>(fedstat_secure_aggregation_support()),
            reinterpret_cast<const void*>(&client::kSecureAggregation));
  const fedstat_task_kind* const twice[] = {fedstat_task_kind_data_shift(),
                                            fedstat_task_kind_data_shift()};
  EXPECT_EQ(CDevice(221, 1 << 16, 10, twice, 2).create_status, FEDSTAT_INVALID_ARGUMENT);
  const fedstat_task_kind* const with_null[] = {nullptr};
  EXPECT_EQ(CDevice(222, 1 << 16, 10, with_null, 1).create_status, FEDSTAT_INVALID_ARGUMENT);
  EXPECT_EQ(CDevice(223, 1 << 16, 10, shift_only, 5).create_status, FEDSTAT_INVALID_ARGUMENT);
}

// fedstat_task_policy.assumed_honest_shares reaches the Client (issue 39 item 1, review F3): a
// DIST task whose λ is calibrated for its threshold's shares is declined, ε above the ceiling,
// when the app trusts only its own share; nothing is charged.
TEST_F(CabiClientTest, AssumedHonestSharesReachTheClient) {
  std::vector<uint64_t> points;
  fedstat_v1_Task task = kl_task(fedstat_v1_TrustModel_DIST, points);
  make_dist(task, 1000, 501);
  task.device_noise_lambda =
      privacy::skellam_lambda(5, task.delta, tasks::kl_answer_sensitivity(1, 1), 501).value();
  ASSERT_LT(client::device_spend(task).value().epsilon, client::TaskPolicy().max_epsilon);
  ASSERT_GT(client::device_spend(task, client::all_task_kinds(), 1).value().epsilon,
            client::TaskPolicy().max_epsilon);
  CHistogram h(7);
  CDevice device(260, client::Client::memory_bytes(task).value());
  ASSERT_EQ(fedstat_client_set_histogram(device.client, h.histogram), FEDSTAT_OK);
  fedstat_task_policy own;
  ASSERT_EQ(fedstat_task_policy_default(&own), FEDSTAT_OK);
  own.assumed_honest_shares = 1;
  ASSERT_EQ(fedstat_client_set_task_policy(device.client, &own), FEDSTAT_OK);
  Link link;
  const SessionRun r = run(device, link, task, points);
  ASSERT_EQ(r.status, FEDSTAT_OK) << fedstat_client_last_error(device.client);
  EXPECT_EQ(r.outcome.result, FEDSTAT_SESSION_DECLINED_POLICY);
  int32_t refusal = -1;
  ASSERT_EQ(fedstat_client_last_policy_refusal(device.client, &refusal), FEDSTAT_OK);
  EXPECT_EQ(refusal, FEDSTAT_POLICY_EPSILON_ABOVE_MAX);
  EXPECT_EQ(device.spent(), 0);
}

// A DIST data-shift task (issue 41: the hashed histogram with Pólya shares) through the ABI: the
// tasks are bytes on the channel, so the ABI needs no builder of its own. A Client given the
// data-shift kind without secure aggregation declines it (FEDSTAT_UNIMPLEMENTED), nothing
// charged; with fedstat_secure_aggregation_support() it accepts it and is charged ε = 1/T (h = s
// shares: pure, δ = 0), then waits for secure aggregation's first message — here the server
// ends the round instead (ABORTED). The masked round itself is tests/client/
// secagg_session_test.cpp's, through the same Client.
TEST_F(CabiClientTest, ADistDataShiftTaskNeedsSecureAggregationAndIsChargedItsNoise) {
  const fedstat_v1_Task task = data_shift_dist_task(5, 3);
  const size_t need = client::Client::memory_bytes(task, 256).value();
  const fedstat_task_kind* const shift_only[] = {fedstat_task_kind_data_shift()};
  CHistogram h(3);
  {
    CDevice device(270, need, 10, shift_only, 1, nullptr);
    ASSERT_EQ(device.create_status, FEDSTAT_OK);
    ASSERT_EQ(fedstat_client_set_histogram(device.client, h.histogram), FEDSTAT_OK);
    Link link;
    const SessionRun r = run(device, link, task, {});
    EXPECT_EQ(r.status, FEDSTAT_UNIMPLEMENTED);
    EXPECT_FALSE(r.seen.accepted);
    EXPECT_EQ(device.spent(), 0);
  }
  CDevice device(271, need, 10, shift_only, 1, fedstat_secure_aggregation_support());
  ASSERT_EQ(device.create_status, FEDSTAT_OK);
  ASSERT_EQ(fedstat_client_set_histogram(device.client, h.histogram), FEDSTAT_OK);
  Link link;
  InMemoryChannel server(link.up, link.down);
  bool accepted = false;
  std::thread thread([&] {
    wire::Envelope in;
    if (!server.receive(in, 20000).ok()) return;
    send_task(server, task, {});
    if (!server.receive(in, 20000).ok() || in.which_body != fedstat_v1_Envelope_task_reply_tag) {
      return;
    }
    accepted = in.body.task_reply.accept;
    wire::Envelope outcome = envelope_of(fedstat_v1_Envelope_round_outcome_tag);
    outcome.body.round_outcome.task_id = task.task_id;
    outcome.body.round_outcome.completed = false;
    server.send(outcome).ignore();
  });
  const fedstat_channel channel = link.channel();
  fedstat_session_outcome outcome = {-1, 0};
  const fedstat_status status = fedstat_client_run_session(device.client, &channel, &outcome);
  thread.join();
  ASSERT_EQ(status, FEDSTAT_OK) << fedstat_client_last_error(device.client);
  EXPECT_TRUE(accepted);
  EXPECT_EQ(outcome.result, FEDSTAT_SESSION_ABORTED);
  EXPECT_EQ(device.spent(), 1 / task.parameters.data_shift.noise_scale);
}

// fedstat_task_policy.answered_kinds reaches the Client (second review of issue 39, B1): a KL task
// is declined for its kind when the app answers data-shift tasks only, before anything is
// charged, and answered once the app names KL too.
TEST_F(CabiClientTest, AnsweredKindsReachTheClient) {
  std::vector<uint64_t> points;
  const fedstat_v1_Task task = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  CHistogram h(8);
  CDevice device(261, client::Client::memory_bytes(task).value());
  ASSERT_EQ(fedstat_client_set_histogram(device.client, h.histogram), FEDSTAT_OK);
  fedstat_task_policy shift_only;
  ASSERT_EQ(fedstat_task_policy_default(&shift_only), FEDSTAT_OK);
  shift_only.answered_kinds = FEDSTAT_KIND_DATA_SHIFT;
  ASSERT_EQ(fedstat_client_set_task_policy(device.client, &shift_only), FEDSTAT_OK);
  {
    Link link;
    const SessionRun r = run(device, link, task, points);
    ASSERT_EQ(r.status, FEDSTAT_OK) << fedstat_client_last_error(device.client);
    EXPECT_EQ(r.outcome.result, FEDSTAT_SESSION_DECLINED_POLICY);
    int32_t refusal = -1;
    ASSERT_EQ(fedstat_client_last_policy_refusal(device.client, &refusal), FEDSTAT_OK);
    EXPECT_EQ(refusal, FEDSTAT_POLICY_TASK_KIND);
    EXPECT_EQ(device.spent(), 0);
  }
  fedstat_task_policy with_kl = shift_only;
  with_kl.answered_kinds |= FEDSTAT_KIND_KL_ANSWERS;
  ASSERT_EQ(fedstat_client_set_task_policy(device.client, &with_kl), FEDSTAT_OK);
  {
    Link link;
    const SessionRun r = run(device, link, task, points);
    ASSERT_EQ(r.status, FEDSTAT_OK) << fedstat_client_last_error(device.client);
    EXPECT_EQ(r.outcome.result, FEDSTAT_SESSION_COMPLETED);
  }
  {  // offered again: the ledger already paid for it
    Link link;
    const SessionRun r = run(device, link, task, points);
    ASSERT_EQ(r.status, FEDSTAT_OK) << fedstat_client_last_error(device.client);
    EXPECT_EQ(r.outcome.result, FEDSTAT_SESSION_DECLINED_ALREADY_CHARGED);
    EXPECT_TRUE(r.seen.report.empty());
  }
  EXPECT_DOUBLE_EQ(device.spent(), task.epsilon);
}

// The task policy through the ABI (issue 39 item 1): a new Client declines trust-NONE tasks and
// TRUSTED ones at a tiny ε before anything is charged, says which rule, answers once the app
// opts in, and a malformed policy is refused naming the field with the one before kept.
TEST_F(CabiClientTest, TheTaskPolicyDeclinesUntilTheAppOptsIn) {
  fedstat_task_policy defaults;
  ASSERT_EQ(fedstat_task_policy_default(&defaults), FEDSTAT_OK);
  EXPECT_EQ(defaults.accepted_trust,
            FEDSTAT_TRUST_TRUSTED | FEDSTAT_TRUST_TAGG | FEDSTAT_TRUST_DIST);
  EXPECT_EQ(defaults.max_epsilon, client::TaskPolicy().max_epsilon);
  EXPECT_EQ(defaults.max_delta, client::TaskPolicy().max_delta);
  EXPECT_EQ(defaults.min_exact_epsilon, client::TaskPolicy().min_exact_epsilon);
  EXPECT_EQ(defaults.assumed_honest_shares, client::TaskPolicy().assumed_honest_shares);
  EXPECT_EQ(defaults.min_assumed_dropout_ppm, 50000u);
  EXPECT_EQ(defaults.min_assumed_corrupt_ppm, 50000u);
  EXPECT_EQ(defaults.answered_kinds, FEDSTAT_KIND_DATA_SHIFT | FEDSTAT_KIND_KL_ANSWERS |
                                         FEDSTAT_KIND_HETEROGENEITY | FEDSTAT_KIND_MODEL_UPDATE);
  EXPECT_NE(defaults.made_by_default, 0u);
  EXPECT_EQ(fedstat_task_policy_default(nullptr), FEDSTAT_INVALID_ARGUMENT);

  OwnedHistogram expected_data(6);
  CHistogram h(6);
  const fedstat_v1_Task none = exact_shift_task();
  CDevice device(250, client::Client::memory_bytes(none, 256).value());
  ASSERT_EQ(fedstat_client_set_histogram(device.client, h.histogram), FEDSTAT_OK);
  int32_t refusal = -1;
  {
    Link link;
    const SessionRun r = run(device, link, none, {});
    ASSERT_EQ(r.status, FEDSTAT_OK) << fedstat_client_last_error(device.client);
    EXPECT_EQ(r.outcome.result, FEDSTAT_SESSION_DECLINED_POLICY);
    EXPECT_FALSE(r.seen.accepted);
    EXPECT_TRUE(r.seen.report.empty());
    ASSERT_EQ(fedstat_client_last_policy_refusal(device.client, &refusal), FEDSTAT_OK);
    EXPECT_EQ(refusal, FEDSTAT_POLICY_TRUST_MODEL);
  }
  std::vector<uint64_t> points;
  fedstat_v1_Task tiny = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  tiny.epsilon = 1e-9;
  {
    Link link;
    const SessionRun r = run(device, link, tiny, points);
    ASSERT_EQ(r.status, FEDSTAT_OK) << fedstat_client_last_error(device.client);
    EXPECT_EQ(r.outcome.result, FEDSTAT_SESSION_DECLINED_POLICY);
    ASSERT_EQ(fedstat_client_last_policy_refusal(device.client, &refusal), FEDSTAT_OK);
    EXPECT_EQ(refusal, FEDSTAT_POLICY_EXACT_EPSILON_BELOW);
  }
  EXPECT_EQ(device.spent(), 0);

  // Malformed policies (made by fedstat_task_policy_default, then a field broken): refused,
  // naming the field; the policy in force is unchanged.
  struct Case {
    const char* field;
    fedstat_task_policy policy;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto broken = [&](void (*mutate)(fedstat_task_policy&, double)) {
    fedstat_task_policy p = defaults;
    p.accepted_trust = FEDSTAT_TRUST_NONE;
    mutate(p, nan);
    return p;
  };
  const Case cases[] = {
      {"accepted_trust", broken([](fedstat_task_policy& p, double) { p.accepted_trust = 0; })},
      {"accepted_trust", broken([](fedstat_task_policy& p, double) { p.accepted_trust |= 16u; })},
      {"answered_kinds", broken([](fedstat_task_policy& p, double) { p.answered_kinds = 0; })},
      {"answered_kinds", broken([](fedstat_task_policy& p, double) { p.answered_kinds |= 1u; })},
      {"max_epsilon", broken([](fedstat_task_policy& p, double n) { p.max_epsilon = n; })},
      {"max_epsilon", broken([](fedstat_task_policy& p, double) {
         p.max_epsilon = std::numeric_limits<double>::infinity();
       })},
      {"max_delta", broken([](fedstat_task_policy& p, double) { p.max_delta = 1; })},
      {"min_exact_epsilon",
       broken([](fedstat_task_policy& p, double) { p.min_exact_epsilon = -1; })},
      {"min_exact_epsilon", broken([](fedstat_task_policy& p, double) {
         p.max_epsilon = 1;
         p.min_exact_epsilon = 2;
       })},
      {"min_assumed_dropout_ppm",
       broken([](fedstat_task_policy& p, double) { p.min_assumed_dropout_ppm = 1000000; })},
      {"min_assumed_corrupt_ppm",
       broken([](fedstat_task_policy& p, double) { p.min_assumed_corrupt_ppm = 1000000; })},
      // Not made by fedstat_task_policy_default at all (tests/audit/device has more).
      {"fedstat_task_policy_default",
       fedstat_task_policy{FEDSTAT_TRUST_NONE, 10, 1e-5, 0.1, 0, FEDSTAT_KIND_KL_ANSWERS, 50000,
                           50000, 0}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(fedstat_client_set_task_policy(device.client, &c.policy), FEDSTAT_INVALID_ARGUMENT)
        << c.field;
    EXPECT_NE(std::string(fedstat_client_last_error(device.client)).find(c.field),
              std::string::npos)
        << fedstat_client_last_error(device.client);
  }
  EXPECT_EQ(fedstat_client_set_task_policy(device.client, nullptr), FEDSTAT_INVALID_ARGUMENT);
  EXPECT_EQ(fedstat_client_set_task_policy(nullptr, &defaults), FEDSTAT_INVALID_ARGUMENT);
  EXPECT_EQ(fedstat_client_last_policy_refusal(device.client, nullptr), FEDSTAT_INVALID_ARGUMENT);
  EXPECT_EQ(fedstat_client_last_policy_refusal(nullptr, &refusal), FEDSTAT_INVALID_ARGUMENT);
  {  // still the default: declined
    Link link;
    const SessionRun r = run(device, link, none, {});
    EXPECT_EQ(r.outcome.result, FEDSTAT_SESSION_DECLINED_POLICY);
  }

  // Opted in: the trust-NONE task is answered, the exact sketch, nothing charged.
  accept_none(device);
  Link link;
  const SessionRun r = run(device, link, none, {});
  ASSERT_EQ(r.status, FEDSTAT_OK) << fedstat_client_last_error(device.client);
  EXPECT_EQ(r.outcome.result, FEDSTAT_SESSION_COMPLETED);
  ASSERT_EQ(fedstat_client_last_policy_refusal(device.client, &refusal), FEDSTAT_OK);
  EXPECT_EQ(refusal, FEDSTAT_POLICY_NOT_REFUSED);
  SeededStream unused(test_seed(99), 250);
  EXPECT_EQ(r.seen.report, expected_sketch(none, expected_data.histogram, unused));
  EXPECT_EQ(device.spent(), 0);
}

// ---- The TLS-PSK channel (c/tls.h) -----------------------------------------------------------
// Against a one-connection mbedTLS PSK server on loopback, pinned to the same profile as
// fedstat-server (tls::pin_psk_profile); the whole session with the real server is the consumer
// test's (tests/consumer/report_to_server_test.sh).

// A listening TCP socket on 127.0.0.1 (an ephemeral port) that accepts nothing by itself.
struct Listener {
  int fd = -1;
  uint16_t port = 0;
  Listener() {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), length), 0);
    EXPECT_EQ(listen(fd, 4), 0);
    EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
    port = ntohs(address.sin_port);
  }
  ~Listener() {
    if (fd >= 0) ::close(fd);
  }
};

// Accepts one connection on `listener` and serves the TLS handshake with `psk`; records the
// identity the device sent and how many application bytes arrived before the peer closed.
struct PskServer {
  std::vector<uint8_t> psk;
  std::string identity_seen;
  int handshake = 1;  // mbedtls_ssl_handshake's result (1: none yet)
  size_t application_bytes = 0;

  static int psk_callback(void* self, mbedtls_ssl_context* ssl, const unsigned char* identity,
                          size_t length) {
    auto* server = static_cast<PskServer*>(self);
    server->identity_seen.assign(reinterpret_cast<const char*>(identity), length);
    return mbedtls_ssl_set_hs_psk(ssl, server->psk.data(), server->psk.size());
  }

  void serve(const Listener& listener) {
    const int fd = accept(listener.fd, nullptr, nullptr);
    ASSERT_GE(fd, 0);
    mbedtls_net_context net;
    net.fd = fd;
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg;
    mbedtls_ssl_config config;
    mbedtls_ssl_context ssl;
    mbedtls_entropy_init(&entropy);
    mbedtls_ctr_drbg_init(&drbg);
    mbedtls_ssl_config_init(&config);
    mbedtls_ssl_init(&ssl);
    EXPECT_EQ(mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &entropy, nullptr, 0), 0);
    EXPECT_EQ(mbedtls_ssl_config_defaults(&config, MBEDTLS_SSL_IS_SERVER,
                                          MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT),
              0);
    tls::pin_psk_profile(config, drbg);
    mbedtls_ssl_conf_psk_cb(&config, &PskServer::psk_callback, this);
    EXPECT_EQ(mbedtls_ssl_setup(&ssl, &config), 0);
    mbedtls_ssl_set_bio(&ssl, &net, mbedtls_net_send, mbedtls_net_recv, nullptr);
    do {
      handshake = mbedtls_ssl_handshake(&ssl);
    } while (handshake == MBEDTLS_ERR_SSL_WANT_READ || handshake == MBEDTLS_ERR_SSL_WANT_WRITE);
    if (handshake == 0) {
      unsigned char buffer[256];
      for (;;) {
        const int got = mbedtls_ssl_read(&ssl, buffer, sizeof(buffer));
        if (got <= 0) break;
        application_bytes += static_cast<size_t>(got);
      }
    }
    mbedtls_ssl_free(&ssl);
    mbedtls_ssl_config_free(&config);
    mbedtls_ctr_drbg_free(&drbg);
    mbedtls_entropy_free(&entropy);
    ::close(fd);
  }
};

// TLS channel memory of fedstat_tls_channel_size bytes (8-byte aligned).
struct TlsMemory {
  std::vector<uint64_t> memory;
  fedstat_tls_channel* channel = nullptr;
  TlsMemory() {
    size_t bytes = 0;
    EXPECT_EQ(fedstat_tls_channel_size(&bytes), FEDSTAT_OK);
    memory.resize(bytes / 8 + 1);
    EXPECT_EQ(fedstat_tls_channel_create(memory.data(), bytes, &channel), FEDSTAT_OK);
  }
  ~TlsMemory() {
    if (channel != nullptr) fedstat_tls_channel_destroy(channel);
  }
};

std::string last_tls_error(const fedstat_tls_channel* channel) {
  return fedstat_tls_channel_last_error(channel);
}

const std::vector<uint8_t> kKey(FEDSTAT_TLS_PSK_BYTES, 0x5a);

TEST_F(CabiClientTest, TlsChannelRefusesBadArgumentsBeforeConnecting) {
  size_t bytes = 0;
  EXPECT_EQ(fedstat_tls_channel_size(nullptr), FEDSTAT_INVALID_ARGUMENT);
  ASSERT_EQ(fedstat_tls_channel_size(&bytes), FEDSTAT_OK);
  std::vector<uint64_t> memory(bytes / 8 + 2, 0);
  fedstat_tls_channel* channel = nullptr;
  EXPECT_EQ(fedstat_tls_channel_create(memory.data(), bytes - 1, &channel),
            FEDSTAT_RESOURCE_EXHAUSTED);
  EXPECT_EQ(
      fedstat_tls_channel_create(reinterpret_cast<uint8_t*>(memory.data()) + 4, bytes, &channel),
      FEDSTAT_INVALID_ARGUMENT);
  EXPECT_EQ(fedstat_tls_channel_create(memory.data(), bytes, nullptr), FEDSTAT_INVALID_ARGUMENT);
  EXPECT_EQ(channel, nullptr);
  EXPECT_TRUE(std::all_of(memory.begin(), memory.end(), [](uint64_t w) { return w == 0; }));

  TlsMemory tls;
  const Listener listener;  // nothing may reach it: every call below is refused first
  struct Case {
    const char* host;
    uint16_t port;
    uint64_t device;
    const uint8_t* psk;
    size_t psk_bytes;
    const char* message;  // a part of fedstat_tls_channel_last_error
  };
  const std::string long_host(256, '1');
  const Case cases[] = {
      {nullptr, listener.port, 1, kKey.data(), 32, "host is empty"},
      {"", listener.port, 1, kKey.data(), 32, "host is empty"},
      {long_host.c_str(), listener.port, 1, kKey.data(), 32, "longer than 255"},
      {"127.0.0.1", 0, 1, kKey.data(), 32, "port 0"},
      {"127.0.0.1", listener.port, 0, kKey.data(), 32, "device id outside 1..2^31"},
      {"127.0.0.1", listener.port, (uint64_t{1} << 31) + 1, kKey.data(), 32, "device id"},
      {"127.0.0.1", listener.port, 1, nullptr, 32, "must be 32 bytes"},
      {"127.0.0.1", listener.port, 1, kKey.data(), 31, "must be 32 bytes"},
      {"127.0.0.1", listener.port, 1, kKey.data(), 64, "must be 32 bytes"},
      {"fedstat.example", listener.port, 1, kKey.data(), 32, "numeric IPv4/IPv6 address"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(fedstat_tls_channel_connect(tls.channel, c.host, c.port, c.device, c.psk, c.psk_bytes,
                                          1000),
              FEDSTAT_INVALID_ARGUMENT)
        << c.message;
    EXPECT_NE(last_tls_error(tls.channel).find(c.message), std::string::npos)
        << last_tls_error(tls.channel);
  }
  EXPECT_EQ(
      fedstat_tls_channel_connect(nullptr, "127.0.0.1", listener.port, 1, kKey.data(), 32, 1000),
      FEDSTAT_INVALID_ARGUMENT);
  int resumed = -1;
  EXPECT_EQ(fedstat_tls_channel_resumed(tls.channel, nullptr), FEDSTAT_INVALID_ARGUMENT);
  EXPECT_EQ(fedstat_tls_channel_resumed(tls.channel, &resumed), FEDSTAT_OK);
  EXPECT_EQ(resumed, 0);
  EXPECT_EQ(fedstat_tls_channel_close(nullptr), FEDSTAT_INVALID_ARGUMENT);
  EXPECT_EQ(fedstat_tls_channel_close(tls.channel), FEDSTAT_OK);  // nothing open: nothing to do
  EXPECT_STREQ(fedstat_tls_channel_last_error(nullptr),
               fedstat_tls_channel_last_error(reinterpret_cast<fedstat_tls_channel*>(
                   memory.data())));  // never created: the fixed message

  // A session needs a connected channel, an outcome and a live Client.
  CDevice device(1, 1 << 16);
  fedstat_session_outcome outcome = {-1, 0};
  EXPECT_EQ(fedstat_client_run_session_tls(device.client, tls.channel, &outcome),
            FEDSTAT_FAILED_PRECONDITION);
  EXPECT_NE(std::string(fedstat_client_last_error(device.client)).find("not connected"),
            std::string::npos);
  EXPECT_EQ(fedstat_client_run_session_tls(device.client, nullptr, &outcome),
            FEDSTAT_INVALID_ARGUMENT);
  EXPECT_EQ(fedstat_client_run_session_tls(device.client, tls.channel, nullptr),
            FEDSTAT_INVALID_ARGUMENT);
  EXPECT_EQ(fedstat_client_run_session_tls(nullptr, tls.channel, &outcome),
            FEDSTAT_INVALID_ARGUMENT);
  EXPECT_EQ(outcome.result, -1);

  // Destroyed: the handle is refused from then on.
  EXPECT_EQ(fedstat_tls_channel_destroy(tls.channel), FEDSTAT_OK);
  EXPECT_EQ(fedstat_tls_channel_destroy(tls.channel), FEDSTAT_INVALID_ARGUMENT);
  tls.channel = nullptr;
}

TEST_F(CabiClientTest, TlsConnectToAPortNobodyListensOnIsUnavailable) {
  uint16_t port = 0;
  {
    const Listener closed;  // bound, then closed: nothing listens on the port any more
    port = closed.port;
  }
  TlsMemory tls;
  EXPECT_EQ(fedstat_tls_channel_connect(tls.channel, "127.0.0.1", port, 1, kKey.data(), 32, 5000),
            FEDSTAT_UNAVAILABLE);
  EXPECT_NE(last_tls_error(tls.channel).find("connection refused"), std::string::npos)
      << last_tls_error(tls.channel);
}

TEST_F(CabiClientTest, TlsConnectToAPeerThatNeverAnswersTimesOut) {
  const Listener silent;  // the kernel completes the TCP handshake; nobody answers the TLS one
  TlsMemory tls;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(
      fedstat_tls_channel_connect(tls.channel, "127.0.0.1", silent.port, 1, kKey.data(), 32, 300),
      FEDSTAT_DEADLINE_EXCEEDED);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_NE(last_tls_error(tls.channel).find("timed out"), std::string::npos)
      << last_tls_error(tls.channel);
  EXPECT_GE(waited, std::chrono::milliseconds(300));
  EXPECT_LT(waited, std::chrono::seconds(5));  // the timeout, not the default 10 s or forever
}

TEST_F(CabiClientTest, TlsWrongKeyIsPermissionDeniedAndTheIdentityIsTheDecimalDeviceId) {
  const Listener listener;
  PskServer server;
  server.psk.assign(FEDSTAT_TLS_PSK_BYTES, 0x11);  // not kKey
  std::thread thread([&] { server.serve(listener); });
  TlsMemory tls;
  const fedstat_status status = fedstat_tls_channel_connect(
      tls.channel, "localhost", listener.port, 1234567, kKey.data(), kKey.size(), 5000);
  thread.join();
  EXPECT_EQ(status, FEDSTAT_PERMISSION_DENIED) << last_tls_error(tls.channel);
  EXPECT_NE(last_tls_error(tls.channel).find("pre-shared key"), std::string::npos)
      << last_tls_error(tls.channel);
  EXPECT_EQ(server.identity_seen, "1234567");
  EXPECT_NE(server.handshake, 0);
}

TEST_F(CabiClientTest, TlsChannelOfAnotherDeviceIsRefusedBeforeAnythingIsSent) {
  const Listener listener;
  PskServer server;
  server.psk = kKey;
  std::thread thread([&] { server.serve(listener); });
  TlsMemory tls;
  ASSERT_EQ(fedstat_tls_channel_connect(tls.channel, "127.0.0.1", listener.port, 5, kKey.data(),
                                        kKey.size(), 5000),
            FEDSTAT_OK)
      << last_tls_error(tls.channel);
  // Connected: a second connect is refused and the connection stays.
  EXPECT_EQ(fedstat_tls_channel_connect(tls.channel, "127.0.0.1", listener.port, 5, kKey.data(),
                                        kKey.size(), 5000),
            FEDSTAT_FAILED_PRECONDITION);
  CDevice device(1, 1 << 16);  // device 1; the channel is device 5's
  fedstat_session_outcome outcome = {-1, 0};
  EXPECT_EQ(fedstat_client_run_session_tls(device.client, tls.channel, &outcome),
            FEDSTAT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fedstat_client_last_error(device.client)).find("another device id"),
            std::string::npos)
      << fedstat_client_last_error(device.client);
  EXPECT_EQ(outcome.result, -1);
  EXPECT_EQ(fedstat_tls_channel_close(tls.channel), FEDSTAT_OK);
  thread.join();
  EXPECT_EQ(server.handshake, 0);
  EXPECT_EQ(server.identity_seen, "5");
  EXPECT_EQ(server.application_bytes, 0u);  // no fedstat frame went out
}

}  // namespace
}  // namespace client_test
}  // namespace fedstat
