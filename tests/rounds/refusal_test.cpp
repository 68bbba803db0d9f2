// Every refused message gets its own ServerError and stores nothing.
#include <gtest/gtest.h>

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

struct Refused {
  uint32_t status = 0;
  fedstat_v1_ErrorAction action = fedstat_v1_ErrorAction_ERROR_ACTION_UNSPECIFIED;
};

class RefusalTest : public ::testing::Test {
 protected:
  RefusalTest()
      : out(store),
        c(store, out, {make_spec(1, fedstat_v1_TrustModel_TRUSTED, kLength, kBits, 1, 3)}, kT0) {
    a.id = 5;
    a.words = device_words(a.id, kLength, kBits);
    check_in(c, out, a, 1);
    accept(c, out, a, 1);
    send_reports(c, out, a, 1, 64);
  }
  // Sends `e` on `conn`; expects exactly one ServerError and no new event.
  Refused send_refused(ConnectionId conn, const fedstat_v1_Envelope& e) {
    const size_t events = store.event_count();
    c.on_frame(conn, e);
    EXPECT_EQ(store.event_count(), events) << "a refused message was stored";
    Refused r;
    if (out.empty(conn)) {
      ADD_FAILURE() << "no answer";
      return r;
    }
    fedstat_v1_Envelope answer = out.pop(conn);
    EXPECT_EQ(answer.which_body, fedstat_v1_Envelope_server_error_tag);
    EXPECT_TRUE(out.empty(conn));
    r.status = answer.body.server_error.status_code;
    r.action = answer.body.server_error.action;
    return r;
  }
  static uint32_t code(StatusCode s) { return static_cast<uint32_t>(s); }

  FakeStore store;
  FakeOutbox out;
  Coordinator c;
  TrustedDevice a;
};

TEST_F(RefusalTest, DuplicateReportChunkIsAlreadyExists) {
  Refused r = send_refused(a.conn, report(1, a.words, 0, 64));
  EXPECT_EQ(r.status, code(StatusCode::kAlreadyExists));
  EXPECT_EQ(r.action, fedstat_v1_ErrorAction_REFUSED);
  send_reports(c, out, a, 1, kLength);  // the report still continues at 64
}

TEST_F(RefusalTest, OutOfOrderChunkIsFailedPrecondition) {
  Refused r = send_refused(a.conn, report(1, a.words, 80, 20));
  EXPECT_EQ(r.status, code(StatusCode::kFailedPrecondition));
  EXPECT_EQ(r.action, fedstat_v1_ErrorAction_REFUSED);
}

TEST_F(RefusalTest, WordNotBelowTwoToTheBitsIsOutOfRange) {
  std::vector<uint64_t> bad = a.words;
  bad[70] = 256;  // 2^8
  Refused r = send_refused(a.conn, report(1, bad, 64, 36));
  EXPECT_EQ(r.status, code(StatusCode::kOutOfRange));
  EXPECT_EQ(r.action, fedstat_v1_ErrorAction_REFUSED);
  Refused past = send_refused(a.conn, report(1, std::vector<uint64_t>(200, 1), 64, 37));
  EXPECT_EQ(past.status, code(StatusCode::kOutOfRange));
  send_reports(c, out, a, 1, kLength);  // nothing of either was kept
}

TEST_F(RefusalTest, HelloNamingAnotherIdIsPermissionDeniedAndClosed) {
  c.on_open(50, "6");
  Refused r = send_refused(50, hello(7));
  EXPECT_EQ(r.status, code(StatusCode::kPermissionDenied));
  EXPECT_EQ(r.action, fedstat_v1_ErrorAction_REFUSED);
  EXPECT_TRUE(out.closed(50));
}

// Version 1 (0.1.0) sent Report words as varints in a field this server ignores: such a device,
// like one of version 0, is told to update at its check-in, before it is offered a task (and
// charges its ledger).
TEST_F(RefusalTest, OldProtocolVersionIsVersionTooOld) {
  for (uint32_t version : {0u, 1u}) {
    const uint64_t connection = 51 + version;
    c.on_open(connection, "6");
    fedstat_v1_Envelope e = hello(6);
    e.protocol_version = version;
    Refused r = send_refused(connection, e);
    EXPECT_EQ(r.action, fedstat_v1_ErrorAction_VERSION_TOO_OLD) << "version " << version;
    EXPECT_TRUE(out.closed(connection)) << "version " << version;
  }
}

