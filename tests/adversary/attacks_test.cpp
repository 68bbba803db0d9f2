// A malicious server against real SecAggClient devices (issue 42 item 4): (a) two groups shown
// different U3 sets, (b) keys for devices the server invented, (c) a key or consistency signature
// replayed from another session, (d) consistency signatures dropped below the threshold for some
// devices only, (e) two devices' certificates swapped — each run twice by the same harness
// (malicious_server.h) — and what these tests found beyond them (the many-worlds attack on U2
// and U3, replays into a round that reuses a session id, the collusion bound):
//   Unsigned.*  today's protocol (an unsigned session, as protocol 4): the attack succeeds — the
//               server unmasks a victim's input, or the forged roster is accepted. These show
//               the harness can carry each attack out (a signed test that "fails to attack"
//               means something only because the same hooks succeed here) and what an unsigned
//               session still gives away; /work/notes/adv-before.md.
//   Signed.*    protocol 5 (credentials, signed keys, the consistency round; sparse sessions also
//               rule D8, protocol 6): no honest device
//               reveals both kinds of secret about any peer (never t shares of b_v and t of s_v^SK
//               in the server's hands, honest reveals and shares dealt to invented identities
//               counted), the server can unmask no honest device's input from what it holds
//               (recover_input: b_v and every pairwise mask of v's U2, from s_v or the peer's
//               s_u), and the honest devices abort with the documented status or complete, a
//               completed round's sum rebuilt exactly by the host's ShareDecoder.
//   Signed.DISABLED_*  attacks that SUCCEED against protocol 5 as built: the secure outcome is
//               asserted, so each fails when run (--gtest_also_run_disabled_tests); enable them
//               with the fix.
// Complete graph: n = 10, t = 6 (2t > max_clients = 10, so a plain U3 split needs 2t − n = 2
// identities the server controls). Sparse: 12 (or 20) devices, degree 6, t = 4 (2t > k + 1 = 7).
// About 35 s of CPU under ASan in all (ECDSA dominates).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <vector>

#include "tests/adversary/malicious_server.h"

