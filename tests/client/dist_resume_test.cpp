// DIST resume: real Clients against the server's real rounds (InProcessServer), a KL_ANSWERS
// task under secure aggregation with four devices (threshold 3). Either one device's link is cut
// after each of its messages in turn (delivered or not, the server not told until the device
// resumes), or the server dies once its store holds k events, for every k of a whole round, and
// restarts over the same store. Every time the published sum must be the sum of all four
// devices' contributions (computed directly from the SDK routines): nobody dropped, nothing
// counted twice, and each device charged once. Paper: Bonawitz et al. 2017 §4.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <thread>
#include <utility>

#include "host_server/credential/fleet_credentials.h"
#include "host_server/rounds/messages.h"
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

bool lost(const Status& s) {
  return s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kDeadlineExceeded;
}

struct DeviceRun {
  Result<client::SessionOutcome> last = failed_precondition("not run");
  size_t sessions = 0;
  bool resumed_after_end = false;  // resumed, and found the round over (it had sent everything)
};

class DistResumeTest : public StorageTest {
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
      for (size_t i = 0; i < x.size(); ++i) expected[i] += x[i];  // bits = 64: mod 2^64
    }
  }

  host::TaskSpec spec() const {
    host::TaskSpec s;
    s.task = task;
    s.data = points;
    s.task.deadline_unix_seconds = 0;
    s.admission_seconds = 30;  // below the phase time-out (60): a tick can close admission only
    s.estimate = host::testing::sum_json;
    s.definition_json = "{\"task\":" + std::to_string(task.task_id) + "}";
    if (signed_session) s.secagg_ca_public_key = ca.public_key;
    return s;
  }

  // Every device runs sessions until one ends other than by a lost link (at most 12). Device 0's
  // first link is cut after `cut_after` sends (0: never); with `reboot` its process dies there
  // (the server hears the close) and a new Client starts over the same storage.
  std::vector<DeviceRun> run(InProcessServer& server, size_t cut_after = 0, bool delivered = true,
                             bool reboot = false) {
    std::vector<DeviceRun> runs(kDevices);
    std::vector<std::unique_ptr<Device>> devices;
    for (size_t c = 0; c < kDevices; ++c) {  // a fresh ledger and no round marker per run
      platform::remove_blob(("ledger-" + std::to_string(c + 1)).c_str()).ignore();
      platform::remove_blob(("round-" + std::to_string(c + 1)).c_str()).ignore();
      devices.push_back(
          std::make_unique<Device>(c + 1, 1 << 20, *apps[c], 10, nullptr, 1, credential_of(c)));
      EXPECT_TRUE(devices.back()->init_status.ok());
    }
    std::vector<std::thread> threads;
    for (size_t c = 0; c < kDevices; ++c) {
      threads.emplace_back([&, c] {
        DeviceRun& r = runs[c];
        for (; r.sessions < 12; ++r.sessions) {
          auto link = server.connect(c + 1);
          if (c == 0 && r.sessions == 0) {
            link->cut_after_sends = cut_after;
            link->delivered = delivered;
          }
          const uint32_t resuming = devices[c]->client.pending_report_task();
          r.last = devices[c]->client.run_session(*link);
          if (c == 0 && r.sessions == 0 && reboot) {
            link->process_died();
            devices[c].reset();  // what the Client held in memory is gone; its blobs are not
            // The same device after a reboot: its credential too (a signed round needs it).
            devices[c] = std::make_unique<Device>(c + 1, 1 << 20, *apps[c], 10, nullptr, 1,
                                                  credential_of(c));
            EXPECT_TRUE(devices[c]->init_status.ok());
            continue;
          }
          if (r.last.ok() && r.last.value().result == SessionResult::kNoTask && resuming != 0) {
            r.resumed_after_end = true;
          }
          // Check in again after a lost link, or when no task was offered yet (the server was
          // restarting, or this device's first hello was lost with it).
          const bool again = (!r.last.ok() && lost(r.last.status())) ||
                             (r.last.ok() && r.last.value().result == SessionResult::kNoTask &&
                              resuming == 0 && devices[c]->spent() == 0);
          if (!again) break;
        }
        // A rebooted device 0 that declined leaves the round short of max_clients: the
        // admission window, not its reply, closes admission — once the others have replied.
        if (c == 0 && reboot) {
          EXPECT_TRUE(server.tick_once_replied(host::testing::kT0 + 30, task.task_id, {2, 3, 4}));
        }
      });
    }
    for (auto& t : threads) t.join();
    // What one charge of this task costs (at least ε; more, as here, when four devices' Skellam
    // shares give less): each device pays it once, however often it resumed.
    const double once = client::device_spend(task).value().epsilon;
    EXPECT_GE(once, task.epsilon);
    for (size_t c = 0; c < kDevices; ++c) {
      EXPECT_DOUBLE_EQ(devices[c]->spent(), once) << "device " << c + 1 << " charged once";
    }
    return runs;
  }

  void expect_everyone_summed(InProcessServer& server, const std::vector<DeviceRun>& runs,
                              const std::string& label) {
    ASSERT_EQ(server.task_state(task.task_id), "completed") << label;
    EXPECT_EQ(server.store().result(task.task_id).value_or(""),
              host::testing::sum_json(expected, kDevices))
        << label;
    for (size_t c = 0; c < kDevices; ++c) {
      const DeviceRun& r = runs[c];
      ASSERT_TRUE(r.last.ok()) << label << ", device " << c + 1 << ": "
                               << r.last.status().message();
      // Completed — or, having sent all it had to, it came back after the round had ended.
      EXPECT_TRUE(r.last.value().result == SessionResult::kCompleted || r.resumed_after_end)
          << label << ", device " << c + 1;
    }
  }

  // Signed sessions (issue 42): the server holds the CA's public key; each device c gets its
  // credential (credentials[c]; none for the ids in `uncertified`).
  void sign() {
    uint64_t seed = 7;
    ca = host::make_ca_key(&seed);
    for (size_t c = 0; c < kDevices; ++c) {
      credentials.push_back(host::issue_device_credential(ca, static_cast<uint32_t>(c + 1), &seed));
    }
    signed_session = true;
  }
  const credential::DeviceCredential* credential_of(size_t c) const {
    return c < credentials.size() && uncertified.count(c) == 0 ? &credentials[c] : nullptr;
  }

  bool signed_session = false;
  host::CaKey ca;
  std::vector<credential::DeviceCredential> credentials;
  std::set<size_t> uncertified;
  fedstat_v1_Task task;
  std::vector<uint64_t> points, expected;
  std::vector<std::unique_ptr<OwnedHistogram>> histograms;
  std::vector<std::unique_ptr<HistogramData>> apps;
};

