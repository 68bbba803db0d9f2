// Signed secure aggregation (protocol 5, issue 42): device credentials on the keys, the
// consistency round, and every refusal — SDK clients (sdk/secagg) driven by hand through the
// host's SecAggServer, or the whole session in process (secagg_simulation.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "host_server/secagg/secagg_server.h"
#include "host_server/secagg/secagg_simulation.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/credential/device_credential.h"
#include "sdk/secagg/secagg_client.h"
#include "sdk/secagg/signed_keys.h"

namespace fedstat {
namespace host {
namespace {

using secagg::SecAggStage;

// A fleet CA and its devices' credentials, from seeded streams.
struct Ca {
  uint8_t private_key[32] = {};
  uint8_t public_key[65] = {};
  explicit Ca(uint64_t stream) {
    SeededStream random(Seed256{}, stream);
    EXPECT_TRUE(credential::generate_key_pair(random, MutableByteSpan(private_key, 32),
                                              MutableByteSpan(public_key, 65))
                    .ok());
  }
  credential::DeviceCredential issue(uint32_t id, const Ca& trusted) const {
    credential::DeviceCredential c;
    SeededStream random(Seed256{}, 1000 + id);
    EXPECT_TRUE(credential::generate_key_pair(random, MutableByteSpan(c.private_key, 32),
                                              MutableByteSpan(c.certificate.public_key, 65))
                    .ok());
    EXPECT_TRUE(credential::issue_certificate(ByteSpan(private_key, 32), id,
                                              ByteSpan(c.certificate.public_key, 65), c.certificate)
                    .ok());
    std::memcpy(c.ca_public_key, trusted.public_key, 65);
    return c;
  }
};

struct Device {
  explicit Device(uint32_t id, size_t roster)
      : random(Seed256{}, id), peers(roster), input(kLength) {
    EXPECT_TRUE(client.init(id, Span<secagg::SecAggPeer>(peers.data(), peers.size()), random).ok());
    for (uint32_t k = 0; k < kLength; ++k) input[k] = (uint64_t{id} * 7919 + k) & 0xffffffffu;
  }
  static constexpr uint32_t kLength = 5;
  SeededStream random;
  std::vector<secagg::SecAggPeer> peers;
  secagg::SecAggClient client;
  credential::DeviceCredential credential;
  std::vector<uint64_t> input;
  std::vector<uint64_t> masked;
  fedstat_v1_SecAggKeys keys = fedstat_v1_SecAggKeys_init_zero;
};

// n devices (ids 1..n) with credentials of one CA, and a signed server; each phase by hand.
class Session {
 public:
  Session(uint32_t n, uint32_t t, uint32_t degree = 0, uint64_t session = 77) : ca_(5001) {
    config_.session = session;
    config_.threshold = t;
    config_.vector_length = Device::kLength;
    config_.bits = 32;
    config_.max_clients = n;
    config_.degree = degree;
    for (int i = 0; i < 32; ++i) config_.graph_seed[i] = static_cast<uint8_t>(i + 1);
    config_.signed_keys = true;
    std::memcpy(config_.ca_public_key, ca_.public_key, 65);
    server_ = std::make_unique<SecAggServer>(config_);
    for (uint32_t id = 1; id <= n; ++id) {
      devices_.push_back(std::make_unique<Device>(id, secagg::neighbourhood_size(n, degree)));
      Device& d = *devices_.back();
      d.credential = ca_.issue(id, ca_);
      d.client.set_credential(&d.credential);
    }
  }
  Device& device(uint32_t id) { return *devices_[id - 1]; }
  SecAggServer& server() { return *server_; }
  const Ca& ca() const { return ca_; }
  uint32_t size() const { return static_cast<uint32_t>(devices_.size()); }

