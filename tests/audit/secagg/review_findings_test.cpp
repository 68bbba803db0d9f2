// A review of issue 39 items 5 and 6 (the merge 7702203) attacked the fix; its findings F1–F3
// and the t + 1 case of F5, as audit tests (they were tests/audit/secagg/review_attacks_test.cpp,
// label "review"). Every test here failed on the tree before the fix (/work/notes/
// secagg-before.md, "Review findings F1–F5"):
//   F2  colluding holders shift their reveals of an honest device's self-mask seed b_v by a
//       polynomial Δ: the round never publishes a wrong sum — the rebuilt b_v must match the
//       commitment c_v its owner sent in round 0 — and the honest holder the single-error
//       locator would blame is not excluded;
//   F3  a malicious dealer gives an honest holder a share off its polynomial: the sum is right and
//       the holder is only "disputed" (it or the dealer is at fault) for that secret, in the log
//       and on the status page, never excluded;
//   F1  a dealer whose secret cannot be rebuilt (unreadable shares, shares off its polynomial,
//       shares of another masking key) aborts the round; the reason names it and the evidence;
//   F5  with exactly t + 1 shares, one wrong share (of a self-mask seed or a masking key) is
//       found by trying the t + 1 subsets against the commitment or the public key;
//   and at exactly t shares, a wrong share of a self-mask seed is caught by the commitment.
// In process (the Coordinator with a fake store, SDK SecAggClient devices, one or more of which
// tamper with what they send); well under a second each.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "host_server/rounds/coordinator.h"
#include "host_server/status/operator_view.h"
#include "host_server/status/status_page.h"
#include "sdk/base/bytes.h"
#include "sdk/base/crypto.h"
#include "sdk/base/random_source.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/secagg/secagg_client.h"
#include "sdk/secagg/shamir.h"
#include "tests/rounds/dist_device.h"
#include "tests/rounds/fake_outbox.h"
#include "tests/rounds/fake_store.h"
#include "tests/rounds/trusted_device.h"

namespace fedstat {
namespace host {
namespace testing {
namespace {

constexpr uint32_t kLength = 70;
constexpr uint32_t kBits = 32;
constexpr uint64_t kFirstId = 500;
constexpr uint64_t kP = secagg::kShamirPrime;

uint64_t mulmod(uint64_t a, uint64_t b) {
  return (a % kP) * (b % kP) % kP;
}
uint64_t powmod(uint64_t a, uint64_t e) {
  uint64_t r = 1;
  for (a %= kP; e; e >>= 1, a = mulmod(a, a)) {
    if (e & 1) r = mulmod(r, a);
  }
  return r;
}
uint64_t submod(uint64_t a, uint64_t b) {
  return (a % kP + kP - b % kP) % kP;
}

struct NullHandler final : net::FrameHandler {
  void on_open(net::ConnectionId, const std::string&) override {}
  void on_frame(net::ConnectionId, const wire::Envelope&) override {}
  void on_close(net::ConnectionId, const std::string&) override {}
};

// A DIST round of n devices (ids 500 …) with threshold t, through an OperatorView (the status
// page reads the store as the server does).
struct Round {
  uint32_t n, t;
  FakeStore inner;
  NullHandler handler;
  OperatorView view{inner, handler};
  FakeOutbox out{inner};
  Coordinator c;
  Devices devices;
  std::vector<std::string> log;

