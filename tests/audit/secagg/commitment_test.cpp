// The commitment to the self-mask seed (review finding F2; /work/notes/secagg-before.md, "Review
// findings F1–F5"): in round 0 each device sends c_u = SHA-256(tag ‖ session ‖ id ‖ b_u) beside
// its public keys; the roster carries it and the session hash covers it; the server refuses keys
// without one and checks every rebuilt b_v against c_v before using it. These failed to compile
// on the tree before the fix (no SecAggKeys.commitment, no secagg::self_mask_commitment).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "host_server/secagg/secagg_server.h"
#include "sdk/base/bytes.h"
#include "sdk/base/crypto.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/secagg/secagg_client.h"
#include "sdk/secagg/shamir.h"

namespace fedstat {
namespace host {
namespace testing {
namespace {

constexpr uint64_t kSession = 0xC0FFEE;

fedstat_v1_SecAggStart start_of(uint32_t threshold, uint32_t max_clients) {
  fedstat_v1_SecAggStart start = fedstat_v1_SecAggStart_init_zero;
  start.session = kSession;
  start.threshold = threshold;
  start.vector_length = 4;
  start.bits = 16;
  start.max_clients = max_clients;
  return start;
}

// One device: a SecAggClient with its own storage and randomness.
struct Device {
  std::vector<secagg::SecAggPeer> peers;
  SeededStream random;
  secagg::SecAggClient client;
  fedstat_v1_SecAggKeys keys = fedstat_v1_SecAggKeys_init_zero;
  Device(uint32_t id, uint32_t max_clients) : peers(max_clients), random(Seed256{}, id) {
    EXPECT_TRUE(client.init(id, Span<secagg::SecAggPeer>(peers.data(), peers.size()), random).ok());
    EXPECT_TRUE(client.on_start(start_of(2, max_clients), keys).ok());
  }
};

fedstat_v1_SecAggPeerKeys entry_of(const fedstat_v1_SecAggKeys& keys, uint32_t index,
                                   uint32_t count) {
  fedstat_v1_SecAggPeerKeys entry = fedstat_v1_SecAggPeerKeys_init_zero;
  entry.index = index;
  entry.count = count;
  entry.has_keys = true;
  entry.keys = keys;
  return entry;
}

Status feed(secagg::SecAggClient& client, const std::vector<fedstat_v1_SecAggKeys>& roster) {
  for (size_t i = 0; i < roster.size(); ++i) {
    const Status s = client.on_peer_keys(
        entry_of(roster[i], static_cast<uint32_t>(i), static_cast<uint32_t>(roster.size())));
    if (!s.ok()) return s;
  }
  return Status();
}

TEST(SecAggCommitment, TheCommitmentIsSha256OfTheDocumentedLayout) {
  uint8_t seed[32];
  for (int i = 0; i < 32; ++i) seed[i] = static_cast<uint8_t>(7 * i + 1);
  uint8_t got[32];
  ASSERT_TRUE(
      secagg::self_mask_commitment(kSession, 42, ByteSpan(seed, 32), MutableByteSpan(got, 32))
          .ok());
  // tag ‖ LE64 session ‖ LE32 client id ‖ b_u (secagg_client.h).
  const std::string tag = "fedstat secagg self-mask commitment v1";
  std::vector<uint8_t> input(tag.begin(), tag.end());
  uint8_t le[8];
  store_le64(le, kSession);
  input.insert(input.end(), le, le + 8);
  store_le32(le, 42);
  input.insert(input.end(), le, le + 4);
  input.insert(input.end(), seed, seed + 32);
  uint8_t want[32];
  ASSERT_TRUE(crypto::sha256(ByteSpan(input.data(), input.size()), Span<uint8_t>(want, 32)).ok());
  EXPECT_EQ(0, std::memcmp(got, want, 32));
  // Bound to the session and to the client: another of either gives another commitment.
  uint8_t other[32];
  ASSERT_TRUE(
      secagg::self_mask_commitment(kSession + 1, 42, ByteSpan(seed, 32), MutableByteSpan(other, 32))
          .ok());
  EXPECT_NE(0, std::memcmp(got, other, 32));
  ASSERT_TRUE(
      secagg::self_mask_commitment(kSession, 43, ByteSpan(seed, 32), MutableByteSpan(other, 32))
          .ok());
  EXPECT_NE(0, std::memcmp(got, other, 32));
  EXPECT_EQ(secagg::self_mask_commitment(kSession, 42, ByteSpan(seed, 31), MutableByteSpan(got, 32))
                .code(),
            StatusCode::kInvalidArgument);
}

TEST(SecAggCommitment, TheDeviceSendsOneAndTheSameOnAResume) {
  Device a(1, 3);
  ASSERT_EQ(a.keys.commitment.size, secagg::kCommitmentBytes);
  fedstat_v1_SecAggKeys again = fedstat_v1_SecAggKeys_init_zero;
  ASSERT_TRUE(a.client.on_start(start_of(2, 3), again).ok());  // the same start: a resume
  ASSERT_EQ(again.commitment.size, secagg::kCommitmentBytes);
  EXPECT_EQ(0, std::memcmp(again.commitment.bytes, a.keys.commitment.bytes, 32));
  Device b(2, 3);
  EXPECT_NE(0, std::memcmp(b.keys.commitment.bytes, a.keys.commitment.bytes, 32));
}

TEST(SecAggCommitment, AServerThatChangesACommitmentMakesTheSessionHashesDiffer) {
  Device a(1, 3), b(2, 3), c(3, 3);
  const std::vector<fedstat_v1_SecAggKeys> honest = {a.keys, b.keys, c.keys};
  std::vector<fedstat_v1_SecAggKeys> changed = honest;
  changed[0].commitment.bytes[0] ^= 0x01;  // a's commitment, as the server shows it to c
  ASSERT_TRUE(feed(a.client, honest).ok());
  ASSERT_TRUE(feed(b.client, honest).ok());
  ASSERT_TRUE(feed(c.client, changed).ok());  // c cannot check a's commitment, but hashes it
  EXPECT_EQ(0, std::memcmp(a.client.session_hash().data(), b.client.session_hash().data(), 32));
  EXPECT_NE(0, std::memcmp(a.client.session_hash().data(), c.client.session_hash().data(), 32));
}

TEST(SecAggCommitment, TheDeviceRefusesItsOwnEntryWithAnotherOrNoCommitment) {
  Device a(1, 3), b(2, 3);
  std::vector<fedstat_v1_SecAggKeys> roster = {a.keys, b.keys};
  roster[0].commitment.bytes[31] ^= 0x80;
  EXPECT_EQ(feed(a.client, roster).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(a.client.roster_size(), 0u);
  // A peer's entry without a commitment is malformed.
  roster = {a.keys, b.keys};
  roster[1].commitment.size = 0;
  EXPECT_EQ(feed(a.client, roster).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(a.client.roster_size(), 1u);  // its own entry, held; nothing of b's
}

TEST(SecAggCommitment, TheServerExcludesKeysWithoutACommitment) {
  SecAggServerConfig config;
  config.session = kSession;
  config.threshold = 2;
  config.vector_length = 4;
  config.bits = 16;
  config.max_clients = 3;
  SecAggServer server(config);
  Device a(1, 3), b(2, 3), c(3, 3);
  c.keys.commitment.size = 0;  // a device older than protocol version 3
  ASSERT_TRUE(server.on_keys(a.keys).ok());
  ASSERT_TRUE(server.on_keys(b.keys).ok());
  EXPECT_EQ(server.on_keys(c.keys).code(), StatusCode::kDataLoss);
  ASSERT_TRUE(server.is_excluded(3));
  EXPECT_NE(server.excluded().at(0).second.find("commitment"), std::string::npos);
  // The roster carries each member's commitment as sent.
  auto roster = server.close_advertising();
  ASSERT_TRUE(roster.ok());
  ASSERT_EQ(roster.value().size(), 2u);
  EXPECT_EQ(roster.value()[0].keys.commitment.size, secagg::kCommitmentBytes);
  EXPECT_EQ(0, std::memcmp(roster.value()[0].keys.commitment.bytes, a.keys.commitment.bytes, 32));
}

// The server alone (no devices): n clients whose self-mask seeds are all `seed`, each committed
// to under its own id — except `liar`'s, committed to another seed. Every reveal is a share of
// `seed`, so every b_v rebuilds to `seed`, and only the liar's fails its commitment.
TEST(SecAggCommitment, ARebuiltSeedThatDoesNotMatchItsCommitmentIsRefusedAtFinish) {
  constexpr uint32_t kN = 3, kT = 2, kLiar = 2;
  SecAggServerConfig config;
  config.session = kSession;
  config.threshold = kT;
  config.vector_length = 4;
  config.bits = 16;
  config.max_clients = kN;
  SecAggServer server(config);
  uint8_t seed[32] = {9, 8, 7}, other[32] = {9, 8, 6}, poly[32] = {1};
  SeededStream random(Seed256{}, 77);
  for (uint32_t id = 1; id <= kN; ++id) {
    fedstat_v1_SecAggKeys keys = fedstat_v1_SecAggKeys_init_zero;
    keys.session = kSession;
    keys.client_id = id;
    keys.encryption_key.size = keys.masking_key.size = 32;
    ASSERT_TRUE(random.fill(MutableByteSpan(keys.encryption_key.bytes, 32)).ok());
    ASSERT_TRUE(random.fill(MutableByteSpan(keys.masking_key.bytes, 32)).ok());
    keys.encryption_key.bytes[31] &= 0x3f;  // canonical, not of low order
    keys.masking_key.bytes[31] &= 0x3f;
    keys.commitment.size = secagg::kCommitmentBytes;
    ASSERT_TRUE(secagg::self_mask_commitment(kSession, id, ByteSpan(id == kLiar ? other : seed, 32),
                                             MutableByteSpan(keys.commitment.bytes, 32))
                    .ok());
    ASSERT_TRUE(server.on_keys(keys).ok());
  }
  ASSERT_TRUE(server.close_advertising().ok());
  fedstat_v1_SecAggShare share = fedstat_v1_SecAggShare_init_zero;
  share.session = kSession;
  share.ciphertext.size = secagg::kShareCipherBytes;
  for (uint32_t from = 1; from <= kN; ++from) {
    for (uint32_t to = 1; to <= kN; ++to) {
      if (to == from) continue;
      share.from_id = from;
      share.to_id = to;
      ASSERT_TRUE(server.on_share(from, share).ok());
    }
  }
  ASSERT_TRUE(server.close_sharing().ok());
  fedstat_v1_SecAggMaskedChunk chunk = fedstat_v1_SecAggMaskedChunk_init_zero;
  chunk.session = kSession;
  chunk.words_count = 4;
  for (uint32_t id = 1; id <= kN; ++id) {
    chunk.client_id = id;
    ASSERT_TRUE(server.on_chunk(id, chunk).ok());
  }
  ASSERT_TRUE(server.close_masking().ok());
  secagg::ShamirDealer dealer;
  ASSERT_TRUE(dealer.init(ByteSpan(seed, 32), kT, ByteSpan(poly, 32)).ok());
  fedstat_v1_SecAggReveal reveal = fedstat_v1_SecAggReveal_init_zero;
  reveal.session = kSession;
  reveal.self_mask = true;
  reveal.share.size = secagg::kShareBytes;
  for (uint32_t from = 1; from <= kN; ++from) {
    secagg::ShamirShare mine;
    ASSERT_TRUE(dealer.share_for(from, mine).ok());
    secagg::share_to_bytes(mine, MutableByteSpan(reveal.share.bytes, secagg::kShareBytes));
    reveal.from_id = from;
    for (uint32_t about = 1; about <= kN; ++about) {
      reveal.about_id = about;
      ASSERT_TRUE(server.on_reveal(from, reveal).ok());
    }
  }
  const auto sum = server.finish(random);
  EXPECT_EQ(sum.status().code(), StatusCode::kAborted);
  EXPECT_TRUE(server.aborted());
  EXPECT_NE(server.abort_reason().find("client 2"), std::string::npos) << server.abort_reason();
  EXPECT_NE(server.abort_reason().find("commitment"), std::string::npos) << server.abort_reason();
  EXPECT_TRUE(server.excluded().empty());
}

}  // namespace
}  // namespace testing
}  // namespace host
}  // namespace fedstat
