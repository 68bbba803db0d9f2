// SecAggClient, round 1 (secagg_client.h): the Shamir shares of b_u and s_u^SK for each peer,
// encrypted under a key from X25519 and HKDF (derived once per peer), and the peers' shares
// to this client, opened and checked.
#include "sdk/secagg/secagg_client.h"

#include <string.h>

#include "sdk/base/bytes.h"
#include "sdk/secagg/secagg_client_internal.h"

namespace fedstat {
namespace secagg {

namespace {

constexpr char kShareKeyLabel[] = "fedstat secagg share key v1";

void share_iv(uint32_t from, uint32_t to, uint8_t iv[crypto::kGcmIvBytes]) {
  for (int b = 0; b < 4; ++b) {
    iv[b] = static_cast<uint8_t>(from >> (24 - 8 * b));
    iv[4 + b] = static_cast<uint8_t>(to >> (24 - 8 * b));
    iv[8 + b] = 0;
  }
}

void share_aad(const uint8_t session_hash[32], uint32_t from, uint32_t to, uint8_t aad[40]) {
  memcpy(aad, session_hash, 32);
  store_le32(aad + 32, from);
  store_le32(aad + 36, to);
}

}  // namespace

Status SecAggClient::share_key(const SecAggPeer& peer, MutableByteSpan key) {
  uint8_t shared[crypto::kX25519KeyBytes];
  const crypto::ScopedWipe wipe_shared(shared, sizeof(shared));
  FEDSTAT_RETURN_IF_ERROR(crypto::x25519_shared_secret(
      ByteSpan(encryption_secret_, 32), ByteSpan(peer.encryption_key, 32),
      Span<uint8_t>(shared, sizeof(shared)), fill_from_random_source, random_));
  const Status derived = crypto::hkdf_sha256(
      ByteSpan(session_hash_, 32), ByteSpan(shared, sizeof(shared)),
      ByteSpan(reinterpret_cast<const uint8_t*>(kShareKeyLabel), sizeof(kShareKeyLabel) - 1), key);
  return derived;
}

Status SecAggClient::held_or_new_share_key(SecAggPeer& peer, MutableByteSpan key, bool keep) {
  if (peer.flags & kHoldsShareKey) {
    memcpy(key.data(), peer.self_mask_share, 32);
    return Status();
  }
  FEDSTAT_RETURN_IF_ERROR(share_key(peer, key));
  if (keep && !(peer.flags & kHaveShares)) {
    memcpy(peer.self_mask_share, key.data(), 32);
    peer.flags = static_cast<uint8_t>(peer.flags | kHoldsShareKey);
  }
  return Status();
}

void SecAggClient::wipe_held_share_keys() {
  for (size_t i = 0; i < count_; ++i) {
    if (!(peers_[i].flags & kHoldsShareKey)) continue;
    crypto::wipe(peers_[i].self_mask_share, sizeof(peers_[i].self_mask_share));
    peers_[i].flags = static_cast<uint8_t>(peers_[i].flags & ~kHoldsShareKey);
  }
}

Result<bool> SecAggClient::next_share(fedstat_v1_SecAggShare& out) {
  if (stage_ == SecAggStage::kShared) return false;
  if (stage_ != SecAggStage::kSharing) {
    return failed_precondition("secagg: shares are made after the roster, once");
  }
  if (cursor_ == self_index_) ++cursor_;
  if (cursor_ >= count_) {
    stage_ = SecAggStage::kShared;
    return false;
  }
  SecAggPeer& peer = peers_[cursor_];
  // Every secret below is wiped on every path out (the shares of b_u and s_u^SK, the key).
  ShamirShare self_share, key_share;
  const crypto::ScopedWipe wipe_self_share(&self_share, sizeof(self_share));
  const crypto::ScopedWipe wipe_key_share(&key_share, sizeof(key_share));
  FEDSTAT_RETURN_IF_ERROR(self_mask_dealer_.share_for(peer.id, self_share));
  FEDSTAT_RETURN_IF_ERROR(key_dealer_.share_for(peer.id, key_share));
  uint8_t plain[kSharePlainBytes];
  const crypto::ScopedWipe wipe_plain(plain, sizeof(plain));
  store_le32(plain, id_);
  store_le32(plain + 4, peer.id);
  share_to_bytes(self_share, MutableByteSpan(plain + 8, kShareBytes));
  share_to_bytes(key_share, MutableByteSpan(plain + 8 + kShareBytes, kShareBytes));
  uint8_t key[32], iv[crypto::kGcmIvBytes], aad[40];
  const crypto::ScopedWipe wipe_key(key, sizeof(key));
  // Kept in the peer's share slots (kHoldsShareKey) for opening the peer's share to this client.
  FEDSTAT_RETURN_IF_ERROR(
      held_or_new_share_key(peer, MutableByteSpan(key, sizeof(key)), /*keep=*/true));
  share_iv(id_, peer.id, iv);
  share_aad(session_hash_, id_, peer.id, aad);
  out = fedstat_v1_SecAggShare_init_zero;
  out.session = session_;
  out.from_id = id_;
  out.to_id = peer.id;
  out.ciphertext.size = kShareCipherBytes;
  const Status sealed = crypto::aes256_gcm_seal(
      ByteSpan(key, 32), ByteSpan(iv, sizeof(iv)), ByteSpan(aad, sizeof(aad)),
      ByteSpan(plain, sizeof(plain)), MutableByteSpan(out.ciphertext.bytes, kSharePlainBytes),
      MutableByteSpan(out.ciphertext.bytes + kSharePlainBytes, crypto::kGcmTagBytes));
  FEDSTAT_RETURN_IF_ERROR(sealed);
  ++cursor_;
  return true;
}

Status SecAggClient::on_share(const fedstat_v1_SecAggShare& share) {
  const bool sharing = stage_ == SecAggStage::kSharing || stage_ == SecAggStage::kShared;
  const bool after_u2 = stage_ == SecAggStage::kReadyToMask || stage_ == SecAggStage::kMasked ||
                        stage_ == SecAggStage::kUnmasking || stage_ == SecAggStage::kDone;
  if (!sharing && !after_u2) {
    return failed_precondition("secagg: a peer's share arrived outside the sharing round");
  }
  if (share.session != session_) return invalid_argument("secagg: share for another session");
  if (share.to_id != id_) return invalid_argument("secagg: share addressed to another client");
  if (share.from_id == id_) return invalid_argument("secagg: a share from this client to itself");
  FEDSTAT_ASSIGN_OR_RETURN(const size_t index, index_of(share.from_id));
  SecAggPeer& peer = peers_[index];
  // A peer's share held already, sent again (a resume): ignored, the held one stays (not even
  // opened: an X25519 agreement saved per share on a microcontroller).
  if (peer.flags & kHaveShares) return Status();
  // A peer whose share was bad, its share again after U2 (a resume): this client masked for U2
  // holding none of it, and keeps it so.
  if (after_u2 && (peer.flags & kBadShare)) return Status();
  if (after_u2) return failed_precondition("secagg: a new peer's share after U2 was announced");
  // From here a bad share is the peer's fault (or the routing server's), not this client's: it is
  // recorded (kBadShare: no share of that peer held) and the session goes on.
  if (share.ciphertext.size != kShareCipherBytes) return bad_share(peer);
  uint8_t key[32], iv[crypto::kGcmIvBytes], aad[40], plain[kSharePlainBytes];
  const crypto::ScopedWipe wipe_key(key, sizeof(key));
  const crypto::ScopedWipe wipe_plain(plain, sizeof(plain));
  // The key made for this client's own share to the peer when there is one (no agreement); a
  // share that fails to open changes nothing held, the kept key included.
  FEDSTAT_RETURN_IF_ERROR(
      held_or_new_share_key(peer, MutableByteSpan(key, sizeof(key)), /*keep=*/false));
  share_iv(share.from_id, id_, iv);
  share_aad(session_hash_, share.from_id, id_, aad);
  const Status opened = crypto::aes256_gcm_open(
      ByteSpan(key, 32), ByteSpan(iv, sizeof(iv)), ByteSpan(aad, sizeof(aad)),
      ByteSpan(share.ciphertext.bytes, kSharePlainBytes),
      ByteSpan(share.ciphertext.bytes + kSharePlainBytes, crypto::kGcmTagBytes),
      MutableByteSpan(plain, sizeof(plain)));
  if (opened.code() == StatusCode::kDataLoss) return bad_share(peer);  // failed authentication
  FEDSTAT_RETURN_IF_ERROR(opened);
  ShamirShare self_share, key_share;
  const crypto::ScopedWipe wipe_self_share(&self_share, sizeof(self_share));
  const crypto::ScopedWipe wipe_key_share(&key_share, sizeof(key_share));
  Status parsed;
  if (load_le32(plain) != share.from_id || load_le32(plain + 4) != id_) {
    parsed = data_loss("secagg: the share's sealed sender or recipient does not match");
  } else if ((parsed = share_from_bytes(id_, ByteSpan(plain + 8, kShareBytes), self_share)).ok()) {
    parsed = share_from_bytes(id_, ByteSpan(plain + 8 + kShareBytes, kShareBytes), key_share);
  }
  if (parsed.code() == StatusCode::kDataLoss) return bad_share(peer);
  FEDSTAT_RETURN_IF_ERROR(parsed);
  memcpy(peer.self_mask_share, self_share.y, sizeof(peer.self_mask_share));  // over the key
  memcpy(peer.key_share, key_share.y, sizeof(peer.key_share));
  peer.flags = static_cast<uint8_t>((peer.flags | kHaveShares) & ~(kHoldsShareKey | kBadShare));
  return Status();
}

Status SecAggClient::bad_share(SecAggPeer& peer) {
  peer.flags = static_cast<uint8_t>(peer.flags | kBadShare);
  return Status();
}

}  // namespace secagg
}  // namespace fedstat
