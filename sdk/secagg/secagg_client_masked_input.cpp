// SecAggClient, round 2 (secagg_client.h): the rosters U2 and U3, the masked input
// y = x + PRG(b_u) ± Σ PRG(s_uv) over U2 (mask.h), and its chunks.
#include "sdk/secagg/secagg_client.h"

#include "sdk/secagg/mask.h"
#include "sdk/secagg/secagg_client_internal.h"

namespace fedstat {
namespace secagg {

Status SecAggClient::read_members(const fedstat_v1_SecAggRoster& roster, uint8_t required,
                                  uint8_t set_flag, size_t& members) {
  const size_t bytes = (count_ + 7) / 8;
  if (roster.session != session_) return invalid_argument("secagg: roster for another session");
  if (roster.members.size != bytes) {
    return invalid_argument("secagg: the roster bitmap does not match the roster size");
  }
  members = 0;
  size_t live = 0;  // members whose valid share this client holds, itself included
  bool self_in = false;
  for (size_t i = 0; i < bytes * 8; ++i) {
    if (!((roster.members.bytes[i / 8] >> (i % 8)) & 1u)) continue;
    if (i >= count_) return invalid_argument("secagg: the roster names clients that do not exist");
    ++members;
    if (i == self_index_) {
      self_in = true;
      ++live;
      continue;
    }
    if (peers_[i].flags & kHaveShares) ++live;
    if (set_flag == kInU2 ? !(peers_[i].flags & (kHaveShares | kBadShare))
                          : (peers_[i].flags & required) != required) {
      return invalid_argument(set_flag == kInU2
                                  ? "secagg: U2 names a peer whose share never arrived (an "
                                    "honest server sends every U2 member's share before U2)"
                                  : "secagg: U3 names a peer outside U2");
    }
  }
  if (members < threshold_) {
    return fail(aborted("secagg: fewer survivors than the threshold; aborting, revealing nothing"));
  }
  if (signing_ != nullptr && live < threshold_) {
    // Signed sessions count only members that sent this client a valid share in this round
    // (itself included): a server cannot make one from an earlier round's keys it replays.
    return fail(aborted(
        "secagg: fewer survivors than the threshold from which this client holds a valid share; "
        "aborting, revealing nothing"));
  }
  if (!self_in) return fail(aborted("secagg: this client was dropped from the round"));
  for (size_t i = 0; i < count_; ++i) {
    if (i != self_index_ && ((roster.members.bytes[i / 8] >> (i % 8)) & 1u)) {
      peers_[i].flags = static_cast<uint8_t>(peers_[i].flags | set_flag);
    }
  }
  return Status();
}

bool SecAggClient::roster_is_held(const fedstat_v1_SecAggRoster& roster, uint8_t flag) const {
  if (roster.session != session_ || roster.members.size != (count_ + 7) / 8) return false;
  for (size_t i = 0; i < roster.members.size * size_t{8}; ++i) {
    const bool named = (roster.members.bytes[i / 8] >> (i % 8)) & 1u;
    const bool held = i < count_ && (i == self_index_ || (peers_[i].flags & flag) != 0);
    if (named != held) return false;
  }
  return true;
}

Status SecAggClient::on_roster(const fedstat_v1_SecAggRoster& roster) {
  size_t members = 0;
  // A roster this client already acted on, sent again (a resume): the same one changes nothing;
  // any other is refused and changes nothing — the masked input and the reveals were fixed by
  // the first (never both kinds of share for one peer).
  const bool masked_for_u2 = stage_ == SecAggStage::kReadyToMask ||
                             stage_ == SecAggStage::kMasked || stage_ == SecAggStage::kUnmasking ||
                             stage_ == SecAggStage::kDone;
  const bool revealing = stage_ == SecAggStage::kConsistency || stage_ == SecAggStage::kUnmasking ||
                         stage_ == SecAggStage::kDone;
  if ((roster.round == 2 && masked_for_u2) || (roster.round == 3 && revealing)) {
    if (roster_is_held(roster, roster.round == 2 ? kInU2 : kInU3)) return Status();
    return failed_precondition(roster.round == 2
                                   ? "secagg: a U2 other than the one this client masked for"
                                   : "secagg: a U3 other than the one this client reveals for");
  }
  if (roster.round == 2) {
    // Every share made, but the channel was lost before next_share could say so: shared.
    const size_t next = cursor_ == self_index_ ? cursor_ + 1 : cursor_;
    if (stage_ == SecAggStage::kSharing && next >= count_) stage_ = SecAggStage::kShared;
    if (stage_ != SecAggStage::kShared) {
      return failed_precondition("secagg: U2 arrives once, after this client sent its shares");
    }
    FEDSTAT_RETURN_IF_ERROR(read_members(roster, kHaveShares, kInU2, members));
    // No share is opened after U2: the keys kept for peers that sent none go now.
    wipe_held_share_keys();
    stage_ = SecAggStage::kReadyToMask;
    return Status();
  }
  if (roster.round == 3) {
    if (stage_ != SecAggStage::kMasked || cursor_ != length_) {
      return failed_precondition("secagg: U3 arrives once, after this client sent its input");
    }
    FEDSTAT_RETURN_IF_ERROR(read_members(roster, kInU2, kInU3, members));
    // Signed: nothing is revealed before `threshold` members vouched for this same U3.
    consistency_count_ = 1;
    stage_ = signing_ != nullptr ? SecAggStage::kConsistency : SecAggStage::kUnmasking;
    cursor_ = 0;
    own_share_revealed_ = false;
    return Status();
  }
  return invalid_argument("secagg: rosters are announced for rounds 2 and 3 only");
}

Status SecAggClient::mask(Span<uint64_t> vector) {
  return mask_words(vector);
}

Status SecAggClient::mask(Span<uint32_t> vector) {
  if (bits_ > 32) return invalid_argument("secagg: 32-bit words hold sums of at most 32 bits");
  return mask_words(vector);
}

template <typename Word>
Status SecAggClient::apply_masks(Span<Word> vector) {
  const ByteSpan session(session_hash_, 32);
  FEDSTAT_RETURN_IF_ERROR(
      apply_mask(session, ByteSpan(self_mask_seed_, 32), MaskKind::kSelf, false, bits_, vector));
  for (size_t i = 0; i < count_; ++i) {
    if (i == self_index_ || !(peers_[i].flags & kInU2)) continue;
    uint8_t shared[32];
    const crypto::ScopedWipe wipe_shared(shared, sizeof(shared));
    FEDSTAT_RETURN_IF_ERROR(crypto::x25519_shared_secret(
        ByteSpan(masking_secret_, 32), ByteSpan(peers_[i].masking_key, 32),
        Span<uint8_t>(shared, 32), fill_from_random_source, random_));
    FEDSTAT_RETURN_IF_ERROR(apply_mask(session, ByteSpan(shared, 32), MaskKind::kPairwise,
                                       /*subtract=*/peers_[i].id > id_, bits_, vector));
  }
  return Status();
}

template <typename Word>
Status SecAggClient::mask_words(Span<Word> vector) {
  if (stage_ != SecAggStage::kReadyToMask) {
    return failed_precondition("secagg: mask the input once, after U2 was announced");
  }
  if (vector.size() != length_) return invalid_argument("secagg: the input has the wrong length");
  // Masked once or never: a failure part way (an entropy failure in an X25519 agreement) would
  // leave the input half masked, and masking it again on a later try would send a second,
  // different masked input. So any failure here wipes the input and ends the session.
  const Status masked = apply_masks(vector);
  if (!masked.ok()) {
    crypto::wipe(vector.data(), vector.size() * sizeof(Word));
    on_abort();
    return masked;
  }
  stage_ = SecAggStage::kMasked;
  cursor_ = 0;
  return Status();
}

Result<bool> SecAggClient::next_chunk(Span<const uint64_t> masked,
                                      fedstat_v1_SecAggMaskedChunk& out) {
  return chunk_words(masked, out);
}

Result<bool> SecAggClient::next_chunk(Span<const uint32_t> masked,
                                      fedstat_v1_SecAggMaskedChunk& out) {
  return chunk_words(masked, out);
}

template <typename Word>
Result<bool> SecAggClient::chunk_words(Span<const Word> masked, fedstat_v1_SecAggMaskedChunk& out) {
  if (stage_ != SecAggStage::kMasked) {
    return failed_precondition("secagg: chunks are sent after masking");
  }
  if (masked.size() != length_) return invalid_argument("secagg: the vector has the wrong length");
  if (cursor_ >= length_) return false;
  out = fedstat_v1_SecAggMaskedChunk_init_zero;
  out.session = session_;
  out.client_id = id_;
  out.offset = static_cast<uint32_t>(cursor_);
  const size_t words = length_ - cursor_ < kChunkWords ? length_ - cursor_ : kChunkWords;
  for (size_t k = 0; k < words; ++k) out.words[k] = masked[cursor_ + k];
  out.words_count = static_cast<pb_size_t>(words);
  cursor_ += words;
  return true;
}

}  // namespace secagg
}  // namespace fedstat
