// The per-credential check-in rate limit (host_server/rounds/check_in_limit.h): one device id
// checking in as fast as it can is offered the task at most check_ins_per_minute times at once,
// then refused with RETRY_LATER (kResourceExhausted) and closed, nothing stored, until its bucket
// refills; other devices are not affected.
#include <gtest/gtest.h>

#include "host_server/rounds/check_in_limit.h"
#include "host_server/rounds/coordinator.h"
#include "tests/rounds/fake_outbox.h"
#include "tests/rounds/fake_store.h"
#include "tests/rounds/trusted_device.h"

namespace fedstat {
namespace host {
namespace testing {
namespace {

constexpr uint32_t kLength = 100;
constexpr uint32_t kBits = 8;

// What the Coordinator answered a check-in on `conn` with: the Task, or a ServerError.
struct Answer {
  bool offered = false;
  uint32_t status = 0;
  fedstat_v1_ErrorAction action = fedstat_v1_ErrorAction_ERROR_ACTION_UNSPECIFIED;
  bool closed = false;
};

Answer check_in_once(Coordinator& c, FakeOutbox& out, uint64_t client, ConnectionId conn) {
  c.on_open(conn, std::to_string(client));
  c.on_frame(conn, hello(client));
  Answer a;
  a.closed = out.closed(conn);
  const std::vector<fedstat_v1_Envelope> sent = out.drain(conn);
  if (sent.empty()) {
    ADD_FAILURE() << "no answer to check-in on connection " << conn;
    return a;
  }
  a.offered = sent[0].which_body == fedstat_v1_Envelope_task_tag;
  if (sent[0].which_body == fedstat_v1_Envelope_server_error_tag) {
    a.status = sent[0].body.server_error.status_code;
    a.action = sent[0].body.server_error.action;
  }
  return a;
}

// A device that is offered the task and never replies, checking in again and again (each new
// connection replaces its last): without the limit every check-in is offered the task and its
// ClientHello stored, for as long as the device keeps going.
TEST(CheckInLimit, FloodFromOneDeviceIsRefusedBeyondTheBurstAndNothingIsStored) {
  constexpr uint32_t kPerMinute = 20;
  FakeStore store;
  FakeOutbox out(store);
  Coordinator c(store, out, {make_spec(1, fedstat_v1_TrustModel_TRUSTED, kLength, kBits, 1, 3)},
                kT0, kPerMinute);
  const size_t events_before = store.event_count();
  ConnectionId conn = 100;
  for (uint32_t i = 0; i < kPerMinute; ++i) {
    const Answer a = check_in_once(c, out, 7, conn++);
    ASSERT_TRUE(a.offered) << "check-in " << i << " within the burst";
  }
  EXPECT_EQ(store.event_count(), events_before + kPerMinute);  // each offer stored its hello
  for (int i = 0; i < 50; ++i) {
    const Answer a = check_in_once(c, out, 7, conn);
    EXPECT_FALSE(a.offered) << "check-in " << kPerMinute + i << " beyond the burst";
    EXPECT_EQ(a.action, fedstat_v1_ErrorAction_RETRY_LATER);
    EXPECT_EQ(a.status, static_cast<uint32_t>(StatusCode::kResourceExhausted));
    EXPECT_TRUE(a.closed);
    c.on_close(conn++, "closed by the server");
  }
  EXPECT_EQ(store.event_count(), events_before + kPerMinute) << "a refused check-in was stored";
  // One refusal is logged per run of refusals, not one per check-in.
  size_t logged = 0;
  for (const std::string& line : c.take_log()) {
    if (line.find("check-ins a minute") != std::string::npos) ++logged;
  }
  EXPECT_EQ(logged, 1u);

  // Another device is not affected: it is offered the task, accepts and reports.
  TrustedDevice honest;
  honest.id = 8;
  honest.words = device_words(honest.id, kLength, kBits);
  ASSERT_EQ(check_in(c, out, honest, conn++), 1u);
  accept(c, out, honest, 1);
  send_reports(c, out, honest, 1, kLength);

  // 60 / kPerMinute = 3 s later one token is back: exactly one more check-in gets through.
  c.on_tick(kT0 + 2);
  EXPECT_FALSE(check_in_once(c, out, 7, conn++).offered);
  c.on_tick(kT0 + 3);
  EXPECT_TRUE(check_in_once(c, out, 7, conn++).offered);
  EXPECT_FALSE(check_in_once(c, out, 7, conn++).offered);
}

TEST(CheckInLimit, ZeroMeansNoLimit) {
  FakeStore store;
  FakeOutbox out(store);
  Coordinator c(store, out, {make_spec(1, fedstat_v1_TrustModel_TRUSTED, kLength, kBits, 1, 3)},
                kT0, 0);
  for (ConnectionId conn = 100; conn < 400; ++conn) {
    ASSERT_TRUE(check_in_once(c, out, 7, conn).offered) << "check-in " << conn - 100;
  }
}

TEST(CheckInLimit, DefaultIsSixtyAMinute) {
  FakeStore store;
  FakeOutbox out(store);
  Coordinator c(store, out, {make_spec(1, fedstat_v1_TrustModel_TRUSTED, kLength, kBits, 1, 3)},
                kT0);
  ConnectionId conn = 100;
  for (uint32_t i = 0; i < kDefaultCheckInsPerMinute; ++i) {
    ASSERT_TRUE(check_in_once(c, out, 7, conn++).offered) << "check-in " << i;
  }
  EXPECT_FALSE(check_in_once(c, out, 7, conn++).offered);
}

TEST(CheckInLimit, BucketRefillsAtTheRateUpToTheBurst) {
  CheckInLimit limit(6);  // one token every 10 s, at most 6
  for (int i = 0; i < 6; ++i) EXPECT_EQ(limit.admit(1, kT0), CheckInLimit::Verdict::kAdmitted);
  EXPECT_EQ(limit.admit(1, kT0), CheckInLimit::Verdict::kFirstRefusal);
  EXPECT_EQ(limit.admit(1, kT0 + 9), CheckInLimit::Verdict::kRefused);
  EXPECT_EQ(limit.admit(1, kT0 + 10), CheckInLimit::Verdict::kAdmitted);
  EXPECT_EQ(limit.admit(1, kT0 + 10), CheckInLimit::Verdict::kFirstRefusal);
  EXPECT_EQ(limit.admit(2, kT0 + 10), CheckInLimit::Verdict::kAdmitted);  // per device
  // A clock that goes back refills nothing then, and refills from there on: 10 s after the
  // step back a token is there (counting from the later time, it would take until kT0 + 20).
  EXPECT_EQ(limit.admit(1, kT0), CheckInLimit::Verdict::kRefused);
  EXPECT_EQ(limit.admit(1, kT0 + 9), CheckInLimit::Verdict::kRefused);
  EXPECT_EQ(limit.admit(1, kT0 + 10), CheckInLimit::Verdict::kAdmitted);
  // An hour later the bucket holds the burst again, no more.
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(limit.admit(1, kT0 + 3600), CheckInLimit::Verdict::kAdmitted);
  }
  EXPECT_NE(limit.admit(1, kT0 + 3600), CheckInLimit::Verdict::kAdmitted);
  // prune() forgets full buckets only.
  EXPECT_EQ(limit.tracked(), 2u);
  limit.prune(kT0 + 3630);  // device 2 full again, device 1 half way
  EXPECT_EQ(limit.tracked(), 1u);
  limit.prune(kT0 + 3660);
  EXPECT_EQ(limit.tracked(), 0u);
}

}  // namespace
}  // namespace testing
}  // namespace host
}  // namespace fedstat