TEST_F(DistResumeTest, ALinkCutAfterAnyMessageIsResumed) {
  // Device 0 sends: hello, reply, keys, 3 shares, 2 masked chunks (81 words), 4 reveals.
  constexpr size_t kSends = 2 + 1 + 3 + 2 + 4;
  for (size_t cut = 1; cut <= kSends; ++cut) {
    for (bool delivered : {true, false}) {
      const std::string label =
          "cut after send " + std::to_string(cut) + (delivered ? " (delivered)" : " (lost)");
      InProcessServer server({spec()}, host::testing::kT0);
      const std::vector<DeviceRun> runs = run(server, cut, delivered);
      expect_everyone_summed(server, runs, label);
      if (cut > 2) {
        EXPECT_GE(runs[0].sessions, 1u) << label;  // it checked in again
      }
    }
  }
}

TEST_F(DistResumeTest, ADeviceKilledAtAnyStepResumesOrDropsOutAndNeverRevealsBothShares) {
  // Issue 13 item 5. Device 0's process dies after each of its sends in turn (the message sent or
  // lost with it) and it reboots over the same storage: a Client that finds its round marker
  // declines that round (client.h); the server saw its socket close and goes on without it.
  // Whatever the step, the round completes; device 0's input is in the sum exactly when its whole
  // masked input had reached the server (sends 7 and 8) — or when it died before accepting (send
  // 1) and took part after its reboot — and no device ever sent both a self-mask share and a key
  // share about the same peer (Bonawitz et al. 2017 §4: that would unmask the peer's input).
  std::vector<uint64_t> without_0(expected.size(), 0);
  for (size_t c = 1; c < kDevices; ++c) {
    CountingSource same(test_seed(99), c + 1);
    const std::vector<uint64_t> x = expected_kl(task, points, histograms[c]->histogram, same);
    for (size_t i = 0; i < x.size(); ++i) without_0[i] += x[i];
  }
  constexpr size_t kSends = 2 + 1 + 3 + 2 + 4;
  for (size_t step = 1; step <= kSends; ++step) {
    for (bool delivered : {true, false}) {
      const std::string label =
          "device 0 killed at send " + std::to_string(step) + (delivered ? " (sent)" : " (lost)");
      InProcessServer server({spec()}, host::testing::kT0);
      const std::vector<DeviceRun> runs = run(server, step, delivered, /*reboot=*/true);
      ASSERT_EQ(server.task_state(task.task_id), "completed") << label;
      const bool summed = step == 1 || step > 8 || (step == 8 && delivered);
      EXPECT_EQ(server.store().result(task.task_id).value_or(""),
                summed ? host::testing::sum_json(expected, kDevices)
                       : host::testing::sum_json(without_0, kDevices - 1))
          << label;
      for (size_t c = 0; c < kDevices; ++c) {
        ASSERT_TRUE(runs[c].last.ok())
            << label << ", device " << c + 1 << ": " << runs[c].last.status().message();
      }
      // About each device, the kinds of share sent by anyone, and those the server stored: both
      // kinds about one device would unmask its input.
      std::map<uint32_t, std::set<bool>> kinds, stored;
      for (const auto& r : server.reveals()) kinds[r.about_id].insert(r.self_mask);
      for (const auto& e : server.store().all_events()) {
        if (e.kind != host::EventKind::kDeviceMessage) continue;
        const fedstat_v1_Envelope m = host::decode_bytes(e.payload);
        if (m.which_body != fedstat_v1_Envelope_secagg_reveal_tag) continue;
        stored[m.body.secagg_reveal.about_id].insert(m.body.secagg_reveal.self_mask);
      }
      for (const auto& [about, sent] : kinds) {
        EXPECT_EQ(sent.size(), 1u) << label << ": both kinds of share sent about device " << about;
      }
      for (const auto& [about, held] : stored) {
        EXPECT_EQ(held.size(), 1u)
            << label << ": both kinds of share stored about device " << about;
      }
      // Device 0's own secrets: self-mask shares when its input was summed; key shares when it
      // had shared its secrets (all three shares, sends 4–6) but its input did not arrive; none
      // when it left before sharing.
      const bool shared = step > 6 || (step == 6 && delivered);
      const std::set<bool> expected_kinds = summed   ? std::set<bool>{true}
                                            : shared ? std::set<bool>{false}
                                                     : std::set<bool>{};
      EXPECT_EQ(stored[1], expected_kinds) << label;
      EXPECT_FALSE(kinds.empty()) << label;
    }
  }
}

