// SecAggServer: the host's side of secure aggregation (Bonawitz et al., CCS 2017, semi-honest).
//
// It collects the clients' public keys (round 0) and announces the roster U1; routes the
// encrypted shares (round 1), which it cannot read, and announces U2 = the clients whose shares
// it routed; collects the masked vectors (round 2) and announces U3 = the clients whose whole
// vector arrived; collects the revealed shares (round 3) and, for every client of U3, rebuilds
// its self-mask seed b_u from t shares and removes PRG(b_u); for every client of U2 \ U3 rebuilds
// its masking key s_v^SK, recomputes s_vw = X25519(s_v^SK, s_w^PK) for w ∈ U3 and removes those
// pairwise masks. The output is Σ_{u∈U3} x_u mod 2^bits.
//
// One malicious client (issue 39): what the server can check, it checks before storing or
// forwarding, and a client whose message fails such a check is excluded from the session (the
// message refused with kDataLoss, the client and the reason kept in excluded()) — only for what
// is provably the sender's own doing, a malformed message from its authenticated connection: a
// public key that is malformed, non-canonical or of low order (secagg::check_public_key: never
// in U1), keys without a 32-byte commitment to the self-mask seed (a device older than protocol
// version 3; never in U1), a share of the wrong length (never in U2), a masked word above
// 2^bits − 1 (never in U3), a reveal of the wrong length or a value outside the field (its
// reveals unused; still in U3, its input in the sum — U3 was announced, and its peers reveal
// only b-shares about it). A reveal with an empty share is a client saying it holds no valid
// share of that peer (its share was unreadable: secagg_client.h); it counts as that reveal and
// is kept as evidence.
//
// Every secret is verified before it is used (review finding F2): b_v must match the commitment
// c_v = SHA-256(tag ‖ session ‖ v ‖ b_v) v sent with its keys (secagg::self_mask_commitment),
// s_v^SK must give the s_v^PK v advertised. finish() rebuilds each secret with ShareDecoder
// (share_decoder.h): from all its shares; if that does not verify, it locates one wrong share per
// piece (from t + 2 shares, the dual-code check) or tries the t + 1 ways to leave one share out
// (exactly t + 1 shares), and accepts a candidate only if it verifies. A share left out of a
// verified secret is *disputed* (disputes(): holder h's share of v's secret — h or v is at
// fault, the server cannot tell which): it is dropped for that secret only and excludes nobody.
// What cannot be verified aborts the session, never publishes, with a reason naming the secret's
// owner and the holders in dispute where known: fewer than t shares (with how many holders sent
// none: unreadable shares, or withheld), exactly t that do not verify, shares that agree but do
// not verify (the owner dealt another secret, or ≥ m − t + 1 holders colluded), two or more
// wrong shares of one secret, no single share left out verifying at t + 1 (or the round's
// kMaxKeyTrials trial rebuilds of masking keys spent). Exclusions never lower the threshold:
// below t the session aborts as for dropouts.
//
// Every close_* checks the threshold t: with fewer survivors the session aborts (kAborted), the
// server asks for nothing more and no client reveals anything. Messages are checked before
// anything is stored, each failure with its own status, and a rejected message changes nothing:
// wrong session (kInvalidArgument), unknown client (kNotFound), a second copy (kAlreadyExists),
// the wrong round (kFailedPrecondition), a reveal the protocol forbids — a self-mask share of a
// dropped client or a key share of a survivor (kPermissionDenied), malformed sizes (kDataLoss).
// The math (X25519, HKDF, masks, Shamir) is the SDK's.
//
// The graph (sdk/secagg/graph.h, protocol 4): degree 0 is the complete graph above (at most
// 1,024 clients); an even degree k runs SecAgg+'s sparse graph (Bell et al. 2020): U1 sorted by
// ring position under the seed the config commits to (SecAggStart.graph_commitment), each
// member sent its neighbourhood (roster_for: its k/2 predecessors, itself, its k/2 successors,
// the seed in entry 0) and per-member U2/U3 bitmaps over it (u2_for, u3_for); shares and reveals
// are taken between neighbours only, a member is in U2 when it shared with its whole
// neighbourhood, t counts among each secret's k + 1 holders, close_masking aborts before any
// reveal when a U2 member's neighbourhood has fewer than t members in U3, and finish() removes a
// dropped member's masks with its U3 neighbours only.
// Memory: O(n·r · 100 bytes) for the routed and the revealed shares, r the roster's entries (n
// for the complete graph, k + 1 for the sparse one); O(L) words for the running sum of the
// masked vectors (a vector is added when its last chunk arrives — in a signed sparse session
// when its U2 view does; only vectors still arriving are held, O(L) each); finish() adds
// ShareDecoder's O(n) per check degree it uses. Sparse at n = 10^4, k = 74: about 10^6 shares, no
// n² table. Cost of finish() at n = 1024, t = 513, Release (tests/bench/secagg_bench.cpp): 0.13 s
// honest, 0.13 s with 10 colluders giving every secret its own holder set by empty reveals, 0.20 s
// with one holder wrong in every reveal — all without dropouts. Each client dropped after sharing
// (in U2, not U3) adds |U3| X25519 multiplications (its pairwise masks, recomputed; ≈ 0.52 ms each
// here; the sparse graph: |U3 ∩ its neighbourhood| ≤ k): 60 s with 10 % dropped
// (BM_FinishAtThousand/3), and at worst, n − t dropped,
// (n − t)·t ≈ 262,000 of them, about 3 minutes — on the caller's thread (fedstat-server's io
// thread; moving finish() to a worker is not built). docs/protocol.md, "One malicious device".
// An abort whose evidence is empty reveals names the secret's owner and the withholding holders
// as equally suspect: the server cannot tell a dealer of unreadable shares from holders that
// withheld readable ones (second review of issue 39, A1).
// Signed sessions (protocol 5, issue 42; sdk/secagg/signed_keys.h): with config.signed_keys the
// server holds the fleet CA's public key (never its private key) and refuses, excluding the
// sender, keys whose certificate the CA did not issue, whose certificate names another id or
// whose key signature does not verify over this session's keys digest (kPermissionDenied with
// the reason; excluded() keeps it): such keys never enter U1. Roster entries carry each
// member's certificate and key signature. After U3 (close_masking) comes the consistency round:
// on_consistency takes each U3 member's signature over the U3 view the server sent it (checked
// against that view: the ids of U3 in its roster, ascending), consistency_for(member) lists the
// stored messages of the other signers in that member's U3 (ascending id) to forward, and
// close_consistency opens the reveals — aborting first when some secret of U2 could not get t
// revealing holders (a holder reveals once t members of its roster, itself included, signed).
// Members that do not sign are not forwarded; they stay in U3 (their inputs are in the sum).
// Signed sparse sessions also run rule D8 (protocol 6; docs/secagg_many_worlds.md §7): each
// member's U2 view, signed after its masked input (on_consistency with round 2), is verified and
// stored with it — a member without one is not in U3 — and forwarded by consistency_for; a device
// reveals b_v only when v's U2 view names it.
// Memory: a signed session adds 193 bytes per client (certificate key and signatures) and 64
// per consistency signature; views are rebuilt per call (O(k) each), not stored.
// Paper: Bonawitz et al. 2017 §4, Figure 4.
#ifndef FEDSTAT_HOST_SECAGG_SECAGG_SERVER_H_
#define FEDSTAT_HOST_SECAGG_SECAGG_SERVER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fedstat/v1/envelope.pb.h"
#include "host_server/secagg/share_decoder.h"
#include "sdk/base/random_source.h"
#include "sdk/base/result.h"
#include "sdk/secagg/secagg_client.h"

