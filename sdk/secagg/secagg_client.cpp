// SecAggClient (secagg_client.h): the object's lifecycle — init, the abort that wipes a
// session, rewind (a round resumed after what the server holds) — and the roster lookup every
// round uses.
// The rounds are in secagg_client_keys.cpp, _shares.cpp, _masked_input.cpp, _reveals.cpp and
// _consistency.cpp; the peers' flags they share in secagg_client_internal.h.
#include "sdk/secagg/secagg_client.h"

#include <string.h>

#include "sdk/secagg/secagg_client_internal.h"

namespace fedstat {
namespace secagg {

Status SecAggClient::init(uint32_t client_id, Span<SecAggPeer> peers, RandomSource& random) {
  if (client_id == 0 || client_id > 0x80000000u) {
    return invalid_argument("secagg: client ids lie in [1, 2^31]");
  }
  if (peers.size() < 2) return invalid_argument("secagg: room for at least 2 roster entries");
  // Nothing of an earlier session on this object carries over (wipe_session; on_start restarts
  // the roster hash an aborted session may have left half-fed). Not on_abort: the last roster's
  // storage may be the caller's again by now, so only the object is touched.
  wipe_session();
  id_ = client_id;
  peers_ = peers;
  random_ = &random;
  stage_ = SecAggStage::kIdle;
  session_ = 0;
  threshold_ = length_ = bits_ = max_clients_ = degree_ = 0;
  count_ = self_index_ = cursor_ = 0;
  own_share_revealed_ = false;
  return Status();
}

Status SecAggClient::fail(Status status) {
  if (status.code() == StatusCode::kAborted) on_abort();
  return status;
}

void SecAggClient::on_abort() {
  wipe_held_share_keys();  // in this session's roster (peers_ is live until the next init)
  wipe_session();
}

void SecAggClient::wipe_session() {
  stage_ = SecAggStage::kAborted;
  crypto::wipe(encryption_secret_, sizeof(encryption_secret_));
  crypto::wipe(masking_secret_, sizeof(masking_secret_));
  crypto::wipe(self_mask_seed_, sizeof(self_mask_seed_));
  crypto::wipe(session_hash_, sizeof(session_hash_));
  crypto::wipe(encryption_public_, sizeof(encryption_public_));
  crypto::wipe(masking_public_, sizeof(masking_public_));
  crypto::wipe(commitment_, sizeof(commitment_));
  crypto::wipe(graph_commitment_, sizeof(graph_commitment_));
  crypto::wipe(graph_seed_, sizeof(graph_seed_));
  ring_check_.reset();
  ring_size_ = 0;
  self_mask_dealer_ = ShamirDealer();
  key_dealer_ = ShamirDealer();
  crypto::wipe(start_digest_, sizeof(start_digest_));
  crypto::wipe(key_signature_, sizeof(key_signature_));
  signing_ = nullptr;
  consistency_count_ = 0;
  roster_ascending_ = true;
}

Status SecAggClient::random_bytes(MutableByteSpan out) {
  return random_->fill(out);
}

Result<size_t> SecAggClient::index_of(uint32_t id) const {
  for (size_t i = 0; i < count_; ++i) {
    if (peers_[i].id == id) return i;
  }
  return Status(StatusCode::kNotFound, "secagg: that client is not in the roster");
}

Status SecAggClient::rewind(uint32_t round, uint32_t held) {
  switch (round) {
    case 1: {
      if (stage_ != SecAggStage::kSharing && stage_ != SecAggStage::kShared) {
        return failed_precondition("secagg: rewinding the shares outside the sharing round");
      }
      if (held > count_ - 1) return invalid_argument("secagg: more shares held than were made");
      cursor_ = held < self_index_ ? held : size_t{held} + 1;  // the held-th share skips self
      stage_ = SecAggStage::kSharing;
      return Status();
    }
    case 2:
      if (stage_ != SecAggStage::kMasked) {
        return failed_precondition("secagg: rewinding the masked input outside its round");
      }
      if (held > length_ || (held % kChunkWords != 0 && held != length_)) {
        return invalid_argument("secagg: the words held are not a whole number of chunks");
      }
      cursor_ = held;
      return Status();
    case 3: {
      if (stage_ != SecAggStage::kUnmasking && stage_ != SecAggStage::kDone) {
        return failed_precondition("secagg: rewinding the reveals outside the unmasking round");
      }
      // The order of next_reveal: this client's own b-share, then U2's peers by roster index.
      size_t reveals = 1;
      for (size_t i = 0; i < count_; ++i) reveals += i != self_index_ && (peers_[i].flags & kInU2);
      if (held > reveals) return invalid_argument("secagg: more reveals held than were made");
      stage_ = SecAggStage::kUnmasking;
      own_share_revealed_ = held > 0;
      cursor_ = 0;
      for (uint32_t skipped = 1; skipped < held; ++cursor_) {
        skipped += cursor_ != self_index_ && (peers_[cursor_].flags & kInU2);
      }
      return Status();
    }
    default:
      return invalid_argument("secagg: only rounds 1, 2 and 3 are rewound");
  }
}

}  // namespace secagg
}  // namespace fedstat
