// DIST sessions: five Clients (threads, one in-memory channel each) against an in-test server
// loop that drives host::SecAggServer in docs/protocol.md's message order. The unmasked sum must
// equal the sum of the contributions computed directly from the SDK routines — of every client,
// or of the survivors when one drops before masking.
#include <gtest/gtest.h>

#include <thread>

#include "host_server/secagg/secagg_server.h"
#include "tests/client/client_test_support.h"
#include "tests/client/in_memory_channel.h"

namespace fedstat {
namespace client_test {
namespace {

using client::SessionResult;

// A device whose connection dies when it starts sending its masked input.
class DropAtMasking : public InMemoryChannel {
 public:
  using InMemoryChannel::InMemoryChannel;
  Status send(const wire::Envelope& message) override {
    if (message.which_body == fedstat_v1_Envelope_secagg_masked_chunk_tag) {
      close();
      return unavailable("dropped before masking");
    }
    return InMemoryChannel::send(message);
  }
};

struct DistResult {
  Result<std::vector<uint64_t>> sum = failed_precondition("not finished");
  std::vector<uint32_t> u3;
};

size_t members(const fedstat_v1_SecAggRoster& roster) {
  size_t n = 0;
  for (pb_size_t i = 0; i < roster.members.size; ++i)
    n += __builtin_popcount(roster.members.bytes[i]);
  return n;
}

DistResult serve_dist(const std::vector<InMemoryChannel*>& conns, const fedstat_v1_Task& task,
                      const std::vector<uint64_t>& data) {
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
  // Round 0.
  wire::Envelope start = envelope_of(fedstat_v1_Envelope_secagg_start_tag);
  start.body.secagg_start = server.start();
  for (size_t i = 0; i < n; ++i) send(i, start);
  for (size_t i = 0; i < n; ++i) {
    if (receive(i, fedstat_v1_Envelope_secagg_keys_tag)) {
      EXPECT_TRUE(server.on_keys(in.body.secagg_keys).ok());
    }
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
    send(i, e);
  }
  // Round 2.
  const size_t chunks = (task.vector_length + 63) / 64;
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < chunks; ++k) {
      if (!receive(i, fedstat_v1_Envelope_secagg_masked_chunk_tag)) break;
      EXPECT_TRUE(server.on_chunk(ids[i], in.body.secagg_masked_chunk).ok());
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

enum class Kind { kKl, kDataShift };

class DistSessionTest : public StorageTest,
                        public ::testing::WithParamInterface<std::tuple<Kind, bool>> {};

TEST_P(DistSessionTest, UnmaskedSumIsTheSumOfTheSurvivorsContributions) {
  const Kind kind = std::get<0>(GetParam());
  const bool one_drops = std::get<1>(GetParam());
  constexpr size_t kClients = 5;
  std::vector<uint64_t> points;
  fedstat_v1_Task task = kind == Kind::kKl
                             ? kl_task(fedstat_v1_TrustModel_DIST, points)
                             : data_shift_task(fedstat_v1_TrustModel_DIST, /*local_epsilon=*/1.0);
  make_dist(task, kClients, 3);
  const std::vector<uint64_t> data = kind == Kind::kKl ? points : std::vector<uint64_t>();

  std::vector<std::unique_ptr<OwnedHistogram>> histograms;
  std::vector<std::unique_ptr<HistogramData>> apps;
  std::vector<std::unique_ptr<Device>> devices;
  std::vector<std::unique_ptr<InMemoryChannel>> device_ends, server_ends;
  for (size_t c = 0; c < kClients; ++c) {
    histograms.push_back(std::make_unique<OwnedHistogram>(static_cast<uint32_t>(10 + c)));
    apps.push_back(std::make_unique<HistogramData>(&histograms.back()->histogram));
    const size_t need =
        client::Client::memory_bytes(task, histograms.back()->histogram.capacity()).value();
    devices.push_back(std::make_unique<Device>(c + 1, need, *apps.back()));
    ASSERT_TRUE(devices.back()->init_status.ok());
    auto up = std::make_shared<Pipe>();
    auto down = std::make_shared<Pipe>();
    if (one_drops && c == 2) {
      device_ends.push_back(std::make_unique<DropAtMasking>(down, up));
    } else {
      device_ends.push_back(std::make_unique<InMemoryChannel>(down, up));
    }
    server_ends.push_back(std::make_unique<InMemoryChannel>(up, down));
  }
  std::vector<Result<client::SessionOutcome>> outcomes(kClients, failed_precondition("not run"));
  std::vector<std::thread> threads;
  for (size_t c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] { outcomes[c] = devices[c]->client.run_session(*device_ends[c]); });
  }
  std::vector<InMemoryChannel*> conns;
  for (auto& e : server_ends) conns.push_back(e.get());
  const DistResult result = serve_dist(conns, task, data);
  for (auto& t : threads) t.join();

  ASSERT_TRUE(result.sum.ok()) << result.sum.status().message();
  std::vector<uint64_t> expected(task.vector_length, 0);
  std::vector<uint64_t> everyone(task.vector_length, 0);
  for (size_t c = 0; c < kClients; ++c) {
    CountingSource same(test_seed(99), c + 1);
    const std::vector<uint64_t> x = kind == Kind::kKl
                                        ? expected_kl(task, points, histograms[c]->histogram, same)
                                        : expected_sketch(task, histograms[c]->histogram, same);
    const bool survivor = !(one_drops && c == 2);
    for (size_t i = 0; i < x.size(); ++i) {
      everyone[i] += x[i];
      if (survivor) expected[i] += x[i];
    }
    if (survivor) {
      ASSERT_TRUE(outcomes[c].ok()) << c << ": " << outcomes[c].status().message();
      EXPECT_EQ(outcomes[c].value().result, SessionResult::kCompleted);
    } else {
      EXPECT_EQ(outcomes[c].status().code(), StatusCode::kUnavailable);
    }
    EXPECT_DOUBLE_EQ(devices[c]->spent(), task.epsilon);
  }
  EXPECT_EQ(result.sum.value(), expected);
  EXPECT_EQ(result.u3.size(), one_drops ? kClients - 1 : kClients);
  if (one_drops) {
    EXPECT_NE(result.sum.value(), everyone);  // the dropper's input really is missing
    // The dropper kept its round marker: after a reboot it declines this round.
    Device rebooted(3, 1 << 20, *apps[2]);
    EXPECT_EQ(rebooted.client.interrupted_task(), task.task_id);
  }
  Device survivor_rebooted(1, 1 << 20, *apps[0]);
  EXPECT_EQ(survivor_rebooted.client.interrupted_task(), 0u);
}

INSTANTIATE_TEST_SUITE_P(KindsAndDropouts, DistSessionTest,
                         ::testing::Combine(::testing::Values(Kind::kKl, Kind::kDataShift),
                                            ::testing::Bool()));

}  // namespace
}  // namespace client_test
}  // namespace fedstat