TEST_F(DistResumeTest, AServerKilledAtAnyEventAndRestartedCompletesWithEveryone) {
  size_t events = 0;
  {
    InProcessServer uninterrupted({spec()}, host::testing::kT0);
    expect_everyone_summed(uninterrupted, run(uninterrupted), "uninterrupted");
    events = uninterrupted.store().event_count();
  }
  ASSERT_GT(events, 40u);  // 4 hellos + 4 replies + 4 keys + 12 shares + 8 chunks + 16 reveals
  for (size_t kill_at = 1; kill_at < events; ++kill_at) {
    InProcessServer server({spec()}, host::testing::kT0, kill_at);
    const std::vector<DeviceRun> runs = run(server);
    ASSERT_EQ(server.restarts(), 1u) << "kill at " << kill_at;
    expect_everyone_summed(server, runs, "killed at event " + std::to_string(kill_at));
  }
}

// ---- Signed sessions (issue 42): ClientConfig::credential and a server with the CA's key ----

// Device 0's link is cut after its consistency signature (send 9: hello, reply, keys, 3 shares,
// 2 chunks, then the signature) and after its first reveal, delivered or lost: it resumes in
// the consistency round (SecAggResume 3, held 1 or 0) or in the reveals (4), and the round
// completes with everyone. Uninterrupted first: a signed round through real Clients.
TEST_F(DistResumeTest, SignedRoundCompletesAndResumesAroundTheConsistencyRound) {
  sign();
  {
    InProcessServer server({spec()}, host::testing::kT0);
    expect_everyone_summed(server, run(server), "signed, uninterrupted");
    size_t signatures = 0;
    for (const auto& e : server.store().all_events()) {
      if (e.kind == host::EventKind::kDeviceMessage &&
          host::decode_bytes(e.payload).which_body == fedstat_v1_Envelope_secagg_consistency_tag) {
        ++signatures;
      }
    }
    EXPECT_EQ(signatures, kDevices);
  }
  for (size_t cut : {size_t{9}, size_t{10}}) {
    for (bool delivered : {true, false}) {
      const std::string label = "signed, cut after send " + std::to_string(cut) +
                                (delivered ? " (delivered)" : " (lost)");
      InProcessServer server({spec()}, host::testing::kT0);
      const std::vector<DeviceRun> runs = run(server, cut, delivered);
      expect_everyone_summed(server, runs, label);
      EXPECT_GE(runs[0].sessions, 1u) << label;  // it checked in again
    }
  }
}

