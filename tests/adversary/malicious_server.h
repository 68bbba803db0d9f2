// A malicious secure-aggregation server for the adversary tests (issue 42 item 4): it drives N
// real fedstat::secagg::SecAggClient devices by hand, message by message, routing what they send
// as an honest server would except where an attack's hooks tamper — the rosters each device is
// shown (U1, U2, U3), invented identities ("Sybils": SecAggClients the server itself runs, so it
// holds their secrets and reads the shares they receive), and, in signed sessions, which
// consistency messages each device is forwarded.
//
// What the adversary learns is tallied per honest device v: the holders whose share of v's
// self-mask seed b_v, and whose share of v's masking key s_v^SK, the server holds — every share an
// honest device revealed (SecAggReveal, non-empty) plus every share v dealt to a Sybil or to a
// colluding device (RoundConfig::colluders). With t
// shares of both, the server unmasks v's input alone: recover_input() does exactly that (Shamir
// reconstruction, both secrets checked against v's commitment and public key, then every mask
// removed from v's masked vector), which is how an unsigned session's attack is shown to succeed.
//
// Modes: kUnsigned runs today's protocol (an unsigned session: no credential, no signatures, no
// consistency round, as protocol 4); kSigned gives every honest device a credential from a test CA
// and sets SecAggStart.signed_keys (protocol 5, sdk/credential/device_credential.h and
// sdk/secagg/signed_keys.h); a signed sparse session also runs rule D8 (protocol 6: each device's
// U2 view signed after its masked input, forwarded before the consistency messages).
// Deterministic: every device's randomness is a SeededStream keyed by its id, the session and
// RoundConfig::round. Only the SDK's public API is used on the devices; the host's ShareDecoder
// rebuilds a completed round's sum.
#ifndef FEDSTAT_TESTS_ADVERSARY_MALICIOUS_SERVER_H_
#define FEDSTAT_TESTS_ADVERSARY_MALICIOUS_SERVER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fedstat/v1/envelope.pb.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/base/status.h"
#include "sdk/secagg/secagg_client.h"

#include "sdk/credential/device_credential.h"
#include "sdk/secagg/signed_keys.h"

namespace fedstat {
namespace adversary {

enum class Mode { kUnsigned, kSigned };

// One device: an honest SecAggClient, or a Sybil the server runs itself.
struct Device {
  // Its randomness: a SeededStream keyed by `stream_key` (the round and session) and the id.
  Device(uint32_t device_id, bool is_sybil, uint32_t roster_room, uint64_t stream_key);
  uint32_t id;
  bool sybil;
  bool colluding = false;  // a certified device that colludes with the server (RoundConfig)
  bool server_held() const { return sybil || colluding; }  // what it receives, the server reads
  SeededStream stream;
  std::vector<secagg::SecAggPeer> peers;
  secagg::SecAggClient client;
  std::vector<uint64_t> input;                                   // the true input (honest devices)
  std::vector<uint64_t> masked;                                  // y as sent in its chunks
  fedstat_v1_SecAggKeys keys = fedstat_v1_SecAggKeys_init_zero;  // as it advertised them
  std::vector<uint32_t> roster;  // ids in the order of the roster it accepted
  std::map<uint32_t, fedstat_v1_SecAggKeys> roster_keys;  // the keys it was shown, by id
  std::set<uint32_t> u2, u3;  // the views it was sent (ids, itself included)
  // The first refusal of this device (its status), and the step it happened at.
  Status refusal;
  std::string refused_at;
  bool refused() const { return !refused_at.empty(); }
  std::vector<fedstat_v1_SecAggReveal> reveals;
  Status reveal_status;  // what next_reveal said last (OK after the last reveal)
  credential::DeviceCredential credential;
  bool has_consistency = false;
  fedstat_v1_SecAggConsistency consistency = fedstat_v1_SecAggConsistency_init_zero;
  std::vector<Status> consistency_statuses;  // on_consistency's answers, in order
  // Signed sparse sessions (rule D8): its U2 view, signed after its masked input, and
  // on_consistency's answers to the U2 views forwarded to it, in order.
  bool has_masked_view = false;
  fedstat_v1_SecAggConsistency masked_view = fedstat_v1_SecAggConsistency_init_zero;
  std::vector<Status> masked_view_statuses;
};

struct RoundConfig {
  Mode mode = Mode::kUnsigned;
  uint64_t session = 4242;
  std::vector<uint32_t> honest;  // ids of the honest devices
  std::vector<uint32_t> sybils;  // ids the server invents
  // Honest-looking, certified devices that collude with the server: they run the protocol, and
  // the server reads every share they receive and holds their credentials (the threat model's
  // corrupt devices). A subset of `honest`.
  std::vector<uint32_t> colluders;
  uint32_t threshold = 6;
  uint32_t max_clients = 10;
  uint32_t degree = 0;  // 0 complete; even k sparse
  // Signed: the corrupt fraction each device assumes at least (SecAggClient::
  // set_assumed_corrupt_ppm; TaskPolicy::min_assumed_corrupt_ppm), default the SDK's 5 %.
  uint32_t assumed_corrupt_ppm = 50000;
  uint32_t length = 8;
  uint32_t bits = 32;
  uint8_t graph_seed[32] = {7, 7, 7};
  uint64_t ca_seed = 1;  // signed mode: the test CA's and credentials' stream
  // Which run of this session: the devices' randomness is keyed by (round, session, id), so two
  // rounds that reuse a session id still draw fresh keys (as real devices do).
  uint32_t round = 0;
};

// What the server holds about one honest device's two secrets (holders: the honest devices that
// revealed them, and the Sybils and colluders v dealt them to).
struct Knowledge {
  std::map<uint32_t, secagg::ShamirShare> b_shares, s_shares;  // holder id → share of b_v / s_v
};

class MaliciousServer {
 public:
  explicit MaliciousServer(const RoundConfig& config);