TEST_F(RefusalTest, HelloForUnknownTaskIsNotFound) {
  c.on_open(52, "6");
  Refused r = send_refused(52, hello(6, 99));
  EXPECT_EQ(r.status, code(StatusCode::kNotFound));
  EXPECT_EQ(r.action, fedstat_v1_ErrorAction_REFUSED);
  EXPECT_TRUE(out.closed(52));
}

TEST_F(RefusalTest, SecondCheckInOfAParticipantIsRetryLater) {
  c.on_open(53, "5");
  Refused r = send_refused(53, hello(5));
  EXPECT_EQ(r.status, code(StatusCode::kAlreadyExists));
  EXPECT_EQ(r.action, fedstat_v1_ErrorAction_RETRY_LATER);
  EXPECT_TRUE(out.closed(53));
}

TEST_F(RefusalTest, MessagesBeforeHelloAndDuplicateRepliesAreRefused) {
  c.on_open(54, "6");
  Refused before = send_refused(54, reply(1, true));
  EXPECT_EQ(before.status, code(StatusCode::kFailedPrecondition));
  Refused again = send_refused(a.conn, reply(1, true));
  EXPECT_EQ(again.status, code(StatusCode::kAlreadyExists));
}

TEST_F(RefusalTest, ReportAndHelloForAClosedTaskAreTaskClosed) {
  c.on_tick(kT0 + 3600);  // the deadline: the round aborts
  ASSERT_EQ(c.task_state(1), "aborted");
  out.drain(a.conn);
  Refused r = send_refused(a.conn, report(1, a.words, 64, 36));
  EXPECT_EQ(r.status, code(StatusCode::kFailedPrecondition));
  EXPECT_EQ(r.action, fedstat_v1_ErrorAction_TASK_CLOSED);
  c.on_open(55, "5");
  Refused h = send_refused(55, hello(5, 1));
  EXPECT_EQ(h.action, fedstat_v1_ErrorAction_TASK_CLOSED);
  EXPECT_TRUE(out.closed(55));
  c.on_open(56, "8");
  Refused fresh = send_refused(56, hello(8));
  EXPECT_EQ(fresh.action, fedstat_v1_ErrorAction_RETRY_LATER);
}

TEST(TaskSpecs, InvalidSpecsAreRefusedBeforeAnythingIsStored) {
  std::vector<TaskSpec> bad;
  bad.push_back(make_spec(1, fedstat_v1_TrustModel_DIST, 10, 32, 2, 10, 1));   // threshold 1
  bad.push_back(make_spec(1, fedstat_v1_TrustModel_DIST, 10, 32, 2, 10, 11));  // > max_clients
  bad.push_back(make_spec(1, fedstat_v1_TrustModel_TRUSTED, 0, 32, 2, 10));    // no words
  bad.push_back(make_spec(1, fedstat_v1_TrustModel_TRUSTED, 10, 65, 2, 10));   // bits
  bad.push_back(make_spec(1, fedstat_v1_TrustModel_TRUSTED, 10, 32, 11, 10));  // min > max
  bad.push_back(make_spec(0, fedstat_v1_TrustModel_TRUSTED, 10, 32, 2, 10));   // id 0
  bad.push_back(make_spec(1, fedstat_v1_TrustModel_TRUSTED, 10, 32, 2, 10));
  bad.back().estimate = nullptr;
  for (size_t i = 0; i < bad.size(); ++i) {
    FakeStore store;
    FakeOutbox out(store);
    EXPECT_THROW(Coordinator(store, out, {bad[i]}, kT0), std::invalid_argument) << "spec " << i;
    EXPECT_TRUE(store.tasks().empty()) << "spec " << i;
    EXPECT_EQ(store.event_count(), 0u) << "spec " << i;
  }
}

}  // namespace
}  // namespace testing
}  // namespace host
}  // namespace fedstat