  // Round 0: every device's keys to the server, and U1.
  void advertise() {
    for (auto& d : devices_) {
      ASSERT_TRUE(d->client.on_start(server_->start(), d->keys).ok());
      ASSERT_TRUE(server_->on_keys(d->keys).ok()) << d->client.id();
    }
    ASSERT_TRUE(server_->close_advertising().ok());
  }
  // Round 1 for every device but `skip` (fed its roster by the test): rosters, shares, U2.
  void share(uint32_t skip = 0) {
    for (auto& d : devices_) {
      if (d->client.id() == skip) continue;
      for (const auto& entry : server_->roster_for(d->client.id())) {
        ASSERT_TRUE(d->client.on_peer_keys(entry).ok()) << d->client.id();
      }
      fedstat_v1_SecAggShare share;
      while (true) {
        auto more = d->client.next_share(share);
        ASSERT_TRUE(more.ok());
        if (!more.value()) break;
        ASSERT_TRUE(server_->on_share(d->client.id(), share).ok());
      }
    }
    ASSERT_TRUE(server_->close_sharing().ok());
    for (auto& d : devices_) {
      for (const auto& share : server_->shares_for(d->client.id())) {
        ASSERT_TRUE(d->client.on_share(share).ok());
      }
      ASSERT_TRUE(d->client.on_roster(server_->u2_for(d->client.id())).ok());
    }
  }
  // Round 2 for one device: it masks its input (if not yet) and sends every chunk.
  void send_masked(Device& d) {
    if (d.client.stage() == SecAggStage::kReadyToMask) {
      d.masked = d.input;
      ASSERT_TRUE(d.client.mask(Span<uint64_t>(d.masked.data(), d.masked.size())).ok());
    }
    fedstat_v1_SecAggMaskedChunk chunk;
    while (true) {
      auto more =
          d.client.next_chunk(Span<const uint64_t>(d.masked.data(), d.masked.size()), chunk);
      ASSERT_TRUE(more.ok());
      if (!more.value()) break;
      ASSERT_TRUE(server_->on_chunk(d.client.id(), chunk).ok());
    }
  }
  // Round 2 and U3: every device masks and sends; every device is told its U3.
  void mask() {
    for (auto& d : devices_) {
      send_masked(*d);
      if (config_.degree != 0) {  // D8: the signed U2 view after the masked input
        fedstat_v1_SecAggConsistency view;
        ASSERT_TRUE(d->client.masked_view_message(view).ok());
        ASSERT_TRUE(server_->on_consistency(d->client.id(), view).ok()) << d->client.id();
      }
    }
    ASSERT_TRUE(server_->close_masking().ok());
    for (auto& d : devices_) {
      ASSERT_TRUE(d->client.on_roster(server_->u3_for(d->client.id())).ok());
      ASSERT_EQ(d->client.stage(), SecAggStage::kConsistency);
    }
  }
  // The consistency round: every device signs, the server forwards; all reach kUnmasking.
  void consistency() {
    for (auto& d : devices_) {
      fedstat_v1_SecAggConsistency m;
      ASSERT_TRUE(d->client.consistency_message(m).ok());
      ASSERT_TRUE(server_->on_consistency(d->client.id(), m).ok()) << d->client.id();
    }
    ASSERT_TRUE(server_->close_consistency().ok());
    for (auto& d : devices_) {
      for (const auto& m : server_->consistency_for(d->client.id())) {
        ASSERT_TRUE(d->client.on_consistency(m).ok()) << d->client.id();
      }
      ASSERT_EQ(d->client.stage(), SecAggStage::kUnmasking);
    }
  }
  // The reveals, and the server's sum (checked against the inputs' sum of `summed`, default all;
  // devices outside it reveal nothing).
  void reveal_and_check_sum(const std::set<uint32_t>& summed = {}) {
    auto in_sum = [&](const Device& d) { return summed.empty() || summed.count(d.client.id()); };
    for (auto& d : devices_) {
      if (!in_sum(*d)) continue;
      fedstat_v1_SecAggReveal reveal;
      while (true) {
        auto more = d->client.next_reveal(reveal);
        ASSERT_TRUE(more.ok());
        if (!more.value()) break;
        ASSERT_TRUE(server_->on_reveal(d->client.id(), reveal).ok());
      }
    }
    SeededStream blinding(Seed256{}, 99);
    auto sum = server_->finish(blinding);
    ASSERT_TRUE(sum.ok()) << server_->abort_reason();
    std::vector<uint64_t> expected(Device::kLength, 0);
    for (auto& d : devices_) {
      if (!in_sum(*d)) continue;
      for (uint32_t k = 0; k < Device::kLength; ++k) {
        expected[k] = (expected[k] + d->input[k]) & 0xffffffffu;
      }
    }
    EXPECT_EQ(sum.value(), expected);
  }