  // ---- The hooks an attack sets (all optional; the default is an honest server's choice).
  // The roster entries `recipient` is sent, after the honest ones were built (tamper in place).
  std::function<void(uint32_t recipient, std::vector<fedstat_v1_SecAggPeerKeys>& roster)>
      tamper_roster;
  // The SecAggStart `recipient` is sent (tamper in place).
  std::function<void(uint32_t recipient, fedstat_v1_SecAggStart& start)> tamper_start;
  // The U2 ids `recipient` is told (default: every member of its roster that sent its shares).
  std::function<std::set<uint32_t>(uint32_t recipient, const std::set<uint32_t>& honest_u2)>
      u2_view;
  // The U3 ids `recipient` is told (default: every member of its U2 that sent its whole input).
  std::function<std::set<uint32_t>(uint32_t recipient, const std::set<uint32_t>& honest_u3)>
      u3_view;
  // The consistency messages forwarded to `recipient` (default: those of the signers in its U3
  // other than itself, ascending id; `all` holds every message the server received, by signer).
  std::function<std::vector<fedstat_v1_SecAggConsistency>(
      uint32_t recipient, const std::map<uint32_t, fedstat_v1_SecAggConsistency>& all,
      const std::vector<fedstat_v1_SecAggConsistency>& honest)>
      forward_consistency;

  // Signed sparse sessions (D8): the U2 views forwarded to `recipient` before the consistency
  // messages (default: those of the other members of its U3, ascending id; `all` holds every U2
  // view the server received, by signer).
  std::function<std::vector<fedstat_v1_SecAggConsistency>(
      uint32_t recipient, const std::map<uint32_t, fedstat_v1_SecAggConsistency>& all,
      const std::vector<fedstat_v1_SecAggConsistency>& honest)>
      forward_masked_views;

  // ---- The round, step by step (each honest device that refuses stops there; see Device).
  void advertise();      // round 0
  void send_rosters();   // U1
  void share();          // round 1, shares routed to their recipients
  void mask_and_send();  // U2, masking, round 2
  void send_u3();        // U3
  void consistency();    // signed sessions: the consistency round
  void reveal();         // round 3: every reveal each device makes
  void run_all();        // all of the above in order

