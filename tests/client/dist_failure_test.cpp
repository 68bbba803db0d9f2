// DIST rounds when the device itself fails, not its link (from the attack review of the resume):
// a storage failure says kUnavailable like a lost channel, but must not leave a round to resume.
// When the "unmasking" round marker cannot be written, the device reveals nothing — neither in
// that session nor in a later one.
// (Written by the reviewer against cff8d50, where device 1 sent 4 reveals with no record.)
// Likewise an entropy failure part way through masking: the input is masked once or never, so
// the device sends no masked input at all (a second try would have masked it twice).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <thread>

#include "platform/platform.h"
#include "sdk/client/contribution.h"
#include "tests/client/client_test_support.h"
#include "tests/client/in_process_server.h"
#include "tests/rounds/round_messages.h"

namespace fedstat {
namespace client_test {
namespace {

using client::SessionResult;

constexpr size_t kDevices = 4;
// Sessions per device. Device 1 leaves its round silently (as a lost link looks to the server),
// so the in-process server — its clock fixed, no phase time-out — waits for it and the others
// time out: what is asserted is only what device 1 sent. (Before the fixes device 1 resumed and
// sent reveals, or a second masked input, within these sessions.)
constexpr size_t kSessions = 3;

// The Device of client_test_support.h, with a RandomSource that can be made to fail once.
class FlakySource : public RandomSource {
 public:
  FlakySource(const Seed256& seed, uint64_t stream) : inner_(seed, stream) {}
  Status fill(MutableByteSpan out) override {
    if (fail_next.exchange(false)) return unavailable("test: the entropy source failed once");
    return inner_.fill(out);
  }
  std::atomic<bool> fail_next{false};

 private:
  SeededStream inner_;
};

struct FlakyDevice {
  std::vector<privacy::PrivacySpend> entries;
  std::vector<uint8_t> scratch;
  privacy::BudgetLedger ledger;
  std::vector<uint64_t> memory;
  std::unique_ptr<FlakySource> random;
  client::Client client;
  std::string ledger_name, round_name;
  Status init_status;

  FlakyDevice(uint64_t id, size_t memory_bytes, client::ClientData& data)
      : entries(16),
        scratch(privacy::BudgetLedger::blob_bytes(16)),
        memory((memory_bytes + 7) / 8) {
    ledger_name = "ledger-" + std::to_string(id);
    round_name = "round-" + std::to_string(id);
    privacy::LedgerConfig lc;
    lc.epsilon_budget = 10;
    lc.delta_budget = 1e-3;
    lc.blob_name = ledger_name.c_str();
    EXPECT_TRUE(ledger
                    .init(lc, Span<privacy::PrivacySpend>(entries.data(), entries.size()),
                          MutableByteSpan(scratch.data(), scratch.size()))
                    .ok());
    EXPECT_TRUE(ledger.load().ok());
    random = std::make_unique<FlakySource>(test_seed(99), id);
    client::ClientConfig config;
    config.device_id = id;
    config.receive_timeout_ms = 5000;
    config.wall_clock_seconds = fixed_clock;
    config.round_blob_name = round_name.c_str();
    init_status = client.init(
        config, MutableByteSpan(reinterpret_cast<uint8_t*>(memory.data()), memory_bytes), data,
        ledger, *random);
  }
  double spent() const { return ledger.spent(kNow).value().epsilon; }
};

// Wraps a Link; hooks see every frame. With silent_close, close() does not tell the server (a
// link that died silently, as the cuts of in_process_server.h): a resume's bind replaces it.
class Tap : public client::FrameChannel {
 public:
  explicit Tap(std::unique_ptr<InProcessServer::Link> link) : link_(std::move(link)) {}
  std::function<void(const wire::Envelope&)> on_receive, on_send;
  Status send(const wire::Envelope& m) override {
    if (on_send) on_send(m);
    return link_->send(m);
  }
  Status receive(wire::Envelope& out, uint32_t timeout_ms) override {
    const Status s = link_->receive(out, timeout_ms);
    if (s.ok() && on_receive) on_receive(out);
    return s;
  }
  void close() override {
    if (!silent_close) link_->close();
  }
  bool silent_close = false;

 private:
  std::unique_ptr<InProcessServer::Link> link_;
};

bool lost(const Status& s) {
  return s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kDeadlineExceeded;
}

class DistDeviceFailureTest : public StorageTest {
 protected:
  void SetUp() override {
    StorageTest::SetUp();
    task = kl_task(fedstat_v1_TrustModel_DIST, points);
    make_dist(task, kDevices, 3);
    for (size_t c = 0; c < kDevices; ++c) {
      histograms.push_back(std::make_unique<OwnedHistogram>(static_cast<uint32_t>(c + 1)));
      apps.push_back(std::make_unique<HistogramData>(&histograms.back()->histogram));
    }
    for (size_t c = 0; c < kDevices; ++c) {
      CountingSource same(test_seed(99), c + 1);
      const std::vector<uint64_t> x = expected_kl(task, points, histograms[c]->histogram, same);
      expected.resize(x.size(), 0);
      for (size_t i = 0; i < x.size(); ++i) expected[i] += x[i];
    }
  }

