// A restarted server rebuilds its rounds from the store and finishes them.
#include <gtest/gtest.h>

#include <memory>

#include "host_server/rounds/coordinator.h"
#include "tests/rounds/fake_outbox.h"
#include "tests/rounds/fake_store.h"
#include "tests/rounds/trusted_device.h"

namespace fedstat {
namespace host {
namespace testing {
namespace {

constexpr uint32_t kLength = 150;  // three chunks: 64, 64, 22
constexpr uint32_t kBits = 24;

std::vector<TaskSpec> specs() {
  return {make_spec(1, fedstat_v1_TrustModel_TRUSTED, kLength, kBits, 3, 5)};
}

std::vector<TrustedDevice> make_devices() {
  std::vector<TrustedDevice> devices(5);
  for (uint64_t i = 0; i < 5; ++i) {
    devices[i].id = 200 + i;
    devices[i].words = device_words(devices[i].id, kLength, kBits);
  }
  return devices;
}

std::string uninterrupted_result() {
  FakeStore store;
  FakeOutbox out(store);
  Coordinator c(store, out, specs(), kT0);
  auto devices = make_devices();
  for (size_t i = 0; i < devices.size(); ++i) {
    check_in(c, out, devices[i], i + 1);
    accept(c, out, devices[i], 1);
  }
  for (auto& d : devices) send_reports(c, out, d, 1, kLength);
  EXPECT_EQ(c.task_state(1), "completed");
  return store.result(1).value_or("");
}

TEST(Recovery, TrustedRoundResumedAfterRestartGivesTheSameResult) {
  const std::string expected = uninterrupted_result();
  ASSERT_FALSE(expected.empty());

  FakeStore store;
  auto devices = make_devices();
  {
    FakeOutbox out(store);
    Coordinator first(store, out, specs(), kT0);
    for (size_t i = 0; i < devices.size(); ++i) {
      check_in(first, out, devices[i], i + 1);
      accept(first, out, devices[i], 1);
    }
    // Half-way: device i has i chunks acknowledged (device 4: all three — complete).
    for (size_t i = 0; i < devices.size(); ++i) {
      send_reports(first, out, devices[i], 1, std::min<uint32_t>(kLength, 64 * i));
    }
    ASSERT_EQ(first.task_state(1), "open");
  }  // the server dies: no on_close, nothing more
  const size_t events_before = store.event_count();

  FakeOutbox out(store);
  Coordinator second(store, out, specs(), kT0 + 5);
  EXPECT_EQ(second.task_state(1), "open");
  EXPECT_EQ(store.event_count(), events_before) << "replay must not append";
  for (size_t i = 0; i < devices.size(); ++i) {
    TrustedDevice& d = devices[i];
    const uint32_t before = d.sent;
    ASSERT_EQ(check_in(second, out, d, 100 + i, /*resume=*/1), 1u);
    ASSERT_FALSE(out.empty(d.conn));
    fedstat_v1_Envelope a = out.pop(d.conn);
    ASSERT_EQ(a.which_body, fedstat_v1_Envelope_ack_tag);
    EXPECT_EQ(a.body.ack.offset, before) << "the Ack names the words stored before the crash";
    d.sent = a.body.ack.offset;
  }
  for (auto& d : devices) send_reports(second, out, d, 1, kLength);
  ASSERT_EQ(second.task_state(1), "completed");
  EXPECT_EQ(store.result(1).value_or(""), expected);
  for (auto& d : devices) {
    ASSERT_FALSE(out.empty(d.conn));
    EXPECT_EQ(out.pop(d.conn).which_body, fedstat_v1_Envelope_round_outcome_tag);
  }

  // A third start finds the task completed and refuses a late resume.
  FakeOutbox out3(store);
  Coordinator third(store, out3, specs(), kT0 + 10);
  EXPECT_EQ(third.task_state(1), "completed");
  third.on_open(1, "200");
  third.on_frame(1, hello(200, 1));
  ASSERT_FALSE(out3.empty(1));
  const fedstat_v1_Envelope closed = out3.pop(1);
  ASSERT_EQ(closed.which_body, fedstat_v1_Envelope_server_error_tag);
  EXPECT_EQ(closed.body.server_error.action, fedstat_v1_ErrorAction_TASK_CLOSED);
}

TEST(Recovery, AResumeWhoseTaskReplyWasLostIsItsAcceptance) {
  const std::string expected = uninterrupted_result();
  FakeStore store;
  auto devices = make_devices();
  {
    FakeOutbox out(store);
    Coordinator first(store, out, specs(), kT0);
    for (size_t i = 0; i < devices.size(); ++i) check_in(first, out, devices[i], i + 1);
    // Device 4's TaskReply never reached the store: the server died first.
    for (size_t i = 0; i + 1 < devices.size(); ++i) accept(first, out, devices[i], 1);
    send_reports(first, out, devices[0], 1, 64);
  }
  FakeOutbox out(store);
  Coordinator second(store, out, specs(), kT0 + 5);
  for (size_t i = 0; i < devices.size(); ++i) {
    TrustedDevice& d = devices[i];
    ASSERT_EQ(check_in(second, out, d, 100 + i, /*resume=*/1), 1u);
    ASSERT_FALSE(out.empty(d.conn)) << "device " << i;
    fedstat_v1_Envelope a = out.pop(d.conn);
    ASSERT_EQ(a.which_body, fedstat_v1_Envelope_ack_tag);
    EXPECT_EQ(a.body.ack.offset, i == 0 ? 64u : 0u);
    d.sent = a.body.ack.offset;
  }
  for (auto& d : devices) send_reports(second, out, d, 1, kLength);
  ASSERT_EQ(second.task_state(1), "completed");
  EXPECT_EQ(store.result(1).value_or(""), expected) << "the resumed device's report is summed";
}

TEST(Recovery, AResumeByANonMemberAfterAdmissionIsRefusedAndStoresNothing) {
  FakeStore store;
  FakeOutbox out(store);
  Coordinator c(store, out, specs(), kT0);
  auto devices = make_devices();
  for (size_t i = 0; i < devices.size(); ++i) {  // five of five: admission closes
    check_in(c, out, devices[i], i + 1);
    accept(c, out, devices[i], 1);
  }
  const size_t events = store.event_count();
  TrustedDevice late;
  late.id = 900;
  c.on_open(50, "900");
  c.on_frame(50, hello(900, 1));
  ASSERT_FALSE(out.empty(50));
  const fedstat_v1_Envelope e = out.pop(50);
  ASSERT_EQ(e.which_body, fedstat_v1_Envelope_server_error_tag);
  EXPECT_EQ(e.body.server_error.action, fedstat_v1_ErrorAction_RETRY_LATER);
  EXPECT_TRUE(out.empty(50)) << "no Task, no Ack for a refused resume";
  EXPECT_EQ(store.event_count(), events);
}

// A report refused as out of bounds (TaskSpec::check_report, issue 39 item 7) is a stored note:
// after a restart the device stays out — its resume is refused — and the round completes with
// the others without waiting for it.
TEST(Recovery, ARefusedReportStaysRefusedAfterARestart) {
  std::vector<TaskSpec> bounded = specs();
  bounded[0].check_report = [](const std::vector<uint64_t>& r) -> std::optional<std::string> {
    if (r[0] == 0xABCDE) return std::string("word 0 is the bad one");
    return std::nullopt;
  };
  FakeStore store;
  auto devices = make_devices();
  devices[4].words[0] = 0xABCDE;
  {
    FakeOutbox out(store);
    Coordinator first(store, out, bounded, kT0);
    for (size_t i = 0; i < devices.size(); ++i) {
      check_in(first, out, devices[i], i + 1);
      accept(first, out, devices[i], 1);
    }
    send_reports(first, out, devices[0], 1, kLength);
    send_reports(first, out, devices[1], 1, kLength);
    send_reports(first, out, devices[2], 1, 64);
    send_reports(first, out, devices[4], 1, 128);
    first.on_frame(devices[4].conn, report(1, devices[4].words, 128, kLength - 128));
    const fedstat_v1_Envelope refused = out.pop(devices[4].conn);
    ASSERT_EQ(refused.which_body, fedstat_v1_Envelope_server_error_tag);
    EXPECT_EQ(refused.body.server_error.status_code,
              static_cast<uint32_t>(StatusCode::kOutOfRange));
    EXPECT_TRUE(out.closed(devices[4].conn));
    EXPECT_EQ(first.task_state(1), "open");
  }
  FakeOutbox out(store);
  Coordinator second(store, out, bounded, kT0 + 5);
  second.on_open(50, std::to_string(devices[4].id));
  second.on_frame(50, hello(devices[4].id, /*resume=*/1));
  ASSERT_FALSE(out.empty(50));
  const fedstat_v1_Envelope closed = out.pop(50);
  ASSERT_EQ(closed.which_body, fedstat_v1_Envelope_server_error_tag);
  EXPECT_EQ(closed.body.server_error.action, fedstat_v1_ErrorAction_TASK_CLOSED);
  for (size_t i : {2u, 3u}) {
    TrustedDevice& d = devices[i];
    ASSERT_EQ(check_in(second, out, d, 100 + i, /*resume=*/1), 1u);
    const fedstat_v1_Envelope a = out.pop(d.conn);
    ASSERT_EQ(a.which_body, fedstat_v1_Envelope_ack_tag);
    d.sent = a.body.ack.offset;
    send_reports(second, out, d, 1, kLength);
  }
  ASSERT_EQ(second.task_state(1), "completed") << "the round waited for the refused device";
  std::vector<std::vector<uint64_t>> honest;
  for (size_t i = 0; i < 4; ++i) honest.push_back(devices[i].words);
  EXPECT_EQ(store.result(1).value_or(""), sum_json(sum_of(honest, kBits), 4));
  EXPECT_EQ(second.round(1)->reports_refused(), 1u);
}

}  // namespace
}  // namespace testing
}  // namespace host
}  // namespace fedstat
