// SecAggClient: one device's side of secure aggregation (Bonawitz et al., CCS 2017, semi-honest
// server), a state machine in caller memory driven one message at a time.
//
//   idle ──on_start──► advertised (sends SecAggKeys: c_u^PK for shares, s_u^PK for masks)
//        ──on_peer_keys × |U1|──► sharing (roster U1 known; session hash = SHA-256 of it)
//        ──next_share × (|U1|−1)──► shared: for every peer v, Shamir shares (t of |U1|, x = v's
//          id) of the self-mask seed b_u and of s_u^SK, AES-256-GCM-encrypted under
//          HKDF(X25519(c_u^SK, c_v^PK)); the server only routes them
//        ──on_share (peers' shares to u) … on_roster(round 2: U2)──► ready to mask
//        ──mask(x)──► masked: y = x + PRG(b_u) + Σ_{v∈U2, v<u} PRG(s_uv) − Σ_{v∈U2, v>u} PRG(s_uv)
//          mod 2^bits (sdk/secagg/mask.h), sent with next_chunk
//        ──on_roster(round 3: U3)──► unmasking: next_reveal gives, for v ∈ U2, the share of b_v if
//          v ∈ U3 (its input is in the sum) or of s_v^SK if not (it dropped) — never both for one
//          peer; u's own b-share too ──► done.
// Resumption after a lost channel (the same object, nothing drawn again; Client, sdk/client):
// what the client already holds may arrive again — the same SecAggStart (on_start gives the same
// keys), roster entries and rosters are accepted and change nothing, while any that differ are
// refused (kFailedPrecondition) and change nothing; a share from a peer whose share is held is
// ignored (the held one stays). A masked input is made for one U2 and reveals for one U3,
// whatever arrives later.
// rewind(round, held) then makes next_share / next_chunk / next_reveal continue after the `held`
// messages the server stored, giving the same bytes again (the share IV is fixed per sender and
// recipient and the plaintext is the same: an identical ciphertext).
// Any violation (fewer than t survivors, a roster that grows, a share that fails authentication,
// a message for another session, client or round, a session larger than the client's storage
// or than kMaxRosterClients) returns a specific error and changes nothing held; below threshold
// the client aborts and reveals nothing from then on.
// Randomness (keys, seeds, polynomial seeds, X25519 blinding) comes from the caller's
// RandomSource — the platform Csprng in production, a SeededStream in tests.
//
// Memory: sizeof(SecAggClient) (576 bytes on a 64-bit host) + secagg_client_memory_bytes(
// max_clients) of caller storage (sizeof(SecAggPeer) = 144 bytes per roster entry); mask() works
// in place on the caller's vector; X25519/HKDF/GCM use mbedTLS's pool on microcontrollers.
// Paper: Bonawitz et al. 2017 §4, Figure 4 (rounds 0–3); 000 Alg. 3, 001 §4.7, 002 §2.2.
#ifndef FEDSTAT_SDK_SECAGG_SECAGG_CLIENT_H_
#define FEDSTAT_SDK_SECAGG_SECAGG_CLIENT_H_

#include <stddef.h>
#include <stdint.h>

#include "fedstat/v1/envelope.pb.h"
#include "sdk/base/checked_size.h"
#include "sdk/base/crypto.h"
#include "sdk/base/random_source.h"
#include "sdk/secagg/shamir.h"

namespace fedstat {
namespace secagg {

struct SecAggPeer {
  uint32_t id = 0;
  uint8_t encryption_key[32] = {};
  uint8_t masking_key[32] = {};
  uint32_t self_mask_share[kShamirPieces] = {};  // v's share of b_v, for me (x = my id)
  uint32_t key_share[kShamirPieces] = {};        // v's share of s_v^SK, for me
  uint8_t flags = 0;
};

// kSizeOverflow (sdk/base/checked_size.h) when it does not fit in size_t.
constexpr size_t secagg_client_memory_bytes(size_t max_clients) {
  return size_mul(max_clients, sizeof(SecAggPeer));
}
// The roster bitmap (SecAggRoster.members, envelope.options) names at most this many clients;
// on_start refuses a session that allows more.
constexpr uint32_t kMaxRosterClients = 8 * sizeof(fedstat_v1_SecAggRoster_members_t::bytes);

// Bytes of the encrypted shares: from, to (4 + 4), two 36-byte shares, the 16-byte tag.
constexpr size_t kSharePlainBytes = 8 + 2 * kShareBytes;
constexpr size_t kShareCipherBytes = kSharePlainBytes + crypto::kGcmTagBytes;
constexpr size_t kChunkWords = 64;  // words per SecAggMaskedChunk (envelope.options)

enum class SecAggStage : uint8_t {
  kIdle,
  kAdvertised,
  kSharing,
  kShared,
  kReadyToMask,
  kMasked,
  kUnmasking,
  kDone,
  kAborted,
};

class SecAggClient {
 public:
  // id in [1, 2^31]; peers: storage for the largest roster the client will accept.
  // `random` (the platform Csprng in production, a SeededStream in tests) must outlive the client.
  Status init(uint32_t client_id, Span<SecAggPeer> peers, RandomSource& random);