namespace fedstat {
namespace host {

// The most trial rebuilds of masking keys (each verified with one X25519 multiplication, 0.52 ms
// with mbedTLS on the benchmark machine: about 2 s in all) one finish() spends on secrets with a
// wrong share among exactly t + 1 (share_decoder.h, step 3); a lying holder found once is tried
// first after that, so one liar costs about t + (the dropped clients) trials. Self-mask seeds
// (one SHA-256 each) are not limited.
constexpr size_t kMaxKeyTrials = 4096;

// Holder `holder`'s share of `owner`'s secret (its self-mask seed, or its masking key) is off the
// polynomial the secret was rebuilt and verified from: `holder` revealed something other than it
// was dealt, or `owner` dealt it a share off its polynomial.
struct SecAggDispute {
  uint32_t holder = 0;
  uint32_t owner = 0;
  bool self_mask = true;
};

// The roster bitmap (SecAggRoster.members, 128 bytes) names at most this many clients.
constexpr uint32_t kMaxSecAggClients = secagg::kMaxRosterClients;
static_assert(kMaxSecAggClients == 1024, "the messages below say 1024");

struct SecAggServerConfig {
  uint64_t session = 0;
  uint32_t threshold = 2;
  uint32_t vector_length = 1;
  uint32_t bits = 32;
  uint32_t max_clients = kMaxSecAggClients;
  // The graph (sdk/secagg/graph.h): 0 complete; an even k ≥ 2 sparse, with the ring seed r the
  // server committed to (drawn by the caller, stored before SecAggStart is sent: the rounds keep
  // it in a server note, so a restarted server opens the seed it committed to) and the threat
  // model (k, t) were chosen for (sdk/secagg/graph_parameters.h).
  uint32_t degree = 0;
  uint8_t graph_seed[32] = {};
  uint32_t dropout_ppm = 0;
  uint32_t corrupt_ppm = 0;
  // Protocol 5: a signed session (SecAggStart.signed_keys), checked against the fleet CA's public
  // key `ca_public_key` (65 bytes, SEC1 uncompressed; the server never holds the CA's private
  // key). A signed sparse session's degree is at most secagg::kMaxSignedSparseDegree (126).
  bool signed_keys = false;
  uint8_t ca_public_key[65] = {};
};

class SecAggServer {
 public:
  // Throws std::invalid_argument unless 2 ≤ threshold ≤ max_clients ≤ kMaxSecAggClients,
  // 2·threshold > max_clients, length ≥ 1 and bits in 1..64; signed: unless the CA key is a
  // valid P-256 point and a sparse degree is at most 126.
  explicit SecAggServer(const SecAggServerConfig& config);

