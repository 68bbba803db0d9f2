// DIST sessions: five Clients (threads, one in-memory channel each) against an in-test server
// loop that drives host::SecAggServer in docs/protocol.md's message order. The unmasked sum must
// equal the sum of the contributions computed directly from the SDK routines — of every client,
// or of the survivors when one drops before masking.
#include <gtest/gtest.h>

#include <thread>

#include "host_server/secagg/secagg_server.h"
#include "sdk/tasks/kl_answer_task.h"
#include "tests/client/client_test_support.h"
#include "tests/client/in_memory_channel.h"

namespace fedstat {
namespace client_test {
namespace {

using client::SessionResult;

// A device whose connection dies when it starts sending messages of one kind (its masked input,
// its reveals): as if it lost power there.
class DropAt : public InMemoryChannel {
 public:
  DropAt(std::shared_ptr<Pipe> in, std::shared_ptr<Pipe> out, pb_size_t tag)
      : InMemoryChannel(std::move(in), std::move(out)), tag_(tag) {}
  Status send(const wire::Envelope& message) override {
    if (message.which_body == tag_) {
      close();
      return unavailable("dropped");
    }
    return InMemoryChannel::send(message);
  }

 private:
  pb_size_t tag_;
};

struct DistResult {
  Result<std::vector<uint64_t>> sum = failed_precondition("not finished");
  std::vector<uint32_t> u3;
  size_t chunks = 0, reveals = 0;  // messages of rounds 2 and 3 the server received
};

enum class ServerMode {
  kNormal,
  kNoAdmission,     // RoundOutcome{false} right after the TaskReplies (below min_clients)
  kAbortAfterKeys,  // SecAggAbort after round 0
  kEarlyU3Roster,   // a round-3 roster where U2 belongs: the devices must stop
};

size_t members(const fedstat_v1_SecAggRoster& roster) {
  size_t n = 0;
  for (pb_size_t i = 0; i < roster.members.size; ++i)
    n += __builtin_popcount(roster.members.bytes[i]);
  return n;
}

DistResult serve_dist(const std::vector<InMemoryChannel*>& conns, const fedstat_v1_Task& task,
                      const std::vector<uint64_t>& data, ServerMode mode = ServerMode::kNormal) {
  DistResult result;
  host::SecAggServerConfig config;
  config.session = task.secagg_session;
  config.threshold = task.threshold;
  config.vector_length = task.vector_length;
  config.bits = task.bits;
  config.max_clients = task.max_clients;
  host::SecAggServer server(config);
  const size_t n = conns.size();
  std::vector<uint32_t> ids(n);
  std::vector<bool> alive(n, true);
  wire::Envelope in;
  auto receive = [&](size_t i, pb_size_t tag) {
    if (!alive[i]) return false;
    if (!conns[i]->receive(in, 20000).ok() || in.which_body != tag) alive[i] = false;
    return static_cast<bool>(alive[i]);
  };
  auto send = [&](size_t i, const wire::Envelope& e) {
    if (alive[i] && !conns[i]->send(e).ok()) alive[i] = false;
  };
  // Admission.
  for (size_t i = 0; i < n; ++i) {
    if (!receive(i, fedstat_v1_Envelope_client_hello_tag)) continue;
    ids[i] = static_cast<uint32_t>(in.body.client_hello.client_id);
    send_task(*conns[i], task, data);
  }
  for (size_t i = 0; i < n; ++i) {
    if (receive(i, fedstat_v1_Envelope_task_reply_tag)) {
      EXPECT_TRUE(in.body.task_reply.accept);
    }
  }
  auto end_round = [&](pb_size_t tag) {
    for (size_t i = 0; i < n; ++i) {
      wire::Envelope e = envelope_of(tag);
      e.body.round_outcome.task_id = task.task_id;  // SecAggAbort: session left 0, unused
      if (tag == fedstat_v1_Envelope_secagg_abort_tag) {
        e.body.secagg_abort = fedstat_v1_SecAggAbort_init_zero;
        e.body.secagg_abort.session = task.secagg_session;
      }
      send(i, e);
    }
  };
  if (mode == ServerMode::kNoAdmission) {
    end_round(fedstat_v1_Envelope_round_outcome_tag);
    return result;
  }
  // Round 0.
  wire::Envelope start = envelope_of(fedstat_v1_Envelope_secagg_start_tag);
  start.body.secagg_start = server.start();
  for (size_t i = 0; i < n; ++i) send(i, start);
  for (size_t i = 0; i < n; ++i) {
    if (receive(i, fedstat_v1_Envelope_secagg_keys_tag)) {
      EXPECT_TRUE(server.on_keys(in.body.secagg_keys).ok());
    }
  }
  if (mode == ServerMode::kAbortAfterKeys) {
    end_round(fedstat_v1_Envelope_secagg_abort_tag);
    return result;
  }
  auto roster = server.close_advertising();
  if (!roster.ok()) return result;
  for (size_t i = 0; i < n; ++i) {
    for (const auto& entry : roster.value()) {
      wire::Envelope e = envelope_of(fedstat_v1_Envelope_secagg_peer_keys_tag);
      e.body.secagg_peer_keys = entry;
      send(i, e);
    }
  }
  // Round 1.
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k + 1 < roster.value().size(); ++k) {
      if (!receive(i, fedstat_v1_Envelope_secagg_share_tag)) break;
      EXPECT_TRUE(server.on_share(ids[i], in.body.secagg_share).ok());
    }
  }
  auto u2 = server.close_sharing();
  if (!u2.ok()) return result;
  for (size_t i = 0; i < n; ++i) {
    for (const auto& share : server.shares_for(ids[i])) {
      wire::Envelope e = envelope_of(fedstat_v1_Envelope_secagg_share_tag);
      e.body.secagg_share = share;
      send(i, e);
    }
    wire::Envelope e = envelope_of(fedstat_v1_Envelope_secagg_roster_tag);
    e.body.secagg_roster = u2.value();
    if (mode == ServerMode::kEarlyU3Roster) e.body.secagg_roster.round = 3;
    send(i, e);
  }
  // Round 2.
  const size_t chunks = (task.vector_length + 63) / 64;
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < chunks; ++k) {
      if (!receive(i, fedstat_v1_Envelope_secagg_masked_chunk_tag)) break;
      EXPECT_TRUE(server.on_chunk(ids[i], in.body.secagg_masked_chunk).ok());
      ++result.chunks;
    }
  }
  auto u3 = server.close_masking();
  if (!u3.ok()) return result;
  for (size_t i = 0; i < n; ++i) {
    wire::Envelope e = envelope_of(fedstat_v1_Envelope_secagg_roster_tag);
    e.body.secagg_roster = u3.value();
    send(i, e);
  }
  // Round 3: one reveal per member of U2.
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < members(u2.value()); ++k) {
      if (!receive(i, fedstat_v1_Envelope_secagg_reveal_tag)) break;
      EXPECT_TRUE(server.on_reveal(ids[i], in.body.secagg_reveal).ok());
      ++result.reveals;
    }
  }
  SeededStream blinding(test_seed(1), 777);
  result.sum = server.finish(blinding);
  result.u3 = server.u3();
  for (size_t i = 0; i < n; ++i) {
    wire::Envelope e = envelope_of(fedstat_v1_Envelope_round_outcome_tag);
    e.body.round_outcome.task_id = task.task_id;
    e.body.round_outcome.completed = result.sum.ok();
    send(i, e);
  }
  return result;
}