// Rule D8 through real Clients (signed sparse, protocol 6): degree 2 (rosters of 3 of the 4),
// t = 2. Device 0's link is cut after its last masked chunk (send 7: hello, reply, keys, 2 shares,
// 2 chunks) or after its U2 view (send 8), delivered or lost: it resumes in round 2
// told held = the words (it sends its U2 view) or the words + 1 (it sends nothing more of round
// 2), and the round completes with everyone, each U2 view stored once. Mutant: a Client that
// takes held = the words for its U2 view held never sends it and is left out of U3 (the round
// aborts). (A resume in round 2 with the view held needs the stage still open: the rounds test
// SignedDistRound.ARestartInTheMaskingStageKeepsEachU2ViewOnce.)
TEST_F(DistResumeTest, SignedSparseRoundResumesAroundTheU2View) {
  sign();
  task.secagg_degree = 2;
  task.threshold = task.min_clients = 2;  // condition 3 of the bound at k = 2
  ASSERT_TRUE(client::device_spend(task).ok()) << client::device_spend(task).status().message();
  std::fill(expected.begin(), expected.end(), 0);  // the noise shares follow the threshold
  for (size_t c = 0; c < kDevices; ++c) {
    CountingSource same(test_seed(99), c + 1);
    const std::vector<uint64_t> x = expected_kl(task, points, histograms[c]->histogram, same);
    for (size_t i = 0; i < x.size(); ++i) expected[i] += x[i];
  }
  auto stored_u2_views = [](InProcessServer& server) {
    size_t views = 0;
    for (const auto& e : server.store().all_events()) {
      if (e.kind != host::EventKind::kDeviceMessage) continue;
      const fedstat_v1_Envelope env = host::decode_bytes(e.payload);
      views += env.which_body == fedstat_v1_Envelope_secagg_consistency_tag &&
                       env.body.secagg_consistency.round == 2
                   ? 1
                   : 0;
    }
    return views;
  };
  {
    InProcessServer server({spec()}, host::testing::kT0);
    expect_everyone_summed(server, run(server), "signed sparse, uninterrupted");
    EXPECT_EQ(stored_u2_views(server), kDevices);
  }
  for (size_t cut : {size_t{7}, size_t{8}}) {
    for (bool delivered : {true, false}) {
      const std::string label = "signed sparse, cut after send " + std::to_string(cut) +
                                (delivered ? " (delivered)" : " (lost)");
      InProcessServer server({spec()}, host::testing::kT0);
      const std::vector<DeviceRun> runs = run(server, cut, delivered);
      expect_everyone_summed(server, runs, label);
      EXPECT_GE(runs[0].sessions, 1u) << label;
      EXPECT_EQ(stored_u2_views(server), kDevices) << label;
    }
  }
}