  fedstat_v1_SecAggStart start() const;
  Status on_keys(const fedstat_v1_SecAggKeys& keys);
  // Ends round 0: the roster U1 (one message per client) or kAborted below the threshold.
  // Complete graph: U1 in roster order, what every member is sent. Sparse: U1 in ring order,
  // for information only (each member is sent roster_for(id)).
  Result<std::vector<fedstat_v1_SecAggPeerKeys>> close_advertising();
  // After the key round: what `id` is sent as its roster — U1 (complete graph) or its
  // neighbourhood in ring order with the ring seed in entry 0 (sparse; graph.h). Empty for a
  // client outside U1.
  std::vector<fedstat_v1_SecAggPeerKeys> roster_for(uint32_t id) const;
  // The rosters U2 and U3 as `id` is sent them: bitmaps over roster_for(id)'s indices.
  fedstat_v1_SecAggRoster u2_for(uint32_t id) const;
  fedstat_v1_SecAggRoster u3_for(uint32_t id) const;
  // `sender` is the authenticated id of the connection the share came from.
  Status on_share(uint32_t sender, const fedstat_v1_SecAggShare& share);
  // Ends round 1: U2 (a bitmap over U1; no members when U1 has more than 1024: use u2_for);
  // shares_for(v) then holds the shares addressed to v from members of U2.
  Result<fedstat_v1_SecAggRoster> close_sharing();
  std::vector<fedstat_v1_SecAggShare> shares_for(uint32_t id) const;
  Status on_chunk(uint32_t sender, const fedstat_v1_SecAggMaskedChunk& chunk);
  // Ends round 2: U3, the clients whose whole masked vector arrived (as close_sharing's U2).
  // Signed sessions: the consistency round comes next (on_consistency), not the reveals.
  Result<fedstat_v1_SecAggRoster> close_masking();
  // Signed sparse sessions (protocol 6, rule D8), round 2: a message with round = 2 is `sender`'s
  // U2 view, taken after its whole masked input and before close_masking: its members must be the
  // U2 ids of its roster (kInvalidArgument), its signature must verify over the U2 view digest
  // (kPermissionDenied and the sender excluded; kDataLoss and excluded when not 64 bytes);
  // kAlreadyExists a second one; kFailedPrecondition outside round 2, before the last word, or in
  // another kind of session. Stored; a member without one is not in U3 (its neighbours would
  // withhold its self-mask shares). consistency_for() forwards them.
  // Signed sessions, after U3: `sender`'s consistency message. Errors: kFailedPrecondition
  // outside the consistency round or in an unsigned session; kInvalidArgument another session,
  // or members other than the U3 view the server sent `sender` (none for the complete graph);
  // kPermissionDenied a signer other than `sender`, a sender outside U3 or excluded, or a
  // signature that does not verify under its certificate over that view (not stored, and the
  // sender is excluded: a check it could otherwise make the server repeat without end);
  // kAlreadyExists a second message; kDataLoss a signature that is not 64 bytes (the sender is
  // excluded: its reveals go unused). kAborted after an abort.
  Status on_consistency(uint32_t sender, const fedstat_v1_SecAggConsistency& message);
  // Signed sessions: the stored consistency messages of the members of `member`'s U3 view other
  // than itself, ascending id (what the server forwards to it). Empty before U3 or for a client
  // outside U3. Signed sparse sessions (D8): preceded by those members' U2 views (round = 2).
  std::vector<fedstat_v1_SecAggConsistency> consistency_for(uint32_t member) const;
  // Signed sessions: ends the consistency round and opens the reveals (on_reveal), or kAborted
  // when some member of U2 would have fewer than t revealing holders (a holder reveals when t
  // members of its roster signed: itself included with the complete graph, besides itself with
  // a sparse one — SecAggClient::on_consistency). kFailedPrecondition outside the round.
  Status close_consistency();
  // Whether `member` of U3 may still reveal: always in an unsigned session; in a signed one, once
  // close_consistency() found it shown enough signatures (a member it marks silent cannot
  // reveal, so nobody needs to wait for it).
  bool will_reveal(uint32_t member) const;
  // Signed sessions: the ids whose consistency message was stored, ascending.
  std::vector<uint32_t> consistency_signers() const;
  Status on_reveal(uint32_t sender, const fedstat_v1_SecAggReveal& reveal);
  // Ends round 3: Σ_{u∈U3} x_u mod 2^bits, every secret verified, or kAborted (abort_reason()
  // says why, naming the secret's owner and the evidence) when some secret cannot be rebuilt
  // and verified (see above). `random`: X25519 blinding and the check polynomials of
  // ShareDecoder (drawn after every reveal is in; a seeded stream makes finish() deterministic).
  // Other errors: kFailedPrecondition outside the unmasking round; the random source's, and
  // kInternal/kResourceExhausted from the crypto library.
  Result<std::vector<uint64_t>> finish(RandomSource& random);
  // The shares finish() found off a verified secret's polynomial, in the order found (also when
  // it then aborted on another secret).
  const std::vector<SecAggDispute>& disputes() const { return disputes_; }

