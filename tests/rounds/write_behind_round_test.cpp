// The rounds with the server's writer thread: a Coordinator over a WriteBehindStore, answering
// through a GatedOutbox (as host_server/server_app.cpp wires them). GatedOutbox on its own
// first; then a whole clear round, where every answer must leave only after the writes it was
// decided on have committed — with the writer held inside a commit, the Ack is not sent at all.
#include <gtest/gtest.h>

#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "host_server/rounds/coordinator.h"
#include "host_server/rounds/gated_outbox.h"
#include "host_server/store/write_behind_store.h"
#include "sdk/wire/envelope_codec.h"
#include "tests/rounds/fake_outbox.h"
#include "tests/rounds/fake_store.h"
#include "tests/rounds/trusted_device.h"

namespace fedstat {
namespace host {
namespace testing {
namespace {

// Records each answer as "send <connection> <body tag>", "close <c>" or "keep <c> <seconds>".
class RecordingOutbox final : public Outbox {
 public:
  void send(ConnectionId c, const fedstat_v1_Envelope& e) override {
    log.push_back("send " + std::to_string(c) + " " + std::to_string(e.which_body));
  }
  void close(ConnectionId c) override { log.push_back("close " + std::to_string(c)); }
  void keep_open(ConnectionId c, uint32_t seconds) override {
    log.push_back("keep " + std::to_string(c) + " " + std::to_string(seconds));
  }
  std::vector<std::string> log;
};

fedstat_v1_Envelope ack_envelope() {
  fedstat_v1_Envelope e = fedstat_v1_Envelope_init_zero;
  e.which_body = fedstat_v1_Envelope_ack_tag;
  return e;
}
const std::string kAck = std::to_string(fedstat_v1_Envelope_ack_tag);

struct Tickets {
  uint64_t pending = 0;
  uint64_t committed = 0;
  int waits = 0;      // wait_for_commits calls
  bool fail = false;  // wait_for_commits throws, as the writer's flush does after a failed commit
};

// A gate over `out` whose tickets the test sets in `t`; waiting for commits commits everything
// queued (and counts).
class GatedOutboxTest : public ::testing::Test {
 protected:
  RecordingOutbox out;
  Tickets t;
  GatedOutbox gate{out, [this] { return t.pending; }, [this] { return t.committed; },
                   [this] {
                     ++t.waits;
                     if (t.fail) throw std::runtime_error("a queued write failed: disk full");
                     t.committed = t.pending;
                   }};
};

TEST_F(GatedOutboxTest, PassesAnswersStraightThroughWhileNothingIsQueued) {
  gate.send(1, ack_envelope());
  gate.close(1);
  EXPECT_EQ(out.log, (std::vector<std::string>{"send 1 " + kAck, "close 1"}));
  EXPECT_EQ(gate.held(), 0u);
}

TEST_F(GatedOutboxTest, HoldsAnswersUntilTheirWritesCommitThenPassesThemOnInOrder) {
  t.pending = 1;
  gate.send(1, ack_envelope());  // after write 1
  gate.keep_open(2, 30);         // sends nothing to the peer: passes at once
  t.pending = 2;
  gate.send(2, ack_envelope());  // after write 2
  gate.close(1);
  EXPECT_EQ(out.log, (std::vector<std::string>{"keep 2 30"}));
  gate.release();  // nothing committed yet
  EXPECT_EQ(gate.held(), 3u);
  t.committed = 1;
  gate.release();
  EXPECT_EQ(out.log, (std::vector<std::string>{"keep 2 30", "send 1 " + kAck}));
  t.committed = 2;
  gate.release();
  EXPECT_EQ(out.log,
            (std::vector<std::string>{"keep 2 30", "send 1 " + kAck, "send 2 " + kAck, "close 1"}));
  EXPECT_EQ(gate.held(), 0u);
}

// Once one answer is held, later ones queue behind it even when their own writes (none) are
// committed: answers leave in the order they were given.
TEST_F(GatedOutboxTest, AnAnswerGivenWhileAnotherIsHeldWaitsBehindIt) {
  t.pending = 1;
  gate.send(1, ack_envelope());
  t.committed = 1;  // committed, but not yet released
  gate.close(2);
  EXPECT_TRUE(out.log.empty());
  gate.release();
  EXPECT_EQ(out.log, (std::vector<std::string>{"send 1 " + kAck, "close 2"}));
}

// Past kMaxHeldAnswers each answer waits for the writes; what is held leaves at the next
// release (not inside the answer's call, which may be a round's step), in order.
TEST_F(GatedOutboxTest, PastItsBoundEachAnswerWaitsForTheWritesAndTheReleasePassesAllOn) {
  t.pending = 1;
  for (size_t i = 0; i < kMaxHeldAnswers; ++i) gate.send(1, ack_envelope());
  EXPECT_EQ(gate.held(), kMaxHeldAnswers);
  EXPECT_TRUE(out.log.empty());
  EXPECT_EQ(t.waits, 0);
  gate.close(1);  // one past the bound
  EXPECT_EQ(t.waits, 1);
  EXPECT_TRUE(out.log.empty());  // nothing leaves inside the call
  gate.release();
  EXPECT_EQ(gate.held(), 0u);
  ASSERT_EQ(out.log.size(), kMaxHeldAnswers + 1);
  EXPECT_EQ(out.log.front(), "send 1 " + kAck);
  EXPECT_EQ(out.log.back(), "close 1");
}

// A write that failed is passed on to the round whose answer waited for it, and no answer it
// held ever leaves: not in the call, not at a later release (nothing committed).
TEST_F(GatedOutboxTest, AFailedWriteReachesTheAnswersCallerAndReleasesNothing) {
  t.pending = 1;
  for (size_t i = 0; i < kMaxHeldAnswers; ++i) gate.send(1, ack_envelope());
  t.fail = true;
  try {
    gate.send(1, ack_envelope());  // one past the bound: waits, and the wait fails
    FAIL() << "the failed write was not passed on";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "a queued write failed: disk full");
  }
  EXPECT_EQ(t.waits, 1);
  gate.release();
  EXPECT_TRUE(out.log.empty());
  EXPECT_EQ(gate.held(), kMaxHeldAnswers + 1);
}

// FakeStore's appends wait while the test holds `hold` (the writer is then inside a commit).
class HeldStore final : public Store {
 public:
  explicit HeldStore(FakeStore& inner) : inner_(inner) {}
  std::mutex hold;
  void put_task(uint32_t id, const std::string& d) override { inner_.put_task(id, d); }
  std::vector<StoredTask> tasks() override { return inner_.tasks(); }
  void set_task_state(uint32_t id, const std::string& s) override { inner_.set_task_state(id, s); }
  uint64_t append_events(const std::vector<NewEvent>& events) override {
    std::lock_guard<std::mutex> wait(hold);
    return inner_.append_events(events);
  }
  std::vector<StoredEvent> events(uint32_t id) override { return inner_.events(id); }
  void put_result(uint32_t id, const std::string& r) override { inner_.put_result(id, r); }
  std::optional<std::string> result(uint32_t id) override { return inner_.result(id); }
  std::string integrity_check() override { return inner_.integrity_check(); }

