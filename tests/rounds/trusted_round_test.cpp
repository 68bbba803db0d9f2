// The clear path end to end through the Coordinator: sums, persist-then-answer, aborts.
#include <gtest/gtest.h>

#include <stdexcept>

#include "host_server/rounds/coordinator.h"
#include "sdk/wire/envelope_codec.h"
#include "tests/rounds/fake_outbox.h"
#include "tests/rounds/fake_store.h"
#include "tests/rounds/trusted_device.h"

namespace fedstat {
namespace host {
namespace testing {
namespace {

constexpr uint32_t kLength = 130;  // three Report chunks: 64, 64, 2
constexpr uint32_t kBits = 20;

std::vector<TaskSpec> one_task(fedstat_v1_TrustModel trust = fedstat_v1_TrustModel_TRUSTED) {
  return {make_spec(1, trust, kLength, kBits, 3, 5)};
}

TEST(TrustedRound, FiveDevicesPublishTheSumOfTheirVectors) {
  FakeStore store;
  FakeOutbox out(store);
  Coordinator c(store, out, one_task(), kT0);
  std::vector<TrustedDevice> devices = admit_devices(c, out, 5, 100, 1, kLength, kBits);
  std::vector<std::vector<uint64_t>> inputs;
  for (const auto& d : devices) inputs.push_back(d.words);
  for (auto& d : devices) send_reports(c, out, d, 1, kLength);
  EXPECT_EQ(c.task_state(1), "completed");
  EXPECT_EQ(store.state(1), "completed");
  ASSERT_TRUE(store.result(1).has_value());
  EXPECT_EQ(*store.result(1), sum_json(sum_of(inputs, kBits), 5));
  expect_outcomes(out, devices, /*completed=*/true);
  for (auto& d : devices) EXPECT_TRUE(out.closed(d.conn));
}

// A check-in is offered the first task, in id order, that is open and has room: a finished task
// is passed over (the Coordinator looks at open rounds only), a follow-up chained when its first
// stage completed is offered like any other, and when every open task is full the answer is
// RETRY_LATER.
TEST(TrustedRound, ACheckInGetsTheFirstOpenTaskWithRoomPastFinishedOnesAndFollowUps) {
  FakeStore store;
  FakeOutbox out(store);
  TaskSpec first = make_spec(1, fedstat_v1_TrustModel_TRUSTED, kLength, kBits, 1, 1);
  first.follow_up = [](const std::string&, uint64_t) {
    return make_spec(10, fedstat_v1_TrustModel_TRUSTED, kLength, kBits, 1, 1);
  };
  std::vector<TaskSpec> specs;
  specs.push_back(std::move(first));
  specs.push_back(make_spec(2, fedstat_v1_TrustModel_TRUSTED, kLength, kBits, 1, 1));
  Coordinator c(store, out, std::move(specs), kT0);
  std::vector<TrustedDevice> devices(3);
  for (size_t i = 0; i < devices.size(); ++i) {
    devices[i].id = 5 + i;
    devices[i].words = device_words(devices[i].id, kLength, kBits);
  }
  ASSERT_EQ(check_in(c, out, devices[0], 1), 1u);
  accept(c, out, devices[0], 1);
  send_reports(c, out, devices[0], 1, kLength);
  ASSERT_EQ(c.task_state(1), "completed");
  c.on_tick(kT0 + 1);  // the follow-up is chained
  ASSERT_EQ(c.task_state(10), "open");
  EXPECT_EQ(check_in(c, out, devices[1], 2), 2u);   // task 1 finished: the next open one
  EXPECT_EQ(check_in(c, out, devices[2], 3), 10u);  // task 2 full: the follow-up
  c.on_open(4, "8");
  c.on_frame(4, hello(8));
  ASSERT_FALSE(out.empty(4));
  const fedstat_v1_Envelope answer = out.pop(4);
  ASSERT_EQ(answer.which_body, fedstat_v1_Envelope_server_error_tag);
  EXPECT_EQ(answer.body.server_error.action, fedstat_v1_ErrorAction_RETRY_LATER);
  EXPECT_TRUE(out.closed(4));
}

// The accepting TaskReplies, and nothing else a device sent, are stored durable (NewEvent::
// durable: a DIST collector's store syncs them; the device has charged its budget for them).
TEST(TrustedRound, OnlyAcceptingRepliesAreStoredDurable) {
  FakeStore store;
  FakeOutbox out(store);
  Coordinator c(store, out, one_task(), kT0);
  std::vector<TrustedDevice> devices = admit_devices(c, out, 4, 100, 1, kLength, kBits);
  TrustedDevice declining;
  declining.id = 77;
  declining.words = device_words(declining.id, kLength, kBits);
  check_in(c, out, declining, 50);
  c.on_frame(declining.conn, reply(1, false));
  size_t accepting = 0, durable = 0;
  for (const StoredEvent& e : store.all_events()) {
    if (e.kind != EventKind::kDeviceMessage) {
      EXPECT_FALSE(store.durable(e.sequence));
      continue;
    }
    fedstat_v1_Envelope env;
    ASSERT_TRUE(wire::decode_envelope(ByteSpan(e.payload.data(), e.payload.size()), env).ok());
    const bool accepts =
        env.which_body == fedstat_v1_Envelope_task_reply_tag && env.body.task_reply.accept;
    accepting += accepts;
    durable += store.durable(e.sequence);
    EXPECT_EQ(store.durable(e.sequence), accepts) << "event " << e.sequence;
  }
  EXPECT_EQ(accepting, 4u);
  EXPECT_EQ(durable, 4u);
}

// Every Ack was sent after the event that stored its Report chunk; the outcome after the
// "completed" transition.
TEST(TrustedRound, EveryAckFollowsItsStoredReport) {
  FakeStore store;
  FakeOutbox out(store);
  Coordinator c(store, out, one_task(), kT0);
  std::vector<TrustedDevice> devices(3);
  std::map<ConnectionId, uint64_t> client_of;
  for (uint64_t i = 0; i < 3; ++i) {
    devices[i].id = 7 + i;
    devices[i].words = device_words(devices[i].id, kLength, kBits);
    check_in(c, out, devices[i], 10 + i);
    client_of[10 + i] = devices[i].id;
    accept(c, out, devices[i], 1);
  }
  c.on_tick(kT0 + 30);  // admission ends with 3 ≥ min_clients
  for (auto& d : devices) send_reports(c, out, d, 1, kLength);
  ASSERT_EQ(c.task_state(1), "completed");
  const size_t acks = check_acks_follow_stored_reports(
      out, store, [&](ConnectionId connection) { return client_of[connection]; });
  for (const Sent& s : out.log()) {
    if (s.envelope.which_body == fedstat_v1_Envelope_round_outcome_tag) {
      const StoredEvent& last = store.all_events()[s.events_stored - 1];
      EXPECT_EQ(std::string(last.payload.begin(), last.payload.begin() + 9), "completed");
    }
  }
  EXPECT_EQ(acks, 3u * 3u);
}

// A member waits on the server between its messages (admission closing, the other reports):
// its connection is kept open for the round's longest wait (admission 30 s > phase 20 s, plus
// the slack), whatever the net layer's idle time-out; a device refused at check-in is not kept,
// nor is a member once the round is over.
TEST(TrustedRound, AMemberWaitingOnTheServerIsKeptOpenForTheRoundsLongestWait) {
  FakeStore store;
  FakeOutbox out(store);
  Coordinator c(store, out, one_task(), kT0);
  std::vector<TrustedDevice> devices(5);
  for (uint64_t i = 0; i < 5; ++i) {
    devices[i].id = 60 + i;
    devices[i].words = device_words(devices[i].id, kLength, kBits);
    ASSERT_EQ(check_in(c, out, devices[i], 1 + i), 1u);
    EXPECT_EQ(out.kept_open(1 + i), 30u + TaskRound::kWaitSlackSeconds) << "offered";
    accept(c, out, devices[i], 1);
  }
  TrustedDevice late;
  late.id = 99;
  c.on_open(9, "99");
  c.on_frame(9, hello(late.id));  // the round is full: RETRY_LATER, closed
  EXPECT_TRUE(out.closed(9));
  EXPECT_EQ(out.kept_open(9), 0u);
  for (size_t i = 0; i + 1 < devices.size(); ++i) send_reports(c, out, devices[i], 1, kLength);
  ASSERT_EQ(c.task_state(1), "open");
  const ConnectionId last = devices.back().conn;
  c.on_frame(last, report(1, devices.back().words, 0, 64));  // one chunk of three: kept open
  EXPECT_EQ(out.kept_open(last), 30u + TaskRound::kWaitSlackSeconds);
  ASSERT_EQ(out.pop(last).which_body, fedstat_v1_Envelope_ack_tag);
  devices.back().sent = 64;
  send_reports(c, out, devices.back(), 1, 128);
  out.keep_open(last, 0);  // forget it: the last chunk completes the round
  send_reports(c, out, devices.back(), 1, kLength);
  EXPECT_EQ(c.task_state(1), "completed");
  EXPECT_EQ(out.kept_open(last), 0u) << "a finished round keeps nobody open";
}

// One live link per device and task: a member that resumes on connection after connection (each
// would be kept open for the round's longest wait) has every older one closed — as a departure
// of nobody: it stays a member, and its report on the newest link completes.
TEST(TrustedRound, AResumeClosesTheMembersOlderConnection) {
  FakeStore store;
  FakeOutbox out(store);
  Coordinator c(store, out, one_task(), kT0);
  std::vector<TrustedDevice> devices = admit_devices(c, out, 5, 70, 1, kLength, kBits);
  TrustedDevice& d = devices[0];
  for (ConnectionId link = 100; link < 150; ++link) {
    const ConnectionId previous = d.conn;
    ASSERT_EQ(check_in(c, out, d, link, /*resume=*/1), 1u);
    ASSERT_EQ(out.pop(link).which_body, fedstat_v1_Envelope_ack_tag);  // words held: 0
    EXPECT_TRUE(out.closed(previous)) << "link " << previous << " left open";
    EXPECT_FALSE(out.closed(link));
    c.on_close(previous, "closed by the server");  // the net layer's callback
  }
  for (auto& device : devices) send_reports(c, out, device, 1, kLength);
  EXPECT_EQ(c.task_state(1), "completed");
  EXPECT_TRUE(store.result(1).has_value());
  for (const std::string& line : c.take_log()) {
    EXPECT_EQ(line.find("client 70 left"), std::string::npos) << line;
  }
}

TEST(TrustedRound, AbortsWhenFewerThanMinClientsAtAdmissionEnd) {
  FakeStore store;
  FakeOutbox out(store);
  Coordinator c(store, out, one_task(), kT0);
  std::vector<TrustedDevice> devices = admit_devices(c, out, 2, 40, 1, kLength, kBits);
  c.on_tick(kT0 + 29);
  EXPECT_EQ(c.task_state(1), "open");
  c.on_tick(kT0 + 30);
  EXPECT_EQ(c.task_state(1), "aborted");
  EXPECT_EQ(store.state(1), "aborted");
  EXPECT_FALSE(store.result(1).has_value());
  expect_outcomes(out, devices, /*completed=*/false);
  for (auto& d : devices) EXPECT_TRUE(out.empty(d.conn));
}

// An estimator that throws aborts the round (stored), instead of leaving the io loop — and a
// restart replays to the same abort instead of failing again at start-up.
TEST(TrustedRound, AFailingEstimateAbortsTheRoundAndARestartStaysAborted) {
  FakeStore store;
  auto specs = one_task();
  specs[0].estimate = [](const std::vector<uint64_t>&, uint32_t, RandomBits&) -> std::string {
    throw std::invalid_argument("estimate: sum length");
  };
  {
    FakeOutbox out(store);
    Coordinator c(store, out, specs, kT0);
    std::vector<TrustedDevice> devices = admit_devices(c, out, 5, 300, 1, kLength, kBits);
    for (auto& d : devices) send_reports(c, out, d, 1, kLength);
    EXPECT_EQ(c.task_state(1), "aborted");
    EXPECT_FALSE(store.result(1).has_value());
    expect_outcomes(out, devices, /*completed=*/false);
  }
  FakeOutbox out(store);
  Coordinator restarted(store, out, specs, kT0 + 5);
  EXPECT_EQ(restarted.task_state(1), "aborted");
  EXPECT_FALSE(store.result(1).has_value());
}

TEST(TrustedRound, AbortsAtTheDeadline) {
  FakeStore store;
  FakeOutbox out(store);
  auto specs = one_task();
  specs[0].task.deadline_unix_seconds = kT0 + 100;
  specs[0].phase_timeout_seconds = 1000;  // only the deadline can end it
  Coordinator c(store, out, specs, kT0);
  std::vector<TrustedDevice> devices = admit_devices(c, out, 3, 60, 1, kLength, kBits);
  c.on_tick(kT0 + 30);
  send_reports(c, out, devices[0], 1, kLength);
  send_reports(c, out, devices[1], 1, 64);
  c.on_tick(kT0 + 99);
  EXPECT_EQ(c.task_state(1), "open");
  c.on_tick(kT0 + 100);
  EXPECT_EQ(c.task_state(1), "aborted");
  EXPECT_FALSE(store.result(1).has_value());
  expect_outcomes(out, devices, /*completed=*/false);
}

TEST(TrustedRound, PhaseTimeoutPublishesTheCompleteReportsOnly) {
  FakeStore store;
  FakeOutbox out(store);
  Coordinator c(store, out, one_task(fedstat_v1_TrustModel_NONE), kT0);
  std::vector<TrustedDevice> devices = admit_devices(c, out, 4, 80, 1, kLength, kBits);
  std::vector<std::vector<uint64_t>> complete;
  c.on_tick(kT0 + 30);
  for (int i = 0; i < 3; ++i) {
    send_reports(c, out, devices[i], 1, kLength);
    complete.push_back(devices[i].words);
  }
  send_reports(c, out, devices[3], 1, 128);  // never finishes
  c.on_tick(kT0 + 49);
  EXPECT_EQ(c.task_state(1), "open");
  c.on_tick(kT0 + 50);
  ASSERT_EQ(c.task_state(1), "completed");
  EXPECT_EQ(*store.result(1), sum_json(sum_of(complete, kBits), 3));
}

// The net layer may report a close from inside Outbox::close: a decline, a late device turned
// away when admission ends, and the outcome's closes all call back into the Coordinator.
TEST(TrustedRound, SurvivesClosesReportedFromInsideOutboxClose) {
  FakeStore store;
  FakeOutbox out(store);
  Coordinator c(store, out, one_task(), kT0);
  out.on_close_hook = [&c](ConnectionId id) { c.on_close(id, "closed by the server"); };
  TrustedDevice decliner;
  decliner.id = 90;
  check_in(c, out, decliner, 1);
  c.on_frame(1, reply(1, false));
  EXPECT_TRUE(out.closed(1));
  std::vector<TrustedDevice> devices(4);
  std::vector<std::vector<uint64_t>> inputs;
  for (uint64_t i = 0; i < 4; ++i) {
    devices[i].id = 91 + i;
    devices[i].words = device_words(devices[i].id, kLength, kBits);
    inputs.push_back(devices[i].words);
    check_in(c, out, devices[i], 2 + i);
    if (i < 3) accept(c, out, devices[i], 1);  // device 94 never replies
  }
  c.on_tick(kT0 + 30);  // admission ends: 94 is turned away and closed
  ASSERT_FALSE(out.empty(5));
  const fedstat_v1_Envelope full = out.pop(5);
  ASSERT_EQ(full.which_body, fedstat_v1_Envelope_server_error_tag);
  EXPECT_EQ(full.body.server_error.action, fedstat_v1_ErrorAction_RETRY_LATER);
  EXPECT_TRUE(out.closed(5));
  inputs.pop_back();
  for (int i = 0; i < 3; ++i) send_reports(c, out, devices[i], 1, kLength);
  ASSERT_EQ(c.task_state(1), "completed");
  EXPECT_EQ(*store.result(1), sum_json(sum_of(inputs, kBits), 3));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(out.closed(devices[i].conn));
}

// A result is stored before anything shows it (issue 39 item 2): when put_result fails (a full
// disk), no log line, task state or RoundOutcome says "completed" — and the noise seed the
// estimate was drawn with was stored before it (a server note), so a later run publishes the
// same bytes.
class FailingResultStore : public FakeStore {
 public:
  void put_result(uint32_t, const std::string&) override {
    throw std::runtime_error("put_result: disk full");
  }
};

TEST(TrustedRound, NothingShowsAResultBeforeItIsStored) {
  FailingResultStore store;
  FakeOutbox out(store);
  Coordinator c(store, out, one_task(), kT0);
  std::vector<TrustedDevice> devices = admit_devices(c, out, 5, 100, 1, kLength, kBits);
  for (size_t i = 0; i + 1 < devices.size(); ++i) send_reports(c, out, devices[i], 1, kLength);
  send_reports(c, out, devices[4], 1, 128);
  EXPECT_THROW(c.on_frame(devices[4].conn, report(1, devices[4].words, 128, 2)),
               std::runtime_error);
  EXPECT_NE(store.state(1), "completed");
  for (const std::string& line : c.take_log()) {
    EXPECT_EQ(line.find("completed"), std::string::npos) << line;
  }
  for (const Sent& s : out.log()) {
    EXPECT_NE(s.envelope.which_body, fedstat_v1_Envelope_round_outcome_tag);
  }
  size_t seeds = 0;
  for (const StoredEvent& e : store.all_events()) {
    const std::string text(e.payload.begin(), e.payload.end());
    seeds += e.kind == EventKind::kServerNote && text.rfind("noise_seed ", 0) == 0;
  }
  EXPECT_EQ(seeds, 1u);
}

}  // namespace
}  // namespace testing
}  // namespace host
}  // namespace fedstat