namespace fedstat {
namespace adversary {
namespace {

using secagg::SecAggStage;

std::vector<uint32_t> range(uint32_t first, uint32_t last) {
  std::vector<uint32_t> out;
  for (uint32_t id = first; id <= last; ++id) out.push_back(id);
  return out;
}

std::set<uint32_t> id_set(uint32_t first, uint32_t last) {
  const std::vector<uint32_t> ids = range(first, last);
  return std::set<uint32_t>(ids.begin(), ids.end());
}

RoundConfig complete_config(Mode mode, std::vector<uint32_t> honest,
                            std::vector<uint32_t> sybils = {}, uint64_t session = 4242) {
  RoundConfig c;
  c.mode = mode;
  c.session = session;
  c.honest = std::move(honest);
  c.sybils = std::move(sybils);
  c.threshold = 6;
  c.max_clients = 10;
  return c;
}

RoundConfig sparse_config(Mode mode, std::vector<uint32_t> honest,
                          std::vector<uint32_t> sybils = {}, uint64_t session = 777) {
  RoundConfig c;
  c.mode = mode;
  c.session = session;
  c.honest = std::move(honest);
  c.sybils = std::move(sybils);
  c.threshold = 4;
  c.max_clients = 16;
  c.degree = 6;
  return c;
}

// Every honest device finished its reveals (kDone) without refusing anything.
void expect_all_done(const MaliciousServer& server) {
  for (uint32_t id : server.config().honest) {
    const Device& d = server.device(id);
    EXPECT_FALSE(d.refused()) << "device " << id << " refused at " << d.refused_at << ": "
                              << d.refusal.message();
    EXPECT_EQ(d.client.stage(), SecAggStage::kDone) << "device " << id;
  }
}

// Shares of v's two secrets the server holds, as "b/s".
std::string counts(const MaliciousServer& server, uint32_t v) {
  const Knowledge k = server.knowledge_of(v);
  return std::to_string(k.b_shares.size()) + "/" + std::to_string(k.s_shares.size());
}

// The server can unmask no honest, non-colluding device's input from what it holds (b_v and
// every pairwise mask of v's U2: recover_input()).
void expect_nothing_unmasked(const MaliciousServer& server) {
  for (uint32_t id : server.config().honest) {
    const auto& colluders = server.config().colluders;
    if (std::find(colluders.begin(), colluders.end(), id) != colluders.end()) continue;
    EXPECT_FALSE(server.recover_input(id).has_value()) << "device " << id << " unmasked";
  }
}

// The sparse split of the victim's neighbourhood: `victim`'s roster (k + 1 = 7 in ring order,
// itself at index 3); group B (shown U3 without the victim) is the three after it.
struct SparseSplit {
  uint32_t victim = 0;
  std::vector<uint32_t> roster;  // the victim's neighbourhood, ring order
  std::set<uint32_t> b_group;    // shown U3 \ {victim}
};

SparseSplit sparse_split_around(const MaliciousServer& server, uint32_t victim) {
  SparseSplit s;
  s.victim = victim;
  s.roster = server.neighbourhood(victim, server.all_ids());
  s.b_group = {s.roster[4], s.roster[5], s.roster[6]};
  return s;
}

// The "many worlds" attack on U2 and U3 (found writing these tests): the victim v is shown a U2
// of t members, H = U2_v \ {v} (it masks with them alone), and every holder a U3 of its own in
// which v survived and some members of H dropped. The server then holds t shares of b_v (v in
// every U3) and, for each h in H, t shares of s_h^SK (h dropped in its revealers' U3) — every
// mask on v's input. No view names fewer than t members, and no device sees two kinds of share
// asked about one peer.
// Complete graph, n = 10, t = 6: v = 1, H = 2–6, Z = 7–10; z ∈ Z keeps v, Z and one h (7 keeps
// 2, …, 10 keeps 5); h ∈ H keeps itself, v and Z; v keeps U2_v.
std::set<uint32_t> complete_worlds_view(uint32_t recipient) {
  if (recipient == 1) return id_set(1, 6);
  std::set<uint32_t> view = {1, 7, 8, 9, 10};
  view.insert(recipient <= 6 ? recipient : recipient - 5);
  return view;
}

// Sparse graph (k = 6, t = 4), positions relative to v on the ring: U2_v = U3_v = {−3, 0, +1,
// +3}; the members each position drops from its U3 (its roster is the 7 around it):
//   −3: −2 −1 | +1: −2 −1 +2 | +3: +2      (they sign v's view: agreeing with it where they
//   −2, −1: −3 +1 | +2: +1 +3               overlap) … (reveal b_v and s of the H members)
//   −6, −5, −4: −3 | +4: +1 +3 | +5, +6: +3 (they vouch for those revealers)
// b_v from v, −2, −1, +2; s_{−3} from −5, −4, −2, −1; s_{+1} from −2, −1, +2, +4; s_{+3} from
// +2, +4, +5, +6. Each revealer has t − 1 = 3 neighbours whose view equals its own on every member
// both hold: a server that forwards only those signatures gets every revealer past the
// consistency round.
struct SparseWorlds {
  std::vector<uint32_t> ring;
  size_t v_index = 0;
  uint32_t at(int rel) const {
    const long n = static_cast<long>(ring.size());
    return ring[static_cast<size_t>(((static_cast<long>(v_index) + rel) % n + n) % n)];
  }
  uint32_t victim() const { return at(0); }
  std::set<uint32_t> u2_of_victim() const { return {at(-3), at(0), at(1), at(3)}; }
  std::set<uint32_t> dropped_by(uint32_t id) const {
    static const std::map<int, std::vector<int>> kDrops = {
        {-6, {-3}},    {-5, {-3}},       {-4, {-3}},       {-3, {-2, -1}}, {-2, {-3, 1}},
        {-1, {-3, 1}}, {0, {-2, -1, 2}}, {1, {-2, -1, 2}}, {2, {1, 3}},    {3, {2}},
        {4, {1, 3}},   {5, {3}},         {6, {3}}};
    for (const auto& [rel, drops] : kDrops) {
      if (at(rel) != id) continue;
      std::set<uint32_t> out;
      for (int d : drops) out.insert(at(d));
      return out;
    }
    return {};
  }
};

SparseWorlds sparse_worlds(const MaliciousServer& server, uint32_t victim) {
  SparseWorlds w;
  w.ring = server.ring_of(server.all_ids());
  w.v_index = static_cast<size_t>(std::find(w.ring.begin(), w.ring.end(), victim) - w.ring.begin());
  return w;
}

void set_sparse_worlds(MaliciousServer& server, const SparseWorlds& w) {
  server.u2_view = [w](uint32_t recipient, const std::set<uint32_t>& u2) {
    return recipient == w.victim() ? w.u2_of_victim() : u2;
  };
  server.u3_view = [w](uint32_t recipient, const std::set<uint32_t>& u3) {
    std::set<uint32_t> view = u3;
    for (uint32_t id : w.dropped_by(recipient)) view.erase(id);
    return view;
  };
}

// The server's selective forwarding: m's message goes to r only where an honest r would count
// it — m in r's U3, r in m's, and their U3s equal on every member both rosters hold.
void forward_only_agreeing(MaliciousServer& server) {
  server.forward_consistency = [&server](uint32_t recipient,
                                         const std::map<uint32_t, fedstat_v1_SecAggConsistency>&,
                                         const std::vector<fedstat_v1_SecAggConsistency>& honest) {
    const Device& r = server.device(recipient);
    std::vector<fedstat_v1_SecAggConsistency> out;
    for (const auto& m : honest) {
      const Device& signer = server.device(m.signer_id);
      if (!signer.u3.count(recipient)) continue;
      bool agree = true;
      for (uint32_t x : r.roster) {
        const bool shared =
            std::find(signer.roster.begin(), signer.roster.end(), x) != signer.roster.end();
        if (shared && r.u3.count(x) != signer.u3.count(x)) agree = false;
      }
      if (agree) out.push_back(m);
    }
    return out;
  };
}

// ================================================================================================
// Today's protocol (unsigned sessions): each attack succeeds.
// ================================================================================================

// (a) + (b), complete graph. 2t > max_clients stops a split among honest devices alone, so the
// server invents the 2t − n = 2 members it needs: 8 honest devices, Sybils 9 and 10. Devices
// 1–4 are shown U3 = all (they reveal b_1), 5–8 are shown U3 without device 1 (they reveal s_1);
// with the Sybils' own shares that is t = 6 of each, and the server unmasks device 1's input.
TEST(Unsigned, A_SplitU3WithTwoSybilsUnmasksTheVictim) {
  MaliciousServer server(complete_config(Mode::kUnsigned, range(1, 8), {9, 10}));
  server.u3_view = [](uint32_t recipient, const std::set<uint32_t>& u3) {
    std::set<uint32_t> view = u3;
    if (recipient >= 5 && recipient <= 8) view.erase(1);
    return view;
  };
  server.run_all();
  expect_all_done(server);  // nobody noticed
  EXPECT_EQ(counts(server, 1), "6/6");
  EXPECT_EQ(server.both_kinds_exposed(), std::vector<uint32_t>{1});
  const auto recovered = server.recover_input(1);
  ASSERT_TRUE(recovered.has_value()) << "the server could not unmask device 1";
  EXPECT_EQ(*recovered, server.device(1).input) << "the unmasked input is device 1's";
}

// (a) with honest devices only: today both groups reveal on their own view, unchecked — 5 shares
// of b_1 and 5 of s_1 leave the devices, one short of t on each side (the 2t > n margin). Two
// colluding members would complete both.
TEST(Unsigned, A_HonestSplitIsRevealedOnBothSides) {
  MaliciousServer server(complete_config(Mode::kUnsigned, range(1, 10)));
  server.u3_view = [](uint32_t recipient, const std::set<uint32_t>& u3) {
    std::set<uint32_t> view = u3;
    if (recipient >= 6) view.erase(1);
    return view;
  };
  server.run_all();
  expect_all_done(server);
  EXPECT_EQ(counts(server, 1), "5/5");
  EXPECT_TRUE(server.both_kinds_exposed().empty());
}

// (a) + (b), sparse graph (k = 6, t = 4): one invented member placed next to the victim on the
// ring; the victim and the two before it see it in U3, the three after it do not.
TEST(Unsigned, A_SparseSplitWithOneSybilUnmasksTheVictim) {
  MaliciousServer server(sparse_config(Mode::kUnsigned, range(1, 12), {13}));
  const std::vector<uint32_t> ring = server.ring_of(server.all_ids());
  const size_t p = std::find(ring.begin(), ring.end(), 13u) - ring.begin();
  const uint32_t victim = ring[(p + 1) % ring.size()];  // the Sybil is its predecessor
  const SparseSplit split = sparse_split_around(server, victim);
  ASSERT_EQ(split.roster[2], 13u);
  server.u3_view = [&](uint32_t recipient, const std::set<uint32_t>& u3) {
    std::set<uint32_t> view = u3;
    if (split.b_group.count(recipient)) view.erase(victim);
    return view;
  };
  server.run_all();
  expect_all_done(server);
  EXPECT_EQ(counts(server, victim), "4/4");
  const auto recovered = server.recover_input(victim);
  ASSERT_TRUE(recovered.has_value());
  EXPECT_EQ(*recovered, server.device(victim).input);
}

// (a), sparse, honest devices only: the victim and the three before it see it in U3, the three
// after it do not — today every device reveals on its own view (4 shares of b_v, 3 of s_v: the
// 2t > k + 1 margin; one colluding neighbour would complete both).
TEST(Unsigned, A_SparseHonestSplitIsRevealedOnBothSides) {
  MaliciousServer server(sparse_config(Mode::kUnsigned, range(1, 12)));
  const SparseSplit split = sparse_split_around(server, 5);
  server.u3_view = [&](uint32_t recipient, const std::set<uint32_t>& u3) {
    std::set<uint32_t> view = u3;
    if (split.b_group.count(recipient)) view.erase(split.victim);
    return view;
  };
  server.run_all();
  expect_all_done(server);
  EXPECT_EQ(counts(server, split.victim), "4/3");
}

// The many-worlds attack (above) on today's protocol, honest devices only, where 2t > n does not
// help: the complete graph (n = 10, t = 6) and the sparse one (20 devices, k = 6, t = 4). Every
// device completes; the server unmasks the victim's input exactly.
TEST(Unsigned, A_ManyWorldsUnmaskTheVictimWithHonestDevicesOnly) {
  {
    SCOPED_TRACE("complete");
    MaliciousServer server(complete_config(Mode::kUnsigned, range(1, 10)));
    server.u2_view = [](uint32_t recipient, const std::set<uint32_t>& u2) {
      return recipient == 1 ? id_set(1, 6) : u2;
    };
    server.u3_view = [](uint32_t recipient, const std::set<uint32_t>&) {
      return complete_worlds_view(recipient);
    };
    server.run_all();
    expect_all_done(server);
    const auto recovered = server.recover_input(1);
    ASSERT_TRUE(recovered.has_value()) << counts(server, 1);
    EXPECT_EQ(*recovered, server.device(1).input);
  }
  {
    SCOPED_TRACE("sparse");
    RoundConfig config = sparse_config(Mode::kUnsigned, range(1, 20));
    config.max_clients = 24;
    MaliciousServer server(config);
    const SparseWorlds w = sparse_worlds(server, 1);
    set_sparse_worlds(server, w);
    server.run_all();
    expect_all_done(server);
    const auto recovered = server.recover_input(w.victim());
    ASSERT_TRUE(recovered.has_value()) << counts(server, w.victim());
    EXPECT_EQ(*recovered, server.device(w.victim()).input);
  }
}

// (b) invented devices alone: t = 6 Sybils among 10 read every honest device's shares of both
// secrets in round 1 — no split, no reveal needed — and unmask any device.
TEST(Unsigned, B_SybilsAtTheThresholdUnmaskEveryDevice) {
  MaliciousServer server(complete_config(Mode::kUnsigned, range(1, 4), range(5, 10)));
  server.run_all();
  expect_all_done(server);
  EXPECT_EQ(server.both_kinds_exposed(), range(1, 4));
  for (uint32_t v : range(1, 4)) {
    const auto recovered = server.recover_input(v);
    ASSERT_TRUE(recovered.has_value()) << v;
    EXPECT_EQ(*recovered, server.device(v).input) << v;
  }
}

// (c) keys from another session: device 10's keys of session 1000, re-labelled for this one,
// stand in for device 10 (absent); every other device accepts the roster and shares with them.
TEST(Unsigned, C_KeysFromAnotherSessionAreAccepted) {
  MaliciousServer old_round(complete_config(Mode::kUnsigned, range(1, 10), {}, 1000));
  old_round.advertise();
  fedstat_v1_SecAggKeys replayed = old_round.device(10).keys;
  MaliciousServer server(complete_config(Mode::kUnsigned, range(1, 9), {}, 4242));
  replayed.session = 4242;
  server.advertise();
  server.tamper_roster = [&](uint32_t, std::vector<fedstat_v1_SecAggPeerKeys>& roster) {
    const uint32_t count = static_cast<uint32_t>(roster.size()) + 1;
    for (auto& e : roster) e.count = count;
    roster.push_back(MaliciousServer::entry(replayed, count - 1, count));
  };
  server.send_rosters();
  for (uint32_t id : range(1, 9)) {
    EXPECT_FALSE(server.device(id).refused()) << id << ": " << server.device(id).refusal.message();
    EXPECT_EQ(server.device(id).client.stage(), SecAggStage::kSharing) << id;
  }
}

// (e) two devices' keys swapped (id 3 carries device 4's keys and 4 carries 3's) in the roster
// every other device is sent: accepted; the server has swapped who those devices talk to.
TEST(Unsigned, E_SwappedKeysAreAccepted) {
  MaliciousServer server(complete_config(Mode::kUnsigned, range(1, 10)));
  server.advertise();
  server.tamper_roster = [](uint32_t recipient, std::vector<fedstat_v1_SecAggPeerKeys>& roster) {
    if (recipient == 3 || recipient == 4) return;
    std::swap(roster[2].keys.encryption_key, roster[3].keys.encryption_key);
    std::swap(roster[2].keys.masking_key, roster[3].keys.masking_key);
    std::swap(roster[2].keys.commitment, roster[3].keys.commitment);
  };
  server.send_rosters();
  for (uint32_t id : range(1, 10)) {
    EXPECT_FALSE(server.device(id).refused()) << id << ": " << server.device(id).refusal.message();
  }
}

// ================================================================================================
// Signed sessions (protocol 5): each attack fails.
// ================================================================================================

// Every honest device refused the roster with kPermissionDenied (forged keys) and aborted.
void expect_all_refused_roster(const MaliciousServer& server) {
  for (uint32_t id : server.config().honest) {
    const Device& d = server.device(id);
    EXPECT_EQ(d.refused_at, "on_peer_keys") << "device " << id;
    EXPECT_EQ(d.refusal.code(), StatusCode::kPermissionDenied)
        << "device " << id << ": " << d.refusal.message();
    EXPECT_EQ(d.client.stage(), SecAggStage::kAborted) << "device " << id;
    EXPECT_TRUE(d.reveals.empty()) << "device " << id;
  }
}

// No honest device revealed anything, and none can (next_reveal refused).
void expect_no_reveal(const MaliciousServer& server) {
  for (uint32_t id : server.config().honest) {
    const Device& d = server.device(id);
    EXPECT_TRUE(d.reveals.empty()) << "device " << id << " revealed " << d.reveals.size();
    EXPECT_FALSE(d.reveal_status.ok()) << "device " << id;
  }
}

// The harness as an honest server (the control for the sparse tests; D_… is the complete graph's):
// a signed sparse round completes on every device, and ShareDecoder rebuilds the exact sum.
TEST(Signed, HonestSparseRoundCompletesExactly) {
  MaliciousServer server(sparse_config(Mode::kSigned, range(1, 12)));
  server.run_all();
  expect_all_done(server);
  EXPECT_TRUE(server.both_kinds_exposed().empty());
  expect_nothing_unmasked(server);
  const std::set<uint32_t> all = id_set(1, 12);
  const auto sum = server.sum_from_reveals(all);
  ASSERT_TRUE(sum.has_value());
  EXPECT_EQ(*sum, server.true_sum(all));
}

// (a), complete graph, honest devices only: 1–5 shown U3 = all, 6–10 shown U3 without device 1.
// Forwarded every message there is — the other group's (fails to verify: another view), the
// victim's to those whose U3 lacks it, each device's own, every one twice — no group reaches
// t = 6 agreeing signatures (5 each, itself included), so no device reveals anything; today
// (Unsigned.A_HonestSplitIsRevealedOnBothSides) every one does.
TEST(Signed, A_SplitU3CompleteRevealsNothing) {
  for (const bool everything : {false, true}) {
    SCOPED_TRACE(everything ? "every message to every device, twice" : "honest forwarding");
    MaliciousServer server(complete_config(Mode::kSigned, range(1, 10)));
    server.u3_view = [](uint32_t recipient, const std::set<uint32_t>& u3) {
      std::set<uint32_t> view = u3;
      if (recipient >= 6) view.erase(1);
      return view;
    };
    if (everything) {
      server.forward_consistency = [](uint32_t,
                                      const std::map<uint32_t, fedstat_v1_SecAggConsistency>& all,
                                      const std::vector<fedstat_v1_SecAggConsistency>&) {
        std::vector<fedstat_v1_SecAggConsistency> out;
        for (int twice = 0; twice < 2; ++twice) {
          for (const auto& [signer, m] : all) out.push_back(m);
        }
        return out;
      };
    }
    server.run_all();
    for (uint32_t id : range(1, 10)) {
      const Device& d = server.device(id);
      EXPECT_FALSE(d.refused()) << id << " " << d.refused_at << ": " << d.refusal.message();
      EXPECT_EQ(d.client.stage(), SecAggStage::kConsistency) << id;
      EXPECT_EQ(d.client.consistency_count(), 5u) << id;  // its own group, itself included
      EXPECT_EQ(d.reveal_status.code(), StatusCode::kFailedPrecondition) << id;
    }
    expect_no_reveal(server);
    EXPECT_EQ(counts(server, 1), "0/0");
    expect_nothing_unmasked(server);
  }
}

// (a) with the two invented members today's split needs (Unsigned.A_SplitU3WithTwoSybils…): the
// Sybils carry no certificate, so the roster is refused before any share is made.
TEST(Signed, A_SplitU3WithSybilsIsRefusedAtTheRoster) {
  MaliciousServer server(complete_config(Mode::kSigned, range(1, 8), {9, 10}));
  server.u3_view = [](uint32_t recipient, const std::set<uint32_t>& u3) {
    std::set<uint32_t> view = u3;
    if (recipient >= 5 && recipient <= 8) view.erase(1);
    return view;
  };
  server.run_all();
  expect_all_refused_roster(server);
  EXPECT_TRUE(server.both_kinds_exposed().empty());
  expect_nothing_unmasked(server);
  EXPECT_FALSE(server.recover_input(1).has_value());
}

// (a), sparse graph, honest devices only, every consistency message forwarded as an honest
// server would: the victim's neighbours on either side of the split see a verified view that
// disagrees with theirs about the victim and abort (kAborted) before revealing anything.
TEST(Signed, A_SparseSplitIsDetected) {
  MaliciousServer server(sparse_config(Mode::kSigned, range(1, 12)));
  const SparseSplit split = sparse_split_around(server, 5);
  server.u3_view = [&](uint32_t recipient, const std::set<uint32_t>& u3) {
    std::set<uint32_t> view = u3;
    if (split.b_group.count(recipient)) view.erase(split.victim);
    return view;
  };
  server.run_all();
  for (uint32_t id : {split.roster[2], split.victim, split.roster[4]}) {
    const Device& d = server.device(id);
    EXPECT_EQ(d.client.stage(), SecAggStage::kAborted) << id;
    EXPECT_NE(std::find_if(d.consistency_statuses.begin(), d.consistency_statuses.end(),
                           [](const Status& s) { return s.code() == StatusCode::kAborted; }),
              d.consistency_statuses.end())
        << id << " saw no disagreement";
    EXPECT_TRUE(d.reveals.empty()) << id;
  }
  EXPECT_TRUE(server.both_kinds_exposed().empty());
  expect_nothing_unmasked(server);
  const Knowledge k = server.knowledge_of(split.victim);
  EXPECT_LT(k.s_shares.size(), 4u);
}

// (a), sparse, the server forwarding only the messages that agree with each recipient's view:
// nothing is detected (a device cannot see a view it is not sent), but the shares stay under t on
// one side — the holders of the victim's secrets are its k + 1 = 7 neighbours and 2t > 7.
TEST(Signed, A_SparseSplitWithSelectiveForwardingStaysUnderThreshold) {
  MaliciousServer server(sparse_config(Mode::kSigned, range(1, 12)));
  const SparseSplit split = sparse_split_around(server, 5);
  server.u3_view = [&](uint32_t recipient, const std::set<uint32_t>& u3) {
    std::set<uint32_t> view = u3;
    if (split.b_group.count(recipient)) view.erase(split.victim);
    return view;
  };
  server.forward_consistency = [&](uint32_t recipient,
                                   const std::map<uint32_t, fedstat_v1_SecAggConsistency>&,
                                   const std::vector<fedstat_v1_SecAggConsistency>& honest) {
    std::vector<fedstat_v1_SecAggConsistency> out;
    const bool recipient_b = split.b_group.count(recipient) > 0;
    for (const auto& m : honest) {
      if ((split.b_group.count(m.signer_id) > 0) == recipient_b) out.push_back(m);
    }
    return out;
  };
  server.run_all();
  EXPECT_TRUE(server.both_kinds_exposed().empty());
  expect_nothing_unmasked(server);
  const Knowledge k = server.knowledge_of(split.victim);
  EXPECT_LE(k.s_shares.size(), 3u);
  EXPECT_FALSE(server.recover_input(split.victim).has_value());
}

// A certificate and key signature for an invented id: no certificate; a certificate and valid
// key signature from a CA the server made (a rogue CA); a real device's certificate (device 11,
// not in this round: its certificate is public) on keys the server made, signed with a key the
// server made.
TEST(Signed, B_InventedDevicesAreRefused) {
  for (int variant = 0; variant < 3; ++variant) {
    SCOPED_TRACE(variant == 0   ? "no certificate"
                 : variant == 1 ? "rogue CA"
                                : "stolen certificate");
    MaliciousServer server(complete_config(Mode::kSigned, range(1, 9), {10}));
    server.advertise();
    fedstat_v1_SecAggKeys& forged = server.device(10).keys;
    SeededStream rogue(Seed256{}, 99);
    credential::DeviceCredential fake;
    uint8_t rogue_ca_private[32], rogue_ca_public[65];
    ASSERT_TRUE(credential::generate_key_pair(rogue, MutableByteSpan(rogue_ca_private, 32),
                                              MutableByteSpan(rogue_ca_public, 65))
                    .ok());
    ASSERT_TRUE(credential::generate_key_pair(rogue, MutableByteSpan(fake.private_key, 32),
                                              MutableByteSpan(fake.certificate.public_key, 65))
                    .ok());
    uint8_t start_digest[32];
    ASSERT_TRUE(
        secagg::start_parameters_digest(server.start_message(), MutableByteSpan(start_digest, 32))
            .ok());
    if (variant == 1) {
      ASSERT_TRUE(credential::issue_certificate(ByteSpan(rogue_ca_private, 32), 10,
                                                ByteSpan(fake.certificate.public_key, 65),
                                                fake.certificate)
                      .ok());
      ASSERT_TRUE(secagg::sign_keys(fake, ByteSpan(start_digest, 32), forged).ok());
    } else if (variant == 2) {
      // Device 11's genuine certificate (the real CA issued it; certificates are public). The
      // server does not hold device 11's private key, so it signs the keys with its own.
      uint8_t key11[32];
      credential::DeviceCertificate cert11;
      ASSERT_TRUE(credential::generate_key_pair(rogue, MutableByteSpan(key11, 32),
                                                MutableByteSpan(cert11.public_key, 65))
                      .ok());
      ASSERT_TRUE(credential::issue_certificate(ByteSpan(server.ca_private_key(), 32), 11,
                                                ByteSpan(cert11.public_key, 65), cert11)
                      .ok());
      fake.certificate = cert11;
      forged.client_id = 11;
      ASSERT_TRUE(secagg::sign_keys(fake, ByteSpan(start_digest, 32), forged).ok());
    }
    server.send_rosters();
    server.share();
    server.mask_and_send();
    server.send_u3();
    server.consistency();
    server.reveal();
    expect_all_refused_roster(server);
    EXPECT_TRUE(server.both_kinds_exposed().empty());
    expect_nothing_unmasked(server);
  }
}

// The many-worlds attack against signed sessions. Complete graph: a device counts only
// signatures over exactly its own U3, and no t devices share one (each z's view differs; h_j's
// equals z's at most once) — nobody reveals, whatever is forwarded (here every message that
// verifies for its recipient).
TEST(Signed, A_ManyWorldsCompleteRevealNothing) {
  MaliciousServer server(complete_config(Mode::kSigned, range(1, 10)));
  server.u2_view = [](uint32_t recipient, const std::set<uint32_t>& u2) {
    return recipient == 1 ? id_set(1, 6) : u2;
  };
  server.u3_view = [](uint32_t recipient, const std::set<uint32_t>&) {
    return complete_worlds_view(recipient);
  };
  server.run_all();
  for (uint32_t id : range(1, 10)) {
    EXPECT_EQ(server.device(id).client.stage(), SecAggStage::kConsistency) << id;
    EXPECT_LT(server.device(id).client.consistency_count(), 6u) << id;
  }
  expect_no_reveal(server);
  EXPECT_FALSE(server.recover_input(1).has_value());
}

// Sparse graph: each device counts the signatures the server chose to forward and checks only
// that each agrees with its own view where their rosters overlap. A server that forwards only
// agreeing ones got every revealer of the many-worlds attack past the consistency round and
// unmasked the victim — with honest, certified devices only, and never both kinds of share about
// one device asked of anyone (h-proto 7e14d1c: device 1's input recovered exactly). Since a
// sparse device needs t neighbours besides itself, each revealer of the construction is one
// short: nothing is unmasked. With corrupt neighbours the attack still works from 2t − k − 1 of
// them (scripts/secagg_many_worlds.py; docs/protocol.md, "Threat model").
TEST(Signed, A_ManyWorldsSparseUnmaskNobody) {
  RoundConfig config = sparse_config(Mode::kSigned, range(1, 20));
  config.max_clients = 24;
  MaliciousServer server(config);
  const SparseWorlds w = sparse_worlds(server, 1);
  set_sparse_worlds(server, w);
  forward_only_agreeing(server);
  server.run_all();
  EXPECT_TRUE(server.both_kinds_exposed().empty());  // never both kinds about one device…
  const auto recovered = server.recover_input(w.victim());
  EXPECT_FALSE(recovered.has_value()) << "b/s shares of the victim: " << counts(server, w.victim());
  if (recovered.has_value()) {  // … yet its input, exactly
    EXPECT_NE(*recovered, server.device(w.victim()).input)
        << "the server unmasked device " << w.victim() << "'s input exactly";
  }
}

// A downgrade: the server starts the devices that hold a credential in an unsigned session
// (SecAggStart.signed_keys cleared), where today's attacks work. Each refuses to start
// (kPermissionDenied), advertises nothing and stays idle.
TEST(Signed, DowngradeToAnUnsignedSessionIsRefused) {
  MaliciousServer server(complete_config(Mode::kSigned, range(1, 10)));
  server.tamper_start = [](uint32_t, fedstat_v1_SecAggStart& start) { start.signed_keys = false; };
  server.advertise();
  for (uint32_t id : range(1, 10)) {
    const Device& d = server.device(id);
    EXPECT_EQ(d.refused_at, "on_start") << id;
    EXPECT_EQ(d.refusal.code(), StatusCode::kPermissionDenied) << id << ": " << d.refusal.message();
    EXPECT_EQ(d.client.stage(), SecAggStage::kIdle) << id;
  }
  EXPECT_TRUE(server.u1().empty());
}

// (c) a key signature replayed from another session: device 10's signed keys from an earlier
// round stand in for device 10 (absent) — from a session with another id (re-labelled or not),
// and from one with this id but other start parameters (threshold 7): the signature covers the
// session and the start digest, so every device refuses the roster.
TEST(Signed, C_ReplayedKeySignatureIsRefused) {
  struct Variant {
    const char* name;
    uint64_t old_session;
    uint32_t old_threshold;
    bool relabel;
  };
  for (const Variant& v : {Variant{"another session, re-labelled", 1000, 6, true},
                           Variant{"another session as it was", 1000, 6, false},
                           Variant{"this session id, threshold 7", 4242, 7, false}}) {
    SCOPED_TRACE(v.name);
    RoundConfig old_config = complete_config(Mode::kSigned, range(1, 10), {}, v.old_session);
    old_config.threshold = v.old_threshold;
    old_config.round = 1;
    MaliciousServer old_round(old_config);
    old_round.advertise();
    fedstat_v1_SecAggKeys replayed = old_round.device(10).keys;
    ASSERT_TRUE(replayed.has_certificate);
    if (v.relabel) replayed.session = 4242;
    MaliciousServer server(complete_config(Mode::kSigned, range(1, 9)));
    server.advertise();
    server.tamper_roster = [&](uint32_t, std::vector<fedstat_v1_SecAggPeerKeys>& roster) {
      const uint32_t count = static_cast<uint32_t>(roster.size()) + 1;
      for (auto& e : roster) e.count = count;
      roster.push_back(MaliciousServer::entry(replayed, count - 1, count));
    };
    server.send_rosters();
    for (uint32_t id : range(1, 9)) {
      const Device& d = server.device(id);
      EXPECT_EQ(d.refused_at, "on_peer_keys") << id;
      EXPECT_EQ(d.refusal.code(), v.relabel || v.old_session == 4242 ? StatusCode::kPermissionDenied
                                                                     : StatusCode::kInvalidArgument)
          << id << ": " << d.refusal.message();
      EXPECT_NE(d.client.stage(), SecAggStage::kSharing) << id;
    }
  }
}

// (c) consistency signatures replayed from another session (complete graph): an honest round
// of the same ten devices (session 1000, U3 = all) gave ten valid signatures. In this session the
// server splits U3 (as in A_SplitU3CompleteRevealsNothing) and forwards the old signatures to
// group 1–5 — as they were and relabelled with this session's id: none counts (the session hash
// they cover, which covers the roster's fresh keys, is another), and no device reveals.
TEST(Signed, C_ReplayedConsistencySignaturesDoNotCount) {
  RoundConfig old_config = complete_config(Mode::kSigned, range(1, 10), {}, 1000);
  old_config.round = 1;
  MaliciousServer old_round(old_config);
  old_round.run_all();
  expect_all_done(old_round);
  ASSERT_EQ(old_round.consistency_messages().size(), 10u);
  MaliciousServer server(complete_config(Mode::kSigned, range(1, 10)));
  server.u3_view = [](uint32_t recipient, const std::set<uint32_t>& u3) {
    std::set<uint32_t> view = u3;
    if (recipient >= 6) view.erase(1);
    return view;
  };
  server.forward_consistency = [&](uint32_t recipient,
                                   const std::map<uint32_t, fedstat_v1_SecAggConsistency>&,
                                   const std::vector<fedstat_v1_SecAggConsistency>& honest) {
    std::vector<fedstat_v1_SecAggConsistency> out = honest;
    if (recipient > 5) return out;
    for (const auto& [signer, m] : old_round.consistency_messages()) {
      if (signer == recipient) continue;
      out.push_back(m);  // as it was (session 1000)
      out.push_back(m);
      out.back().session = 4242;  // relabelled
    }
    return out;
  };
  server.run_all();
  for (uint32_t id : range(1, 10)) {
    const Device& d = server.device(id);
    EXPECT_EQ(d.client.stage(), SecAggStage::kConsistency) << id;
    EXPECT_EQ(d.client.consistency_count(), 5u) << id;
    if (id > 5) continue;
    // After the 9 this session's members sent (its own group's 4 count, the other group's 5 do
    // not verify: another view), the old ones in signer order: as they were, another session
    // (kInvalidArgument); relabelled, a signature that does not verify (kPermissionDenied) — or,
    // from a signer already counted, OK and not looked at (a resume changes nothing).
    ASSERT_EQ(d.consistency_statuses.size(), 9u + 18u) << id;
    size_t k = 9;
    for (const auto& [signer, m] : old_round.consistency_messages()) {
      if (signer == id) continue;
      EXPECT_EQ(d.consistency_statuses[k].code(), StatusCode::kInvalidArgument) << id;
      EXPECT_EQ(d.consistency_statuses[k + 1].code(),
                signer <= 5 ? StatusCode::kOk : StatusCode::kPermissionDenied)
          << id << " from " << signer;
      k += 2;
    }
  }
  expect_no_reveal(server);
  expect_nothing_unmasked(server);
}

// (d) consistency signatures withheld from some devices only: devices 9 and 10 are forwarded 4
// signatures (5 with their own, under t = 6) and reveal nothing (next_reveal refused, still in
// the consistency round); the other eight complete, and their reveals alone rebuild every
// self-mask seed (8 ≥ t shares each) — the sum of all ten inputs, exact. Starving five devices
// leaves five revealers: every seed has 5 < t shares, the sum cannot be rebuilt, and still no
// device's secrets are exposed.
TEST(Signed, D_StarvedDevicesRevealNothingAndTheRestComplete) {
  for (const uint32_t starved : {2u, 5u}) {
    SCOPED_TRACE(std::to_string(starved) + " devices starved");
    MaliciousServer server(complete_config(Mode::kSigned, range(1, 10)));
    const uint32_t first_starved = 11 - starved;
    server.forward_consistency = [&](uint32_t recipient,
                                     const std::map<uint32_t, fedstat_v1_SecAggConsistency>&,
                                     const std::vector<fedstat_v1_SecAggConsistency>& honest) {
      std::vector<fedstat_v1_SecAggConsistency> out = honest;
      if (recipient >= first_starved) out.resize(4);
      return out;
    };
    server.run_all();
    for (uint32_t id : range(1, 10)) {
      const Device& d = server.device(id);
      EXPECT_FALSE(d.refused()) << id << ": " << d.refusal.message();
      if (id >= first_starved) {
        EXPECT_EQ(d.client.stage(), SecAggStage::kConsistency) << id;
        EXPECT_EQ(d.client.consistency_count(), 5u) << id;
        EXPECT_TRUE(d.reveals.empty()) << id;
        EXPECT_EQ(d.reveal_status.code(), StatusCode::kFailedPrecondition) << id;
      } else {
        EXPECT_EQ(d.client.stage(), SecAggStage::kDone) << id;
        EXPECT_EQ(d.reveals.size(), 10u) << id;  // its own b-share and one per peer
      }
    }
    EXPECT_TRUE(server.both_kinds_exposed().empty());
    expect_nothing_unmasked(server);
    const std::set<uint32_t> all = id_set(1, 10);
    const auto sum = server.sum_from_reveals(all);
    if (starved == 2) {
      ASSERT_TRUE(sum.has_value());
      EXPECT_EQ(*sum, server.true_sum(all));
    } else {
      EXPECT_FALSE(sum.has_value());
    }
  }
}

// (e) two devices' certificates swapped in the roster every other device is sent: device 3's
// keys with device 4's certificate and 4's with 3's (the key signatures left, or swapped with
// the certificates), or device 4's certificate and key signature on X25519 keys the server made
// (a man in the middle). Every device shown it refuses the roster (kPermissionDenied); devices
// 3 and 4, shown the true roster, are left below the threshold and abort.
TEST(Signed, E_SwappedCertificatesAreRefused) {
  for (int variant = 0; variant < 3; ++variant) {
    SCOPED_TRACE(variant == 0   ? "certificates swapped"
                 : variant == 1 ? "certificates and signatures swapped"
                                : "device 4's certificate on the server's keys");
    MaliciousServer server(complete_config(Mode::kSigned, range(1, 10)));
    server.advertise();
    MaliciousServer mitm(complete_config(Mode::kUnsigned, {}, {4}));
    mitm.advertise();  // X25519 keys (and a commitment) the server holds the secrets of
    server.tamper_roster = [&](uint32_t recipient, std::vector<fedstat_v1_SecAggPeerKeys>& roster) {
      if (recipient == 3 || recipient == 4) return;
      fedstat_v1_SecAggKeys& k3 = roster[2].keys;
      fedstat_v1_SecAggKeys& k4 = roster[3].keys;
      if (variant < 2) {
        std::swap(k3.certificate, k4.certificate);
        if (variant == 1) std::swap(k3.key_signature, k4.key_signature);
      } else {
        const fedstat_v1_SecAggKeys& fake = mitm.device(4).keys;
        k4.encryption_key = fake.encryption_key;
        k4.masking_key = fake.masking_key;
        k4.commitment = fake.commitment;
      }
    };
    server.send_rosters();
    server.share();
    server.mask_and_send();
    server.send_u3();
    server.consistency();
    server.reveal();
    for (uint32_t id : range(1, 10)) {
      const Device& d = server.device(id);
      EXPECT_TRUE(d.reveals.empty()) << id;
      if (id == 3 || id == 4) {
        EXPECT_EQ(d.refusal.code(), StatusCode::kAborted) << id << ": " << d.refusal.message();
        EXPECT_EQ(d.client.stage(), SecAggStage::kAborted) << id;
      } else {
        EXPECT_EQ(d.refused_at, "on_peer_keys") << id;
        EXPECT_EQ(d.refusal.code(), StatusCode::kPermissionDenied)
            << id << ": " << d.refusal.message();
      }
    }
  }
}

// Forwarding tricks on the consistency round (complete graph, one honest U3): device 1 is sent
// its own message (twice), device 2's three times, device 3's relabelled as device 4's, device
// 5's with a members list, and device 10's (10 is shown in U3 only by itself: the others' U3
// drop it) — only device 2's counts, once: 2 of t = 6. Then the genuine messages of 3, 4, 5 and
// 6 bring it to 6 and it reveals; a replay of them after that changes nothing.
TEST(Signed, ConsistencyForwardingTricksCountNothingTwice) {
  MaliciousServer server(complete_config(Mode::kSigned, range(1, 10)));
  server.u3_view = [](uint32_t recipient, const std::set<uint32_t>& u3) {
    std::set<uint32_t> view = u3;
    if (recipient != 10) view.erase(10);
    return view;
  };
  server.forward_consistency = [](uint32_t recipient,
                                  const std::map<uint32_t, fedstat_v1_SecAggConsistency>&,
                                  const std::vector<fedstat_v1_SecAggConsistency>& honest) {
    return recipient == 1 ? std::vector<fedstat_v1_SecAggConsistency>{} : honest;
  };
  server.advertise();
  server.send_rosters();
  server.share();
  server.mask_and_send();
  server.send_u3();
  server.consistency();
  const auto& all = server.consistency_messages();
  ASSERT_EQ(all.size(), 10u);
  Device& d1 = server.device(1);
  EXPECT_EQ(d1.client.consistency_count(), 1u);
  EXPECT_EQ(d1.client.on_consistency(all.at(1)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(d1.client.on_consistency(all.at(1)).code(), StatusCode::kInvalidArgument);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(d1.client.on_consistency(all.at(2)).ok());
  fedstat_v1_SecAggConsistency relabelled = all.at(3);
  relabelled.signer_id = 4;
  EXPECT_EQ(d1.client.on_consistency(relabelled).code(), StatusCode::kPermissionDenied);
  fedstat_v1_SecAggConsistency listed = all.at(5);
  listed.members_count = 2;
  listed.members[0] = 1;
  listed.members[1] = 5;
  EXPECT_EQ(d1.client.on_consistency(listed).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(d1.client.on_consistency(all.at(10)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(d1.client.consistency_count(), 2u);
  fedstat_v1_SecAggReveal r;
  EXPECT_EQ(d1.client.next_reveal(r).status().code(), StatusCode::kFailedPrecondition);
  for (uint32_t signer : {3u, 4u, 5u}) {
    EXPECT_TRUE(d1.client.on_consistency(all.at(signer)).ok());
    EXPECT_EQ(d1.client.stage(), SecAggStage::kConsistency);
  }
  EXPECT_TRUE(d1.client.on_consistency(all.at(6)).ok());
  EXPECT_EQ(d1.client.consistency_count(), 6u);
  EXPECT_EQ(d1.client.stage(), SecAggStage::kUnmasking);
  EXPECT_TRUE(d1.client.on_consistency(all.at(3)).ok());
  EXPECT_EQ(d1.client.consistency_count(), 6u);
  server.reveal();
  for (uint32_t id : range(1, 9)) {
    EXPECT_EQ(server.device(id).client.stage(), SecAggStage::kDone) << id;
  }
  // Device 10, alone with its view, never reaches t; the others reveal its masking key (it
  // dropped, in their view) and nothing of its self-mask seed.
  EXPECT_EQ(server.device(10).client.stage(), SecAggStage::kConsistency);
  EXPECT_EQ(server.device(10).client.consistency_count(), 1u);
  EXPECT_EQ(counts(server, 10), "0/9");
  EXPECT_TRUE(server.both_kinds_exposed().empty());
  expect_nothing_unmasked(server);
}

// Sparse forwarding tricks: a neighbour's members list edited by the server (an id dropped, an
// id added, reordered) no longer verifies; a signer relabelled as another does not either.
TEST(Signed, SparseMembersCannotBeEdited) {
  MaliciousServer server(sparse_config(Mode::kSigned, range(1, 12)));
  server.forward_consistency = [](uint32_t, const std::map<uint32_t, fedstat_v1_SecAggConsistency>&,
                                  const std::vector<fedstat_v1_SecAggConsistency>&) {
    return std::vector<fedstat_v1_SecAggConsistency>{};
  };
  server.advertise();
  server.send_rosters();
  server.share();
  server.mask_and_send();
  server.send_u3();
  server.consistency();
  Device& r = server.device(1);
  const uint32_t signer = r.roster[4];  // its successor
  fedstat_v1_SecAggConsistency m = server.consistency_messages().at(signer);
  ASSERT_EQ(m.members_count, 7u);
  fedstat_v1_SecAggConsistency dropped = m;
  dropped.members_count = 6;  // the largest id gone
  EXPECT_EQ(r.client.on_consistency(dropped).code(), StatusCode::kPermissionDenied);
  fedstat_v1_SecAggConsistency added = m;
  added.members[added.members_count++] = 1000;
  EXPECT_EQ(r.client.on_consistency(added).code(), StatusCode::kPermissionDenied);
  fedstat_v1_SecAggConsistency reordered = m;
  std::swap(reordered.members[0], reordered.members[1]);
  EXPECT_EQ(r.client.on_consistency(reordered).code(), StatusCode::kInvalidArgument);
  fedstat_v1_SecAggConsistency relabelled = m;
  relabelled.signer_id = r.roster[5];
  EXPECT_EQ(r.client.on_consistency(relabelled).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(r.client.consistency_count(), 1u);
  EXPECT_TRUE(r.client.on_consistency(m).ok());
  EXPECT_EQ(r.client.consistency_count(), 2u);
}

// (c) replays into a round that reuses a session id — the server picks session ids, and a device
// keeps no record of the ones it saw. Two rounds of the same devices with the same session id and
// parameters (for the sparse graph also the same ring seed and ring size); every device draws
// fresh keys in the second.
//   keys: device 10's signed keys of the first round stand in for device 10 in the second;
//   consistency (sparse): device 1 is forwarded none of the second round's signatures, only its
//     three neighbours' signatures of the first round (their U3 was the same set of ids).
// What is signed covers no key material of the second round: the keys digest covers the session
// id and start parameters, and a sparse session hash (graph.h) covers no roster keys.
// Keys: a reused session id is invisible in round 0, so the old signed keys are accepted into the
// roster — what this test asserts against (it still fails: DISABLED). What keeps the replayed
// identity from mattering: the server holds no round key of device 10's to seal a share with, and
// a signed device counts towards U2, U3 and the consistency threshold only members whose valid
// share it holds (host SecAggSigned.U2CountsOnlyMembersWhoseValidShareArrived and
// ConsistencySignerWithoutAValidShareIsNotCounted test that rule; this harness cannot route a
// share from an identity it has no device for). Refusing the keys themselves would need a
// per-round value every member contributes before signing (docs/protocol.md, "Threat model").
// Consistency (sparse): the digest now covers the signer's round keys (signed_keys.h), so the
// first round's signatures do not verify in the second: enabled, passes.
TEST(Signed, DISABLED_C_ReplayIntoARoundReusingTheSessionId_Keys) {
  RoundConfig old_config = complete_config(Mode::kSigned, range(1, 10));
  old_config.round = 1;
  MaliciousServer old_round(old_config);
  old_round.advertise();
  const fedstat_v1_SecAggKeys replayed = old_round.device(10).keys;
  MaliciousServer server(complete_config(Mode::kSigned, range(1, 9)));
  server.advertise();
  ASSERT_EQ(replayed.session, server.start_message().session);
  server.tamper_roster = [&](uint32_t, std::vector<fedstat_v1_SecAggPeerKeys>& roster) {
    const uint32_t count = static_cast<uint32_t>(roster.size()) + 1;
    for (auto& e : roster) e.count = count;
    roster.push_back(MaliciousServer::entry(replayed, count - 1, count));
  };
  server.send_rosters();
  for (uint32_t id : range(1, 9)) {
    const Device& d = server.device(id);
    EXPECT_EQ(d.refusal.code(), StatusCode::kPermissionDenied)
        << id << " accepted device 10's keys of an earlier round";
  }
}

TEST(Signed, C_ReplayIntoARoundReusingTheSessionId_SparseConsistency) {
  RoundConfig old_config = sparse_config(Mode::kSigned, range(1, 12));
  old_config.round = 1;
  MaliciousServer old_round(old_config);
  old_round.run_all();
  expect_all_done(old_round);
  MaliciousServer server(sparse_config(Mode::kSigned, range(1, 12)));
  server.forward_consistency = [&](uint32_t recipient,
                                   const std::map<uint32_t, fedstat_v1_SecAggConsistency>&,
                                   const std::vector<fedstat_v1_SecAggConsistency>& honest) {
    if (recipient != 1) return honest;
    std::vector<fedstat_v1_SecAggConsistency> out;
    const Device& r = server.device(1);
    for (uint32_t signer : {r.roster[2], r.roster[4], r.roster[5]}) {
      out.push_back(old_round.consistency_messages().at(signer));
    }
    return out;
  };
  server.run_all();
  const Device& r = server.device(1);
  EXPECT_EQ(r.client.consistency_count(), 1u)
      << "signatures of an earlier round were counted in this one";
  EXPECT_TRUE(r.reveals.empty()) << "device 1 revealed with no signature of this round";
}

// The threat model's assumption, made concrete: colluding certified devices sign any view (the
// server holds their keys) and hand the server every share they hold. Complete graph, n = 10,
// t = 6, victim 1, the best split the server has. With 2t − n − 1 = 1 colluder one side stays
// below t signatures and reveals nothing; with 2t − n = 2 both sides reach t and the victim's
// input is unmasked — with or without the consistency round, which only counts signatures a
// colluder gives freely. docs/protocol.md's accounting assumes fewer corrupt devices than that.
fedstat_v1_SecAggConsistency forged_by(const MaliciousServer& server, uint32_t colluder,
                                       uint32_t recipient) {
  const Device& r = server.device(recipient);
  std::vector<uint32_t> view(r.u3.begin(), r.u3.end());  // ascending
  uint8_t digest[32];
  const fedstat_v1_SecAggKeys& keys = server.device(colluder).keys;
  EXPECT_TRUE(secagg::consistency_digest(
                  r.client.session_hash(), colluder, ByteSpan(keys.encryption_key.bytes, 32),
                  ByteSpan(keys.masking_key.bytes, 32),
                  Span<const uint32_t>(view.data(), view.size()), MutableByteSpan(digest, 32))
                  .ok());
  fedstat_v1_SecAggConsistency m = fedstat_v1_SecAggConsistency_init_zero;
  m.session = server.config().session;
  m.signer_id = colluder;
  m.signature.size = 64;
  EXPECT_TRUE(credential::sign_digest(ByteSpan(server.device(colluder).credential.private_key, 32),
                                      ByteSpan(digest, 32), MutableByteSpan(m.signature.bytes, 64))
                  .ok());
  return m;
}

TEST(Signed, CollusionBound_TwoTMinusNColludersSplitTheRound) {
  for (const uint32_t colluders : {1u, 2u}) {
    SCOPED_TRACE(std::to_string(colluders) + " colluders");
    RoundConfig config = complete_config(Mode::kSigned, range(1, 10));
    config.colluders = range(11 - colluders, 10);
    MaliciousServer server(config);
    // Group A (U3 = all) the victim and the next t − colluders − 1; group B the rest.
    const uint32_t last_a = 6 - colluders;
    server.u3_view = [&](uint32_t recipient, const std::set<uint32_t>& u3) {
      std::set<uint32_t> view = u3;
      if (recipient > last_a && recipient <= 10 - colluders) view.erase(1);
      return view;
    };
    server.forward_consistency = [&](uint32_t recipient,
                                     const std::map<uint32_t, fedstat_v1_SecAggConsistency>&,
                                     const std::vector<fedstat_v1_SecAggConsistency>& honest) {
      std::vector<fedstat_v1_SecAggConsistency> out = honest;
      for (uint32_t c : server.config().colluders) {
        if (c != recipient) out.push_back(forged_by(server, c, recipient));
      }
      return out;
    };
    server.run_all();
    if (colluders == 1) {
      EXPECT_TRUE(server.both_kinds_exposed().empty()) << counts(server, 1);
      expect_nothing_unmasked(server);
      EXPECT_FALSE(server.recover_input(1).has_value());
      for (uint32_t id = last_a + 1; id <= 9; ++id) {
        EXPECT_TRUE(server.device(id).reveals.empty()) << id;  // group B: 5 signatures < t
      }
    } else {
      EXPECT_EQ(counts(server, 1), "6/6");
      const auto recovered = server.recover_input(1);
      ASSERT_TRUE(recovered.has_value());
      EXPECT_EQ(*recovered, server.device(1).input);
    }
  }
}

// Rule D8 (docs/secagg_many_worlds.md §5–6): with corrupt neighbours the many-worlds attack still
// works under rule F from 2t − k − 1 of them — here k = 6, t = 4: one. The construction is the
// ILP's (scripts/secagg_many_worlds.py ilp --k 6 --t 4 --rule F --show; optimal, re-checked by
// its simulator): the colluder sits next to the victim; the victim is shown U2 = {−2, 0, +1, +2}
// (it masks with those alone) and every device the U3 below (the members it sees dropped,
// positions relative to the victim); the server forwards only agreeing signatures, and the
// colluder signs every recipient's own view. Revealers −4, −3, −1, +3, +4, +5 each count t
// neighbours besides themselves; −3, −1 and +3 reveal b_v (the victim is alive in their U3), the
// colluder holds a fourth share; −4, −3, −1 reveal s_{−2} and +3, +4, +5 s_{+2}, the colluder
// a fourth of each, and s_{+1} is the colluder's own: every mask on the victim's input.
// Under D8 −3, −1 and +3 are not in the victim's signed U2 view, so they withhold b_v (an empty
// share): one share of b_v, nothing unmasked.
struct ColluderWorlds {
  uint32_t victim = 0, colluder = 0;
  std::vector<uint32_t> ring;
  size_t v_index = 0;
  uint32_t at(int rel) const {
    const long n = static_cast<long>(ring.size());
    return ring[static_cast<size_t>(((static_cast<long>(v_index) + rel) % n + n) % n)];
  }
  std::set<uint32_t> dropped_by(uint32_t id) const {
    static const std::map<int, std::vector<int>> kDrops = {
        {-9, {-8, -7}}, {-8, {-7, -6, -5}}, {-7, {-6, -5, -4}}, {-6, {-8}},  {-5, {-2}},
        {-4, {-2}},     {-3, {-2}},         {-2, {-1, 0, 1}},   {-1, {-2}},  {0, {-3, -1, 3}},
        {2, {4, 5}},    {3, {2}},           {4, {2, 7}},        {5, {2, 7}}, {6, {7, 9}},
        {7, {4, 5, 6}}, {8, {7}},           {9, {7, 8}}};
    for (const auto& [rel, drops] : kDrops) {
      if (at(rel) != id) continue;
      std::set<uint32_t> out;
      for (int d : drops) out.insert(at(d));
      return out;
    }
    return {};
  }
};

// 21 devices, k = 6, t = 4, max_clients 24. The devices assume 4 % corrupt here: ⌈4 % · 24⌉ = 1
// colluder, and 2t = 8 > k + 1, so they accept the start (signed_sparse_threshold_holds); at the
// SDK's default 5 % they assume ⌈1.2⌉ = 2 and refuse it (A_U1ChosenToSurroundTheVictim).
RoundConfig colluder_worlds_config(uint32_t assumed_corrupt_ppm = 40000) {
  RoundConfig config = sparse_config(Mode::kSigned, range(1, 21));
  config.max_clients = 24;
  config.assumed_corrupt_ppm = assumed_corrupt_ppm;
  return config;
}

ColluderWorlds colluder_worlds(uint32_t victim) {
  const MaliciousServer probe(colluder_worlds_config());  // the ring does not depend on colluders
  ColluderWorlds w;
  w.victim = victim;
  w.ring = probe.ring_of(probe.all_ids());
  w.v_index = static_cast<size_t>(std::find(w.ring.begin(), w.ring.end(), victim) - w.ring.begin());
  w.colluder = w.at(1);
  return w;
}

// The colluder's consistency signature over `recipient`'s own view around it (the members of
// the recipient's U3 that both rosters hold): it agrees, so the recipient counts it.
fedstat_v1_SecAggConsistency sparse_forged_by(const MaliciousServer& server, uint32_t colluder,
                                              uint32_t recipient) {
  const Device& r = server.device(recipient);
  const Device& c = server.device(colluder);
  std::vector<uint32_t> view;
  for (uint32_t id : r.u3) {  // ascending
    if (std::find(c.roster.begin(), c.roster.end(), id) != c.roster.end()) view.push_back(id);
  }
  fedstat_v1_SecAggConsistency m = fedstat_v1_SecAggConsistency_init_zero;
  m.session = server.config().session;
  m.signer_id = colluder;
  std::copy(view.begin(), view.end(), m.members);
  m.members_count = static_cast<pb_size_t>(view.size());
  uint8_t digest[32];
  EXPECT_TRUE(secagg::consistency_digest(
                  r.client.session_hash(), colluder, ByteSpan(c.keys.encryption_key.bytes, 32),
                  ByteSpan(c.keys.masking_key.bytes, 32),
                  Span<const uint32_t>(view.data(), view.size()), MutableByteSpan(digest, 32))
                  .ok());
  m.signature.size = 64;
  EXPECT_TRUE(credential::sign_digest(ByteSpan(c.credential.private_key, 32), ByteSpan(digest, 32),
                                      MutableByteSpan(m.signature.bytes, 64))
                  .ok());
  return m;
}

// forward_only_agreeing, with the colluders' own signatures swapped for ones each forges over the
// recipient's view (sparse_forged_by): the colluders sign every view they are shown.
void forward_with_forged_agreement(MaliciousServer& server, std::vector<uint32_t> colluders) {
  forward_only_agreeing(server);
  const auto agreeing = server.forward_consistency;
  server.forward_consistency = [&server, agreeing, colluders](
                                   uint32_t recipient,
                                   const std::map<uint32_t, fedstat_v1_SecAggConsistency>& all,
                                   const std::vector<fedstat_v1_SecAggConsistency>& honest) {
    std::vector<fedstat_v1_SecAggConsistency> out;
    for (const auto& m : agreeing(recipient, all, honest)) {
      if (std::find(colluders.begin(), colluders.end(), m.signer_id) == colluders.end()) {
        out.push_back(m);
      }
    }
    for (uint32_t c : colluders) {
      if (c != recipient && server.device(recipient).u3.count(c)) {
        out.push_back(sparse_forged_by(server, c, recipient));
      }
    }
    return out;
  };
}

TEST(Signed, A_ManyWorldsSparseWithTwoTMinusKMinusOneColludersUnmaskNobody) {
  const ColluderWorlds w = colluder_worlds(1);
  RoundConfig config = colluder_worlds_config();
  config.colluders = {w.colluder};
  MaliciousServer server(config);
  server.u2_view = [w](uint32_t recipient, const std::set<uint32_t>& u2) {
    return recipient == w.victim ? std::set<uint32_t>{w.at(-2), w.at(0), w.at(1), w.at(2)} : u2;
  };
  server.u3_view = [w](uint32_t recipient, const std::set<uint32_t>& u3) {
    std::set<uint32_t> view = u3;
    for (uint32_t id : w.dropped_by(recipient)) view.erase(id);
    return view;
  };
  forward_with_forged_agreement(server, {w.colluder});
  server.run_all();
  const auto recovered = server.recover_input(w.victim);
  EXPECT_FALSE(recovered.has_value())
      << "b/s shares of the victim: " << counts(server, w.victim) << "; the server unmasked device "
      << w.victim
      << (recovered && *recovered == server.device(w.victim).input ? "'s input exactly" : "");
  EXPECT_LT(server.knowledge_of(w.victim).b_shares.size(), 4u) << counts(server, w.victim);
  expect_nothing_unmasked(server);
}

// The bound's limit, as the model predicts (scripts/secagg_many_worlds.py construct, "plain
// split"): with 2t − k = 2 colluders next to the victim (k = 6, t = 4) D8 + F do not help — the
// two honest devices at the far ends of its roster see it dropped and reveal s_v, the others see
// it alive and reveal b_v, the colluders give both, and each side counts t agreeing signers. No
// lie about U2 is needed. graph_parameters.cpp's 2t > t1 + k is what keeps a victim from having
// that many corrupt neighbours (Pr < 2^−40 at the picks it makes) when the neighbourhood is
// random; against a server that picks U1 (A_U1ChosenToSurroundTheVictim) only the devices' rule
// 2t > k + ⌈γ·max_clients⌉ does: here the devices assume ⌈4 % · 24⌉ = 1 colluder, so they
// accept the start, and the 2 colluders are one more than assumed.
TEST(Signed, CollusionBound_TwoTMinusKColludersSplitASparseRound) {
  ColluderWorlds w = colluder_worlds(1);
  RoundConfig config = colluder_worlds_config();
  config.colluders = {w.at(-1), w.at(1)};
  MaliciousServer server(config);
  const std::set<uint32_t> s_side = {w.at(-3), w.at(3)};
  server.u3_view = [w, s_side](uint32_t recipient, const std::set<uint32_t>& u3) {
    std::set<uint32_t> view = u3;
    if (s_side.count(recipient)) view.erase(w.victim);
    return view;
  };
  forward_with_forged_agreement(server, server.config().colluders);
  server.run_all();
  const auto recovered = server.recover_input(w.victim);
  ASSERT_TRUE(recovered.has_value())
      << counts(server, w.victim) << "; the victim refused at "
      << server.device(w.victim).refused_at << ": " << server.device(w.victim).refusal.message();
  EXPECT_EQ(*recovered, server.device(w.victim).input);
}

// Found attacking D8 (attack-d8 review): the server picks U1 — which devices that advertised keys
// go on — after it knows every ring position (it chose the graph seed and committed to it in
// SecAggStart), and a device checks only that its roster is a contiguous run of the ring over U1,
// not who is missing from it. So "c corrupt neighbours of the victim" is the server's choice,
// not a hypergeometric draw: here the two colluders sit 4 positions from the victim on the ring
// of all 20 advertisers, outside its neighbourhood (k/2 = 3) — the victim has no corrupt
// neighbour. The server leaves the 6 honest devices between them out of U1 (to everyone they
// look like devices that dropped before U1); on the ring over the 14 left the colluders are the
// victim's ±1. Then the plain split with 2t − k = 2 colluders, which D8 + F allow
// (docs/secagg_many_worlds.md §1; CollusionBound_TwoTMinusKColludersSplitASparseRound, with
// colluders that already were neighbours): the devices at ±3 of the U1 ring see the victim dropped
// and reveal s_v, those at ±2 and the victim see it alive and reveal b_v (the victim's signed U2
// view names ±2); each counts t agreeing signers besides itself (the colluders sign every
// recipient's own view). b_v: v, ±2, two colluders; s_v: ±3, two colluders — unmasked.
// The round holds 2 corrupt devices = ⌈5 % · max_clients 24⌉, within the assumption under which
// the complete graph is safe (2t > n + ⌈γn⌉). The probabilities in docs/protocol.md ("0.006 at n =
// 100, 2^−44 at n = 1,000" and D8's 2^−48) assume the neighbourhood is random; against this server
// they need only 2t − k corrupt devices in the round. Before the devices' rule it failed (the
// victim's input recovered exactly, 5 b / 4 s shares); a signed sparse device now requires
// 2t > k + ⌈γ·max_clients⌉ (secagg::signed_sparse_threshold_holds: 8 > 6 + 2 fails), so every
// device refuses this start. The ring positions unpredictable to the server when it fixes U1
// would be the fix that keeps small thresholds (docs/secagg_many_worlds.md §6, not built).
TEST(Signed, A_U1ChosenToSurroundTheVictim) {
  RoundConfig config = colluder_worlds_config(secagg::kDefaultCorruptFloorPpm);
  const MaliciousServer probe(config);
  const std::vector<uint32_t> full = probe.ring_of(probe.all_ids());
  const uint32_t victim = 1;
  const long n = static_cast<long>(full.size());
  const long vi = static_cast<long>(std::find(full.begin(), full.end(), victim) - full.begin());
  auto full_at = [&](long rel) { return full[static_cast<size_t>(((vi + rel) % n + n) % n)]; };
  config.colluders = {full_at(-4), full_at(4)};
  std::set<uint32_t> left_out;
  for (long rel : {-3L, -2L, -1L, 1L, 2L, 3L}) left_out.insert(full_at(rel));
  // Not neighbours of the victim on the ring of every device that advertised keys.
  const std::vector<uint32_t> honest_nbhd = probe.neighbourhood(victim, probe.all_ids());
  for (uint32_t c : config.colluders) {
    ASSERT_EQ(std::find(honest_nbhd.begin(), honest_nbhd.end(), c), honest_nbhd.end());
  }
  MaliciousServer server(config);
  server.advertise();
  std::vector<uint32_t> u1;
  for (uint32_t id : server.u1()) {
    if (!left_out.count(id)) u1.push_back(id);
  }
  if (std::find(u1.begin(), u1.end(), victim) == u1.end()) {
    // The devices refused the session at its start (the fix: signed_sparse_threshold_holds):
    // every one of them, so nothing was shared and nothing can be unmasked.
    EXPECT_TRUE(server.u1().empty()) << server.u1().size() << " devices accepted the start";
    expect_nothing_unmasked(server);
    return;
  }
  server.set_u1(u1);
  const std::vector<uint32_t> ring = server.ring_of(u1);
  const long m = static_cast<long>(ring.size());
  const long ui = static_cast<long>(std::find(ring.begin(), ring.end(), victim) - ring.begin());
  auto at = [&](long rel) { return ring[static_cast<size_t>(((ui + rel) % m + m) % m)]; };
  ASSERT_EQ(std::set<uint32_t>({at(-1), at(1)}),
            std::set<uint32_t>(config.colluders.begin(), config.colluders.end()));
  const std::set<uint32_t> sees_victim_dropped = {at(-3), at(3)};
  server.u3_view = [&](uint32_t recipient, const std::set<uint32_t>& u3) {
    std::set<uint32_t> view = u3;
    if (sees_victim_dropped.count(recipient)) view.erase(victim);
    return view;
  };
  forward_with_forged_agreement(server, config.colluders);
  server.send_rosters();
  server.share();
  server.mask_and_send();
  server.send_u3();
  server.consistency();
  server.reveal();
  const auto recovered = server.recover_input(victim);
  EXPECT_FALSE(recovered.has_value())
      << "b/s shares of the victim: " << counts(server, victim) << "; the server unmasked device "
      << victim
      << (recovered && *recovered == server.device(victim).input ? "'s input exactly" : "");
  expect_nothing_unmasked(server);
}

}  // namespace
}  // namespace adversary
}  // namespace fedstat
