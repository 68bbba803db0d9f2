// A DIST device for the rounds' tests: the SDK's SecAggClient answering what the Coordinator
// sends, which may drop (close its connection) at a chosen round or hold (stop reading, as if the
// server died) when masking begins. Paper: Bonawitz et al. 2017 §4.
#ifndef FEDSTAT_TESTS_ROUNDS_DIST_DEVICE_H_
#define FEDSTAT_TESTS_ROUNDS_DIST_DEVICE_H_

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "host_server/rounds/coordinator.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/secagg/secagg_client.h"
#include "tests/rounds/fake_outbox.h"
#include "tests/rounds/round_messages.h"

namespace fedstat {
namespace host {
namespace testing {

// Where a device drops: before sending keys, shares, its masked input, its reveals; or never.
// kBeforeConsistency (signed sessions): before its consistency signature — after its masked
// input, so its input is in the sum (drop_at >= kBeforeReveals holds for it).
enum DropAt {
  kBeforeKeys = 0,
  kBeforeShares,
  kBeforeMasking,
  kBeforeReveals,
  kNever,
  kBeforeConsistency
};

struct DistDevice {
  uint64_t id = 0;
  ConnectionId conn = 0;
  int drop_at = kNever;
  bool hold_at_masking = false;  // stop reading when the masking round's messages arrive
  // Stop reading when a message it matches arrives (that message is lost, as with a server that
  // died before sending it): a restart at another step than masking.
  std::function<bool(const fedstat_v1_Envelope&)> hold_when;
  bool held = false, gone = false, replied = false;
  std::unique_ptr<SeededStream> random;
  std::vector<secagg::SecAggPeer> peers;
  secagg::SecAggClient client;
  std::vector<uint64_t> input, masked;
  int errors = 0, outcomes = 0, u3_rosters = 0;
  int resume_round = -1;  // from SecAggResume: the round whose first resume_held are stored
  uint32_t resume_held = 0, resumes = 0;
  bool completed = false;
  // A malicious device (tests/audit/secagg): changes what it sends before the Coordinator sees
  // it; the server's refusals it then gets are counted in `refusals`, not failures.
  std::function<void(fedstat_v1_Envelope&)> tamper;
  int refusals = 0;
  // What it was shown: the roster's ids in index order (round 1; a sparse graph's neighbourhood),
  // the graph commitment of every SecAggStart, and the rosters U3 it refused (a U3 other than
  // the first: counted here, nothing sent, when expect_u3_refusal; a failure otherwise).
  std::vector<uint32_t> roster;
  // Signed sessions (issue 42): set_credential() was given this; what it counted.
  bool consistency_sent = false;
  int consistency_received = 0, consistency_ends = 0;
  int u2_views_received = 0;    // signed sparse (D8): neighbours' U2 views forwarded to it
  bool sparse_session = false;  // SecAggStart.degree != 0
  std::vector<std::vector<uint8_t>> start_commitments;
  bool expect_u3_refusal = false;
  int u3_refusals = 0;

  // `roster_capacity`: the roster entries it can hold (max_clients for the complete graph; degree
  // + 1 suffices for a sparse one, which is the device's memory O(k)).
  DistDevice(uint64_t device_id, uint32_t roster_capacity, std::vector<uint64_t> words)
      : id(device_id), peers(roster_capacity), input(std::move(words)) {
    Seed256 seed;
    seed.bytes[0] = static_cast<uint8_t>(device_id);
    seed.bytes[1] = 0x5A;
    random = std::make_unique<SeededStream>(seed, device_id);
    EXPECT_TRUE(client
                    .init(static_cast<uint32_t>(id),
                          Span<secagg::SecAggPeer>(peers.data(), peers.size()), *random)
                    .ok());
  }

  void drop(Coordinator& c) {
    gone = true;
    c.on_close(conn, "device dropped");
  }

  void send(Coordinator& c, fedstat_v1_Envelope& m) {
    if (tamper) tamper(m);
    c.on_frame(conn, m);
  }