enum class Kind { kKl, kDataShift, kModel, kHeterogeneity };

// Five devices with their data, channels and Clients, for one DIST task of `kind`.
struct Fleet {
  static constexpr size_t kClients = 5;
  Kind kind;
  fedstat_v1_Task task = fedstat_v1_Task_init_zero;
  std::vector<uint64_t> data;  // TaskData
  std::vector<double> model = {0.1, -0.2, 0.05, 0.0};
  std::vector<std::unique_ptr<OwnedHistogram>> histograms;
  std::vector<std::unique_ptr<HistogramData>> histogram_apps;
  std::vector<std::unique_ptr<ModelData>> model_apps;
  std::vector<std::unique_ptr<VectorData>> vector_apps;
  std::vector<double> means = {0.2, 0.4, 0.6, 0.5, 0.25, 0.45, 0.55, 0.5};
  std::vector<client::ClientData*> apps;
  std::vector<std::unique_ptr<Device>> devices;
  std::vector<std::unique_ptr<InMemoryChannel>> device_ends, server_ends;
  std::vector<Result<client::SessionOutcome>> outcomes;

  Fleet(Kind k, int dropper, pb_size_t drop_at = fedstat_v1_Envelope_secagg_masked_chunk_tag)
      : kind(k) {
    std::vector<uint64_t> points;
    if (kind == Kind::kKl) {
      task = kl_task(fedstat_v1_TrustModel_DIST, points);
      data = points;
    } else if (kind == Kind::kDataShift) {  // the hashed histogram with Pólya shares
      task = data_shift_dist_task(kClients, 3);
    } else if (kind == Kind::kModel) {
      task = model_task(fedstat_v1_TrustModel_DIST);
      data = model_bits(model);
    } else {
      task = heterogeneity_task(fedstat_v1_TrustModel_DIST, 2);
      data = model_bits(means);
    }
    make_dist(task, kClients, 3);
    if (kind == Kind::kKl) {  // the λ that gives the declared ε with `threshold` shares
      task.device_noise_lambda =
          tasks::kl_dist_skellam_lambda(task.epsilon, task.delta,
                                        tasks::kl_answer_sensitivity(1, 1), task.threshold)
              .value();
    } else if (kind == Kind::kModel) {  // the same for the model update's sensitivities
      task.device_noise_lambda =
          tasks::model_update_lambda(config_of(task), 4, task.threshold, task.epsilon, task.delta)
              .value();
    }
    if (kind == Kind::kHeterogeneity) {  // stage 2's releases at (ε, δ) with `threshold` shares
      task.parameters.heterogeneity.scale = 2.5;  // ≈ 1024/√(Δ3² + Δ4²), as a server plans it
      task.device_noise_lambda =
          privacy::skellam_lambda_composed(
              task.epsilon, task.delta,
              Span<const privacy::Sensitivity>(heterogeneity_releases(task).data() + 2, 2),
              task.threshold)
              .value();
    }
    for (size_t c = 0; c < kClients; ++c) {
      size_t local = 0;
      if (kind == Kind::kHeterogeneity) {
        vector_apps.push_back(std::make_unique<VectorData>(static_cast<int>(c)));
        apps.push_back(vector_apps.back().get());
      } else if (kind == Kind::kModel) {
        model_apps.push_back(std::make_unique<ModelData>());
        apps.push_back(model_apps.back().get());
        local = model_apps.back()->labels.size();
      } else {
        histograms.push_back(std::make_unique<OwnedHistogram>(static_cast<uint32_t>(10 + c)));
        histogram_apps.push_back(std::make_unique<HistogramData>(&histograms.back()->histogram));
        apps.push_back(histogram_apps.back().get());
        local = histograms.back()->histogram.capacity();
      }
      const size_t need = client::Client::memory_bytes(task, local).value();
      devices.push_back(std::make_unique<Device>(c + 1, need, *apps.back()));
      EXPECT_TRUE(devices.back()->init_status.ok());
      auto up = std::make_shared<Pipe>();
      auto down = std::make_shared<Pipe>();
      if (static_cast<int>(c) == dropper) {
        device_ends.push_back(std::make_unique<DropAt>(down, up, drop_at));
      } else {
        device_ends.push_back(std::make_unique<InMemoryChannel>(down, up));
      }
      server_ends.push_back(std::make_unique<InMemoryChannel>(up, down));
    }
  }