  host::TaskSpec spec() const {
    host::TaskSpec s;
    s.task = task;
    s.data = points;
    s.task.deadline_unix_seconds = 0;
    s.estimate = host::testing::sum_json;
    s.definition_json = "{\"task\":" + std::to_string(task.task_id) + "}";
    return s;
  }

  // Every device runs sessions (at most max_sessions) until one ends other than by a lost link;
  // device 1's sessions go through `tap_first` (which may arm failures), `between` runs after
  // its first.
  std::vector<Result<client::SessionOutcome>> run(InProcessServer& server,
                                                  std::function<void(Tap&, FlakyDevice&)> tap_first,
                                                  std::function<void()> between,
                                                  size_t max_sessions) {
    std::vector<Result<client::SessionOutcome>> last(kDevices, failed_precondition("not run"));
    std::vector<std::unique_ptr<FlakyDevice>> devices;
    for (size_t c = 0; c < kDevices; ++c) {
      devices.push_back(std::make_unique<FlakyDevice>(c + 1, 1 << 20, *apps[c]));
      EXPECT_TRUE(devices.back()->init_status.ok());
    }
    std::vector<std::thread> threads;
    for (size_t c = 0; c < kDevices; ++c) {
      threads.emplace_back([&, c] {
        for (size_t session = 0; session < max_sessions; ++session) {
          Tap tap(server.connect(c + 1));
          if (c == 0) tap_first(tap, *devices[c]);
          last[c] = devices[c]->client.run_session(tap);
          if (c == 0 && session == 0) between();
          const bool again = !last[c].ok() && lost(last[c].status());
          if (!again) break;
        }
      });
    }
    for (auto& t : threads) t.join();
    return last;
  }

  fedstat_v1_Task task;
  std::vector<uint64_t> points, expected;
  std::vector<std::unique_ptr<OwnedHistogram>> histograms;
  std::vector<std::unique_ptr<HistogramData>> apps;
};

// A storage failure saving the "unmasking" marker (client.h: "if that write fails, nothing is
// revealed") ends the session with kUnavailable. Before the fix the round stayed pending, the
// resume found marker_.stage already kRoundUnmasking in memory, skipped the save and revealed.
TEST_F(DistDeviceFailureTest, NoRevealWhileTheUnmaskingMarkerIsNotStored) {
  InProcessServer server({spec()}, host::testing::kT0);
  const std::string blocker = directory_ + "/round-1.tmp";  // save_blob's temp file: EISDIR
  bool blocked = false;
  int reveals_without_record = 0, reveals = 0;
  const auto last = run(
      server,
      [&](Tap& tap, FlakyDevice&) {
        // The failing session ends as a lost link would look to the server (silently), so the
        // server would take a resume; any later session closes normally.
        tap.silent_close = !blocked;
        tap.on_receive = [&](const wire::Envelope& e) {
          if (!blocked && e.which_body == fedstat_v1_Envelope_secagg_roster_tag &&
              e.body.secagg_roster.round == 3) {
            blocked = mkdir(blocker.c_str(), 0700) == 0;  // the marker write will fail
          }
        };
        tap.on_send = [&](const wire::Envelope& e) {
          if (e.which_body != fedstat_v1_Envelope_secagg_reveal_tag) return;
          ++reveals;
          uint8_t marker[4 + 4 + 1 + 8 + 256];
          Result<size_t> n =
              platform::load_blob("round-1", MutableByteSpan(marker, sizeof(marker)));
          if (!n.ok() || marker[8] != client::kRoundUnmasking) ++reveals_without_record;
        };
      },
      [&] { rmdir(blocker.c_str()); }, kSessions);
  ASSERT_TRUE(blocked);
  EXPECT_EQ(reveals_without_record, 0)
      << "device 1 revealed shares while its stored marker did not record U3";
  EXPECT_EQ(reveals, 0) << "device 1's round was dropped with its failed write";
}

TEST_F(DistDeviceFailureTest, AnEntropyFailureWhileMaskingSendsNoMaskedInput) {
  InProcessServer server({spec()}, host::testing::kT0);
  bool armed = false;
  int masked_chunks = 0;
  const auto last = run(
      server,
      [&](Tap& tap, FlakyDevice& device) {
        tap.silent_close = !armed;  // as above: the failing session ends silently
        tap.on_receive = [&](const wire::Envelope& e) {
          // The next draw after U2 is the blinding of mask()'s first pairwise X25519 agreement.
          if (!armed && e.which_body == fedstat_v1_Envelope_secagg_roster_tag &&
              e.body.secagg_roster.round == 2) {
            device.random->fail_next = true;
            armed = true;
          }
        };
        tap.on_send = [&](const wire::Envelope& e) {
          if (e.which_body == fedstat_v1_Envelope_secagg_masked_chunk_tag) ++masked_chunks;
        };
      },
      [] {}, kSessions);
  ASSERT_TRUE(armed);
  EXPECT_EQ(masked_chunks, 0) << "device 1 sent a masked input after masking failed part way";
}

}  // namespace
}  // namespace client_test
}  // namespace fedstat