  void handle(Coordinator& c, const fedstat_v1_Envelope& e) {
    fedstat_v1_Envelope m = wire::make_envelope();
    switch (e.which_body) {
      case fedstat_v1_Envelope_task_tag:
        if (!replied) {
          fedstat_v1_Envelope r = reply(e.body.task.task_id, true);
          send(c, r);
        }
        replied = true;
        break;
      case fedstat_v1_Envelope_secagg_resume_tag:
        resume_round = static_cast<int>(e.body.secagg_resume.round);
        resume_held = e.body.secagg_resume.held;
        ++resumes;
        break;
      case fedstat_v1_Envelope_secagg_start_tag:
        if (drop_at == kBeforeKeys) return drop(c);
        sparse_session = e.body.secagg_start.degree != 0;
        start_commitments.emplace_back(
            e.body.secagg_start.graph_commitment.bytes,
            e.body.secagg_start.graph_commitment.bytes + e.body.secagg_start.graph_commitment.size);
        m.which_body = fedstat_v1_Envelope_secagg_keys_tag;
        ASSERT_TRUE(client.on_start(e.body.secagg_start, m.body.secagg_keys).ok());
        if (resume_round != 0 || resume_held == 0) send(c, m);
        resume_round = -1;
        break;
      case fedstat_v1_Envelope_secagg_peer_keys_tag:
        ASSERT_TRUE(client.on_peer_keys(e.body.secagg_peer_keys).ok());
        if (e.body.secagg_peer_keys.index == roster.size()) {
          roster.push_back(e.body.secagg_peer_keys.keys.client_id);
        }
        if (e.body.secagg_peer_keys.index + 1 < e.body.secagg_peer_keys.count) break;
        if (drop_at == kBeforeShares) return drop(c);
        if (resume_round == 1) {
          ASSERT_TRUE(client.rewind(1, resume_held).ok());
        }
        resume_round = -1;
        m.which_body = fedstat_v1_Envelope_secagg_share_tag;
        while (true) {
          auto more = client.next_share(m.body.secagg_share);
          ASSERT_TRUE(more.ok());
          if (!more.value()) break;
          send(c, m);
        }
        break;
      case fedstat_v1_Envelope_secagg_share_tag:
        ASSERT_TRUE(client.on_share(e.body.secagg_share).ok());
        break;
      case fedstat_v1_Envelope_secagg_roster_tag: {
        // Round 4 (signed sessions) ends the forwarded consistency signatures: the Client's, not
        // the SecAggClient's.
        const Status s =
            e.body.secagg_roster.round == 4 ? Status() : client.on_roster(e.body.secagg_roster);
        if (!s.ok() && expect_u3_refusal && e.body.secagg_roster.round == 3 &&
            s.code() == StatusCode::kFailedPrecondition) {
          ++u3_refusals;
          break;
        }
        ASSERT_TRUE(s.ok()) << "device " << id << ": " << s.message();
        if (e.body.secagg_roster.round == 2) {
          if (drop_at == kBeforeMasking) return drop(c);
          if (client.stage() == secagg::SecAggStage::kReadyToMask) {
            masked = input;
            ASSERT_TRUE(client.mask(Span<uint64_t>(masked.data(), masked.size())).ok());
          }
          // Signed sparse (protocol 6, D8): the U2 view follows the words; held = words + 1 once
          // the server stores it.
          const bool signs_u2 = client.signed_session() && sparse_session;
          const bool u2_view_held =
              signs_u2 && resume_round == 2 && resume_held > static_cast<uint32_t>(masked.size());
          if (resume_round == 2) {
            ASSERT_TRUE(
                client.rewind(2, u2_view_held ? static_cast<uint32_t>(masked.size()) : resume_held)
                    .ok());
          }
          resume_round = -1;
          m.which_body = fedstat_v1_Envelope_secagg_masked_chunk_tag;
          while (true) {
            auto more = client.next_chunk(Span<const uint64_t>(masked.data(), masked.size()),
                                          m.body.secagg_masked_chunk);
            ASSERT_TRUE(more.ok());
            if (!more.value()) break;
            send(c, m);
          }
          if (signs_u2 && !u2_view_held) {
            m.which_body = fedstat_v1_Envelope_secagg_consistency_tag;
            const Status made = client.masked_view_message(m.body.secagg_consistency);
            ASSERT_TRUE(made.ok()) << made.message();
            send(c, m);
          }
        } else if (e.body.secagg_roster.round == 3 && client.signed_session()) {
          // Signed: U3 opens the consistency round (again in the reveals' opening: sent once).
          ++u3_rosters;
          const bool held_by_server = resume_round == 4 || (resume_round == 3 && resume_held > 0);
          if (!consistency_sent && !held_by_server) {
            if (drop_at == kBeforeConsistency) return drop(c);
            m.which_body = fedstat_v1_Envelope_secagg_consistency_tag;
            const Status made = client.consistency_message(m.body.secagg_consistency);
            ASSERT_TRUE(made.ok()) << made.message();
            consistency_sent = true;
            send(c, m);
          }
          if (resume_round == 3) resume_round = -1;
        } else {
          if (e.body.secagg_roster.round == 4) {
            ++consistency_ends;
          } else {
            ++u3_rosters;
          }
          if (drop_at == kBeforeReveals) return drop(c);
          if (resume_round == 3 || resume_round == 4) {
            ASSERT_TRUE(client.rewind(3, resume_held).ok());
          }
          resume_round = -1;
          m.which_body = fedstat_v1_Envelope_secagg_reveal_tag;
          while (true) {
            auto more = client.next_reveal(m.body.secagg_reveal);
            ASSERT_TRUE(more.ok());
            if (!more.value()) break;
            send(c, m);
          }
        }
        break;
      }
      case fedstat_v1_Envelope_secagg_consistency_tag: {
        const Status s = client.on_consistency(e.body.secagg_consistency);
        ASSERT_TRUE(s.ok()) << "device " << id << ": " << s.message();
        ++(e.body.secagg_consistency.round == 2 ? u2_views_received : consistency_received);
        break;
      }
      case fedstat_v1_Envelope_round_outcome_tag:
        ++outcomes;
        completed = e.body.round_outcome.completed;
        break;
      case fedstat_v1_Envelope_server_error_tag:
        if (tamper) {
          ++refusals;
          break;
        }
        ++errors;
        ADD_FAILURE() << "device " << id << ": " << e.body.server_error.detail;
        break;
      default:
        break;
    }
  }
};

using Devices = std::vector<std::unique_ptr<DistDevice>>;

// Delivers queued messages until no device has any left (an explicit event loop).
inline void pump(Coordinator& c, FakeOutbox& out, Devices& devices) {
  bool progress = true;
  while (progress) {
    progress = false;
    for (auto& d : devices) {
      while (!d->gone && !d->held && !out.empty(d->conn)) {
        const fedstat_v1_Envelope e = out.pop(d->conn);
        const bool masking_opens = e.which_body == fedstat_v1_Envelope_secagg_share_tag ||
                                   (e.which_body == fedstat_v1_Envelope_secagg_roster_tag &&
                                    e.body.secagg_roster.round == 2);
        if ((d->hold_at_masking && masking_opens) || (d->hold_when && d->hold_when(e))) {
          d->held = true;
          break;
        }
        d->handle(c, e);
        progress = true;
      }
    }
  }
}

inline void check_in_all(Coordinator& c, Devices& devices, ConnectionId first_conn,
                         uint32_t resume = 0) {
  ConnectionId conn = first_conn;
  for (auto& d : devices) {
    if (d->gone) continue;
    d->conn = conn++;
    c.on_open(d->conn, std::to_string(d->id));
    c.on_frame(d->conn, hello(d->id, resume));
  }
}

}  // namespace testing
}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_ROUNDS_DIST_DEVICE_H_
