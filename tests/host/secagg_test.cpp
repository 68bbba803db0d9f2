// Secure aggregation end to end: SDK clients and the host server through encoded messages
// (secagg_simulation.h), and the rejection of bad messages at every round.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "host_server/secagg/secagg_server.h"
#include "host_server/secagg/secagg_simulation.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/secagg/secagg_client.h"
#include "tests/common/chi_square.h"

namespace fedstat {
namespace host {
namespace {

SecAggSimResult simulate(uint32_t n, uint32_t t, uint32_t a, uint32_t b, uint32_t c,
                         uint32_t bits = 32, uint32_t length = 40, uint64_t seed = 3) {
  SecAggSimConfig config;
  config.clients = n;
  config.threshold = t;
  config.length = length;
  config.bits = bits;
  config.drop_before_sharing = a;
  config.drop_before_masking = b;
  config.drop_before_unmasking = c;
  config.seed = seed;
  return run_secagg_simulation(config);
}

// Every split of up to n − t dropouts over the three rounds gives the exact sum.
void expect_exact_for_every_dropout_split(uint32_t n, uint32_t t, uint32_t bits) {
  for (uint32_t a = 0; a <= n - t; ++a) {
    for (uint32_t b = 0; a + b <= n - t; ++b) {
      for (uint32_t c = 0; a + b + c <= n - t; ++c) {
        const SecAggSimResult r = simulate(n, t, a, b, c, bits);
        ASSERT_FALSE(r.aborted) << n << " " << a << b << c << ": " << r.abort_reason;
        EXPECT_TRUE(r.ok) << "n " << n << " drops " << a << "," << b << "," << c;
        EXPECT_EQ(r.survivors, n - a - b);  // clients dropping before round 3 stay in the sum
      }
    }
  }
}

TEST(SecAgg, ExactSumWithEveryDropoutSplitThreeClients) {
  expect_exact_for_every_dropout_split(3, 2, 32);
  expect_exact_for_every_dropout_split(3, 2, 64);
}

TEST(SecAgg, ExactSumWithEveryDropoutSplitTenClients) {
  expect_exact_for_every_dropout_split(10, 6, 32);
}

TEST(SecAgg, ExactSumHundredClients) {
  const SecAggSimResult none = simulate(100, 60, 0, 0, 0, 64, 200);
  EXPECT_TRUE(none.ok);
  const SecAggSimResult most = simulate(100, 60, 13, 13, 14, 32, 200);  // n − t = 40 dropouts
  EXPECT_TRUE(most.ok);
  EXPECT_EQ(most.survivors, 74u);
}

TEST(SecAgg, BelowThresholdAbortsAndRevealsNothing) {
  for (int round = 1; round <= 2; ++round) {
    const SecAggSimResult r = simulate(10, 6, round == 1 ? 5 : 0, round == 2 ? 5 : 0, 0);
    EXPECT_TRUE(r.aborted) << round;
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(r.sum.empty());
    EXPECT_EQ(r.reveals_sent, 0u) << "a client revealed shares of an aborted round";
  }
  // Five clients vanish after sending their masked input: U3 keeps all 10, but only 5 reveal, so
  // every seed has fewer than t = 6 shares and the server aborts without an output.
  const SecAggSimResult late = simulate(10, 6, 0, 0, 5);
  EXPECT_TRUE(late.aborted);
  EXPECT_TRUE(late.sum.empty());
}

// A masked vector seen alone: the zero input masked mod 2^8 is uniform (chi-square over 256
// cells below the p = 1e-6 critical value, 20,480 words).
TEST(SecAgg, AMaskedVectorAloneLooksUniform) {
  SecAggSimConfig config;
  config.clients = 3;
  config.threshold = 2;
  config.length = 20480;
  config.bits = 8;
  config.zero_inputs = true;
  config.keep_masked = true;
  const SecAggSimResult r = run_secagg_simulation(config);
  ASSERT_TRUE(r.ok);
  ASSERT_EQ(r.masked_example.size(), 20480u);
  std::vector<uint64_t> counts(256, 0);
  for (uint64_t w : r.masked_example) ++counts[w];
  EXPECT_LT(fedstat::testing::chi_square_uniform(counts),
            fedstat::testing::chi_square_critical_p1e6(255));
}

// The simulation's documented bounds are checked before any work (a length of 2^32 − 1 once ran
// unbounded); the bounds themselves are accepted.
TEST(SecAgg, SimulationBoundsAreRefusedBeforeAnyWork) {
  SecAggSimConfig config;
  config.clients = 2;
  config.threshold = 2;
  config.length = kMaxSimLength + 1;
  EXPECT_THROW(run_secagg_simulation(config), std::invalid_argument);
  config.length = UINT32_MAX;
  EXPECT_THROW(run_secagg_simulation(config), std::invalid_argument);
  config.clients = kMaxSimClients + 1;
  config.length = 1;
  EXPECT_THROW(run_secagg_simulation(config), std::invalid_argument);
  config.clients = 65;
  config.length = kMaxSimLength;  // 65 · 2^20 > 2^26 words
  EXPECT_THROW(run_secagg_simulation(config), std::invalid_argument);
  config.clients = 3;
  config.threshold = 2;
  config.length = 1;
  EXPECT_TRUE(run_secagg_simulation(config).ok);
}

// The client refuses a session that allows more clients than a roster bitmap names, even when
// its storage would hold them (such a session could never announce U2).
TEST(SecAgg, ClientRefusesSessionsLargerThanARoster) {
  SeededStream stream(Seed256{}, 4);
  std::vector<secagg::SecAggPeer> peers(secagg::kMaxRosterClients + 1);
  secagg::SecAggClient client;
  ASSERT_TRUE(client.init(1, Span<secagg::SecAggPeer>(peers.data(), peers.size()), stream).ok());
  fedstat_v1_SecAggStart start = fedstat_v1_SecAggStart_init_zero;
  start.session = 1;
  start.threshold = 600;  // more than half of either size below
  start.vector_length = 1;
  start.bits = 32;
  start.max_clients = secagg::kMaxRosterClients + 1;
  fedstat_v1_SecAggKeys keys;
  EXPECT_EQ(client.on_start(start, keys).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(client.stage(), secagg::SecAggStage::kIdle);
  start.max_clients = secagg::kMaxRosterClients;
  EXPECT_TRUE(client.on_start(start, keys).ok());
}

// ---- Bad messages, driven by hand: each is rejected with its own status and the session
// still ends with the exact sum. ----------------------------------------------------------

// A SeededStream that counts its fill() calls: each X25519 agreement draws its blinding from
// the client's RandomSource, and nothing else in opening a share does (SecAggShareKey below).
class CountingStream final : public RandomSource {
 public:
  CountingStream(const Seed256& seed, uint64_t id) : inner_(seed, id) {}
  Status fill(MutableByteSpan out) override {
    ++fills;
    return inner_.fill(out);
  }
  size_t fills = 0;

 private:
  SeededStream inner_;
};

// A client with its own stream (SeededStream, or CountingStream to count draws) and roster.
template <typename Stream>
struct BasicParty {
  explicit BasicParty(uint32_t id) : stream(Seed256{}, id), peers(8) {
    EXPECT_TRUE(client.init(id, Span<secagg::SecAggPeer>(peers.data(), peers.size()), stream).ok());
  }
  // The roster entry of peer `id`.
  const secagg::SecAggPeer& entry_of(uint32_t id) const {
    for (const auto& p : peers) {
      if (p.id == id) return p;
    }
    ADD_FAILURE() << "no roster entry for " << id;
    return peers[0];
  }
  Stream stream;
  std::vector<secagg::SecAggPeer> peers;
  secagg::SecAggClient client;
};
using Party = BasicParty<SeededStream>;
using CountedParty = BasicParty<CountingStream>;

// A small session: threshold 2 of at most 3 clients (2·t > max_clients), 3 words of 16 bits.
SecAggServerConfig small_config(uint64_t session) {
  SecAggServerConfig config;
  config.session = session;
  config.threshold = 2;
  config.vector_length = 3;
  config.bits = 16;
  config.max_clients = 3;
  return config;
}

TEST(SecAgg, BadMessagesAreRejectedAndTheRoundSurvives) {
  const SecAggServerConfig config = small_config(77);
  SecAggServer server(config);
  std::vector<std::unique_ptr<Party>> parties;
  for (uint32_t id : {11u, 22u, 33u}) parties.push_back(std::make_unique<Party>(id));
  const fedstat_v1_SecAggStart start = server.start();

  // Round 0: duplicate and wrong-session keys.
  std::vector<fedstat_v1_SecAggKeys> keys(3);
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(parties[i]->client.on_start(start, keys[i]).ok());
    ASSERT_TRUE(server.on_keys(keys[i]).ok());
  }
  EXPECT_EQ(server.on_keys(keys[0]).code(), StatusCode::kAlreadyExists);
  fedstat_v1_SecAggKeys stale = keys[1];
  stale.session = 76;
  EXPECT_EQ(server.on_keys(stale).code(), StatusCode::kInvalidArgument);
  // The same start again (a resume) gives the same keys; another session's start is refused.
  fedstat_v1_SecAggKeys again_keys;
  ASSERT_TRUE(parties[0]->client.on_start(start, again_keys).ok());
  EXPECT_EQ(again_keys.client_id, keys[0].client_id);
  EXPECT_EQ(again_keys.session, keys[0].session);
  EXPECT_EQ(0, std::memcmp(again_keys.encryption_key.bytes, keys[0].encryption_key.bytes, 32));
  EXPECT_EQ(0, std::memcmp(again_keys.masking_key.bytes, keys[0].masking_key.bytes, 32));
  fedstat_v1_SecAggStart other = start;
  other.session = 78;
  EXPECT_EQ(parties[0]->client.on_start(other, again_keys).code(), StatusCode::kFailedPrecondition);
  auto roster = server.close_advertising();
  ASSERT_TRUE(roster.ok());
  ASSERT_EQ(roster->size(), 3u);

  // Rosters out of order are refused; in order they are taken.
  EXPECT_EQ(parties[0]->client.on_peer_keys((*roster)[1]).code(), StatusCode::kInvalidArgument);
  for (auto& p : parties) {
    for (const auto& entry : *roster) ASSERT_TRUE(p->client.on_peer_keys(entry).ok());
  }
  // An entry held, sent again: the same is taken (changes nothing), another key is refused.
  EXPECT_TRUE(parties[0]->client.on_peer_keys((*roster)[0]).ok());
  fedstat_v1_SecAggPeerKeys swapped = (*roster)[0];
  swapped.keys.masking_key.bytes[0] ^= 1;
  EXPECT_EQ(parties[0]->client.on_peer_keys(swapped).code(), StatusCode::kFailedPrecondition);

  // Round 1: a share claiming another sender, a replay, then a tampered delivery.
  std::vector<fedstat_v1_SecAggShare> sent;
  for (auto& p : parties) {
    fedstat_v1_SecAggShare share;
    while (p->client.next_share(share).value()) {
      EXPECT_EQ(server.on_share(p->client.id() == 11 ? 22 : 11, share).code(),
                StatusCode::kPermissionDenied);
      ASSERT_TRUE(server.on_share(p->client.id(), share).ok());
      EXPECT_EQ(server.on_share(p->client.id(), share).code(), StatusCode::kAlreadyExists);
      sent.push_back(share);
    }
  }
  EXPECT_EQ(server.on_chunk(11, fedstat_v1_SecAggMaskedChunk_init_zero).code(),
            StatusCode::kInvalidArgument);  // session 0: not this session
  auto u2 = server.close_sharing();
  ASSERT_TRUE(u2.ok());
  for (auto& p : parties) {
    for (const auto& share : server.shares_for(p->client.id())) {
      fedstat_v1_SecAggShare tampered = share;
      tampered.ciphertext.bytes[3] ^= 0x40;
      // A bad share is its sender's fault (issue 39): recorded as none held, no error for this
      // client; the valid one arriving next replaces that.
      EXPECT_TRUE(p->client.on_share(tampered).ok());
      fedstat_v1_SecAggShare misrouted = share;
      misrouted.to_id = share.from_id;
      EXPECT_NE(p->client.on_share(misrouted).code(), StatusCode::kOk);
      ASSERT_TRUE(p->client.on_share(share).ok());
      EXPECT_TRUE(p->client.on_share(tampered).ok());  // held already: ignored, the held one stays
    }
    fedstat_v1_SecAggRoster early = *u2;
    early.round = 3;
    EXPECT_EQ(p->client.on_roster(early).code(), StatusCode::kFailedPrecondition);
    ASSERT_TRUE(p->client.on_roster(*u2).ok());
  }

  // Round 2: chunks out of order, duplicated (an oversized word excludes its sender:
  // AMalformedMessageExcludesItsSenderAndTheSessionGoesOn).
  const std::vector<std::vector<uint64_t>> inputs = {{1, 2, 3}, {400, 500, 600}, {7, 8, 65535}};
  {  // Client 33 keeps 32-bit words (a microcontroller's choice); the sums agree.
    std::vector<uint32_t> v32(inputs[2].begin(), inputs[2].end());
    ASSERT_TRUE(parties[2]->client.mask(Span<uint32_t>(v32.data(), v32.size())).ok());
    fedstat_v1_SecAggMaskedChunk chunk;
    ASSERT_TRUE(parties[2]->client.next_chunk(Span<const uint32_t>(v32.data(), 3), chunk).value());
    ASSERT_TRUE(server.on_chunk(33, chunk).ok());
  }
  for (size_t i = 0; i < 2; ++i) {
    std::vector<uint64_t> v = inputs[i];
    ASSERT_TRUE(parties[i]->client.mask(Span<uint64_t>(v.data(), v.size())).ok());
    EXPECT_EQ(parties[i]->client.mask(Span<uint64_t>(v.data(), v.size())).code(),
              StatusCode::kFailedPrecondition);
    fedstat_v1_SecAggMaskedChunk chunk;
    ASSERT_TRUE(parties[i]->client.next_chunk(Span<const uint64_t>(v.data(), 3), chunk).value());
    fedstat_v1_SecAggMaskedChunk gap = chunk;
    gap.offset = 1;
    EXPECT_EQ(server.on_chunk(parties[i]->client.id(), gap).code(),
              StatusCode::kFailedPrecondition);
    ASSERT_TRUE(server.on_chunk(parties[i]->client.id(), chunk).ok());
    EXPECT_EQ(server.on_chunk(parties[i]->client.id(), chunk).code(), StatusCode::kAlreadyExists);
    EXPECT_FALSE(parties[i]->client.next_chunk(Span<const uint64_t>(v.data(), 3), chunk).value());
  }
  auto u3 = server.close_masking();
  ASSERT_TRUE(u3.ok());

  // Round 3: a reveal the protocol forbids (a key share of a survivor), duplicates; the client
  // refuses a U3 other than its first (which could make it reveal the other share of a peer).
  for (auto& p : parties) {
    ASSERT_TRUE(p->client.on_roster(*u3).ok());
    EXPECT_TRUE(p->client.on_roster(*u3).ok());  // the same again (a resume): changes nothing
    fedstat_v1_SecAggRoster smaller = *u3;
    smaller.members.bytes[0] &= static_cast<uint8_t>(~(p->client.id() == 33 ? 1u : 4u));
    EXPECT_EQ(p->client.on_roster(smaller).code(), StatusCode::kFailedPrecondition);
    fedstat_v1_SecAggReveal reveal;
    while (p->client.next_reveal(reveal).value()) {
      fedstat_v1_SecAggReveal forbidden = reveal;
      forbidden.self_mask = !reveal.self_mask;
      EXPECT_EQ(server.on_reveal(p->client.id(), forbidden).code(), StatusCode::kPermissionDenied);
      ASSERT_TRUE(server.on_reveal(p->client.id(), reveal).ok());
      EXPECT_EQ(server.on_reveal(p->client.id(), reveal).code(), StatusCode::kAlreadyExists);
    }
  }
  SeededStream blinding_stream(Seed256{}, 99);
  auto sum = server.finish(blinding_stream);
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(sum.value(), (std::vector<uint64_t>{408, 510, (603 + 65535) % 65536}));
}

// Issue 39: a masked word above 2^bits − 1 is malformed; its sender is excluded (kDataLoss, named
// in excluded()), refused from then on, and a dropout of the masking round — the session goes on
// with the others and unmasks their sum.
TEST(SecAgg, AMalformedMessageExcludesItsSenderAndTheSessionGoesOn) {
  SecAggServer server(small_config(79));
  std::vector<std::unique_ptr<Party>> parties;
  for (uint32_t id : {11u, 22u, 33u}) parties.push_back(std::make_unique<Party>(id));
  for (auto& p : parties) {
    fedstat_v1_SecAggKeys keys;
    ASSERT_TRUE(p->client.on_start(server.start(), keys).ok());
    ASSERT_TRUE(server.on_keys(keys).ok());
  }
  const auto roster = server.close_advertising();
  ASSERT_TRUE(roster.ok());
  for (auto& p : parties) {
    for (const auto& entry : *roster) ASSERT_TRUE(p->client.on_peer_keys(entry).ok());
    fedstat_v1_SecAggShare share;
    while (p->client.next_share(share).value())
      ASSERT_TRUE(server.on_share(p->client.id(), share).ok());
  }
  const auto u2 = server.close_sharing();
  ASSERT_TRUE(u2.ok());
  const std::vector<std::vector<uint64_t>> inputs = {{1, 2, 3}, {400, 500, 600}, {7, 8, 9}};
  for (size_t i = 0; i < 3; ++i) {
    secagg::SecAggClient& c = parties[i]->client;
    for (const auto& share : server.shares_for(c.id())) ASSERT_TRUE(c.on_share(share).ok());
    ASSERT_TRUE(c.on_roster(*u2).ok());
    std::vector<uint64_t> v = inputs[i];
    ASSERT_TRUE(c.mask(Span<uint64_t>(v.data(), v.size())).ok());
    fedstat_v1_SecAggMaskedChunk chunk;
    ASSERT_TRUE(c.next_chunk(Span<const uint64_t>(v.data(), 3), chunk).value());
    if (c.id() == 11) {
      fedstat_v1_SecAggMaskedChunk wide = chunk;
      wide.words[0] = 1u << 16;
      EXPECT_EQ(server.on_chunk(11, wide).code(), StatusCode::kDataLoss);
      EXPECT_EQ(server.on_chunk(11, chunk).code(), StatusCode::kPermissionDenied);
      continue;
    }
    ASSERT_TRUE(server.on_chunk(c.id(), chunk).ok());
  }
  ASSERT_EQ(server.excluded().size(), 1u);
  EXPECT_EQ(server.excluded()[0].first, 11u);
  EXPECT_NE(server.excluded()[0].second.find("2^bits"), std::string::npos);
  const auto u3 = server.close_masking();
  ASSERT_TRUE(u3.ok());
  EXPECT_EQ(server.u3(), (std::vector<uint32_t>{22, 33}));
  for (size_t i = 1; i < 3; ++i) {
    secagg::SecAggClient& c = parties[i]->client;
    ASSERT_TRUE(c.on_roster(*u3).ok());
    fedstat_v1_SecAggReveal reveal;
    while (c.next_reveal(reveal).value()) ASSERT_TRUE(server.on_reveal(c.id(), reveal).ok());
  }
  SeededStream blinding_stream(Seed256{}, 99);
  const auto sum = server.finish(blinding_stream);
  ASSERT_TRUE(sum.ok()) << server.abort_reason();
  EXPECT_EQ(sum.value(), (std::vector<uint64_t>{407, 508, 609}));
}

// A low-order or non-canonical key never reaches a device from an honest server (it excludes
// the sender); one that does (a server that skipped the check) is refused by the device before
// it sends any share, and changes nothing held (secagg_client.h says why not a dropout).
TEST(SecAgg, ADeviceRefusesARosterKeyOfLowOrder) {
  SecAggServer server(small_config(80));
  Party a(11), b(22);
  fedstat_v1_SecAggKeys ka, kb;
  ASSERT_TRUE(a.client.on_start(server.start(), ka).ok());
  ASSERT_TRUE(b.client.on_start(server.start(), kb).ok());
  fedstat_v1_SecAggKeys zero = kb;
  std::memset(zero.masking_key.bytes, 0, 32);
  EXPECT_EQ(server.on_keys(zero).code(), StatusCode::kDataLoss);  // excluded: 22 is out
  ASSERT_EQ(server.excluded().size(), 1u);
  EXPECT_EQ(server.excluded()[0].first, 22u);
  EXPECT_EQ(server.on_keys(kb).code(), StatusCode::kPermissionDenied);
  fedstat_v1_SecAggPeerKeys entry = fedstat_v1_SecAggPeerKeys_init_zero;
  entry.count = 2;
  entry.has_keys = true;
  entry.keys = ka;
  ASSERT_TRUE(a.client.on_peer_keys(entry).ok());
  entry.index = 1;
  entry.keys = zero;
  EXPECT_EQ(a.client.on_peer_keys(entry).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(a.client.roster_size(), 1u);
  EXPECT_EQ(a.client.stage(), secagg::SecAggStage::kAdvertised);
  entry.keys = kb;  // the genuine key is still taken
  EXPECT_TRUE(a.client.on_peer_keys(entry).ok());
  EXPECT_EQ(a.client.stage(), secagg::SecAggStage::kSharing);
}

// One session, no dropouts, driven by hand: every party advertises, shares, masks its input and
// reveals; the server's sum (or the first refusal) is returned.
Result<std::vector<uint64_t>> run_session(SecAggServer& server,
                                          std::vector<std::unique_ptr<Party>>& parties,
                                          std::vector<std::vector<uint64_t>> inputs) {
  const fedstat_v1_SecAggStart start = server.start();
  for (auto& p : parties) {
    fedstat_v1_SecAggKeys keys;
    FEDSTAT_RETURN_IF_ERROR(p->client.on_start(start, keys));
    FEDSTAT_RETURN_IF_ERROR(server.on_keys(keys));
  }
  FEDSTAT_ASSIGN_OR_RETURN(const auto roster, server.close_advertising());
  for (auto& p : parties) {
    for (const auto& entry : roster) FEDSTAT_RETURN_IF_ERROR(p->client.on_peer_keys(entry));
    fedstat_v1_SecAggShare share;
    while (true) {
      FEDSTAT_ASSIGN_OR_RETURN(const bool more, p->client.next_share(share));
      if (!more) break;
      FEDSTAT_RETURN_IF_ERROR(server.on_share(p->client.id(), share));
    }
  }
  FEDSTAT_ASSIGN_OR_RETURN(const auto u2, server.close_sharing());
  for (size_t i = 0; i < parties.size(); ++i) {
    secagg::SecAggClient& c = parties[i]->client;
    for (const auto& share : server.shares_for(c.id())) FEDSTAT_RETURN_IF_ERROR(c.on_share(share));
    FEDSTAT_RETURN_IF_ERROR(c.on_roster(u2));
    std::vector<uint64_t>& v = inputs[i];
    FEDSTAT_RETURN_IF_ERROR(c.mask(Span<uint64_t>(v.data(), v.size())));
    fedstat_v1_SecAggMaskedChunk chunk;
    while (true) {
      FEDSTAT_ASSIGN_OR_RETURN(const bool more,
                               c.next_chunk(Span<const uint64_t>(v.data(), v.size()), chunk));
      if (!more) break;
      FEDSTAT_RETURN_IF_ERROR(server.on_chunk(c.id(), chunk));
    }
  }
  FEDSTAT_ASSIGN_OR_RETURN(const auto u3, server.close_masking());
  for (auto& p : parties) {
    FEDSTAT_RETURN_IF_ERROR(p->client.on_roster(u3));
    fedstat_v1_SecAggReveal reveal;
    while (true) {
      FEDSTAT_ASSIGN_OR_RETURN(const bool more, p->client.next_reveal(reveal));
      if (!more) break;
      FEDSTAT_RETURN_IF_ERROR(server.on_reveal(p->client.id(), reveal));
    }
  }
  SeededStream blinding_stream(Seed256{}, 99);
  return server.finish(blinding_stream);
}

// The Client keeps one SecAggClient for all its rounds. A session aborted after the roster began
// to arrive left its session hash half-fed; the next session on the same object then hashed on
// top of it, every peer refused its shares (kDataLoss) and the device could never again take
// part in a DIST round. init() now starts from nothing.
TEST(SecAgg, AClientReusedAfterAnAbortedSessionTakesPartInTheNext) {
  SecAggServerConfig config = small_config(0);  // each session sets its number
  std::vector<std::unique_ptr<Party>> parties;
  for (uint32_t id : {11u, 22u, 33u}) parties.push_back(std::make_unique<Party>(id));
  {  // Session 41: advertised, two roster entries taken by client 11, then aborted.
    config.session = 41;
    SecAggServer aborted(config);
    const fedstat_v1_SecAggStart start = aborted.start();
    for (auto& p : parties) {
      fedstat_v1_SecAggKeys keys;
      ASSERT_TRUE(p->client.on_start(start, keys).ok());
      ASSERT_TRUE(aborted.on_keys(keys).ok());
    }
    auto roster = aborted.close_advertising();
    ASSERT_TRUE(roster.ok());
    ASSERT_TRUE(parties[0]->client.on_peer_keys((*roster)[0]).ok());
    ASSERT_TRUE(parties[0]->client.on_peer_keys((*roster)[1]).ok());
    parties[0]->client.on_abort();
    EXPECT_EQ(parties[0]->client.stage(), secagg::SecAggStage::kAborted);
  }
  for (auto& p : parties) {  // the next round, as the Client does: init on the same objects
    ASSERT_TRUE(
        p->client.init(p->client.id(), Span<secagg::SecAggPeer>(p->peers.data(), 8), p->stream)
            .ok());
    EXPECT_EQ(p->client.roster_size(), 0u);
  }
  config.session = 42;
  SecAggServer server(config);
  auto sum = run_session(server, parties, {{1, 2, 3}, {10, 20, 30}, {100, 200, 300}});
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(sum.value(), (std::vector<uint64_t>{111, 222, 333}));
}

// ---- Resumption (a lost channel): the same object sends the same bytes again from where the
// server's count says, and acts on one U2 and one U3 only. -----------------------------------

std::vector<uint8_t> bytes_of(const void* p, size_t n) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  return std::vector<uint8_t>(b, b + n);
}
std::vector<uint8_t> share_bytes(const fedstat_v1_SecAggShare& s) {
  std::vector<uint8_t> out = bytes_of(s.ciphertext.bytes, s.ciphertext.size);
  out.push_back(static_cast<uint8_t>(s.to_id));
  return out;
}
std::vector<uint8_t> chunk_bytes(const fedstat_v1_SecAggMaskedChunk& c) {
  std::vector<uint8_t> out = bytes_of(c.words, sizeof(c.words[0]) * c.words_count);
  out.push_back(static_cast<uint8_t>(c.offset));
  return out;
}
std::vector<uint8_t> reveal_bytes(const fedstat_v1_SecAggReveal& r) {
  std::vector<uint8_t> out = bytes_of(r.share.bytes, r.share.size);
  out.push_back(static_cast<uint8_t>(r.about_id));
  out.push_back(r.self_mask ? 1 : 0);
  return out;
}

TEST(SecAggResume, RewindsGiveTheSameBytesAndOnlyTheFirstRostersAreActedOn) {
  SecAggServerConfig config;
  config.session = 91;
  config.threshold = 3;        // of at most 4: more than half
  config.vector_length = 150;  // three chunks: 64 + 64 + 22
  config.bits = 32;
  config.max_clients = 4;
  SecAggServer server(config);
  std::vector<std::unique_ptr<Party>> parties;
  for (uint32_t id : {11u, 22u, 33u, 44u}) parties.push_back(std::make_unique<Party>(id));
  secagg::SecAggClient& a = parties[0]->client;  // the device that resumes
  for (auto& p : parties) {
    fedstat_v1_SecAggKeys keys;
    ASSERT_TRUE(p->client.on_start(server.start(), keys).ok());
    ASSERT_TRUE(server.on_keys(keys).ok());
  }
  auto u1 = server.close_advertising();
  ASSERT_TRUE(u1.ok());
  for (auto& p : parties) {
    for (const auto& entry : *u1) ASSERT_TRUE(p->client.on_peer_keys(entry).ok());
  }
  // Round 1: a's three shares, then again after each possible count held.
  std::vector<std::vector<uint8_t>> a_shares;
  for (auto& p : parties) {
    fedstat_v1_SecAggShare share;
    while (p->client.next_share(share).value()) {
      ASSERT_TRUE(server.on_share(p->client.id(), share).ok());
      if (&p->client == &a) a_shares.push_back(share_bytes(share));
    }
  }
  ASSERT_EQ(a_shares.size(), 3u);
  for (uint32_t held = 0; held <= 3; ++held) {
    ASSERT_TRUE(a.rewind(1, held).ok());
    std::vector<std::vector<uint8_t>> again;
    fedstat_v1_SecAggShare share;
    while (a.next_share(share).value()) again.push_back(share_bytes(share));
    EXPECT_EQ(again, std::vector<std::vector<uint8_t>>(a_shares.begin() + held, a_shares.end()))
        << "held " << held;
  }
  EXPECT_EQ(a.rewind(1, 4).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(a.rewind(2, 0).code(), StatusCode::kFailedPrecondition);  // not masked yet
  auto u2 = server.close_sharing();
  ASSERT_TRUE(u2.ok());
  for (auto& p : parties) {
    for (const auto& share : server.shares_for(p->client.id())) {
      ASSERT_TRUE(p->client.on_share(share).ok());
    }
    ASSERT_TRUE(p->client.on_roster(*u2).ok());
  }
  // Round 2: 44 never sends its input (it leaves U3); a's chunks again from each chunk boundary.
  const uint64_t mask = (uint64_t{1} << 32) - 1;
  std::vector<uint64_t> expected(150, 0), a_masked;
  std::vector<std::vector<uint8_t>> a_chunks;
  for (size_t i = 0; i < 3; ++i) {
    std::vector<uint64_t> v(150);
    for (size_t k = 0; k < v.size(); ++k) v[k] = (k * 2654435761u + i * 977) & mask;
    for (size_t k = 0; k < v.size(); ++k) expected[k] = (expected[k] + v[k]) & mask;
    ASSERT_TRUE(parties[i]->client.mask(Span<uint64_t>(v.data(), v.size())).ok());
    fedstat_v1_SecAggMaskedChunk chunk;
    while (parties[i]->client.next_chunk(Span<const uint64_t>(v.data(), v.size()), chunk).value()) {
      ASSERT_TRUE(server.on_chunk(parties[i]->client.id(), chunk).ok());
      if (i == 0) a_chunks.push_back(chunk_bytes(chunk));
    }
    if (i == 0) a_masked = v;
  }
  ASSERT_EQ(a_chunks.size(), 3u);
  for (uint32_t held : {0u, 64u, 128u, 150u}) {
    ASSERT_TRUE(a.rewind(2, held).ok());
    std::vector<std::vector<uint8_t>> again;
    fedstat_v1_SecAggMaskedChunk chunk;
    while (a.next_chunk(Span<const uint64_t>(a_masked.data(), a_masked.size()), chunk).value()) {
      again.push_back(chunk_bytes(chunk));
    }
    EXPECT_EQ(again.size(), 3u - (held + 63) / 64) << "held " << held;
    EXPECT_EQ(again,
              std::vector<std::vector<uint8_t>>(a_chunks.end() - again.size(), a_chunks.end()));
  }
  EXPECT_EQ(a.rewind(2, 65).code(), StatusCode::kInvalidArgument);  // not a chunk boundary
  // The same U2 again changes nothing; another U2 (44 dropped) is refused: the input was
  // masked for the first.
  EXPECT_TRUE(a.on_roster(*u2).ok());
  fedstat_v1_SecAggRoster other_u2 = *u2;
  other_u2.members.bytes[0] &= static_cast<uint8_t>(~8u);
  EXPECT_EQ(a.on_roster(other_u2).code(), StatusCode::kFailedPrecondition);
  auto u3 = server.close_masking();
  ASSERT_TRUE(u3.ok());
  // Round 3: a reveals b-shares of 11, 22, 33 and the key share of 44, in that order.
  for (size_t i = 0; i < 3; ++i) ASSERT_TRUE(parties[i]->client.on_roster(*u3).ok());
  std::vector<std::vector<uint8_t>> a_reveals;
  for (size_t i = 0; i < 3; ++i) {
    fedstat_v1_SecAggReveal reveal;
    while (parties[i]->client.next_reveal(reveal).value()) {
      if (i == 0) a_reveals.push_back(reveal_bytes(reveal));
      if (i != 0 || a_reveals.size() <= 2) {  // a's last two reveals are "lost" for now
        ASSERT_TRUE(server.on_reveal(parties[i]->client.id(), reveal).ok());
      }
    }
  }
  ASSERT_EQ(a_reveals.size(), 4u);
  // A U3 naming 44 as a survivor would make a reveal 44's b-share after its key share: refused,
  // and the reveals a makes afterwards are the same ones.
  fedstat_v1_SecAggRoster everyone = *u3;
  everyone.members.bytes[0] |= 8u;
  EXPECT_EQ(a.on_roster(everyone).code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(a.on_roster(*u3).ok());
  for (uint32_t held = 0; held <= 4; ++held) {
    ASSERT_TRUE(a.rewind(3, held).ok());
    std::vector<std::vector<uint8_t>> again;
    fedstat_v1_SecAggReveal reveal;
    while (a.next_reveal(reveal).value()) again.push_back(reveal_bytes(reveal));
    EXPECT_EQ(again, std::vector<std::vector<uint8_t>>(a_reveals.begin() + held, a_reveals.end()))
        << "held " << held;
  }
  EXPECT_EQ(a.rewind(3, 5).code(), StatusCode::kInvalidArgument);
  // The server takes the rest of a's reveals, resent after the two it holds: the exact sum.
  ASSERT_TRUE(a.rewind(3, 2).ok());
  fedstat_v1_SecAggReveal reveal;
  while (a.next_reveal(reveal).value()) ASSERT_TRUE(server.on_reveal(11, reveal).ok());
  SeededStream blinding_stream(Seed256{}, 98);
  auto sum = server.finish(blinding_stream);
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(sum.value(), expected);
}

// ---- The share key, agreed once per peer: kept from the client's own share to the peer until
// the peer's share to it is opened, wiped at U2. Counted through the X25519 agreements' draws
// (CountingStream). ------------------------------------------------------------------------------

bool all_zero(const void* p, size_t n) {
  return bytes_of(p, n) == std::vector<uint8_t>(n, 0);
}

// Parties 11, 22, 33 advertise and take the roster; the server is returned ready for shares.
std::unique_ptr<SecAggServer> advertise_three(std::vector<std::unique_ptr<CountedParty>>& parties) {
  auto server = std::make_unique<SecAggServer>(small_config(90));
  for (uint32_t id : {11u, 22u, 33u}) parties.push_back(std::make_unique<CountedParty>(id));
  const fedstat_v1_SecAggStart start = server->start();
  for (auto& p : parties) {
    fedstat_v1_SecAggKeys keys;
    EXPECT_TRUE(p->client.on_start(start, keys).ok());
    EXPECT_TRUE(server->on_keys(keys).ok());
  }
  auto roster = server->close_advertising();
  EXPECT_TRUE(roster.ok());
  for (auto& p : parties) {
    for (const auto& entry : roster.value()) EXPECT_TRUE(p->client.on_peer_keys(entry).ok());
  }
  return server;
}

TEST(SecAggShareKey, APeersShareIsOpenedWithTheKeyMadeForItsOwnShareAndKeptKeysGoAtU2) {
  std::vector<std::unique_ptr<CountedParty>> parties;
  auto server = advertise_three(parties);
  // 11 and 22 send their shares; 33 drops before sharing.
  for (size_t i = 0; i < 2; ++i) {
    const size_t before = parties[i]->stream.fills;
    fedstat_v1_SecAggShare share;
    size_t made = 0;
    while (parties[i]->client.next_share(share).value()) {
      ASSERT_TRUE(server->on_share(parties[i]->client.id(), share).ok());
      ++made;
    }
    EXPECT_EQ(made, 2u);
    EXPECT_GE(parties[i]->stream.fills - before, made);  // an agreement (its draws) per share
  }
  // The key made for 33 is kept in 11's entry for 33 until U2.
  EXPECT_FALSE(all_zero(parties[0]->entry_of(33).self_mask_share,
                        sizeof(secagg::SecAggPeer::self_mask_share)));
  auto u2 = server->close_sharing();
  ASSERT_TRUE(u2.ok());
  for (size_t i = 0; i < 2; ++i) {
    const auto shares = server->shares_for(parties[i]->client.id());
    ASSERT_EQ(shares.size(), 1u);
    const size_t before = parties[i]->stream.fills;
    fedstat_v1_SecAggShare tampered = shares[0];
    tampered.ciphertext.bytes[5] ^= 0x10;
    // A bad share: recorded as none held (its sender's fault, issue 39), the kept key untouched.
    EXPECT_TRUE(parties[i]->client.on_share(tampered).ok());
    ASSERT_TRUE(parties[i]->client.on_share(shares[0]).ok());  // the kept key survived it
    EXPECT_EQ(parties[i]->stream.fills, before) << "opening a share agreed a key again";
    ASSERT_TRUE(parties[i]->client.on_roster(u2.value()).ok());
  }
  // After U2 no share is opened: 11's kept key for 33 is wiped, 22's share to 11 is held.
  EXPECT_TRUE(all_zero(parties[0]->entry_of(33).self_mask_share,
                       sizeof(secagg::SecAggPeer::self_mask_share)));
  EXPECT_FALSE(all_zero(parties[0]->entry_of(22).self_mask_share,
                        sizeof(secagg::SecAggPeer::self_mask_share)));
  // And the round still sums exactly over 11 and 22 (the shares opened with kept keys are right).
  const std::vector<std::vector<uint64_t>> inputs = {{1, 2, 3}, {10, 20, 30}};
  for (size_t i = 0; i < 2; ++i) {
    std::vector<uint64_t> v = inputs[i];
    ASSERT_TRUE(parties[i]->client.mask(Span<uint64_t>(v.data(), v.size())).ok());
    fedstat_v1_SecAggMaskedChunk chunk;
    ASSERT_TRUE(parties[i]->client.next_chunk(Span<const uint64_t>(v.data(), 3), chunk).value());
    ASSERT_TRUE(server->on_chunk(parties[i]->client.id(), chunk).ok());
  }
  auto u3 = server->close_masking();
  ASSERT_TRUE(u3.ok());
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(parties[i]->client.on_roster(u3.value()).ok());
    fedstat_v1_SecAggReveal reveal;
    while (parties[i]->client.next_reveal(reveal).value()) {
      ASSERT_TRUE(server->on_reveal(parties[i]->client.id(), reveal).ok());
    }
  }
  SeededStream blinding(Seed256{}, 99);
  auto sum = server->finish(blinding);
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(sum.value(), (std::vector<uint64_t>{11, 22, 33}));
}

TEST(SecAggShareKey, KeptKeysAreWipedWhenTheSessionAbortsBelowThreshold) {
  std::vector<std::unique_ptr<CountedParty>> parties;
  auto server = advertise_three(parties);
  CountedParty& p11 = *parties[0];
  fedstat_v1_SecAggShare share;
  while (p11.client.next_share(share).value()) {
  }
  EXPECT_FALSE(
      all_zero(p11.entry_of(22).self_mask_share, sizeof(secagg::SecAggPeer::self_mask_share)));
  EXPECT_FALSE(
      all_zero(p11.entry_of(33).self_mask_share, sizeof(secagg::SecAggPeer::self_mask_share)));
  // A U2 naming 11 alone: fewer than the threshold (2), so 11 aborts — and its kept keys go.
  fedstat_v1_SecAggRoster u2 = fedstat_v1_SecAggRoster_init_zero;
  u2.session = 90;
  u2.round = 2;
  u2.members.size = 1;
  for (size_t i = 0; i < 3; ++i) {
    if (p11.peers[i].id == 11) u2.members.bytes[0] = static_cast<uint8_t>(1u << i);
  }
  EXPECT_EQ(p11.client.on_roster(u2).code(), StatusCode::kAborted);
  EXPECT_EQ(p11.client.stage(), secagg::SecAggStage::kAborted);
  EXPECT_TRUE(
      all_zero(p11.entry_of(22).self_mask_share, sizeof(secagg::SecAggPeer::self_mask_share)));
  EXPECT_TRUE(
      all_zero(p11.entry_of(33).self_mask_share, sizeof(secagg::SecAggPeer::self_mask_share)));
}

TEST(SecAggShareKey, AShareArrivingBeforeTheClientsOwnIsOpenedWithAnAgreementOfItsOwn) {
  std::vector<std::unique_ptr<CountedParty>> parties;
  auto server = advertise_three(parties);
  std::vector<fedstat_v1_SecAggShare> from11;
  fedstat_v1_SecAggShare share;
  while (parties[0]->client.next_share(share).value()) from11.push_back(share);
  ASSERT_EQ(from11.size(), 2u);
  // 11's share reaches 22 before 22 made any: 22 holds no key for 11 and agrees one.
  const fedstat_v1_SecAggShare& to22 = from11[0].to_id == 22 ? from11[0] : from11[1];
  size_t before = parties[1]->stream.fills;
  ASSERT_TRUE(parties[1]->client.on_share(to22).ok());
  EXPECT_GT(parties[1]->stream.fills, before);
  const std::vector<uint8_t> held_from11 = bytes_of(parties[1]->entry_of(11).self_mask_share,
                                                    sizeof(secagg::SecAggPeer::self_mask_share));
  // 22's share to 11 (made after 11's share is held: a fresh agreement, not kept over the share)
  // opens at 11 with the key 11 kept, and 22's held share from 11 is intact.
  std::vector<fedstat_v1_SecAggShare> from22;
  while (parties[1]->client.next_share(share).value()) from22.push_back(share);
  const fedstat_v1_SecAggShare& to11 = from22[0].to_id == 11 ? from22[0] : from22[1];
  before = parties[0]->stream.fills;
  ASSERT_TRUE(parties[0]->client.on_share(to11).ok());
  EXPECT_EQ(parties[0]->stream.fills, before);
  EXPECT_EQ(bytes_of(parties[1]->entry_of(11).self_mask_share,
                     sizeof(secagg::SecAggPeer::self_mask_share)),
            held_from11);
}

}  // namespace
}  // namespace host
}  // namespace fedstat
