// SecAgg+'s sparse graph (sdk/secagg/graph.h): the exact sum with dropouts at every phase, each
// roster the Harary neighbourhood of the committed seed (computed here independently), and the
// device refusing every wrong graph — another seed than the one committed to (a permutation
// chosen after the keys), a non-neighbour in its roster, itself off the middle, a threshold at
// most half of its neighbourhood, a degree it cannot hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "host_server/secagg/secagg_server.h"
#include "host_server/secagg/secagg_simulation.h"
#include "sdk/base/bytes.h"
#include "sdk/base/crypto.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/secagg/graph.h"
#include "sdk/secagg/graph_parameters.h"
#include "sdk/secagg/secagg_client.h"

namespace fedstat {
namespace host {
namespace {

// Every split of 5 % dropouts per phase, at two fleet sizes, with (k, t) from the bound: the
// unmasked sum is Σ x_u over U3 bit for bit, and each client held k + 1 roster entries, not n.
TEST(SparseSecAgg, ExactSumWithDropoutsAtEveryPhase) {
  for (const uint32_t n : {100u, 240u}) {
    const auto graph = secagg::choose_sparse_graph(n, secagg::SecAggThreatModel());
    ASSERT_TRUE(graph.ok()) << graph.status().message();
    for (const uint64_t seed : {uint64_t{n % 7}}) {  // 32-bit words at 100, 64-bit at 240
      SecAggSimConfig config;
      config.clients = n;
      config.degree = graph.value().degree;
      config.threshold = graph.value().threshold;
      config.length = 70;  // two chunks
      config.bits = n == 100 ? 32 : 64;
      config.drop_before_sharing = config.drop_before_masking = config.drop_before_unmasking =
          n / 20;
      config.seed = seed;
      config.threads = 2;
      const SecAggSimResult r = run_secagg_simulation(config);
      ASSERT_FALSE(r.aborted) << r.abort_reason;
      EXPECT_TRUE(r.ok) << "n " << n << " seed " << seed;
      EXPECT_EQ(r.survivors, n - 2 * (n / 20));
      EXPECT_EQ(r.roster_entries, graph.value().degree + 1);
      EXPECT_LT(r.roster_entries, n);
    }
  }
}

// The same session on 1 and on 2 threads: the same masked vector and the same sum (the server
// takes messages in client order whatever the threads).
TEST(SparseSecAgg, ThreadsDoNotChangeTheSession) {
  SecAggSimConfig config;
  config.clients = 60;
  config.degree = 8;
  config.threshold = 5;
  config.length = 9;
  config.drop_before_masking = 3;
  config.drop_before_unmasking = 2;
  config.keep_masked = true;
  const SecAggSimResult one = run_secagg_simulation(config);
  config.threads = 2;
  const SecAggSimResult two = run_secagg_simulation(config);
  ASSERT_TRUE(one.ok && two.ok);
  EXPECT_EQ(one.sum, two.sum);
  EXPECT_EQ(one.masked_example, two.masked_example);
}

// Below the neighbourhood's threshold: dropping so many before masking that some client's
// neighbourhood keeps fewer than t leaves the session unable to finish — it aborts, and the
// simulation says so (no sum).
TEST(SparseSecAgg, TooManyDropoutsAbort) {
  SecAggSimConfig config;
  config.clients = 40;
  config.degree = 6;
  config.threshold = 6;
  config.length = 5;
  config.drop_before_masking = 30;
  const SecAggSimResult r = run_secagg_simulation(config);
  EXPECT_TRUE(r.aborted);
  EXPECT_FALSE(r.ok);
}

// ---- By hand: one server, n SDK clients, the rosters and what a device refuses. ----------

constexpr uint64_t kSession = 0x5eed5eed;

struct Fleet {
  Fleet(uint32_t n, uint32_t degree, uint32_t threshold, uint8_t seed_byte) {
    SecAggServerConfig config;
    config.session = kSession;
    config.threshold = threshold;
    config.vector_length = 3;
    config.bits = 16;
    config.max_clients = n;
    config.degree = degree;
    std::memset(config.graph_seed, seed_byte, 32);
    seed.assign(config.graph_seed, config.graph_seed + 32);
    server = std::make_unique<SecAggServer>(config);
    for (uint32_t id = 1; id <= n; ++id) {
      auto p = std::make_unique<Party>(id, degree + 1);
      fedstat_v1_SecAggKeys keys;
      EXPECT_TRUE(p->client.on_start(server->start(), keys).ok());
      EXPECT_TRUE(server->on_keys(keys).ok());
      parties.push_back(std::move(p));
    }
    EXPECT_TRUE(server->close_advertising().ok());
  }
  struct Party {
    Party(uint32_t id, size_t room) : stream(Seed256{}, id), peers(room) {
      EXPECT_TRUE(
          client.init(id, Span<secagg::SecAggPeer>(peers.data(), peers.size()), stream).ok());
    }
    SeededStream stream;
    std::vector<secagg::SecAggPeer> peers;
    secagg::SecAggClient client;
  };
  std::unique_ptr<SecAggServer> server;
  std::vector<std::unique_ptr<Party>> parties;
  std::vector<uint8_t> seed;
};

// graph.h's ring position, computed here from its definition with SHA-256 alone.
uint64_t position_by_definition(const std::vector<uint8_t>& seed, uint32_t id) {
  const char tag[] = "fedstat secagg ring position v1";
  std::vector<uint8_t> input(tag, tag + sizeof(tag) - 1);
  uint8_t session[8], id_bytes[4];
  store_le64(session, kSession);
  store_le32(id_bytes, id);
  input.insert(input.end(), session, session + 8);
  input.insert(input.end(), seed.begin(), seed.end());
  input.insert(input.end(), id_bytes, id_bytes + 4);
  uint8_t digest[32];
  EXPECT_TRUE(
      crypto::sha256(ByteSpan(input.data(), input.size()), MutableByteSpan(digest, 32)).ok());
  return load_le64(digest);
}

// Every member's roster is its k/2 predecessors, itself, its k/2 successors on the ring sorted
// by (position, id) — the Harary graph H(n, k) over the permutation the seed gives — and every
// client accepts its own.
TEST(SparseSecAgg, EachRosterIsTheHararyNeighbourhoodOfTheCommittedSeed) {
  const uint32_t n = 40, k = 6;
  Fleet fleet(n, k, 4, 0x11);
  std::vector<std::pair<uint64_t, uint32_t>> ring;
  for (uint32_t id = 1; id <= n; ++id)
    ring.emplace_back(position_by_definition(fleet.seed, id), id);
  std::sort(ring.begin(), ring.end());
  size_t moved = 0;  // members not at their id's place: the permutation is not the identity
  for (size_t p = 0; p < n; ++p) {
    const uint32_t id = ring[p].second;
    moved += id != p + 1;
    const auto roster = fleet.server->roster_for(id);
    ASSERT_EQ(roster.size(), k + 1);
    for (size_t j = 0; j <= k; ++j) {
      EXPECT_EQ(roster[j].keys.client_id, ring[(p + n - k / 2 + j) % n].second) << id << " " << j;
      EXPECT_EQ(roster[j].index, j);
      EXPECT_EQ(roster[j].count, k + 1);
    }
    ASSERT_EQ(roster[0].graph_seed.size, 32);
    EXPECT_EQ(std::vector<uint8_t>(roster[0].graph_seed.bytes, roster[0].graph_seed.bytes + 32),
              fleet.seed);
    auto& client = fleet.parties[id - 1]->client;
    for (const auto& entry : roster) ASSERT_TRUE(client.on_peer_keys(entry).ok());
    EXPECT_EQ(client.stage(), secagg::SecAggStage::kSharing);
    EXPECT_EQ(client.roster_size(), k + 1);
  }
  EXPECT_GT(moved, n / 2);
}

// A server that opens another seed than SecAggStart committed to — one it could pick after
// seeing the keys, to surround a victim — is refused at the first entry, and nothing is held.
TEST(SparseSecAgg, ADeviceRefusesASeedOtherThanTheCommittedOne) {
  const uint32_t n = 30, k = 6;
  Fleet committed(n, k, 4, 0x11);
  Fleet chosen_later(n, k, 4, 0x22);  // the same clients' keys, another ring seed
  auto& client = committed.parties[0]->client;
  auto roster = chosen_later.server->roster_for(1);
  const Status refused = client.on_peer_keys(roster[0]);
  EXPECT_EQ(refused.code(), StatusCode::kPermissionDenied) << refused.message();
  EXPECT_EQ(client.roster_size(), 0u);
  EXPECT_EQ(client.stage(), secagg::SecAggStage::kAdvertised);
  // Without a seed in entry 0: refused too.
  roster = committed.server->roster_for(1);
  fedstat_v1_SecAggPeerKeys bare = roster[0];
  bare.graph_seed.size = 0;
  EXPECT_EQ(client.on_peer_keys(bare).code(), StatusCode::kInvalidArgument);
  // The committed one is accepted.
  for (const auto& entry : roster) ASSERT_TRUE(client.on_peer_keys(entry).ok());
  EXPECT_EQ(client.stage(), secagg::SecAggStage::kSharing);
}

// A roster with a non-neighbour inside it (a far member's keys in place of a neighbour between
// the ends): the client never reaches the sharing round, so it never shares with nor masks
// against it. (An outsider in place of an end of the roster is one turn of the ring still: to
// the device it is the neighbour beyond one that dropped before U1 — docs/protocol.md, "The
// sparse graph", what a device cannot see.)
TEST(SparseSecAgg, ADeviceRefusesANonNeighbourInItsRoster) {
  const uint32_t n = 40, k = 6;
  Fleet fleet(n, k, 4, 0x33);
  size_t refused = 0;
  for (uint32_t id = 1; id <= n; ++id) {
    auto roster = fleet.server->roster_for(id);
    const uint32_t replace = 1 + id % (k - 1);  // 1 .. k − 1, skipping self
    if (replace == k / 2) continue;
    uint32_t far_id = 0;
    for (uint32_t other = 1; other <= n && far_id == 0; ++other) {
      bool near = false;
      for (const auto& e : roster) near = near || e.keys.client_id == other;
      if (!near) far_id = other;
    }
    fedstat_v1_SecAggPeerKeys intruder = fleet.server->roster_for(far_id)[k / 2];
    intruder.index = replace;
    intruder.count = k + 1;
    intruder.graph_seed.size = 0;
    roster[replace] = intruder;
    auto& client = fleet.parties[id - 1]->client;
    Status last;
    for (const auto& entry : roster) {
      last = client.on_peer_keys(entry);
      if (!last.ok()) break;
    }
    EXPECT_FALSE(last.ok()) << "client " << id << " accepted client " << far_id << " at "
                            << replace;
    EXPECT_NE(client.stage(), secagg::SecAggStage::kSharing);
    refused += !last.ok();
  }
  EXPECT_GT(refused, n / 2);
}

// Entry 0 names |U1|: a ring larger than the max_clients the bound was checked for is refused,
// and so is a short roster — t hand-picked members around the device, claiming a big ring — which
// one turn of the ring alone would let through.
TEST(SparseSecAgg, ADeviceRefusesARingSizeItsRosterDoesNotFit) {
  const uint32_t n = 30, k = 6;
  Fleet fleet(n, k, 4, 0x66);
  auto& client = fleet.parties[0]->client;
  auto roster = fleet.server->roster_for(1);
  ASSERT_EQ(roster[0].ring_size, n);
  fedstat_v1_SecAggPeerKeys entry = roster[0];
  entry.ring_size = n + 1;  // above max_clients
  EXPECT_EQ(client.on_peer_keys(entry).code(), StatusCode::kInvalidArgument);
  entry.ring_size = k;  // a ring smaller than the roster
  EXPECT_EQ(client.on_peer_keys(entry).code(), StatusCode::kInvalidArgument);
  // A short roster: itself and the t − 1 = 3 members after it, each entry saying count 4.
  const size_t self = k / 2;
  std::vector<fedstat_v1_SecAggPeerKeys> shortened(roster.begin() + self,
                                                   roster.begin() + self + 4);
  for (uint32_t j = 0; j < shortened.size(); ++j) {
    shortened[j].index = j;
    shortened[j].count = 4;
  }
  shortened[0].graph_seed = roster[0].graph_seed;
  shortened[0].ring_size = n;
  EXPECT_EQ(client.on_peer_keys(shortened[0]).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(client.roster_size(), 0u);
  for (const auto& e : roster) ASSERT_TRUE(client.on_peer_keys(e).ok());
  EXPECT_EQ(client.stage(), secagg::SecAggStage::kSharing);
}

// Itself one place off the middle of a full neighbourhood (the roster rotated by one): aborted.
TEST(SparseSecAgg, ADeviceOffTheMiddleOfItsNeighbourhoodAborts) {
  const uint32_t n = 30, k = 6;
  Fleet fleet(n, k, 4, 0x44);
  const auto roster = fleet.server->roster_for(5);
  // The roster of 5's successor, as if 5 were at index k/2 − 1: one turn of the ring, wrong place.
  const auto shifted = fleet.server->roster_for(roster[k / 2 + 1].keys.client_id);
  fedstat_v1_SecAggPeerKeys with_self[k + 1];
  bool self_inside = false;
  for (size_t j = 0; j <= k; ++j) {
    with_self[j] = shifted[j];
    self_inside = self_inside || shifted[j].keys.client_id == 5;
  }
  ASSERT_TRUE(self_inside);
  auto& client = fleet.parties[4]->client;
  Status last;
  for (const auto& entry : with_self) {
    last = client.on_peer_keys(entry);
    if (!last.ok()) break;
  }
  EXPECT_EQ(last.code(), StatusCode::kAborted) << last.message();
  EXPECT_EQ(client.stage(), secagg::SecAggStage::kAborted);
}

// The server routes shares and takes reveals between neighbours only.
TEST(SparseSecAgg, TheServerRefusesAShareToANonNeighbour) {
  const uint32_t n = 30, k = 6;
  Fleet fleet(n, k, 4, 0x55);
  const auto roster = fleet.server->roster_for(1);
  uint32_t far_id = 0;
  for (uint32_t other = 2; other <= n && far_id == 0; ++other) {
    bool near = false;
    for (const auto& e : roster) near = near || e.keys.client_id == other;
    if (!near) far_id = other;
  }
  fedstat_v1_SecAggShare share = fedstat_v1_SecAggShare_init_zero;
  share.session = kSession;
  share.from_id = 1;
  share.to_id = far_id;
  share.ciphertext.size = secagg::kShareCipherBytes;
  EXPECT_EQ(fleet.server->on_share(1, share).code(), StatusCode::kNotFound);
  share.to_id = roster[k / 2 + 1].keys.client_id;
  EXPECT_TRUE(fleet.server->on_share(1, share).ok());
}

fedstat_v1_SecAggStart sparse_start(uint32_t max_clients, uint32_t degree, uint32_t threshold) {
  fedstat_v1_SecAggStart start = fedstat_v1_SecAggStart_init_zero;
  start.session = kSession;
  start.threshold = threshold;
  start.vector_length = 4;
  start.bits = 32;
  start.max_clients = max_clients;
  start.degree = degree;
  start.graph_commitment.size = 32;
  return start;
}

// What a device refuses of a sparse start before drawing anything — and the roster it needs is
// degree + 1 entries, whatever max_clients: a 10^5-client round fits 81 entries.
TEST(SparseSecAgg, ADeviceRefusesAStartItCannotTrustOrHold) {
  SeededStream stream(Seed256{}, 9);
  std::vector<secagg::SecAggPeer> peers(81);
  secagg::SecAggClient client;
  ASSERT_TRUE(client.init(7, Span<secagg::SecAggPeer>(peers.data(), peers.size()), stream).ok());
  fedstat_v1_SecAggKeys keys;
  // 2t ≤ k + 1: two disjoint groups of t among one neighbourhood.
  EXPECT_EQ(client.on_start(sparse_start(100000, 80, 40), keys).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(client.on_start(sparse_start(100000, 80, 82), keys).code(),
            StatusCode::kInvalidArgument);  // t > k + 1
  EXPECT_EQ(client.on_start(sparse_start(100000, 79, 41), keys).code(),
            StatusCode::kInvalidArgument);  // odd degree
  EXPECT_EQ(client.on_start(sparse_start(100000, 1024, 600), keys).code(),
            StatusCode::kInvalidArgument);  // > 1022
  EXPECT_EQ(client.on_start(sparse_start(20000000, 80, 55), keys).code(),
            StatusCode::kInvalidArgument);  // > 10^7
  auto no_commitment = sparse_start(100000, 80, 55);
  no_commitment.graph_commitment.size = 0;
  EXPECT_EQ(client.on_start(no_commitment, keys).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(client.on_start(sparse_start(100000, 82, 55), keys).code(),
            StatusCode::kResourceExhausted);  // 83 entries, room for 81
  EXPECT_EQ(client.stage(), secagg::SecAggStage::kIdle);
  EXPECT_TRUE(client.on_start(sparse_start(100000, 80, 55), keys).ok());
  // The complete graph beyond a roster bitmap is refused, pointing at the sparse graph.
  secagg::SecAggClient other;
  std::vector<secagg::SecAggPeer> many(2000);
  ASSERT_TRUE(other.init(8, Span<secagg::SecAggPeer>(many.data(), many.size()), stream).ok());
  auto complete = sparse_start(1500, 0, 1000);
  complete.graph_commitment.size = 0;
  const Status big = other.on_start(complete, keys);
  EXPECT_EQ(big.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(big.message()).find("sparse"), std::string::npos) << big.message();
}

// The server refuses what a device would.
TEST(SparseSecAgg, TheServerRefusesAGraphDevicesRefuse) {
  auto make = [](uint32_t max_clients, uint32_t degree, uint32_t threshold) {
    SecAggServerConfig config;
    config.session = kSession;
    config.max_clients = max_clients;
    config.degree = degree;
    config.threshold = threshold;
    return SecAggServer(config);
  };
  EXPECT_THROW(make(1000, 62, 31), std::invalid_argument);   // 2t ≤ k + 1
  EXPECT_THROW(make(1000, 61, 43), std::invalid_argument);   // odd
  EXPECT_THROW(make(2000, 0, 1500), std::invalid_argument);  // complete beyond 1024
  EXPECT_NO_THROW(make(100000, 80, 55));
}

}  // namespace
}  // namespace host
}  // namespace fedstat