  DistResult run(ServerMode mode = ServerMode::kNormal) {
    outcomes.assign(kClients, failed_precondition("not run"));
    std::vector<std::thread> threads;
    for (size_t c = 0; c < kClients; ++c) {
      threads.emplace_back(
          [this, c] { outcomes[c] = devices[c]->client.run_session(*device_ends[c]); });
    }
    std::vector<InMemoryChannel*> conns;
    for (auto& e : server_ends) conns.push_back(e.get());
    DistResult result = serve_dist(conns, task, data, mode);
    for (auto& t : threads) t.join();
    return result;
  }

  // Client c's contribution, computed directly from the SDK routines with its noise stream.
  std::vector<uint64_t> expected(size_t c) {
    CountingSource same(test_seed(99), c + 1);
    if (kind == Kind::kKl) return expected_kl(task, data, histograms[c]->histogram, same);
    if (kind == Kind::kDataShift) return expected_hashed(task, histograms[c]->histogram, same);
    if (kind == Kind::kHeterogeneity) {
      return expected_heterogeneity(task, vector_apps[c]->x, means, same);
    }
    return expected_model(task, model, *model_apps[c], same);
  }
};

class DistSessionTest : public StorageTest,
                        public ::testing::WithParamInterface<std::tuple<Kind, bool>> {};

