// SecAggPhase: the DIST path — host::SecAggServer run over the admitted devices, one stage per
// Bonawitz round, with who must still send in the current stage and what each member is sent when
// a stage opens (also resent to a member that resumes, after SecAggResume{round_number(),
// held_from(member)}).
// Stages: kKeys (members: the admitted devices, 1 SecAggKeys each) → kShares (U1, one
// SecAggShare per other entry of the member's roster: |U1| − 1, or k with a sparse graph) →
// kMasking (U2, vector_length masked words each) → [signed sessions: kConsistency (U3, one
// SecAggConsistency each)] → kReveals (U3, one SecAggReveal per member of U2 in its roster,
// itself included) → kDone | kAborted. Each member is sent its own roster and
// U2/U3 bitmaps (SecAggServer::roster_for, u2_for, u3_for: the same for all with the complete
// graph, its neighbourhood with the sparse one).
// Signed sessions (protocol 5, issue 42: a CA public key given; SecAggStart.signed_keys): keys
// whose certificate or signature does not verify are refused and their sender excluded
// (SecAggServer), and the consistency stage runs between the masked input and the reveals: its
// opening is U3; when it closes (all members signed, or the round's time-out or close) each
// member of the reveals is sent, as the reveals' opening, U3 again, consistency_for(member) (the
// signatures of the other signers of its view) and a SecAggRoster of round 4 that ends them (a
// bitmap over its roster of those signers). SecAggResume.round numbers the stages 0 keys,
// 1 shares, 2 masking, 3 consistency, 4 reveals (unsigned: 3 reveals). A member that does not sign
// stays in U3 and is awaited in the reveals.
// Signed sparse sessions (protocol 6, rule D8): in kMasking each member sends, after its last
// chunk, its U2 view (a SecAggConsistency of round 2, SecAggServer::on_consistency), counted as one
// message more (held_from: the words + 1 once stored); the reveals' opening forwards the U2 views
// of the others of each member's U3 view before their consistency signatures (consistency_for).
// Errors (on_message, nothing changes): a body for another stage (kFailedPrecondition), a sender
// outside the stage's members or keys naming another client (kPermissionDenied), and every
// SecAggServer check (secagg_server.h). close() aborts below the threshold (kAborted).
// A member whose message SecAggServer refuses for its content (a low-order key, keys without a
// commitment, a share or reveal of the wrong length, a value outside the field, a masked word
// above 2^bits − 1) is excluded: excluded() names it with the reason, it leaves the stage's
// members at once (nobody waits for it, its later messages are refused as a non-member's) and
// the session goes on while t remain. A reveal off a verified secret's polynomial excludes
// nobody: disputes() names the holder and the secret's owner (either is at fault).
// Memory: SecAggServer's, plus the U1 roster and the two roster bitmaps. Paper: Bonawitz et al.
// 2017 §4, Figure 4.
#ifndef FEDSTAT_HOST_ROUNDS_SECAGG_PHASE_H_
#define FEDSTAT_HOST_ROUNDS_SECAGG_PHASE_H_

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "fedstat/v1/envelope.pb.h"
#include "host_server/secagg/secagg_server.h"
#include "sdk/base/seeded_stream.h"

namespace fedstat {
namespace host {

class SecAggPhase {
 public:
  enum class Stage { kKeys, kShares, kMasking, kConsistency, kReveals, kDone, kAborted };

  // Throws std::invalid_argument for a task SecAggServer refuses. `graph_seed`: the sparse
  // graph's ring seed (ignored for the complete graph), stored by the caller before the phase
  // sends SecAggStart (TaskRound's "graph_seed" note), so a restart commits to the same one.
  // `ca_public_key`: the fleet CA's public key (65 bytes, SEC1 uncompressed) for a signed
  // session, or nullptr for an unsigned one.
  SecAggPhase(const fedstat_v1_Task& task, const std::set<uint32_t>& admitted,
              const Seed256& graph_seed, const uint8_t* ca_public_key = nullptr);

  Stage stage() const { return stage_; }
  // The stage's name in logs: "keys", "shares", "masking", "consistency", "reveals", "done",
  // "aborted".
  static const char* stage_name(Stage stage);
  const std::set<uint32_t>& members() const { return members_; }
  bool member_done(uint32_t member) const;
  // The current stage as SecAggResume.round (0 keys, 1 shares, 2 masking, then 3 reveals, or —
  // signed — 3 consistency and 4 reveals), and how many of `member`'s messages of it are stored
  // (words in kMasking).
  uint32_t round_number() const {
    return !signed_ && stage_ == Stage::kReveals ? 3 : static_cast<uint32_t>(stage_);
  }
  bool signed_session() const { return signed_; }
  uint32_t held_from(uint32_t member) const;
  bool all_done(const std::set<uint32_t>& dropped) const;

  Status on_message(uint32_t sender, const fedstat_v1_Envelope& envelope);
  // Closes the current stage. kReveals: `sum` receives Σ_{U3} x mod 2^bits. Not kOk: aborted.
  Status close(std::vector<uint64_t>* sum);
  // What the server sends `member` when the current stage opens.
  std::vector<fedstat_v1_Envelope> opening_for(uint32_t member) const;
  // The current stage's members; from the consistency stage on, |U3| (the inputs in the sum, a
  // member excluded while signing or revealing included).
  uint32_t survivors() const {
    return stage_ == Stage::kConsistency || stage_ == Stage::kReveals || stage_ == Stage::kDone
               ? u3_size_
               : static_cast<uint32_t>(members_.size());
  }
  const std::string& abort_reason() const { return server_.abort_reason(); }
  // Members excluded for what they sent, in order, with the reason (SecAggServer::excluded).
  const std::vector<std::pair<uint32_t, std::string>>& excluded() const {
    return server_.excluded();
  }
  // Shares found off a verified secret's polynomial when the reveals closed
  // (SecAggServer::disputes).
  const std::vector<SecAggDispute>& disputes() const { return server_.disputes(); }
  // Replays an exclusion the round stored (TaskRound::recover): as if its message came again.
  void exclude(uint32_t member, const std::string& reason);

 private:
  uint32_t required(uint32_t member) const;

  SecAggServer server_;
  bool signed_ = false;
  bool signs_u2_ = false;  // signed sparse (protocol 6, D8): a U2 view ends each masked input
  uint32_t vector_length_;
  Stage stage_ = Stage::kKeys;
  std::set<uint32_t> members_;
  std::map<uint32_t, uint32_t> progress_;  // messages (words in kMasking) sent in this stage
  // The stage's members that have not yet sent all they must (member_done false), kept as each
  // message is counted, so all_done is not a pass over every member after every message (with
  // the sparse graph's reveals, each member_done costs k + 1 roster look-ups: n²·k² per stage).
  std::set<uint32_t> pending_;
  // kReveals: the reveals each member of U3 owes (U2's members in its roster), counted once when
  // the stage opens — not per message (k roster look-ups each).
  std::map<uint32_t, uint32_t> reveals_owed_;
  uint32_t u3_size_ = 0;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_ROUNDS_SECAGG_PHASE_H_