 private:
  Ca ca_;
  SecAggServerConfig config_;
  std::unique_ptr<SecAggServer> server_;
  std::vector<std::unique_ptr<Device>> devices_;
};

SecAggSimResult simulate(bool signed_keys, uint32_t n, uint32_t t, uint32_t degree,
                         uint32_t drops) {
  SecAggSimConfig config;
  config.clients = n;
  config.threshold = t;
  config.degree = degree;
  config.length = 70;  // two chunks
  config.seed = 5;
  config.keep_masked = true;
  config.signed_keys = signed_keys;
  config.drop_before_sharing = drops;
  config.drop_before_masking = drops;
  config.drop_before_unmasking = drops;
  config.drop_after_consistency = signed_keys ? drops : 0;
  return run_secagg_simulation(config);
}

// A signed round gives the exact sum with dropouts in every phase (the consistency round
// included), and the very same masked vector and sum as the unsigned round of the same seed:
// signing adds checks, it changes no key, mask or share.
TEST(SecAggSigned, RoundCompletesBitForBitCompleteAndSparse) {
  for (uint32_t degree : {0u, 10u}) {
    const uint32_t n = degree == 0 ? 10 : 16, t = 6;
    const SecAggSimResult signed_round = simulate(true, n, t, degree, 1);
    ASSERT_FALSE(signed_round.aborted) << degree << ": " << signed_round.abort_reason;
    EXPECT_TRUE(signed_round.ok) << degree;
    EXPECT_EQ(signed_round.survivors, n - 2);  // C and D dropped after masking: in the sum
    EXPECT_EQ(signed_round.consistency_signers, n - 3);  // every survivor of U3 but C
    EXPECT_GT(signed_round.consistency_bytes, 64);       // a signature at least
    // The same session unsigned: C and D are both clients that never reveal.
    SecAggSimResult plain;
    {
      SecAggSimConfig config;
      config.clients = n;
      config.threshold = t;
      config.degree = degree;
      config.length = 70;
      config.seed = 5;
      config.keep_masked = true;
      config.drop_before_sharing = 1;
      config.drop_before_masking = 1;
      config.drop_before_unmasking = 2;
      plain = run_secagg_simulation(config);
    }
    ASSERT_TRUE(plain.ok) << degree;
    EXPECT_EQ(signed_round.sum, plain.sum) << degree;
    EXPECT_EQ(signed_round.masked_example, plain.masked_example) << degree;
    EXPECT_EQ(signed_round.expected, plain.expected) << degree;
  }
}

// The same by hand through the server: every device ends kDone and the sum is exact.
TEST(SecAggSigned, HandDrivenRoundIsExact) {
  for (uint32_t degree : {0u, 4u}) {
    Session s(degree == 0 ? 5 : 9, degree == 0 ? 4 : 3, degree);
    s.advertise();
    s.share();
    s.mask();
    // Before threshold signatures nothing is revealed.
    fedstat_v1_SecAggReveal reveal = fedstat_v1_SecAggReveal_init_zero;
    EXPECT_EQ(s.device(1).client.next_reveal(reveal).status().code(),
              StatusCode::kFailedPrecondition);
    reveal.session = 77;
    reveal.from_id = 1;
    reveal.about_id = 1;
    reveal.self_mask = true;
    EXPECT_EQ(s.server().on_reveal(1, reveal).code(), StatusCode::kFailedPrecondition);
    s.consistency();
    s.reveal_and_check_sum();
  }
}

// A device's roster entry for peer 2, tampered by `tamper`, must be refused with
// kPermissionDenied and abort device 1's session before any share.
template <typename Tamper>
void expect_entry_refused(Tamper tamper, const char* what) {
  Session s(3, 3);
  s.advertise();
  std::vector<fedstat_v1_SecAggPeerKeys> roster = s.server().roster_for(1);
  ASSERT_EQ(roster.size(), 3u);
  ASSERT_EQ(roster[1].keys.client_id, 2u);
  tamper(s, roster[1]);
  Device& d = s.device(1);
  ASSERT_TRUE(d.client.on_peer_keys(roster[0]).ok());
  EXPECT_EQ(d.client.on_peer_keys(roster[1]).code(), StatusCode::kPermissionDenied) << what;
  EXPECT_EQ(d.client.stage(), SecAggStage::kAborted) << what;
  fedstat_v1_SecAggShare share;
  EXPECT_FALSE(d.client.next_share(share).ok()) << what;
}

TEST(SecAggSigned, DeviceRefusesAnEntryWithoutCertificate) {
  expect_entry_refused(
      [](Session&, fedstat_v1_SecAggPeerKeys& e) { e.keys.has_certificate = false; },
      "no certificate");
}

TEST(SecAggSigned, DeviceRefusesACertificateFromAnotherCa) {
  expect_entry_refused(
      [](Session& s, fedstat_v1_SecAggPeerKeys& e) {
        // Another CA's certificate for the same id and key, and the key signature of that key
        // (what a server minting its own devices would send).
        const Ca rogue(5002);
        const credential::DeviceCredential forged = rogue.issue(2, rogue);
        fedstat_v1_SecAggKeys keys = e.keys;
        uint8_t digest[32];
        ASSERT_TRUE(
            secagg::start_parameters_digest(s.server().start(), MutableByteSpan(digest, 32)).ok());
        ASSERT_TRUE(secagg::sign_keys(forged, ByteSpan(digest, 32), keys).ok());
        e.keys = keys;
      },
      "another CA");
}

TEST(SecAggSigned, DeviceRefusesACertificateForAnotherId) {
  expect_entry_refused(
      [](Session& s, fedstat_v1_SecAggPeerKeys& e) {
        // Device 3's genuine certificate (and a signature of device 3's key) on 2's entry.
        secagg::certificate_to_message(s.device(3).credential.certificate, e.keys.certificate);
        credential::DeviceCredential as_three = s.device(3).credential;
        as_three.certificate.client_id = 2;  // sign_keys checks the id; the certificate says 3
        fedstat_v1_SecAggKeys keys = e.keys;
        uint8_t digest[32];
        ASSERT_TRUE(
            secagg::start_parameters_digest(s.server().start(), MutableByteSpan(digest, 32)).ok());
        ASSERT_TRUE(secagg::sign_keys(as_three, ByteSpan(digest, 32), keys).ok());
        e.keys.key_signature = keys.key_signature;
      },
      "id mismatch");
}

TEST(SecAggSigned, DeviceRefusesABadKeySignature) {
  expect_entry_refused(
      [](Session&, fedstat_v1_SecAggPeerKeys& e) { e.keys.key_signature.bytes[10] ^= 1; },
      "flipped signature bit");
  expect_entry_refused(
      [](Session&, fedstat_v1_SecAggPeerKeys& e) { e.keys.masking_key.bytes[3] ^= 4; },
      "a key the signature is not over");
}

// Keys device 2 signed for a start with other parameters (a lower threshold here), or for
// another session, do not verify in this one.
TEST(SecAggSigned, DeviceRefusesASignatureOverAnotherSessionsStart) {
  for (int variant = 0; variant < 2; ++variant) {
    expect_entry_refused(
        [variant](Session& s, fedstat_v1_SecAggPeerKeys& e) {
          Device other(2, 4);
          other.credential = s.device(2).credential;
          other.client.set_credential(&other.credential);
          fedstat_v1_SecAggStart start = s.server().start();
          if (variant == 0) {
            start.corrupt_ppm += 1;  // any start parameter
          } else {
            start.session += 1;
          }
          fedstat_v1_SecAggKeys keys;
          ASSERT_TRUE(other.client.on_start(start, keys).ok());
          keys.session = e.keys.session;  // replayed into this session
          e.keys = keys;
        },
        variant == 0 ? "other start parameters" : "another session");
  }
}

// A device with a credential refuses an unsigned start; one without refuses a signed start.
TEST(SecAggSigned, CredentialAndSessionKindMustMatch) {
  Session s(3, 3);
  fedstat_v1_SecAggStart start = s.server().start();
  start.signed_keys = false;
  fedstat_v1_SecAggKeys keys;
  EXPECT_EQ(s.device(1).client.on_start(start, keys).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(s.device(1).client.stage(), SecAggStage::kIdle);
  s.device(1).client.set_credential(nullptr);
  start.signed_keys = true;
  EXPECT_EQ(s.device(1).client.on_start(start, keys).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.device(1).client.stage(), SecAggStage::kIdle);
  start.signed_keys = false;  // without a credential, an unsigned session as before
  EXPECT_TRUE(s.device(1).client.on_start(start, keys).ok());
  EXPECT_FALSE(keys.has_certificate);
}

// A resumed start gives the same signed keys (signing is deterministic, nothing drawn), and the
// consistency message is the same bytes on every call.
TEST(SecAggSigned, ResumeGivesTheSameSignedBytes) {
  Session s(3, 3);
  Device& d = s.device(1);
  fedstat_v1_SecAggKeys first, again;
  ASSERT_TRUE(d.client.on_start(s.server().start(), first).ok());
  ASSERT_TRUE(d.client.on_start(s.server().start(), again).ok());
  ASSERT_TRUE(first.has_certificate);
  EXPECT_EQ(first.key_signature.size, 64u);
  auto bytes = [](const auto& field) {
    return std::vector<uint8_t>(field.bytes, field.bytes + field.size);
  };
  EXPECT_EQ(bytes(first.encryption_key), bytes(again.encryption_key));
  EXPECT_EQ(bytes(first.masking_key), bytes(again.masking_key));
  EXPECT_EQ(bytes(first.commitment), bytes(again.commitment));
  EXPECT_EQ(bytes(first.key_signature), bytes(again.key_signature));
  EXPECT_EQ(bytes(first.certificate.public_key), bytes(again.certificate.public_key));
  EXPECT_EQ(bytes(first.certificate.ca_signature), bytes(again.certificate.ca_signature));
  fedstat_v1_SecAggStart other = s.server().start();
  other.corrupt_ppm += 1;  // not the same start: refused, nothing changed
  EXPECT_EQ(d.client.on_start(other, again).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(d.client.stage(), SecAggStage::kAdvertised);
}

// The server's consistency round: only U3 members, once each, only in that round.
TEST(SecAggSigned, ServerConsistencyRoundRefusals) {
  Session s(4, 3);
  s.advertise();
  s.share();
  fedstat_v1_SecAggConsistency early = fedstat_v1_SecAggConsistency_init_zero;
  early.session = 77;
  early.signer_id = 1;
  EXPECT_EQ(s.server().on_consistency(1, early).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.server().close_consistency().code(), StatusCode::kFailedPrecondition);
  s.mask();
  fedstat_v1_SecAggConsistency m;
  ASSERT_TRUE(s.device(1).client.consistency_message(m).ok());
  EXPECT_EQ(s.server().on_consistency(2, m).code(), StatusCode::kPermissionDenied);  // not 2's
  ASSERT_TRUE(s.server().on_consistency(1, m).ok());
  EXPECT_EQ(s.server().on_consistency(1, m).code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(s.server().consistency_for(1).empty());  // its own is not forwarded to it
  ASSERT_EQ(s.server().consistency_for(2).size(), 1u);
  EXPECT_EQ(s.server().consistency_for(2)[0].signer_id, 1u);
}

// The server refuses and excludes keys it cannot verify; they never reach a roster.
TEST(SecAggSigned, ServerExcludesUnverifiableKeys) {
  Session s(4, 3);
  for (uint32_t id = 1; id <= 4; ++id) {
    Device& d = s.device(id);
    ASSERT_TRUE(d.client.on_start(s.server().start(), d.keys).ok());
  }
  fedstat_v1_SecAggKeys no_certificate = s.device(4).keys;
  no_certificate.has_certificate = false;
  EXPECT_EQ(s.server().on_keys(no_certificate).code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(s.server().is_excluded(4));
  fedstat_v1_SecAggKeys bad_signature = s.device(3).keys;
  bad_signature.key_signature.bytes[0] ^= 0x80;
  EXPECT_EQ(s.server().on_keys(bad_signature).code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(s.server().is_excluded(3));
  for (uint32_t id = 1; id <= 2; ++id) ASSERT_TRUE(s.server().on_keys(s.device(id).keys).ok());
  // Two of the four: below the threshold of three, the round aborts rather than seat them.
  EXPECT_EQ(s.server().close_advertising().status().code(), StatusCode::kAborted);
}

// Complete graph: a consistency signature over another U3 does not verify — not counted, the
// session goes on; the server refuses it too.
TEST(SecAggSigned, ConsistencySignatureOverAnotherViewIsNotCounted) {
  Session s(5, 4);
  s.advertise();
  s.share();
  s.mask();
  Device& victim = s.device(1);
  Device& signer = s.device(2);
  // Device 2's key signs a view without member 5 (what a server showing 2 another U3 gets).
  uint8_t digest[32], signature[64];
  const uint32_t other_view[] = {1, 2, 3, 4};
  ASSERT_TRUE(secagg::consistency_digest(
                  victim.client.session_hash(), 2, ByteSpan(signer.keys.encryption_key.bytes, 32),
                  ByteSpan(signer.keys.masking_key.bytes, 32), Span<const uint32_t>(other_view, 4),
                  MutableByteSpan(digest, 32))
                  .ok());
  ASSERT_TRUE(credential::sign_digest(ByteSpan(signer.credential.private_key, 32),
                                      ByteSpan(digest, 32), MutableByteSpan(signature, 64))
                  .ok());
  fedstat_v1_SecAggConsistency m = fedstat_v1_SecAggConsistency_init_zero;
  m.session = 77;
  m.signer_id = 2;
  m.signature.size = 64;
  std::memcpy(m.signature.bytes, signature, 64);
  EXPECT_EQ(victim.client.on_consistency(m).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(victim.client.consistency_count(), 1u);
  EXPECT_EQ(victim.client.stage(), SecAggStage::kConsistency);
  EXPECT_EQ(s.server().on_consistency(2, m).code(), StatusCode::kPermissionDenied);
  // The genuine one counts; a message for another session, from itself or from outside the
  // roster is refused.
  fedstat_v1_SecAggConsistency genuine;
  ASSERT_TRUE(signer.client.consistency_message(genuine).ok());
  fedstat_v1_SecAggConsistency wrong = genuine;
  wrong.session = 78;
  EXPECT_EQ(victim.client.on_consistency(wrong).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(victim.client.consistency_message(wrong).ok());
  EXPECT_EQ(victim.client.on_consistency(wrong).code(), StatusCode::kInvalidArgument);
  wrong = genuine;
  wrong.signer_id = 9;
  EXPECT_EQ(victim.client.on_consistency(wrong).code(), StatusCode::kNotFound);
  EXPECT_TRUE(victim.client.on_consistency(genuine).ok());
  EXPECT_EQ(victim.client.consistency_count(), 2u);
  EXPECT_TRUE(victim.client.on_consistency(genuine).ok());  // again: counted once
  EXPECT_EQ(victim.client.consistency_count(), 2u);
  // Threshold 4 not reached (2 counted, then 3): still nothing revealed.
  fedstat_v1_SecAggReveal reveal;
  EXPECT_EQ(victim.client.next_reveal(reveal).status().code(), StatusCode::kFailedPrecondition);
  fedstat_v1_SecAggConsistency third, fourth;
  ASSERT_TRUE(s.device(3).client.consistency_message(third).ok());
  EXPECT_TRUE(victim.client.on_consistency(third).ok());
  EXPECT_EQ(victim.client.stage(), SecAggStage::kConsistency);
  EXPECT_EQ(victim.client.next_reveal(reveal).status().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(s.device(4).client.consistency_message(fourth).ok());
  EXPECT_TRUE(victim.client.on_consistency(fourth).ok());
  EXPECT_EQ(victim.client.stage(), SecAggStage::kUnmasking);
  EXPECT_TRUE(victim.client.next_reveal(reveal).ok());
}

// Sparse graph: a neighbour's verified view that disagrees about a common neighbour is a split
// view — the session aborts and reveals nothing.
TEST(SecAggSigned, SparseDisagreementAborts) {
  Session s(9, 3, 4);
  s.advertise();
  s.share();
  s.mask();
  // Device 1's neighbour next to it on the ring, and its view with one common member left out.
  const std::vector<fedstat_v1_SecAggPeerKeys> roster = s.server().roster_for(1);
  ASSERT_EQ(roster.size(), 5u);
  ASSERT_EQ(roster[2].keys.client_id, 1u);
  const uint32_t neighbour = roster[3].keys.client_id;
  const uint32_t common = roster[1].keys.client_id;  // within 2 positions of both
  fedstat_v1_SecAggConsistency m;
  ASSERT_TRUE(s.device(neighbour).client.consistency_message(m).ok());
  ASSERT_EQ(m.members_count, 5u);
  // The genuine view agrees (counted), so build the split one on a fresh victim: device 1.
  std::vector<uint32_t> split(m.members, m.members + m.members_count);
  split.erase(std::find(split.begin(), split.end(), common));
  uint8_t digest[32];
  ASSERT_TRUE(secagg::consistency_digest(
                  s.device(1).client.session_hash(), neighbour,
                  ByteSpan(s.device(neighbour).keys.encryption_key.bytes, 32),
                  ByteSpan(s.device(neighbour).keys.masking_key.bytes, 32),
                  Span<const uint32_t>(split.data(), split.size()), MutableByteSpan(digest, 32))
                  .ok());
  fedstat_v1_SecAggConsistency forged = m;
  forged.members_count = static_cast<pb_size_t>(split.size());
  std::copy(split.begin(), split.end(), forged.members);
  ASSERT_TRUE(credential::sign_digest(ByteSpan(s.device(neighbour).credential.private_key, 32),
                                      ByteSpan(digest, 32),
                                      MutableByteSpan(forged.signature.bytes, 64))
                  .ok());
  // The server does not forward it (not the view it sent); a device shown it aborts.
  EXPECT_EQ(s.server().on_consistency(neighbour, forged).code(), StatusCode::kInvalidArgument);
  Device& victim = s.device(1);
  EXPECT_EQ(victim.client.on_consistency(forged).code(), StatusCode::kAborted);
  EXPECT_EQ(victim.client.stage(), SecAggStage::kAborted);
  fedstat_v1_SecAggReveal reveal;
  EXPECT_FALSE(victim.client.next_reveal(reveal).ok());
  // The genuine view is counted by the common neighbour, whose U3 it agrees with.
  Device& other = s.device(common);
  EXPECT_TRUE(other.client.on_consistency(m).ok());
  EXPECT_EQ(other.client.consistency_count(), 2u);
}

// next_reveal waits for threshold signatures even when the server skips the consistency round.
// Rosters and shares by hand, where device 1 receives the shares of `corrupted` peers with a
// flipped ciphertext byte (what a server that replays an absent device's keys of an earlier round
// can send for it: it holds no round key to seal a real share with). Returns device 1's U2 status.
Status share_with_bad_shares_to_one(Session& s, const std::set<uint32_t>& corrupted) {
  for (uint32_t id = 1; id <= s.size(); ++id) {
    Device& d = s.device(id);
    for (const auto& entry : s.server().roster_for(id)) {
      EXPECT_TRUE(d.client.on_peer_keys(entry).ok()) << id;
    }
    fedstat_v1_SecAggShare share;
    while (true) {
      auto more = d.client.next_share(share);
      EXPECT_TRUE(more.ok());
      if (!more.ok() || !more.value()) break;
      EXPECT_TRUE(s.server().on_share(id, share).ok());
    }
  }
  EXPECT_TRUE(s.server().close_sharing().ok());
  Status device_one;
  for (uint32_t id = 1; id <= s.size(); ++id) {
    Device& d = s.device(id);
    for (auto share : s.server().shares_for(id)) {
      if (id == 1 && corrupted.count(share.from_id) != 0) share.ciphertext.bytes[0] ^= 1;
      EXPECT_TRUE(d.client.on_share(share).ok());  // a bad share is recorded, not an error
    }
    const Status u2 = d.client.on_roster(s.server().u2_for(id));
    if (id == 1) {
      device_one = u2;
    } else {
      EXPECT_TRUE(u2.ok()) << id;
    }
  }
  return device_one;
}

// Signed sessions count towards U2's threshold only the members that sent this device a valid
// share in this round, itself included. U2 = all 6, t = 4: with 3 peers' shares bad device 1
// holds valid shares of 2 peers (3 with itself) and aborts; with 2 bad it holds 4 and masks. An
// unsigned session keeps issue 39's rule (a bad-share peer counts). Mutant: counting U2's
// members instead of the live ones makes the first case pass U2.
TEST(SecAggSigned, U2CountsOnlyMembersWhoseValidShareArrived) {
  {
    Session s(6, 4);
    s.advertise();
    const Status u2 = share_with_bad_shares_to_one(s, {2, 3, 4});
    EXPECT_EQ(u2.code(), StatusCode::kAborted) << u2.message();
    EXPECT_EQ(s.device(1).client.stage(), SecAggStage::kAborted);
  }
  {
    Session s(6, 4);
    s.advertise();
    const Status u2 = share_with_bad_shares_to_one(s, {2, 3});
    EXPECT_TRUE(u2.ok()) << u2.message();
    EXPECT_EQ(s.device(1).client.stage(), SecAggStage::kReadyToMask);
  }
}

// A consistency signer counts only if this device holds a valid share from it: device 2's share
// to device 1 was bad, so 2's genuine signature is refused (kPermissionDenied, nothing counted)
// while 3's counts. Mutant: dropping the check counts device 2.
TEST(SecAggSigned, ConsistencySignerWithoutAValidShareIsNotCounted) {
  Session s(6, 4);
  s.advertise();
  ASSERT_TRUE(share_with_bad_shares_to_one(s, {2}).ok());
  s.mask();
  std::map<uint32_t, fedstat_v1_SecAggConsistency> signed_views;
  for (uint32_t id = 1; id <= 6; ++id) {
    ASSERT_TRUE(s.device(id).client.consistency_message(signed_views[id]).ok());
  }
  Device& one = s.device(1);
  EXPECT_EQ(one.client.on_consistency(signed_views[2]).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(one.client.consistency_count(), 1u);
  EXPECT_TRUE(one.client.on_consistency(signed_views[3]).ok());
  EXPECT_EQ(one.client.consistency_count(), 2u);
}

// A signed complete-graph session needs 2·t > n + ⌈γ·n⌉ (γ: the larger of the declared corrupt
// fraction and the device's floor, 5 % by default): c colluders can sign both of two U3 views.
// n = 10: t = 6 passes with γ = 5 % (12 > 11) and fails at 20 % (12 ≤ 12) or once the device
// assumes 20 %; an unsigned session still needs only 2·t > n.
TEST(SecAggSigned, CompleteGraphThresholdCoversColluders) {
  Session s(10, 6);
  fedstat_v1_SecAggStart start = s.server().start();
  Device& d = s.device(1);
  fedstat_v1_SecAggKeys keys;
  start.corrupt_ppm = 200000;
  EXPECT_EQ(d.client.on_start(start, keys).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(d.client.stage(), SecAggStage::kIdle);
  d.client.set_assumed_corrupt_ppm(200000);
  EXPECT_EQ(d.client.on_start(s.server().start(), keys).code(), StatusCode::kInvalidArgument);
  d.client.set_assumed_corrupt_ppm(50000);
  EXPECT_TRUE(d.client.on_start(s.server().start(), keys).ok());
}

TEST(SecAggSigned, NextRevealBeforeThresholdSignaturesIsRefused) {
  Session s(5, 4);
  s.advertise();
  s.share();
  s.mask();
  Device& d = s.device(1);
  fedstat_v1_SecAggReveal reveal;
  EXPECT_EQ(d.client.next_reveal(reveal).status().code(), StatusCode::kFailedPrecondition);
  for (uint32_t id = 2; id <= 3; ++id) {  // 1 + 2 signatures: below t = 4
    fedstat_v1_SecAggConsistency m;
    ASSERT_TRUE(s.device(id).client.consistency_message(m).ok());
    ASSERT_TRUE(d.client.on_consistency(m).ok());
  }
  EXPECT_EQ(d.client.consistency_count(), 3u);
  EXPECT_EQ(d.client.next_reveal(reveal).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(d.client.stage(), SecAggStage::kConsistency);
  reveal = fedstat_v1_SecAggReveal_init_zero;
  reveal.session = 77;
  reveal.from_id = 1;
  reveal.about_id = 1;
  reveal.self_mask = true;
  // The server, too, reveals nothing before the round closes, and closes it only when every
  // secret can get t revealing holders.
  EXPECT_EQ(s.server().on_reveal(1, reveal).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.server().close_consistency().code(), StatusCode::kAborted);
}

// ---- Rule D8 (signed sparse sessions, protocol 6): a device reveals its share of b_v only when
// v's signed U2 view names it. docs/secagg_many_worlds.md; tests/adversary for the attack.

// `signer`'s signature over the digest of `members` as a view of `round`, with the round keys
// `encryption_key` and `masking_key`, in the session whose hash is `hash`.
fedstat_v1_SecAggConsistency view_signed_by(const Device& signer, ByteSpan hash,
                                            const std::vector<uint32_t>& members,
                                            ByteSpan encryption_key, ByteSpan masking_key,
                                            secagg::ViewRound round = secagg::ViewRound::kU2) {
  fedstat_v1_SecAggConsistency m = fedstat_v1_SecAggConsistency_init_zero;
  m.session = 77;
  m.signer_id = signer.client.id();
  m.round = 2;
  std::copy(members.begin(), members.end(), m.members);
  m.members_count = static_cast<pb_size_t>(members.size());
  uint8_t digest[32];
  EXPECT_TRUE(secagg::consistency_digest(hash, m.signer_id, encryption_key, masking_key,
                                         Span<const uint32_t>(members.data(), members.size()),
                                         MutableByteSpan(digest, 32), round)
                  .ok());
  m.signature.size = 64;
  EXPECT_TRUE(credential::sign_digest(ByteSpan(signer.credential.private_key, 32),
                                      ByteSpan(digest, 32), MutableByteSpan(m.signature.bytes, 64))
                  .ok());
  return m;
}

ByteSpan encryption_key_of(const Device& d) {
  return ByteSpan(d.keys.encryption_key.bytes, 32);
}
ByteSpan masking_key_of(const Device& d) {
  return ByteSpan(d.keys.masking_key.bytes, 32);
}

// Device 1 (sparse, 9 devices, k = 4, t = 3) is forwarded everything but one neighbour v's U2
// view, and instead: v's own signature over a view that leaves device 1 out (verified, withheld),
// v's genuine signature with an id added to the members, v's signature over its view with
// another round's keys (a replay into a round reusing the session id), over another session's
// hash, and v's consistency (U3) signature passed off as its U2 view — each kPermissionDenied,
// nothing marked. Device 1 then reveals an empty share of b_v (and non-empty ones of every other
// neighbour's b); v's genuine view after the reveals began changes nothing. The round completes
// exactly from the other holders. Mutant: without D8's reveal rule device 1 gives b_v's share.
TEST(SecAggSigned, D8_SelfMaskShareOnlyWhenTheSignedU2ViewNamesTheDevice) {
  Session s(9, 3, 4);
  s.advertise();
  s.share();
  s.mask();
  for (uint32_t id = 1; id <= s.size(); ++id) {
    fedstat_v1_SecAggConsistency m;
    ASSERT_TRUE(s.device(id).client.consistency_message(m).ok());
    ASSERT_TRUE(s.server().on_consistency(id, m).ok());
  }
  ASSERT_TRUE(s.server().close_consistency().ok());
  Device& u = s.device(1);
  const std::vector<fedstat_v1_SecAggConsistency> forwarded = s.server().consistency_for(1);
  const auto first_view =
      std::find_if(forwarded.begin(), forwarded.end(), [](const auto& m) { return m.round == 2; });
  ASSERT_NE(first_view, forwarded.end());
  EXPECT_EQ(
      std::count_if(forwarded.begin(), forwarded.end(), [](const auto& m) { return m.round == 2; }),
      4);  // the other 4 members of its roster
  const fedstat_v1_SecAggConsistency genuine = *first_view;
  const uint32_t v = genuine.signer_id;
  const Device& signer = s.device(v);
  const std::vector<uint32_t> members(genuine.members, genuine.members + genuine.members_count);
  ASSERT_NE(std::find(members.begin(), members.end(), 1u), members.end());
  std::vector<uint32_t> without_u = members;
  without_u.erase(std::find(without_u.begin(), without_u.end(), 1u));
  const ByteSpan hash = u.client.session_hash();

  EXPECT_EQ(u.client
                .on_consistency(view_signed_by(signer, hash, without_u, encryption_key_of(signer),
                                               masking_key_of(signer)))
                .code(),
            StatusCode::kPermissionDenied);  // verified, but it does not name device 1
  std::vector<uint32_t> naming_u = members;  // one id more: still ascending, still naming it
  naming_u.push_back(0xfffffff0u);
  fedstat_v1_SecAggConsistency forged = genuine;  // the members edited, the signature kept
  std::copy(naming_u.begin(), naming_u.end(), forged.members);
  forged.members_count = static_cast<pb_size_t>(naming_u.size());
  EXPECT_EQ(u.client.on_consistency(forged).code(), StatusCode::kPermissionDenied);
  const Device& other = s.device(v == 2 ? 3 : 2);  // other round keys: a replay
  EXPECT_EQ(u.client
                .on_consistency(view_signed_by(signer, hash, members, encryption_key_of(other),
                                               masking_key_of(other)))
                .code(),
            StatusCode::kPermissionDenied);
  uint8_t other_session[32];
  std::memcpy(other_session, hash.data(), 32);
  other_session[0] ^= 1;
  EXPECT_EQ(u.client
                .on_consistency(view_signed_by(signer, ByteSpan(other_session, 32), members,
                                               encryption_key_of(signer), masking_key_of(signer)))
                .code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(u.client
                .on_consistency(view_signed_by(signer, hash, members, encryption_key_of(signer),
                                               masking_key_of(signer), secagg::ViewRound::kU3))
                .code(),
            StatusCode::kPermissionDenied);  // its U3 signature is not a U2 view
  fedstat_v1_SecAggConsistency odd = genuine;
  odd.round = 7;
  EXPECT_EQ(u.client.on_consistency(odd).code(), StatusCode::kInvalidArgument);

  for (const auto& m : forwarded) {
    if (m.round == 2 && m.signer_id == v) continue;
    ASSERT_TRUE(u.client.on_consistency(m).ok()) << m.signer_id;
  }
  ASSERT_EQ(u.client.stage(), SecAggStage::kUnmasking);
  EXPECT_EQ(u.client.on_consistency(genuine).code(), StatusCode::kPermissionDenied);  // too late
  std::map<uint32_t, fedstat_v1_SecAggReveal> about;
  while (true) {
    fedstat_v1_SecAggReveal reveal;
    auto more = u.client.next_reveal(reveal);
    ASSERT_TRUE(more.ok());
    if (!more.value()) break;
    about[reveal.about_id] = reveal;
    ASSERT_TRUE(s.server().on_reveal(1, reveal).ok());
  }
  ASSERT_EQ(about.size(), 5u);  // itself and its 4 neighbours
  for (const auto& [id, reveal] : about) {
    EXPECT_TRUE(reveal.self_mask) << id;  // every one survived
    EXPECT_EQ(reveal.share.size, id == v ? 0u : secagg::kShareBytes) << id;
  }
  for (uint32_t id = 2; id <= s.size(); ++id) {
    for (const auto& m : s.server().consistency_for(id)) {
      ASSERT_TRUE(s.device(id).client.on_consistency(m).ok()) << id;
    }
  }
  s.reveal_and_check_sum();
}

// The server's side of D8: a U2 view only after the whole masked input (kFailedPrecondition),
// from its signer (kPermissionDenied), over the U2 the server sent it (kInvalidArgument), once
// (kAlreadyExists); a signature that does not verify excludes its sender (kPermissionDenied); a
// member whose U2 view never came is not in U3, and its whole masked vector stays out of the sum
// (the round completes exactly over U3). The others' views are forwarded, before the consistency
// signatures. Mutants: without the U3 rule device 3 is in U3; without the signature check device
// 1 is; summing a vector before its U2 view breaks the sum.
TEST(SecAggSigned, D8_ServerRefusesUnverifiableU2ViewsAndLeavesOutMembersWithout) {
  Session s(12, 4, 6);  // a roster of 7: two members out still leave t = 4 signers besides
  s.advertise();
  s.share();
  for (uint32_t id = 1; id <= s.size(); ++id) {
    Device& d = s.device(id);
    d.masked = d.input;
    ASSERT_TRUE(d.client.mask(Span<uint64_t>(d.masked.data(), d.masked.size())).ok());
    fedstat_v1_SecAggConsistency view;
    ASSERT_TRUE(d.client.masked_view_message(view).ok());
    EXPECT_EQ(s.server().on_consistency(id, view).code(), StatusCode::kFailedPrecondition);
    s.send_masked(d);
    if (id == 1) {
      EXPECT_EQ(s.server().on_consistency(2, view).code(), StatusCode::kPermissionDenied);
      fedstat_v1_SecAggConsistency fewer = view;
      --fewer.members_count;
      EXPECT_EQ(s.server().on_consistency(1, fewer).code(), StatusCode::kInvalidArgument);
      EXPECT_FALSE(s.server().is_excluded(1));
      view.signature.bytes[10] ^= 1;
      EXPECT_EQ(s.server().on_consistency(1, view).code(), StatusCode::kPermissionDenied);
      EXPECT_TRUE(s.server().is_excluded(1));
      continue;
    }
    if (id == 3) continue;  // masked input whole, no U2 view
    ASSERT_TRUE(s.server().on_consistency(id, view).ok()) << id;
    if (id == 4) {
      EXPECT_EQ(s.server().on_consistency(id, view).code(), StatusCode::kAlreadyExists);
    }
  }
  ASSERT_TRUE(s.server().close_masking().ok()) << s.server().abort_reason();
  const std::vector<uint32_t> u3 = s.server().u3();
  EXPECT_EQ(std::set<uint32_t>(u3.begin(), u3.end()),
            std::set<uint32_t>({2, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  for (uint32_t id : u3) {
    const auto forwarded = s.server().consistency_for(id);
    for (const auto& m : forwarded) {
      EXPECT_EQ(m.round, 2u);  // no consistency signature yet: U2 views only
      EXPECT_NE(m.signer_id, id);
      EXPECT_NE(std::find(u3.begin(), u3.end(), m.signer_id), u3.end());
    }
  }
  // The round goes on without devices 1 and 3 (dropped: their masking keys are revealed), and the
  // sum is exactly U3's — their whole masked vectors never entered it.
  for (uint32_t id : {1u, 3u}) {
    EXPECT_EQ(s.device(id).client.on_roster(s.server().u3_for(id)).code(), StatusCode::kAborted);
  }
  for (uint32_t id : u3) {
    ASSERT_TRUE(s.device(id).client.on_roster(s.server().u3_for(id)).ok()) << id;
    fedstat_v1_SecAggConsistency m;
    ASSERT_TRUE(s.device(id).client.consistency_message(m).ok());
    ASSERT_TRUE(s.server().on_consistency(id, m).ok()) << id;
  }
  ASSERT_TRUE(s.server().close_consistency().ok()) << s.server().abort_reason();
  for (uint32_t id : u3) {
    for (const auto& m : s.server().consistency_for(id)) {
      ASSERT_TRUE(s.device(id).client.on_consistency(m).ok()) << id;
    }
    ASSERT_EQ(s.device(id).client.stage(), SecAggStage::kUnmasking) << id;
  }
  s.reveal_and_check_sum(std::set<uint32_t>(u3.begin(), u3.end()));
}

}  // namespace
}  // namespace host
}  // namespace fedstat