  // Clients excluded for what they sent, in the order excluded, with the reason (see above).
  const std::vector<std::pair<uint32_t, std::string>>& excluded() const { return excluded_; }
  bool is_excluded(uint32_t id) const;
  // Excludes `id` for `reason` now (the rounds' replay of an exclusion they stored): a client of
  // the key round is left out of U1, of the sharing round out of U2, of the masking round out of
  // U3; in the unmasking round its reveals go unused. Excluding twice keeps the first reason.
  void exclude(uint32_t id, const std::string& reason);

  bool aborted() const { return stage_ == Stage::kAborted; }
  const std::string& abort_reason() const { return abort_reason_; }
  std::vector<uint32_t> u2() const;
  std::vector<uint32_t> u3() const;
  // The entries of every roster (U1's size, or min(degree + 1, |U1|) when sparse); 0 before U1.
  uint32_t roster_size() const;
  // Members of U2 in `id`'s roster (itself included): the reveals it sends.
  uint32_t u2_in_roster_of(uint32_t id) const;

 private:
  enum class Stage { kAdvertising, kSharing, kMasking, kConsistency, kUnmasking, kDone, kAborted };
  struct Client {
    uint32_t index = 0;
    uint8_t encryption_key[32] = {};
    uint8_t masking_key[32] = {};
    uint8_t commitment[32] = {};  // c_v, checked against the b_v finish() rebuilds
    bool in_u2 = false, in_u3 = false;
    std::set<uint32_t> shared_to;   // round 1: recipients already served
    std::vector<uint64_t> partial;  // round 2: the words so far, until the vector is whole
    uint32_t received_words = 0;
    std::set<uint32_t> revealed_about;  // round 3: peers this client already revealed about
    // Signed sessions: the certificate's key and CA signature, the key signature (round 0), and
    // the consistency signature once stored.
    uint8_t signing_key[65] = {};
    uint8_t ca_signature[64] = {};
    uint8_t key_signature[64] = {};
    bool signed_consistency = false;
    uint8_t consistency_signature[64] = {};
    std::vector<uint32_t> consistency_view;  // sparse: the U3 view it signed, forwarded with it
    // Signed sparse sessions (rule D8): its signed U2 view, stored with its masked input.
    bool signed_u2 = false;
    uint8_t u2_signature[64] = {};
    std::vector<uint32_t> u2_view_signed;
    bool will_reveal = false;  // close_consistency(): shown enough signatures
  };
  // The ids of `id`'s roster whose flag `in_set` is set, ascending.
  std::vector<uint32_t> roster_view(uint32_t id, bool Client::*in_set) const;
  // Signed sessions: the ids of U3 in `id`'s roster, ascending (the view it signs).
  std::vector<uint32_t> u3_view(uint32_t id) const { return roster_view(id, &Client::in_u3); }
  // Signed sparse sessions (D8): the ids of U2 in `id`'s roster, ascending (its U2 view).
  std::vector<uint32_t> u2_view(uint32_t id) const { return roster_view(id, &Client::in_u2); }
  bool signs_u2_views() const { return config_.signed_keys && config_.degree != 0; }
  Status on_masked_view(uint32_t sender, const fedstat_v1_SecAggConsistency& message);
  // Adds `client`'s whole masked vector to the running sum and frees its copy.
  void add_to_sum(Client& client);
  Status abort(const std::string& reason);
  Status refuse_and_exclude(uint32_t id, const std::string& reason);
  // A roster bitmap of `size` bits (none beyond 1024: the field's room), bit i set when
  // named(i).
  fedstat_v1_SecAggRoster bitmap(uint32_t round, size_t size,
                                 const std::function<bool(size_t)>& named) const;
  // Over U1 in ring order (what every member of a complete graph is sent), or over `id`'s roster.
  fedstat_v1_SecAggRoster roster(uint32_t round, bool (*member)(const Client&)) const;
  fedstat_v1_SecAggRoster roster_of(uint32_t id, uint32_t round,
                                    bool (*member)(const Client&)) const;
  // The members of the roster of the member at `ring_index` (itself included) that `member`
  // holds for.
  uint32_t count_in_roster(size_t ring_index, bool (*member)(const Client&)) const;
  fedstat_v1_SecAggPeerKeys roster_entry(uint32_t id, uint32_t index, uint32_t count) const;
  // The ring (graph.h): roster_size() entries per roster, starting at roster_start(p) for the
  // member at ring index p; neighbours(a, b): b is in a's roster.
  size_t roster_start(size_t ring_index) const;
  uint32_t roster_member(size_t ring_index, size_t j) const;
  bool neighbours(uint32_t a, uint32_t b) const;
  Status check_session(uint64_t session) const;
  // The sparse graph's checks of the constructor, and the commitment to the ring seed.
  void check_sparse_config(const SecAggServerConfig& config);
  std::string failure_reason(uint32_t about, bool self_mask, const DecodedSecret& decoded) const;