TEST_P(DistSessionTest, UnmaskedSumIsTheSumOfTheSurvivorsContributions) {
  const Kind kind = std::get<0>(GetParam());
  const bool one_drops = std::get<1>(GetParam());
  const int dropper = one_drops ? 2 : -1;
  Fleet fleet(kind, dropper);
  const DistResult result = fleet.run();
  ASSERT_TRUE(result.sum.ok()) << result.sum.status().message();

  const fedstat_v1_Task& task = fleet.task;
  const uint64_t mask = task.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << task.bits) - 1;
  std::vector<uint64_t> expected(task.vector_length, 0), everyone(task.vector_length, 0);
  for (size_t c = 0; c < Fleet::kClients; ++c) {
    const std::vector<uint64_t> x = fleet.expected(c);
    ASSERT_EQ(x.size(), task.vector_length);
    const bool survivor = static_cast<int>(c) != dropper;
    for (size_t i = 0; i < x.size(); ++i) {
      everyone[i] = (everyone[i] + x[i]) & mask;
      if (survivor) expected[i] = (expected[i] + x[i]) & mask;
    }
    if (survivor) {
      ASSERT_TRUE(fleet.outcomes[c].ok()) << c << ": " << fleet.outcomes[c].status().message();
      EXPECT_EQ(fleet.outcomes[c].value().result, SessionResult::kCompleted);
    } else {
      EXPECT_EQ(fleet.outcomes[c].status().code(), StatusCode::kUnavailable);
    }
    if (kind == Kind::kHeterogeneity) {
      // Charged the stage's RDP curve, converted at the device's δ budget (the ledger's).
      EXPECT_DOUBLE_EQ(fleet.devices[c]->spent(), heterogeneity_stage_epsilon(task, 1e-3));
      EXPECT_LT(fleet.devices[c]->spent(), task.epsilon);  // its δ budget is above the task's
    } else {
      EXPECT_DOUBLE_EQ(fleet.devices[c]->spent(), task.epsilon);
    }
  }
  EXPECT_EQ(result.sum.value(), expected);
  EXPECT_EQ(result.u3.size(), one_drops ? Fleet::kClients - 1 : Fleet::kClients);
  if (one_drops) {
    EXPECT_NE(result.sum.value(), everyone);  // the dropper's input really is missing
    // The dropper kept its round marker: after a reboot it declines this round.
    Device rebooted(3, 1 << 20, *fleet.apps[2]);
    EXPECT_EQ(rebooted.client.interrupted_task(), task.task_id);
  }
  Device survivor_rebooted(1, 1 << 20, *fleet.apps[0]);
  EXPECT_EQ(survivor_rebooted.client.interrupted_task(), 0u);
}