  // ---- What the adversary got.
  // The shares of v's secrets the server holds (honest reveals and shares dealt to Sybils).
  Knowledge knowledge_of(uint32_t v) const;
  // Honest, non-colluding devices with ≥ t shares of both b_v and s_v^SK in the server's hands.
  std::vector<uint32_t> both_kinds_exposed() const;
  // v's input, unmasked by the server from what it holds, when it can: b_v rebuilt and checked
  // against v's commitment, and every pairwise mask of v's U2 from s_v^SK or from the other
  // member's s_u^SK (each rebuilt and checked against its public key). std::nullopt otherwise.
  // Stronger than both_kinds_exposed(): it also sees an attack that never asks one device for
  // both kinds about one peer (the many-worlds attack of attacks_test.cpp).
  std::optional<std::vector<uint64_t>> recover_input(uint32_t v) const;
  // The sum over `u3` (no member of any U2 outside it) rebuilt from the honest reveals with the
  // host's ShareDecoder (host_server/secagg/share_decoder.h), every b_u verified against its
  // commitment; std::nullopt if some b_u cannot be rebuilt.
  std::optional<std::vector<uint64_t>> sum_from_reveals(const std::set<uint32_t>& u3) const;
  // Σ of the honest inputs of `ids` mod 2^bits.
  std::vector<uint64_t> true_sum(const std::set<uint32_t>& ids) const;

  Device& device(uint32_t id) { return *devices_.at(id); }
  const Device& device(uint32_t id) const { return *devices_.at(id); }
  const RoundConfig& config() const { return config_; }
  fedstat_v1_SecAggStart start_message() const { return start_; }
  // Every device's id (honest and Sybil), ascending.
  std::vector<uint32_t> all_ids() const;
  // Ring order of `members` under the session's seed (sparse), or ascending ids (complete).
  std::vector<uint32_t> ring_of(const std::vector<uint32_t>& members) const;
  // The ids of `id`'s honest roster over U1 = `members`, in roster order.
  std::vector<uint32_t> neighbourhood(uint32_t id, const std::vector<uint32_t>& members) const;
  // The honest roster of `id` over U1 = `members` (complete: ascending; sparse: its ring
  // neighbourhood; graph seed and ring size in entry 0).
  std::vector<fedstat_v1_SecAggPeerKeys> honest_roster(uint32_t id,
                                                       const std::vector<uint32_t>& members) const;
  // A roster entry for `keys` at `index` of `count`.
  static fedstat_v1_SecAggPeerKeys entry(const fedstat_v1_SecAggKeys& keys, uint32_t index,
                                         uint32_t count);
  // The members of U1 (the devices whose keys were routed; Sybils included).
  const std::vector<uint32_t>& u1() const { return u1_; }
  void set_u1(std::vector<uint32_t> u1) { u1_ = std::move(u1); }
  // Every consistency message received, by signer.
  const std::map<uint32_t, fedstat_v1_SecAggConsistency>& consistency_messages() const {
    return consistency_;
  }
  // The test CA's public key (65 bytes) and private key (32).
  const uint8_t* ca_public_key() const { return ca_public_; }
  const uint8_t* ca_private_key() const { return ca_private_; }

 private:
  void refuse(Device& d, const Status& status, const char* step);
  fedstat_v1_SecAggRoster bitmap(const Device& d, uint32_t round,
                                 const std::set<uint32_t>& members) const;

  RoundConfig config_;
  fedstat_v1_SecAggStart start_ = fedstat_v1_SecAggStart_init_zero;
  std::map<uint32_t, std::unique_ptr<Device>> devices_;
  std::vector<uint32_t> u1_;
  std::map<uint32_t, std::vector<fedstat_v1_SecAggShare>> inbox_;  // by recipient
  std::map<uint32_t, std::set<uint32_t>> server_read_;  // Sybil or colluder → dealers it read
  std::map<uint32_t, fedstat_v1_SecAggConsistency> consistency_;
  std::map<uint32_t, fedstat_v1_SecAggConsistency> masked_views_;  // D8: U2 views, by signer
  uint8_t ca_private_[credential::kPrivateKeyBytes] = {};
  uint8_t ca_public_[credential::kPublicKeyBytes] = {};
};

}  // namespace adversary
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_ADVERSARY_MALICIOUS_SERVER_H_
