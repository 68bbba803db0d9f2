// SecAggClient, signed sessions (secagg_client.h): the consistency round — this client's
// signature over its view of U3, and the peers' signatures checked against it before any
// reveal.
#include "sdk/secagg/secagg_client.h"

#include <string.h>

#include "sdk/secagg/secagg_client_internal.h"
#include "sdk/secagg/session_hash.h"
#include "sdk/secagg/signed_keys.h"

namespace fedstat {
namespace secagg {
namespace {

// Whether a signed view lists strictly ascending client ids (none zero), as a signer writes it.
bool strictly_ascending_ids(const fedstat_v1_SecAggConsistency& message) {
  for (pb_size_t m = 0; m < message.members_count; ++m) {
    if (message.members[m] == 0 || (m > 0 && message.members[m] <= message.members[m - 1])) {
      return false;
    }
  }
  return true;
}

// Verifies `message`'s signature (64 bytes, checked by the caller) over `digest` with a peer's
// signing key (its SEC1 point without the 0x04 prefix). A signature that does not verify is
// kPermissionDenied with `refusal`; a failure inside mbedTLS passes through.
Status verify_peer_signature(const uint8_t (&signing_key)[64], const uint8_t (&digest)[32],
                             const fedstat_v1_SecAggConsistency& message, const char* refusal) {
  uint8_t key[credential::kPublicKeyBytes];
  key[0] = 0x04;  // SEC1 uncompressed
  memcpy(key + 1, signing_key, sizeof(signing_key));
  const Status verified =
      credential::verify_digest(ByteSpan(key, sizeof(key)), ByteSpan(digest, sizeof(digest)),
                                ByteSpan(message.signature.bytes, credential::kSignatureBytes));
  if (verified.code() == StatusCode::kPermissionDenied ||
      verified.code() == StatusCode::kInvalidArgument) {
    return permission_denied(refusal);
  }
  return verified;
}

}  // namespace

template <typename Visit>
Status SecAggClient::for_each_ascending(uint8_t flag, Visit&& visit) const {
  auto in_u3 = [&](size_t i) { return i == self_index_ || (peers_[i].flags & flag) != 0; };
  if (roster_ascending_) {  // what an honest server sends for the complete graph: one pass
    for (size_t i = 0; i < count_; ++i) {
      if (in_u3(i)) FEDSTAT_RETURN_IF_ERROR(visit(peers_[i].id));
    }
    return Status();
  }
  // Any other order (a sparse roster is in ring order): the next larger id each time, O(r²) for
  // r entries, no memory (r ≤ 127 when sparse and signed).
  uint32_t last = 0;
  while (true) {
    size_t next = count_;
    for (size_t i = 0; i < count_; ++i) {
      if (in_u3(i) && peers_[i].id > last && (next == count_ || peers_[i].id < peers_[next].id)) {
        next = i;
      }
    }
    if (next == count_) return Status();
    FEDSTAT_RETURN_IF_ERROR(visit(peers_[next].id));
    last = peers_[next].id;
  }
}

uint32_t SecAggClient::u3_in_roster() const {
  uint32_t members = 0;
  for (size_t i = 0; i < count_; ++i) {
    members += (i == self_index_ || (peers_[i].flags & kInU3) != 0) ? 1 : 0;
  }
  return members;
}

Status SecAggClient::own_view_digest(uint32_t signer, MutableByteSpan out) const {
  FEDSTAT_ASSIGN_OR_RETURN(const size_t index, index_of(signer));
  const SecAggPeer& keys = peers_[index];  // this client's own entry holds its keys too
  ConsistencyDigest digest;
  FEDSTAT_RETURN_IF_ERROR(digest.begin(ByteSpan(session_hash_, 32), signer,
                                       ByteSpan(keys.encryption_key, 32),
                                       ByteSpan(keys.masking_key, 32), u3_in_roster()));
  FEDSTAT_RETURN_IF_ERROR(for_each_ascending(kInU3, [&](uint32_t id) { return digest.add(id); }));
  return digest.finish(out);
}

Status SecAggClient::consistency_message(fedstat_v1_SecAggConsistency& out) {
  if (signing_ == nullptr) {
    return failed_precondition("secagg: consistency messages belong to signed sessions");
  }
  if (stage_ != SecAggStage::kConsistency && stage_ != SecAggStage::kUnmasking &&
      stage_ != SecAggStage::kDone) {
    return failed_precondition("secagg: the consistency message follows U3");
  }
  out = fedstat_v1_SecAggConsistency_init_zero;
  out.session = session_;
  out.signer_id = id_;
  uint8_t digest[kSignedDigestBytes];
  if (degree_ == 0) {
    // Complete graph: every member's U3 is the same set; peers check against their own.
    FEDSTAT_RETURN_IF_ERROR(own_view_digest(id_, MutableByteSpan(digest, sizeof(digest))));
  } else {
    // Sparse: a neighbour cannot rebuild this view (its roster differs), so it is listed.
    constexpr size_t kRoom = sizeof(out.members) / sizeof(out.members[0]);
    pb_size_t listed = 0;
    FEDSTAT_RETURN_IF_ERROR(for_each_ascending(kInU3, [&](uint32_t id) {
      if (listed >= kRoom)
        return internal_error("secagg: a U3 view larger than a consistency message");
      out.members[listed++] = id;
      return Status();
    }));
    out.members_count = listed;
    FEDSTAT_RETURN_IF_ERROR(
        consistency_digest(ByteSpan(session_hash_, 32), id_, ByteSpan(encryption_public_, 32),
                           ByteSpan(masking_public_, 32), Span<const uint32_t>(out.members, listed),
                           MutableByteSpan(digest, sizeof(digest))));
  }
  FEDSTAT_RETURN_IF_ERROR(
      credential::sign_digest(ByteSpan(signing_->private_key, credential::kPrivateKeyBytes),
                              ByteSpan(digest, sizeof(digest)),
                              MutableByteSpan(out.signature.bytes, credential::kSignatureBytes)));
  out.signature.size = credential::kSignatureBytes;
  return Status();
}

Status SecAggClient::masked_view_message(fedstat_v1_SecAggConsistency& out) {
  if (signing_ == nullptr || degree_ == 0) {
    return failed_precondition("secagg: U2 views belong to signed sparse sessions (rule D8)");
  }
  if (stage_ != SecAggStage::kMasked && stage_ != SecAggStage::kConsistency &&
      stage_ != SecAggStage::kUnmasking && stage_ != SecAggStage::kDone) {
    return failed_precondition("secagg: the U2 view is signed once the input is masked");
  }
  out = fedstat_v1_SecAggConsistency_init_zero;
  out.session = session_;
  out.signer_id = id_;
  out.round = 2;
  constexpr size_t kRoom = sizeof(out.members) / sizeof(out.members[0]);
  pb_size_t listed = 0;
  FEDSTAT_RETURN_IF_ERROR(for_each_ascending(kInU2, [&](uint32_t id) {
    if (listed >= kRoom) return internal_error("secagg: a U2 view larger than a message");
    out.members[listed++] = id;
    return Status();
  }));
  out.members_count = listed;
  uint8_t digest[kSignedDigestBytes];
  FEDSTAT_RETURN_IF_ERROR(
      consistency_digest(ByteSpan(session_hash_, 32), id_, ByteSpan(encryption_public_, 32),
                         ByteSpan(masking_public_, 32), Span<const uint32_t>(out.members, listed),
                         MutableByteSpan(digest, sizeof(digest)), ViewRound::kU2));
  FEDSTAT_RETURN_IF_ERROR(
      credential::sign_digest(ByteSpan(signing_->private_key, credential::kPrivateKeyBytes),
                              ByteSpan(digest, sizeof(digest)),
                              MutableByteSpan(out.signature.bytes, credential::kSignatureBytes)));
  out.signature.size = credential::kSignatureBytes;
  return Status();
}

Status SecAggClient::on_masked_view(const fedstat_v1_SecAggConsistency& message) {
  if (degree_ == 0) {
    return invalid_argument(
        "secagg: U2 views belong to sparse graphs (a complete graph's consistency signatures "
        "cover the exact view)");
  }
  if (message.signer_id == id_) {
    return invalid_argument("secagg: a U2 view signed by this client itself");
  }
  FEDSTAT_ASSIGN_OR_RETURN(const size_t index, index_of(message.signer_id));
  SecAggPeer& peer = peers_[index];
  if (!(peer.flags & kInU3)) {
    return invalid_argument("secagg: a U2 view from a signer outside this U3");
  }
  if (peer.u2_names_me) return Status();  // verified already (a resume)
  if (stage_ != SecAggStage::kConsistency) {
    // The reveals began (or ended): what they give must not change (rewind gives the same bytes).
    return permission_denied(
        "secagg: a U2 view after the reveals began; its signer's self-mask share stays withheld");
  }
  if (message.signature.size != credential::kSignatureBytes) {
    return invalid_argument("secagg: a U2 view's signature is 64 bytes");
  }
  if (!strictly_ascending_ids(message)) {
    return invalid_argument("secagg: a U2 view's members are not strictly ascending client ids");
  }
  bool named = false;
  for (pb_size_t m = 0; m < message.members_count; ++m) named = named || message.members[m] == id_;
  uint8_t digest[kSignedDigestBytes];
  FEDSTAT_RETURN_IF_ERROR(consistency_digest(
      ByteSpan(session_hash_, 32), message.signer_id, ByteSpan(peer.encryption_key, 32),
      ByteSpan(peer.masking_key, 32), Span<const uint32_t>(message.members, message.members_count),
      MutableByteSpan(digest, sizeof(digest)), ViewRound::kU2));
  FEDSTAT_RETURN_IF_ERROR(verify_peer_signature(
      peer.signing_key, digest, message,
      "secagg: a U2 view's signature does not verify (another view, session, round keys or "
      "signer); its signer's self-mask share stays withheld"));
  if (!named) {
    // D8: the signer did not mask with this client, so this client's share of its self-mask
    // seed is not needed for its input — and giving it could complete a split view's unmasking.
    return permission_denied(
        "secagg: a U2 view that does not name this client; its signer's self-mask share stays "
        "withheld");
  }
  peer.u2_names_me = 1;
  return Status();
}

bool SecAggClient::views_agree(const fedstat_v1_SecAggConsistency& message,
                               size_t signer_index) const {
  const bool whole = count_ == ring_size_;  // the roster is all of U1: every entry is common
  auto named = [&](uint32_t id) {
    size_t lo = 0, hi = message.members_count;  // strictly ascending (checked by the caller)
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (message.members[mid] == id) return true;
      if (message.members[mid] < id) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return false;
  };
  for (size_t i = 0; i < count_; ++i) {
    // The roster is one run of the ring: entries i and j are |i − j| positions apart one way
    // round, |U1| − |i − j| the other.
    size_t distance = i > signer_index ? i - signer_index : signer_index - i;
    if (ring_size_ - distance < distance) distance = ring_size_ - distance;
    const bool common = whole || distance <= degree_ / 2;  // in the signer's roster and mine
    const bool mine = i == self_index_ || (peers_[i].flags & kInU3) != 0;
    const bool theirs = named(peers_[i].id);
    if (common ? mine != theirs : theirs) return false;
  }
  if (whole) {  // no member of U1 outside this roster
    for (pb_size_t m = 0; m < message.members_count; ++m) {
      if (!index_of(message.members[m]).ok()) return false;
    }
  }
  return true;
}

Status SecAggClient::on_consistency(const fedstat_v1_SecAggConsistency& message) {
  if (signing_ == nullptr) {
    return failed_precondition("secagg: consistency messages belong to signed sessions");
  }
  if (stage_ != SecAggStage::kConsistency && stage_ != SecAggStage::kUnmasking &&
      stage_ != SecAggStage::kDone) {
    return failed_precondition("secagg: consistency messages arrive after U3");
  }
  if (message.session != session_) {
    return invalid_argument("secagg: consistency message for another session");
  }
  if (message.round == 2) return on_masked_view(message);  // D8: a neighbour's U2 view
  if (message.round != 0) {
    return invalid_argument("secagg: a consistency message of a round other than 2 (U2) or U3");
  }
  if (message.signer_id == id_) {
    return invalid_argument("secagg: a consistency message signed by this client itself");
  }
  FEDSTAT_ASSIGN_OR_RETURN(const size_t index, index_of(message.signer_id));
  SecAggPeer& peer = peers_[index];
  if (!(peer.flags & kInU3)) {
    return invalid_argument("secagg: a consistency message from a signer outside this U3");
  }
  if (peer.flags & kConsistencyCounted) return Status();  // counted already (a resume)
  if (!(peer.flags & kHaveShares)) {
    // Only a peer that sent this client a valid share is shown to hold its round key now: a
    // server reusing a session id could otherwise stand in an earlier round's keys and
    // signatures for an absent device.
    return permission_denied(
        "secagg: a consistency signer from which this client holds no valid share; not counted");
  }
  if (message.signature.size != credential::kSignatureBytes) {
    return invalid_argument("secagg: a consistency signature is 64 bytes");
  }
  uint8_t digest[kSignedDigestBytes];
  if (degree_ == 0) {
    if (message.members_count != 0) {
      return invalid_argument("secagg: a complete graph's consistency message lists no members");
    }
    // Signed over the signer's view: it verifies only if that view is this client's.
    FEDSTAT_RETURN_IF_ERROR(
        own_view_digest(message.signer_id, MutableByteSpan(digest, sizeof(digest))));
  } else {
    if (!strictly_ascending_ids(message)) {
      return invalid_argument(
          "secagg: a consistency message's members are not strictly ascending client ids");
    }
    FEDSTAT_RETURN_IF_ERROR(
        consistency_digest(ByteSpan(session_hash_, 32), message.signer_id,
                           ByteSpan(peer.encryption_key, 32), ByteSpan(peer.masking_key, 32),
                           Span<const uint32_t>(message.members, message.members_count),
                           MutableByteSpan(digest, sizeof(digest))));
  }
  FEDSTAT_RETURN_IF_ERROR(verify_peer_signature(
      peer.signing_key, digest, message,
      "secagg: a consistency signature does not verify (another U3, session or signer); not "
      "counted"));
  if (degree_ != 0 && !views_agree(message, index)) {
    // The signer saw another U3 around the members both hold shares of: the server split the
    // views. Revealing now could give it both kinds of share about one of them.
    return fail(
        aborted("secagg: a neighbour signed a U3 that disagrees with this client's (a split view); "
                "aborting, revealing nothing"));
  }
  peer.flags = static_cast<uint8_t>(peer.flags | kConsistencyCounted);
  ++consistency_count_;
  // Complete graph: t members of U3, itself included (Bonawitz et al. §4; 2t > n + c keeps two
  // views from both reaching it). Sparse graph: t neighbours besides itself — the bound's
  // condition (3) promises t surviving neighbours, and counting itself let a server that splits
  // the views unmask a device with one corrupt neighbour fewer (2t − k − 2 instead of 2t − k − 1;
  // honest devices only at k = 6, t = 4: tests/adversary A_ManyWorldsSparse…,
  // scripts/secagg_many_worlds.py).
  const uint32_t needed = degree_ == 0 ? threshold_ : threshold_ + 1;
  if (stage_ == SecAggStage::kConsistency && consistency_count_ >= needed) {
    stage_ = SecAggStage::kUnmasking;
    cursor_ = 0;
    own_share_revealed_ = false;
  }
  return Status();
}

}  // namespace secagg
}  // namespace fedstat