INSTANTIATE_TEST_SUITE_P(KindsAndDropouts, DistSessionTest,
                         ::testing::Combine(::testing::Values(Kind::kKl, Kind::kDataShift,
                                                              Kind::kModel, Kind::kHeterogeneity),
                                            ::testing::Bool()));

class DistRoundEndTest : public StorageTest {};

TEST_F(DistRoundEndTest, ADeviceLostWhileUnmaskingRecordedWhatItWouldReveal) {
  Fleet fleet(Kind::kKl, /*dropper=*/2, fedstat_v1_Envelope_secagg_reveal_tag);
  const DistResult result = fleet.run();
  ASSERT_TRUE(result.sum.ok()) << result.sum.status().message();
  EXPECT_EQ(result.u3.size(), Fleet::kClients);  // its masked input arrived: it is in the sum
  EXPECT_EQ(result.reveals, (Fleet::kClients - 1) * Fleet::kClients);  // none from it
  std::vector<uint64_t> everyone(fleet.task.vector_length, 0);
  for (size_t c = 0; c < Fleet::kClients; ++c) {
    const std::vector<uint64_t> x = fleet.expected(c);
    for (size_t i = 0; i < x.size(); ++i) everyone[i] += x[i];
  }
  EXPECT_EQ(result.sum.value(), everyone);
  EXPECT_EQ(fleet.outcomes[2].status().code(), StatusCode::kUnavailable);

  Device rebooted(3, 1 << 20, *fleet.apps[2]);
  ASSERT_TRUE(rebooted.init_status.ok());
  const client::RoundMarker& marker = rebooted.client.interrupted_round();
  EXPECT_EQ(marker.task_id, fleet.task.task_id);
  EXPECT_EQ(marker.stage, client::kRoundUnmasking);
  EXPECT_EQ(marker.session, fleet.task.secagg_session);
  EXPECT_EQ(marker.u2[0], 0x1F);  // roster indices 0..4
  EXPECT_EQ(marker.u3[0], 0x1F);
  EXPECT_EQ(marker.u3[1], 0);
}

TEST_F(DistRoundEndTest, ARosterOutOfOrderStopsEveryDeviceBeforeMasking) {
  Fleet fleet(Kind::kKl, -1);
  const DistResult result = fleet.run(ServerMode::kEarlyU3Roster);
  EXPECT_FALSE(result.sum.ok());
  EXPECT_EQ(result.chunks, 0u);
  EXPECT_EQ(result.reveals, 0u);
  for (size_t c = 0; c < Fleet::kClients; ++c) {
    EXPECT_EQ(fleet.outcomes[c].status().code(), StatusCode::kFailedPrecondition) << c;
  }
}

TEST_F(DistRoundEndTest, SecAggAbortIsTheAbortedOutcomeAndClearsTheMarker) {
  Fleet fleet(Kind::kKl, -1);
  fleet.run(ServerMode::kAbortAfterKeys);
  for (size_t c = 0; c < Fleet::kClients; ++c) {
    ASSERT_TRUE(fleet.outcomes[c].ok()) << fleet.outcomes[c].status().message();
    EXPECT_EQ(fleet.outcomes[c].value().result, SessionResult::kAborted);
    EXPECT_EQ(fleet.outcomes[c].value().task_id, fleet.task.task_id);
  }
  Device rebooted(1, 1 << 20, *fleet.apps[0]);
  EXPECT_EQ(rebooted.client.interrupted_task(), 0u);
}

TEST_F(DistRoundEndTest, NoAdmissionIsTheAbortedOutcome) {
  Fleet fleet(Kind::kDataShift, -1);
  fleet.run(ServerMode::kNoAdmission);
  for (size_t c = 0; c < Fleet::kClients; ++c) {
    ASSERT_TRUE(fleet.outcomes[c].ok()) << fleet.outcomes[c].status().message();
    EXPECT_EQ(fleet.outcomes[c].value().result, SessionResult::kAborted);
  }
}

}  // namespace
}  // namespace client_test
}  // namespace fedstat