  Status on_start(const fedstat_v1_SecAggStart& start, fedstat_v1_SecAggKeys& out);
  Status on_peer_keys(const fedstat_v1_SecAggPeerKeys& entry);
  // True with `out` filled while shares remain; false once every peer's share was produced.
  Result<bool> next_share(fedstat_v1_SecAggShare& out);
  Status on_share(const fedstat_v1_SecAggShare& share);
  Status on_roster(const fedstat_v1_SecAggRoster& roster);
  // In place, vector.size() == the session's length; 32-bit words need bits ≤ 32 (half the
  // memory of 64-bit words on a microcontroller). Masked once or never: a failure part way
  // wipes the vector and aborts the session (a second try would mask it twice).
  Status mask(Span<uint64_t> vector);
  Status mask(Span<uint32_t> vector);
  Result<bool> next_chunk(Span<const uint64_t> masked, fedstat_v1_SecAggMaskedChunk& out);
  Result<bool> next_chunk(Span<const uint32_t> masked, fedstat_v1_SecAggMaskedChunk& out);
  Result<bool> next_reveal(fedstat_v1_SecAggReveal& out);
  // The server holds the first `held` of this client's messages of `round` (1: shares, 2: words
  // of masked input, a whole number of chunks, 3: reveals): the next next_share / next_chunk /
  // next_reveal continues after them. kFailedPrecondition outside that round's stages (round 1:
  // shares made; 2: masked; 3: unmasking or done), kInvalidArgument for a `held` beyond what
  // the round makes.
  Status rewind(uint32_t round, uint32_t held);
  // The server abandoned the round: nothing more will be revealed.
  void on_abort();

  SecAggStage stage() const { return stage_; }
  uint32_t id() const { return id_; }
  size_t roster_size() const { return count_; }
  ByteSpan session_hash() const { return ByteSpan(session_hash_, sizeof(session_hash_)); }

 private:
  Status fail(Status status);  // aborts on kAborted, else leaves the state as it was
  void advertised_keys(fedstat_v1_SecAggKeys& out) const;
  Status check_held_entry(const fedstat_v1_SecAggPeerKeys& entry) const;
  // True when `roster` names exactly this client and the peers carrying `flag` (U2 or U3).
  bool roster_is_held(const fedstat_v1_SecAggRoster& roster, uint8_t flag) const;
  template <typename Word>
  Status mask_words(Span<Word> vector);
  template <typename Word>
  Status apply_masks(Span<Word> vector);  // the self mask and every pairwise mask, in place
  template <typename Word>
  Result<bool> chunk_words(Span<const Word> masked, fedstat_v1_SecAggMaskedChunk& out);
  Status random_bytes(MutableByteSpan out);
  Status share_key(const SecAggPeer& peer, MutableByteSpan key);
  Result<size_t> index_of(uint32_t id) const;
  Status read_members(const fedstat_v1_SecAggRoster& roster, uint8_t required, uint8_t set_flag,
                      size_t& members);

  uint32_t id_ = 0;
  Span<SecAggPeer> peers_;
  RandomSource* random_ = nullptr;
  SecAggStage stage_ = SecAggStage::kIdle;
  uint64_t session_ = 0;
  uint32_t threshold_ = 0, length_ = 0, bits_ = 0;
  size_t count_ = 0, self_index_ = 0, cursor_ = 0;
  bool own_share_revealed_ = false;
  uint8_t encryption_secret_[32] = {};
  uint8_t masking_secret_[32] = {};
  uint8_t self_mask_seed_[32] = {};
  uint8_t session_hash_[32] = {};
  uint8_t encryption_public_[32] = {};
  uint8_t masking_public_[32] = {};
  ShamirDealer self_mask_dealer_, key_dealer_;
  crypto::Sha256 roster_hash_;
};

}  // namespace secagg
}  // namespace fedstat

#endif  // FEDSTAT_SDK_SECAGG_SECAGG_CLIENT_H_
