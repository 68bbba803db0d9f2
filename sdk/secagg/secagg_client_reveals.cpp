// SecAggClient, round 3 (secagg_client.h): the reveals — for each peer of U2 the share of its
// self-mask seed if it is in U3 or of its masking secret if it dropped, never both.
#include "sdk/secagg/secagg_client.h"

#include "sdk/secagg/secagg_client_internal.h"

namespace fedstat {
namespace secagg {

Result<bool> SecAggClient::next_reveal(fedstat_v1_SecAggReveal& out) {
  if (stage_ == SecAggStage::kDone) return false;
  if (stage_ == SecAggStage::kConsistency) {
    return failed_precondition(
        "secagg: signed session: shares are revealed only after threshold consistency signatures "
        "(on_consistency)");
  }
  if (stage_ != SecAggStage::kUnmasking) {
    return failed_precondition("secagg: shares are revealed only after U3 was announced");
  }
  out = fedstat_v1_SecAggReveal_init_zero;
  out.session = session_;
  out.from_id = id_;
  out.share.size = kShareBytes;
  if (!own_share_revealed_) {
    ShamirShare own;
    FEDSTAT_RETURN_IF_ERROR(self_mask_dealer_.share_for(id_, own));
    out.about_id = id_;
    out.self_mask = true;
    share_to_bytes(own, MutableByteSpan(out.share.bytes, kShareBytes));
    own_share_revealed_ = true;
    return true;
  }
  while (cursor_ < count_ && (cursor_ == self_index_ || !(peers_[cursor_].flags & kInU2))) {
    ++cursor_;
  }
  if (cursor_ >= count_) {
    stage_ = SecAggStage::kDone;
    return false;
  }
  SecAggPeer& peer = peers_[cursor_];
  const bool survived = (peer.flags & kInU3) != 0;
  out.about_id = peer.id;
  out.self_mask = survived;
  if (!(peer.flags & kHaveShares)) {
    // The peer's share was bad (kBadShare): nothing held, nothing revealed. An empty share says
    // so, and keeps one reveal per U2 peer (the server's count, rewind's order).
    out.share.size = 0;
    ++cursor_;
    return true;
  }
  if (survived && degree_ != 0 && signing_ != nullptr && !peer.u2_names_me) {
    // Rule D8 (signed sparse sessions): the share of b_v goes out only when v's verified U2 view
    // named this client (on_consistency, round 2). Without it a server showing v's neighbours
    // two worlds could gather t shares of b_v from members v never masked with, and the masking
    // key shares from the others (docs/secagg_many_worlds.md). An empty share: nothing revealed.
    out.share.size = 0;
    ++cursor_;
    return true;
  }
  if (peer.flags & (survived ? kRevealedKey : kRevealedSelf)) {
    return permission_denied("secagg: refusing to reveal both shares of one peer");
  }
  ShamirShare share;
  share.x = id_;
  memcpy(share.y, survived ? peer.self_mask_share : peer.key_share, sizeof(share.y));
  share_to_bytes(share, MutableByteSpan(out.share.bytes, kShareBytes));
  peer.flags = static_cast<uint8_t>(peer.flags | (survived ? kRevealedSelf : kRevealedKey));
  ++cursor_;
  return true;
}

}  // namespace secagg
}  // namespace fedstat