// The server dies once its store holds the first consistency signature, all four, the stage's
// close, and the first reveal (kill_at counts events), and restarts over the store: the replay
// verifies the stored signatures again, the devices resume (SecAggResume 3 or 4), and the sum
// holds everyone.
TEST_F(DistResumeTest, SignedRoundServerKilledInTheConsistencyStageCompletes) {
  sign();
  size_t first = 0, last = 0;
  {
    InProcessServer uninterrupted({spec()}, host::testing::kT0);
    expect_everyone_summed(uninterrupted, run(uninterrupted), "signed, uninterrupted");
    const auto& events = uninterrupted.store().all_events();
    for (size_t i = 0; i < events.size() && last == 0; ++i) {
      if (events[i].kind != host::EventKind::kDeviceMessage) continue;
      const pb_size_t body = host::decode_bytes(events[i].payload).which_body;
      if (body == fedstat_v1_Envelope_secagg_consistency_tag && first == 0) first = i;
      if (body == fedstat_v1_Envelope_secagg_reveal_tag) last = i;
    }
    ASSERT_GT(events.size(), first + kDevices);
    EXPECT_EQ(events[first + kDevices].kind, host::EventKind::kTransition)
        << "the four signatures, then the stage's close";
  }
  ASSERT_GT(first, 0u);
  ASSERT_GT(last, first + kDevices);  // the signatures, the stage's close, then reveals
  for (size_t kill_at : {first + 1, first + kDevices, first + kDevices + 1, last + 1}) {
    InProcessServer server({spec()}, host::testing::kT0, kill_at);
    const std::vector<DeviceRun> runs = run(server);
    ASSERT_EQ(server.restarts(), 1u) << "kill at " << kill_at;
    expect_everyone_summed(server, runs, "signed, killed at event " + std::to_string(kill_at));
  }
}

// A device without a credential refuses a signed session (kFailedPrecondition, after accepting:
// the Task does not say the session is signed) and the others complete without it; a device with
// a credential refuses an unsigned session (kPermissionDenied) the same way.
TEST_F(DistResumeTest, ACredentialAndTheSessionMustAgreeOrTheDeviceLeavesTheRound) {
  sign();
  std::vector<uint64_t> without_0(expected.size(), 0);
  for (size_t c = 1; c < kDevices; ++c) {
    CountingSource same(test_seed(99), c + 1);
    const std::vector<uint64_t> x = expected_kl(task, points, histograms[c]->histogram, same);
    for (size_t i = 0; i < x.size(); ++i) without_0[i] += x[i];
  }
  for (bool server_signs : {true, false}) {
    signed_session = server_signs;
    uncertified.clear();
    if (server_signs) {
      uncertified.insert(0);  // device 1 holds no credential
    } else {
      for (size_t c = 1; c < kDevices; ++c) uncertified.insert(c);  // only device 1 holds one
    }
    const std::string label = server_signs ? "signed session" : "unsigned session";
    InProcessServer server({spec()}, host::testing::kT0);
    const std::vector<DeviceRun> runs = run(server);
    ASSERT_EQ(server.task_state(task.task_id), "completed") << label;
    EXPECT_EQ(server.store().result(task.task_id).value_or(""),
              host::testing::sum_json(without_0, kDevices - 1))
        << label;
    ASSERT_FALSE(runs[0].last.ok()) << label;
    EXPECT_EQ(runs[0].last.status().code(),
              server_signs ? StatusCode::kFailedPrecondition : StatusCode::kPermissionDenied)
        << label << ": " << runs[0].last.status().message();
    EXPECT_EQ(runs[0].sessions, 0u) << label << ": it does not check in again";
    for (size_t c = 1; c < kDevices; ++c) {
      ASSERT_TRUE(runs[c].last.ok()) << label << ", device " << c + 1;
      EXPECT_EQ(runs[c].last.value().result, SessionResult::kCompleted) << label;
    }
  }
}

}  // namespace
}  // namespace client_test
}  // namespace fedstat