 private:
  FakeStore& inner_;
};

constexpr uint32_t kLength = 130;  // three Report chunks: 64, 64, 2
constexpr uint32_t kBits = 20;

TEST(WriteBehindRound, EveryAnswerLeavesAfterTheWritesItWasDecidedOnHaveCommitted) {
  FakeStore committed;  // what has committed; FakeOutbox notes its size at every send
  HeldStore backend(committed);
  FakeOutbox out(committed);
  WriteBehindStore store(backend, {});
  GatedOutbox gate(out, store);
  Coordinator c(store, gate, {make_spec(1, fedstat_v1_TrustModel_TRUSTED, kLength, kBits, 3, 5)},
                kT0);
  const auto deliver = [&] {  // what the io loop does when the writer has committed
    store.flush();
    gate.release();
  };
  out.before_read = deliver;
  std::vector<TrustedDevice> devices = admit_devices(c, out, 3, 100, 1, kLength, kBits);
  c.on_tick(kT0 + 30);  // admission ends with 3 ≥ min_clients

  // The writer held inside the commit of device 100's first chunk: no Ack leaves.
  out.before_read = nullptr;
  {
    std::lock_guard<std::mutex> writer_held(backend.hold);
    const size_t before = committed.event_count();
    c.on_frame(devices[0].conn, report(1, devices[0].words, 0, 64));
    EXPECT_TRUE(out.empty(devices[0].conn)) << "an Ack left before its Report committed";
    EXPECT_EQ(committed.event_count(), before);
  }
  deliver();
  ASSERT_FALSE(out.empty(devices[0].conn));
  const fedstat_v1_Envelope a = out.pop(devices[0].conn);
  ASSERT_EQ(a.which_body, fedstat_v1_Envelope_ack_tag);
  EXPECT_EQ(a.body.ack.offset, 64u);
  devices[0].sent = 64;

  out.before_read = deliver;
  std::vector<std::vector<uint64_t>> inputs;
  for (auto& d : devices) {
    inputs.push_back(d.words);
    send_reports(c, out, d, 1, kLength);
  }
  EXPECT_EQ(c.task_state(1), "completed");
  ASSERT_TRUE(store.result(1).has_value());
  EXPECT_EQ(*store.result(1), sum_json(sum_of(inputs, kBits), 3));
  expect_outcomes(out, devices, /*completed=*/true);

  // The oracle (TrustedRound.EveryAckFollowsItsStoredReport's): each Ack was sent when the chunk
  // it acknowledges had committed (`committed` is what the backend holds).
  const size_t acks = check_acks_follow_stored_reports(
      out, committed, [](ConnectionId connection) { return 100 + (connection - 1); });
  EXPECT_EQ(acks, 3u * 3u);
}

}  // namespace
}  // namespace testing
}  // namespace host
}  // namespace fedstat
