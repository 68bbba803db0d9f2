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
// message refused with kDataLoss, the client and the reason kept in excluded()): a public key
// that is malformed, non-canonical or of low order (secagg::check_public_key: never in U1); a
// share of the wrong length (never in U2); a masked word above 2^bits − 1 (never in U3); a reveal
// of the wrong length or a value outside the field (its reveals unused; still in U3, its input in
// the sum — U3 was announced, and its peers reveal only b-shares about it). A reveal with an
// empty share is a client saying it holds no valid share of that peer (its share was bad:
// secagg_client.h) and counts as that reveal. finish() checks every secret revealed by more than
// t holders against one polynomial (shamir.h: the dual-code check, O(m) per secret and piece
// after an O(m²) precomputation per holder set), locates a holder whose share is off it,
// excludes it and rebuilds from the rest; a masking key s_v^SK must also give the s_v^PK v
// advertised. What cannot be resolved — a wrong share among exactly t, or several wrong shares of
// one secret — aborts the session with a reason naming the secret. Exclusions never lower the
// threshold: below t the session aborts as for dropouts.
//
// Every close_* checks the threshold t: with fewer survivors the session aborts (kAborted), the
// server asks for nothing more and no client reveals anything. Messages are checked before
// anything is stored, each failure with its own status, and a rejected message changes nothing:
// wrong session (kInvalidArgument), unknown client (kNotFound), a second copy (kAlreadyExists),
// the wrong round (kFailedPrecondition), a reveal the protocol forbids — a self-mask share of a
// dropped client or a key share of a survivor (kPermissionDenied), malformed sizes (kDataLoss).
// The math (X25519, HKDF, masks, Shamir) is the SDK's.
//
// Memory: O(n² · 100 bytes) for the routed shares and the revealed shares, O(n·L) words for
// the collected vectors. Paper: Bonawitz et al. 2017 §4, Figure 4.
#ifndef FEDSTAT_HOST_SECAGG_SECAGG_SERVER_H_
#define FEDSTAT_HOST_SECAGG_SECAGG_SERVER_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fedstat/v1/envelope.pb.h"
#include "sdk/base/random_source.h"
#include "sdk/base/result.h"
#include "sdk/secagg/secagg_client.h"

namespace fedstat {
namespace host {

// The roster bitmap (SecAggRoster.members, 128 bytes) names at most this many clients.
constexpr uint32_t kMaxSecAggClients = secagg::kMaxRosterClients;
static_assert(kMaxSecAggClients == 1024, "the messages below say 1024");

struct SecAggServerConfig {
  uint64_t session = 0;
  uint32_t threshold = 2;
  uint32_t vector_length = 1;
  uint32_t bits = 32;
  uint32_t max_clients = kMaxSecAggClients;
};

class SecAggServer {
 public:
  // Throws std::invalid_argument unless 2 ≤ threshold ≤ max_clients ≤ kMaxSecAggClients,
  // 2·threshold > max_clients, length ≥ 1 and bits in 1..64.
  explicit SecAggServer(const SecAggServerConfig& config);

  fedstat_v1_SecAggStart start() const;
  Status on_keys(const fedstat_v1_SecAggKeys& keys);
  // Ends round 0: the roster U1 (one message per client) or kAborted below the threshold.
  Result<std::vector<fedstat_v1_SecAggPeerKeys>> close_advertising();
  // `sender` is the authenticated id of the connection the share came from.
  Status on_share(uint32_t sender, const fedstat_v1_SecAggShare& share);
  // Ends round 1: U2; shares_for(v) then holds the shares addressed to v from members of U2.
  Result<fedstat_v1_SecAggRoster> close_sharing();
  std::vector<fedstat_v1_SecAggShare> shares_for(uint32_t id) const;
  Status on_chunk(uint32_t sender, const fedstat_v1_SecAggMaskedChunk& chunk);
  // Ends round 2: U3, the clients whose whole masked vector arrived.
  Result<fedstat_v1_SecAggRoster> close_masking();
  Status on_reveal(uint32_t sender, const fedstat_v1_SecAggReveal& reveal);
  // Ends round 3: Σ_{u∈U3} x_u mod 2^bits, or kAborted (abort_reason() says why, naming the
  // client) when some secret has fewer than t valid shares or shares that cannot be resolved.
  // `random`: X25519 blinding and the consistency check's random polynomials (drawn after every
  // reveal is in; a seeded stream makes finish() deterministic).
  Result<std::vector<uint64_t>> finish(RandomSource& random);

  // Clients excluded for what they sent, in the order excluded, with the reason (see above).
  const std::vector<std::pair<uint32_t, std::string>>& excluded() const { return excluded_; }
  bool is_excluded(uint32_t id) const;
  // Excludes `id` for `reason` now (the rounds' replay of an exclusion they stored): a client of
  // the key round is left out of U1, of the sharing round out of U2, of the masking round out of
  // U3; in the unmasking round its reveals go unused. Excluding twice keeps the first reason.
  void exclude(uint32_t id, const std::string& reason);

  bool aborted() const { return stage_ == Stage::kAborted; }
  const std::string& abort_reason() const { return abort_reason_; }
  std::vector<uint32_t> u3() const;

 private:
  enum class Stage { kAdvertising, kSharing, kMasking, kUnmasking, kDone, kAborted };
  struct Client {
    uint32_t index = 0;
    uint8_t encryption_key[32] = {};
    uint8_t masking_key[32] = {};
    bool in_u2 = false, in_u3 = false;
    std::set<uint32_t> shared_to;  // round 1: recipients already served
    std::vector<uint64_t> masked;  // round 2
    uint32_t received_words = 0;
    std::set<uint32_t> revealed_about;  // round 3: peers this client already revealed about
  };
  Status abort(const std::string& reason);
  Status refuse_and_exclude(uint32_t id, const std::string& reason);
  fedstat_v1_SecAggRoster roster(bool (*member)(const Client&)) const;
  Status check_session(uint64_t session) const;

  SecAggServerConfig config_;
  Stage stage_ = Stage::kAdvertising;
  std::string abort_reason_;
  std::map<uint32_t, Client> clients_;                             // by id
  std::vector<uint32_t> order_;                                    // roster order
  std::map<uint32_t, std::vector<fedstat_v1_SecAggShare>> inbox_;  // by recipient
  std::map<uint32_t, std::vector<std::pair<uint32_t, std::vector<uint8_t>>>> self_shares_,
      key_shares_;  // about id → (holder id, 36 bytes)
  uint8_t session_hash_[32] = {};
  std::vector<std::pair<uint32_t, std::string>> excluded_;
  std::set<uint32_t> excluded_ids_;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_SECAGG_SECAGG_SERVER_H_