  SecAggServerConfig config_;
  Stage stage_ = Stage::kAdvertising;
  std::string abort_reason_;
  std::map<uint32_t, Client> clients_;     // by id
  std::vector<uint32_t> ring_;             // ring (roster) order
  std::set<std::string> advertised_keys_;  // every public key of U1 so far (duplicates refused)
  uint8_t graph_commitment_[32] = {};      // sparse: to the ring seed
  std::vector<uint64_t> sum_;              // Σ of the whole masked vectors so far (mod 2^bits)
  std::map<uint32_t, std::vector<fedstat_v1_SecAggShare>> inbox_;  // by recipient
  std::map<uint32_t, std::vector<std::pair<uint32_t, std::vector<uint8_t>>>> self_shares_,
      key_shares_;                                           // about id → (holder id, 36 bytes)
  std::map<uint32_t, std::vector<uint32_t>> empty_reveals_;  // about id → holders who sent none
  uint8_t session_hash_[32] = {};
  uint8_t start_digest_[32] = {};  // signed: secagg::start_parameters_digest(start())
  std::vector<std::pair<uint32_t, std::string>> excluded_;
  std::set<uint32_t> excluded_ids_;
  std::vector<SecAggDispute> disputes_;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_SECAGG_SECAGG_SERVER_H_