  Round(uint32_t devices_n, uint32_t threshold)
      : n(devices_n),
        t(threshold),
        c(view.store(), out,
          {make_spec(1, fedstat_v1_TrustModel_DIST, kLength, kBits, threshold, devices_n,
                     threshold)},
          kT0) {
    for (uint32_t i = 0; i < n; ++i) {
      const uint64_t id = kFirstId + i;
      devices.push_back(std::make_unique<DistDevice>(id, n, device_words(id, kLength, kBits)));
    }
  }
  DistDevice& dev(uint64_t id) { return *devices[id - kFirstId]; }
  void run() {
    check_in_all(c, devices, 1);
    pump(c, out, devices);
    log = c.take_log();
  }
  std::string all_log() const {
    std::string s;
    for (const auto& line : log) s += line + "\n";
    return s;
  }
  // The sum of the inputs of the devices `in_sum` names (the published result's form).
  std::string sum_of_devices(const std::vector<uint64_t>& in_sum) const {
    std::vector<std::vector<uint64_t>> inputs;
    for (uint64_t id : in_sum) inputs.push_back(devices[id - kFirstId]->input);
    return sum_json(sum_of(inputs, kBits), static_cast<uint32_t>(inputs.size()));
  }
  std::string true_sum() const {
    std::vector<uint64_t> all;
    for (const auto& d : devices) all.push_back(d->id);
    return sum_of_devices(all);
  }
  // A published result is the true sum (checked first, so that a wrong one shows).
  void expect_no_wrong_sum(const std::string& truth) {
    const auto published = inner.result(1);
    if (published) {
      EXPECT_EQ(*published, truth) << "a wrong sum was published";
    }
  }
  bool log_excludes(uint64_t id) const {
    const std::string who = "device " + std::to_string(id) + " excluded";
    for (const auto& line : log) {
      if (line.find(who) != std::string::npos) return true;
    }
    return false;
  }
  bool anyone_excluded() const {
    for (const auto& line : log) {
      if (line.find(" excluded from secure aggregation") != std::string::npos) return true;
    }
    return false;
  }
  // The log line that ends the round with an abort ("" if none).
  std::string abort_line() const {
    for (const auto& line : log) {
      if (line.find("aborted") != std::string::npos) return line;
    }
    return "";
  }
  // A log line naming `holder`'s share of `owner`'s secret as disputed ("" if none).
  std::string dispute_line(uint64_t holder, uint64_t owner) const {
    for (const auto& line : log) {
      if (line.find("disputed") != std::string::npos &&
          line.find("device " + std::to_string(holder)) != std::string::npos &&
          line.find("device " + std::to_string(owner)) != std::string::npos) {
        return line;
      }
    }
    return "";
  }
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Byte offsets in an encrypted share's plaintext (secagg_client_shares.cpp): from, to, then the
// 36-byte share of b_u and the 36-byte share of s_u^SK.
constexpr size_t kSelfMaskPiece0 = 8;
constexpr size_t kMaskingKeyPiece0 = 8 + secagg::kShareBytes;

// A malicious dealer: re-opens the share DistDevice `d` made for `to` (it knows its own secret
// c^SK: DistDevice's SeededStream's first 32 bytes, as SecAggClient::on_start draws it), adds
// `delta` to the 32-bit word at `offset` of the plaintext (piece 0 of one of the two shares) and
// seals it again. The recipient's authentication passes: to it the share is genuine.
void reseal_with_offset(DistDevice& d, fedstat_v1_SecAggShare& share, uint32_t delta,
                        size_t offset = kSelfMaskPiece0) {
  Seed256 seed;
  seed.bytes[0] = static_cast<uint8_t>(d.id);
  seed.bytes[1] = 0x5A;
  SeededStream replay(seed, d.id);
  uint8_t secret[32];
  ASSERT_TRUE(replay.fill(MutableByteSpan(secret, 32)).ok());
  crypto::x25519_clamp(Span<uint8_t>(secret, 32));
  const secagg::SecAggPeer* peer = nullptr;
  for (const auto& p : d.peers) {
    if (p.id == share.to_id) peer = &p;
  }
  ASSERT_NE(peer, nullptr);
  SeededStream blinding(seed, 999);
  uint8_t shared[32], key[32];
  ASSERT_TRUE(crypto::x25519_shared_secret(ByteSpan(secret, 32), ByteSpan(peer->encryption_key, 32),
                                           Span<uint8_t>(shared, 32), fill_from_random_source,
                                           &blinding)
                  .ok());
  static const char kLabel[] = "fedstat secagg share key v1";
  ASSERT_TRUE(
      crypto::hkdf_sha256(d.client.session_hash(), ByteSpan(shared, 32),
                          ByteSpan(reinterpret_cast<const uint8_t*>(kLabel), sizeof(kLabel) - 1),
                          MutableByteSpan(key, 32))
          .ok());
  uint8_t iv[12] = {}, aad[40];
  for (int b = 0; b < 4; ++b) {
    iv[b] = static_cast<uint8_t>(share.from_id >> (24 - 8 * b));
    iv[4 + b] = static_cast<uint8_t>(share.to_id >> (24 - 8 * b));
  }
  memcpy(aad, d.client.session_hash().data(), 32);
  store_le32(aad + 32, share.from_id);
  store_le32(aad + 36, share.to_id);
  constexpr size_t kPlain = secagg::kSharePlainBytes;
  uint8_t plain[kPlain];
  ASSERT_TRUE(crypto::aes256_gcm_open(ByteSpan(key, 32), ByteSpan(iv, 12), ByteSpan(aad, 40),
                                      ByteSpan(share.ciphertext.bytes, kPlain),
                                      ByteSpan(share.ciphertext.bytes + kPlain, 16),
                                      MutableByteSpan(plain, kPlain))
                  .ok());
  store_le32(plain + offset, static_cast<uint32_t>((load_le32(plain + offset) + delta) % kP));
  ASSERT_TRUE(crypto::aes256_gcm_seal(ByteSpan(key, 32), ByteSpan(iv, 12), ByteSpan(aad, 40),
                                      ByteSpan(plain, kPlain),
                                      MutableByteSpan(share.ciphertext.bytes, kPlain),
                                      MutableByteSpan(share.ciphertext.bytes + kPlain, 16))
                  .ok());
}

// Adds `delta(holder)` to piece 0 of `holder`'s non-empty reveals about `about` of the given kind
// (`about` 0: every peer but the holder itself).
void shift_reveals(DistDevice& holder, uint64_t about, bool self_mask,
                   std::function<uint64_t(uint64_t)> delta) {
  const uint64_t id = holder.id;
  holder.tamper = [id, about, self_mask, delta](fedstat_v1_Envelope& m) {
    if (m.which_body != fedstat_v1_Envelope_secagg_reveal_tag) return;
    fedstat_v1_SecAggReveal& rv = m.body.secagg_reveal;
    if (rv.share.size != secagg::kShareBytes || rv.self_mask != self_mask) return;
    if (about != 0 ? rv.about_id != about : rv.about_id == id) return;
    store_le32(rv.share.bytes, static_cast<uint32_t>((load_le32(rv.share.bytes) + delta(id)) % kP));
  };
}

// Δ(x) = κ · Π_{z ∈ zeros} (x − z), scaled so that Δ(0) = 1: added to holders' shares it moves
// the secret's piece 0 by one while every holder in `zeros` keeps its share.
std::function<uint64_t(uint64_t)> vanishing_on(const std::vector<uint64_t>& zeros) {
  uint64_t at_zero = 1;
  for (uint64_t z : zeros) at_zero = mulmod(at_zero, submod(0, z));
  const uint64_t kappa = powmod(at_zero, kP - 2);
  return [zeros, kappa](uint64_t x) {
    uint64_t v = kappa;
    for (uint64_t z : zeros) v = mulmod(v, submod(x, z));
    return v;
  };
}

// ---- F2: colluding holders never change the published sum ------------------------------------

TEST(SecAggReviewF2, TwoColludersFramingAnHonestHolderAbortTheRoundNamingTheSecret) {
  // 7 devices, t = 5 (2·5 > 7): every b_v is revealed by m = 7 = t + 2 holders. Two colluders
  // add Δ(x) (degree t − 1 = 4, zero on every honest holder but `framed`, Δ(0) = 1) to their
  // reveals of the honest victim's b_v: the shares fit f + Δ everywhere but at `framed`, so a
  // single-error locator blames `framed` and rebuilds b_v + 1.
  Round r(7, 5);
  const uint64_t victim = kFirstId + 0, framed = kFirstId + 1;
  const std::vector<uint64_t> colluders = {kFirstId + 5, kFirstId + 6};
  const auto delta = vanishing_on({kFirstId + 0, kFirstId + 2, kFirstId + 3, kFirstId + 4});
  for (uint64_t id : colluders) shift_reveals(r.dev(id), victim, /*self_mask=*/true, delta);
  r.run();
  r.expect_no_wrong_sum(r.true_sum());
  // The round aborts, naming the secret, and nothing is published.
  ASSERT_EQ(r.c.task_state(1), "aborted") << r.all_log();
  EXPECT_FALSE(r.inner.result(1).has_value());
  const std::string why = r.abort_line();
  EXPECT_TRUE(contains(why, "client 500") && contains(why, "self-mask seed")) << r.all_log();
  // The honest holder is not excluded, nor is anyone else (nobody's message was malformed).
  EXPECT_FALSE(r.log_excludes(framed)) << r.all_log();
  EXPECT_FALSE(r.anyone_excluded()) << r.all_log();
}

TEST(SecAggReviewF2, ColludersBeyondTheChecksReachIsCaughtByTheCommitment) {
  // 7 devices, t = 5, m = 7: three colluders (m − t + 1) add Δ vanishing on all four honest
  // holders: every share fits f + Δ, no polynomial check can see it, and the old code published
  // Σ + PRG(b_v) − PRG(b_v + 1) as the sum. The rebuilt b_v must match its owner's commitment.
  Round r(7, 5);
  const uint64_t victim = kFirstId + 0;
  const auto delta = vanishing_on({kFirstId + 0, kFirstId + 1, kFirstId + 2, kFirstId + 3});
  for (uint64_t id : {kFirstId + 4, kFirstId + 5, kFirstId + 6}) {
    shift_reveals(r.dev(id), victim, /*self_mask=*/true, delta);
  }
  r.run();
  r.expect_no_wrong_sum(r.true_sum());
  ASSERT_EQ(r.c.task_state(1), "aborted") << r.all_log();
  EXPECT_FALSE(r.inner.result(1).has_value());
  const std::string why = r.abort_line();
  EXPECT_TRUE(contains(why, "client 500") && contains(why, "commitment")) << r.all_log();
  EXPECT_FALSE(r.anyone_excluded()) << r.all_log();
}

TEST(SecAggReviewF2, AWrongShareAmongExactlyTOfASelfMaskSeedIsCaughtByTheCommitment) {
  // 7 devices, t = 4; three drop after sending their masked input (they are in U3, their b_v
  // must be rebuilt) so every b_v has exactly t = 4 revealing holders: nothing to check a share
  // against. One holder adds 1 to piece 0 of every reveal: without a commitment the sum changed
  // unnoticed.
  Round r(7, 4);
  for (uint64_t id : {kFirstId + 4, kFirstId + 5, kFirstId + 6}) r.dev(id).drop_at = kBeforeReveals;
  shift_reveals(r.dev(kFirstId + 1), 0, /*self_mask=*/true, [](uint64_t) { return 1; });
  r.run();
  r.expect_no_wrong_sum(r.true_sum());
  ASSERT_EQ(r.c.task_state(1), "aborted") << r.all_log();
  EXPECT_FALSE(r.inner.result(1).has_value());
  EXPECT_TRUE(contains(r.abort_line(), "commitment")) << r.all_log();
}

// ---- F3: a malicious dealer cannot get an honest holder excluded ------------------------------

TEST(SecAggReviewF3, ADealersOffShareMakesTheHolderDisputedNotExcluded) {
  Round r(7, 4);  // every secret revealed by 7 = t + 3 holders
  DistDevice& dealer = r.dev(kFirstId + 3);
  const uint64_t framed = kFirstId + 1;
  dealer.tamper = [&dealer, framed](fedstat_v1_Envelope& m) {
    if (m.which_body == fedstat_v1_Envelope_secagg_share_tag &&
        m.body.secagg_share.to_id == framed) {
      reseal_with_offset(dealer, m.body.secagg_share, 12345);
    }
  };
  r.run();
  ASSERT_EQ(r.c.task_state(1), "completed") << r.all_log();
  EXPECT_EQ(r.inner.result(1).value_or(""), r.true_sum());
  EXPECT_FALSE(r.anyone_excluded()) << r.all_log();
  // The log names the dispute with both devices: the holder or the dealer is at fault.
  const std::string line = r.dispute_line(framed, dealer.id);
  EXPECT_FALSE(line.empty()) << r.all_log();
  EXPECT_TRUE(contains(line, "self-mask seed")) << line;
  // The status page (from the store's server notes) shows the dispute, not an exclusion.
  const ServerStatus status = r.view.snapshot(&r.c, kT0);
  ASSERT_EQ(status.tasks.size(), 1u);
  EXPECT_TRUE(status.tasks[0].excluded.empty());
  const std::string html = render_status_html(status);
  EXPECT_TRUE(contains(html, "disputed")) << html;
  EXPECT_TRUE(contains(html, "data-holder=\"" + std::to_string(framed) + "\"")) << html;
  EXPECT_TRUE(contains(html, "data-dealer=\"" + std::to_string(dealer.id) + "\"")) << html;
}

TEST(SecAggReviewF3, AHolderWhoseRevealsAreAllOffIsDisputedPerSecretAndTheSumIsRight) {
  // A holder adding 1 to every reveal it sends: each secret is decoded without its share, each
  // dispute names it with that secret's owner; no exclusion on that evidence.
  Round r(7, 4);
  const uint64_t liar = kFirstId + 2;
  shift_reveals(r.dev(liar), 0, /*self_mask=*/true, [](uint64_t) { return 1; });
  r.run();
  ASSERT_EQ(r.c.task_state(1), "completed") << r.all_log();
  EXPECT_EQ(r.inner.result(1).value_or(""), r.true_sum());
  EXPECT_FALSE(r.anyone_excluded()) << r.all_log();
  for (uint64_t owner = kFirstId; owner < kFirstId + 7; ++owner) {
    if (owner == liar) continue;
    EXPECT_FALSE(r.dispute_line(liar, owner).empty()) << owner << r.all_log();
  }
}

// ---- F1: a dealer whose secret cannot be rebuilt is named, with the evidence -------------------

TEST(SecAggReviewF1, ADealerOfUnreadableSharesIsNamedWithTheEvidence) {
  // 7 devices, t = 4: one device flips a byte of every share it sends; the server cannot see
  // inside a ciphertext, so the device reaches U3 and every holder reveals "no share" about it.
  Round r(7, 4);
  r.dev(kFirstId + 3).tamper = [](fedstat_v1_Envelope& m) {
    if (m.which_body == fedstat_v1_Envelope_secagg_share_tag) {
      m.body.secagg_share.ciphertext.bytes[5] ^= 0x01;
    }
  };
  r.run();
  ASSERT_EQ(r.c.task_state(1), "aborted") << r.all_log();
  EXPECT_FALSE(r.inner.result(1).has_value());
  const std::string why = r.abort_line();
  EXPECT_TRUE(contains(why, "client 503")) << why;
  // The evidence: 6 of its 7 holders (every peer; its own share is readable) sent no share.
  EXPECT_TRUE(contains(why, "6 of the 7 holders")) << why;
  EXPECT_TRUE(contains(why, "unreadable")) << why;
  EXPECT_FALSE(r.anyone_excluded()) << r.all_log();
}

TEST(SecAggReviewF1, ADealerOfTwoOffSharesIsNamedAsASuspect) {
  // Two shares off the dealer's polynomial among m = 7 = t + 3: more wrong shares than one, so
  // no candidate is found; the round aborts naming the dealer as a suspect, never excluding the
  // honest holders.
  Round r(7, 4);
  DistDevice& dealer = r.dev(kFirstId + 3);
  dealer.tamper = [&dealer](fedstat_v1_Envelope& m) {
    if (m.which_body != fedstat_v1_Envelope_secagg_share_tag) return;
    const uint32_t to = m.body.secagg_share.to_id;
    if (to == kFirstId + 1 || to == kFirstId + 2)
      reseal_with_offset(dealer, m.body.secagg_share, 7);
  };
  r.run();
  ASSERT_EQ(r.c.task_state(1), "aborted") << r.all_log();
  const std::string why = r.abort_line();
  EXPECT_TRUE(contains(why, "client 503") && contains(why, "dealt")) << why;
  EXPECT_FALSE(r.anyone_excluded()) << r.all_log();
}

TEST(SecAggReviewF1, ADealerOfAnotherMaskingKeyIsNamed) {
  // The dealer adds 5 to piece 0 of the masking-key share it deals everyone (a consistent
  // polynomial of another key) and drops before masking, so its key must be rebuilt: every share
  // agrees, the key does not give its public key — the dealer's doing (or that of m − t + 1
  // colluding holders), not "a wrong share among exactly t".
  Round r(7, 4);
  DistDevice& dealer = r.dev(kFirstId + 3);
  dealer.drop_at = kBeforeMasking;
  dealer.tamper = [&dealer](fedstat_v1_Envelope& m) {
    if (m.which_body == fedstat_v1_Envelope_secagg_share_tag) {
      reseal_with_offset(dealer, m.body.secagg_share, 5, kMaskingKeyPiece0);
    }
  };
  r.run();
  ASSERT_EQ(r.c.task_state(1), "aborted") << r.all_log();
  const std::string why = r.abort_line();
  EXPECT_TRUE(contains(why, "client 503") && contains(why, "masking key") && contains(why, "dealt"))
      << why;
}

// ---- F5: one wrong share among exactly t + 1 is found -----------------------------------------

TEST(SecAggReviewF5, AWrongShareAmongTPlusOneIsFoundForBothKindsOfSecret) {
  // 7 devices, t = 4; two drop before masking (in U2, not U3: their masking keys are rebuilt), so
  // U3 = 5 = t + 1 holders reveal about everyone. One of them adds 1 to piece 0 of every reveal
  // (the self-mask seeds and the masking keys): the check sees it and cannot locate it; trying
  // the t + 1 subsets against the commitments and the public keys finds it.
  Round r(7, 4);
  r.dev(kFirstId + 5).drop_at = kBeforeMasking;
  r.dev(kFirstId + 6).drop_at = kBeforeMasking;
  const uint64_t liar = kFirstId + 2;
  DistDevice& d = r.dev(liar);
  d.tamper = [liar](fedstat_v1_Envelope& m) {
    if (m.which_body != fedstat_v1_Envelope_secagg_reveal_tag) return;
    fedstat_v1_SecAggReveal& rv = m.body.secagg_reveal;
    if (rv.share.size != secagg::kShareBytes || rv.about_id == liar) return;
    store_le32(rv.share.bytes, (load_le32(rv.share.bytes) + 1) % kP);
  };
  r.run();
  ASSERT_EQ(r.c.task_state(1), "completed") << r.all_log();
  EXPECT_EQ(r.inner.result(1).value_or(""),
            r.sum_of_devices({kFirstId, kFirstId + 1, kFirstId + 2, kFirstId + 3, kFirstId + 4}));
  EXPECT_FALSE(r.anyone_excluded()) << r.all_log();
  EXPECT_FALSE(r.dispute_line(liar, kFirstId + 0).empty()) << r.all_log();  // a self-mask seed
  EXPECT_FALSE(r.dispute_line(liar, kFirstId + 5).empty()) << r.all_log();  // a masking key
}

}  // namespace
}  // namespace testing
}  // namespace host
}  // namespace fedstat
