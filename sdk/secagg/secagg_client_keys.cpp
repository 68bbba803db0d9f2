// SecAggClient, round 0 (secagg_client.h): a public key's checks, the self-mask commitment,
// SecAggStart's checks, this client's keys (signed in signed sessions) and every roster
// entry's keys, up to the session hash.
#include "sdk/secagg/secagg_client.h"

#include <string.h>

#include "sdk/base/bytes.h"
#include "sdk/secagg/graph.h"
#include "sdk/secagg/secagg_client_internal.h"
#include "sdk/secagg/session_hash.h"
#include "sdk/secagg/signed_keys.h"

namespace fedstat {
namespace secagg {

namespace {

constexpr char kCommitmentTag[] = "fedstat secagg self-mask commitment v1";

// The canonical encodings of the points of small order on Curve25519 and its twist (RFC 7748
// u-coordinates; the list libsodium refuses, less the non-canonical p and p + 1, which the
// canonical check refuses already): 0 (order 2), 1 (order 4), two of order 8, p − 1 (order 4
// on the twist). X25519 of any of them with a clamped scalar is 0 (a unit test checks each
// against mbedTLS).
constexpr uint8_t kLowOrderKeys[5][32] = {
    {0},
    {1},
    {0xe0, 0xeb, 0x7a, 0x7c, 0x3b, 0x41, 0xb8, 0xae, 0x16, 0x56, 0xe3,
     0xfa, 0xf1, 0x9f, 0xc4, 0x6a, 0xda, 0x09, 0x8d, 0xeb, 0x9c, 0x32,
     0xb1, 0xfd, 0x86, 0x62, 0x05, 0x16, 0x5f, 0x49, 0xb8, 0x00},
    {0x5f, 0x9c, 0x95, 0xbc, 0xa3, 0x50, 0x8c, 0x24, 0xb1, 0xd0, 0xb1,
     0x55, 0x9c, 0x83, 0xef, 0x5b, 0x04, 0x44, 0x5c, 0xc4, 0x58, 0x1c,
     0x8e, 0x86, 0xd8, 0x22, 0x4e, 0xdd, 0xd0, 0x9f, 0x11, 0x57},
    {0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
};

}  // namespace

Status check_public_key(ByteSpan key) {
  if (key.size() != crypto::kX25519KeyBytes) {
    return invalid_argument("secagg: a public key is 32 bytes");
  }
  // Canonical: bit 255 clear and the little-endian value below p = 2^255 − 19 (ed ff … ff 7f).
  bool canonical = key[31] < 0x7f;
  for (size_t i = 1; !canonical && i < 31; ++i) canonical = key[i] != 0xff;
  if (!canonical && key[31] == 0x7f) canonical = key[0] < 0xed;
  if (key[31] > 0x7f || !canonical) {
    return invalid_argument("secagg: a public key is not canonically encoded (>= 2^255 - 19)");
  }
  for (const auto& low : kLowOrderKeys) {
    if (memcmp(low, key.data(), 32) == 0) {
      return invalid_argument("secagg: a public key is a low-order point");
    }
  }
  return Status();
}

Status self_mask_commitment(uint64_t session, uint32_t client_id, ByteSpan seed,
                            MutableByteSpan out) {
  if (seed.size() != 32 || out.size() != kCommitmentBytes) {
    return invalid_argument("secagg: a self-mask seed and its commitment are 32 bytes each");
  }
  constexpr size_t kTag = sizeof(kCommitmentTag) - 1;
  uint8_t input[kTag + 8 + 4 + 32];
  const crypto::ScopedWipe wipe_input(input, sizeof(input));  // it holds the seed
  memcpy(input, kCommitmentTag, kTag);
  store_le64(input + kTag, session);
  store_le32(input + kTag + 8, client_id);
  memcpy(input + kTag + 12, seed.data(), 32);
  return crypto::sha256(ByteSpan(input, sizeof(input)), out);
}

void SecAggClient::advertised_keys(fedstat_v1_SecAggKeys& out) const {
  out = fedstat_v1_SecAggKeys_init_zero;
  out.session = session_;
  out.client_id = id_;
  out.encryption_key.size = 32;
  out.masking_key.size = 32;
  out.commitment.size = kCommitmentBytes;
  memcpy(out.encryption_key.bytes, encryption_public_, 32);
  memcpy(out.masking_key.bytes, masking_public_, 32);
  memcpy(out.commitment.bytes, commitment_, kCommitmentBytes);
  if (signing_ != nullptr) {
    certificate_to_message(signing_->certificate, out.certificate);
    out.has_certificate = true;
    out.key_signature.size = sizeof(key_signature_);
    memcpy(out.key_signature.bytes, key_signature_, sizeof(key_signature_));
  }
}

Status SecAggClient::check_start(const fedstat_v1_SecAggStart& start) const {
  if (start.vector_length == 0 || start.bits == 0 || start.bits > 64) {
    return invalid_argument("secagg: the vector needs a length >= 1 and 1..64 bits");
  }
  if (start.threshold < 2 || start.threshold > start.max_clients) {
    return invalid_argument("secagg: the threshold must lie in [2, max_clients]");
  }
  if (start.degree == 0) {
    // Two disjoint groups of t clients must not fit in one session: with 2·t ≤ max_clients a
    // server could show each group its own U3 and collect both kinds of share about one client.
    // Checked here, by the device, not only by the server it protects against.
    if (uint64_t{2} * start.threshold <= start.max_clients) {
      return invalid_argument(
          "secagg: SecAggStart.threshold must exceed half of max_clients (2 * threshold > "
          "max_clients)");
    }
    if (start.max_clients > kMaxRosterClients) {
      return invalid_argument(
          "secagg: a complete-graph session allows at most 1024 clients (a roster bitmap's); "
          "larger rounds use the sparse graph (SecAggStart.degree)");
    }
  } else {
    if (start.degree % 2 != 0 || start.degree > kMaxGraphDegree) {
      return invalid_argument("secagg: a sparse graph's degree is even, in [2, 1022]");
    }
    if (start.max_clients > kMaxSparseClients) {
      return invalid_argument("secagg: a sparse session allows at most 10^7 clients");
    }
    if (start.graph_commitment.size != kGraphSeedBytes) {
      return invalid_argument("secagg: a sparse session needs a 32-byte graph commitment");
    }
    // The same rule among the k + 1 holders of each secret: two disjoint groups of t of them
    // must not exist. Whether (k, t) also meets SecAgg+'s bound for max_clients is the Client's
    // check of the task (sdk/client/contribution.h), under the device's own threat model.
    if (uint64_t{2} * start.threshold <= uint64_t{start.degree} + 1 ||
        start.threshold > start.degree + 1) {
      return invalid_argument(
          "secagg: a sparse session's threshold must exceed half of degree + 1 and be at most "
          "degree + 1");
    }
  }
  if (neighbourhood_size(start.max_clients, start.degree) > peers_.size()) {
    return resource_exhausted(
        "secagg: the session's roster (max_clients, or degree + 1 when sparse) exceeds this "
        "client's storage");
  }
  return Status();
}

Status SecAggClient::on_start(const fedstat_v1_SecAggStart& start, fedstat_v1_SecAggKeys& out) {
  if (stage_ == SecAggStage::kAdvertised && start.session == session_ &&
      start.threshold == threshold_ && start.vector_length == length_ && start.bits == bits_ &&
      start.max_clients == max_clients_ && start.degree == degree_ &&
      (degree_ == 0 ||
       (start.graph_commitment.size == kGraphSeedBytes &&
        memcmp(start.graph_commitment.bytes, graph_commitment_, kGraphSeedBytes) == 0))) {
    uint8_t digest[kSignedDigestBytes];
    FEDSTAT_RETURN_IF_ERROR(start_parameters_digest(start, MutableByteSpan(digest, 32)));
    if (start.signed_keys == (signing_ != nullptr) &&
        (signing_ == nullptr || memcmp(digest, start_digest_, 32) == 0)) {
      advertised_keys(out);  // the same session again (a resume): the same keys, nothing drawn
      return Status();
    }
  }
  if (stage_ != SecAggStage::kIdle) {
    return failed_precondition("secagg: a session start arrived after the session began");
  }
  // Signed sessions (protocol 5): a device with a credential takes part in nothing else — an
  // unsigned session would let the server field keys of its own under any id.
  if (credential_ != nullptr && !start.signed_keys) {
    return permission_denied(
        "secagg: this device holds a credential and joins signed sessions only "
        "(SecAggStart.signed_keys)");
  }
  if (credential_ == nullptr && start.signed_keys) {
    return failed_precondition(
        "secagg: a signed session and no device credential (set_credential)");
  }
  FEDSTAT_RETURN_IF_ERROR(check_start(start));
  if (start.signed_keys) {
    if (start.degree > kMaxSignedSparseDegree) {
      return invalid_argument(
          "secagg: a signed sparse session's degree is at most 126 (a consistency view names "
          "at most 127 ids)");
    }
    if (credential_->certificate.client_id != id_) {
      return invalid_argument("secagg: the device credential is for another client id");
    }
    const uint32_t ppm =
        start.corrupt_ppm > assumed_corrupt_ppm_ ? start.corrupt_ppm : assumed_corrupt_ppm_;
    if (start.degree != 0 &&
        !signed_sparse_threshold_holds(start.threshold, start.degree, start.max_clients, ppm)) {
      // The server picks who neighbours whom (U1 after the seed): every colluder of the round may
      // be the victim's neighbour, and 2t − k of them split a sparse round (signed_keys.h).
      return invalid_argument(
          "secagg: a signed sparse session needs 2 * threshold > degree + ceil(corrupt fraction * "
          "max_clients) (the server can place every colluder next to one device)");
    }
    if (start.degree == 0) {
      // Against a lying server the consistency round holds only if two views cannot each gather
      // t signatures (signed_keys.h), at the larger of the declared corrupt fraction and this
      // device's floor.
      if (!signed_complete_threshold_holds(start.threshold, start.max_clients, ppm)) {
        return invalid_argument(
            "secagg: a signed complete-graph session needs 2 * threshold > max_clients + "
            "ceil(corrupt fraction * max_clients) (colluders sign both of two U3 views)");
      }
    }
    FEDSTAT_RETURN_IF_ERROR(start_parameters_digest(start, MutableByteSpan(start_digest_, 32)));
  }
  uint8_t seeds[64];
  const crypto::ScopedWipe wipe_seeds(seeds, sizeof(seeds));
  FEDSTAT_RETURN_IF_ERROR(random_bytes(MutableByteSpan(encryption_secret_, 32)));
  FEDSTAT_RETURN_IF_ERROR(random_bytes(MutableByteSpan(masking_secret_, 32)));
  FEDSTAT_RETURN_IF_ERROR(random_bytes(MutableByteSpan(self_mask_seed_, 32)));
  FEDSTAT_RETURN_IF_ERROR(random_bytes(MutableByteSpan(seeds, sizeof(seeds))));
  crypto::x25519_clamp(Span<uint8_t>(encryption_secret_, 32));
  crypto::x25519_clamp(Span<uint8_t>(masking_secret_, 32));
  FEDSTAT_RETURN_IF_ERROR(
      self_mask_dealer_.init(ByteSpan(self_mask_seed_, 32), start.threshold, ByteSpan(seeds, 32)));
  FEDSTAT_RETURN_IF_ERROR(
      key_dealer_.init(ByteSpan(masking_secret_, 32), start.threshold, ByteSpan(seeds + 32, 32)));

  out = fedstat_v1_SecAggKeys_init_zero;
  out.session = start.session;
  out.client_id = id_;
  out.encryption_key.size = 32;
  out.masking_key.size = 32;
  FEDSTAT_RETURN_IF_ERROR(crypto::x25519_public_key(ByteSpan(encryption_secret_, 32),
                                                    Span<uint8_t>(out.encryption_key.bytes, 32),
                                                    fill_from_random_source, random_));
  FEDSTAT_RETURN_IF_ERROR(crypto::x25519_public_key(ByteSpan(masking_secret_, 32),
                                                    Span<uint8_t>(out.masking_key.bytes, 32),
                                                    fill_from_random_source, random_));
  memcpy(encryption_public_, out.encryption_key.bytes, 32);
  memcpy(masking_public_, out.masking_key.bytes, 32);
  FEDSTAT_RETURN_IF_ERROR(self_mask_commitment(start.session, id_, ByteSpan(self_mask_seed_, 32),
                                               MutableByteSpan(commitment_, kCommitmentBytes)));
  if (start.signed_keys) {
    out.commitment.size = kCommitmentBytes;
    memcpy(out.commitment.bytes, commitment_, kCommitmentBytes);
    FEDSTAT_RETURN_IF_ERROR(sign_keys(*credential_, ByteSpan(start_digest_, 32), out));
    memcpy(key_signature_, out.key_signature.bytes, sizeof(key_signature_));
  }
  signing_ = start.signed_keys ? credential_ : nullptr;
  consistency_count_ = 0;
  roster_ascending_ = true;
  session_ = start.session;
  threshold_ = start.threshold;
  max_clients_ = start.max_clients;
  degree_ = start.degree;
  if (degree_ != 0) memcpy(graph_commitment_, start.graph_commitment.bytes, kGraphSeedBytes);
  ring_check_.reset();
  length_ = start.vector_length;
  bits_ = start.bits;
  count_ = 0;
  uint8_t header[kSessionHeaderBytes];
  encode_session_header(session_, threshold_, length_, bits_, header);
  FEDSTAT_RETURN_IF_ERROR(roster_hash_.reset());  // the session hash covers this session only
  FEDSTAT_RETURN_IF_ERROR(roster_hash_.update(ByteSpan(header, sizeof(header))));
  advertised_keys(out);  // the public keys above and the commitment
  stage_ = SecAggStage::kAdvertised;
  return Status();
}

Status SecAggClient::check_held_entry(const fedstat_v1_SecAggPeerKeys& entry) const {
  const fedstat_v1_SecAggKeys& keys = entry.keys;
  const SecAggPeer& held = peers_[entry.index];
  const size_t size = stage_ == SecAggStage::kAdvertised ? cursor_ : count_;
  if (entry.count != size || keys.client_id != held.id || keys.encryption_key.size != 32 ||
      keys.masking_key.size != 32 || memcmp(keys.encryption_key.bytes, held.encryption_key, 32) ||
      memcmp(keys.masking_key.bytes, held.masking_key, 32)) {
    return failed_precondition("secagg: a re-sent roster entry differs from the one held");
  }
  if (signing_ != nullptr &&
      (!keys.has_certificate || keys.certificate.public_key.size != credential::kPublicKeyBytes ||
       memcmp(keys.certificate.public_key.bytes + 1, held.signing_key, 64) != 0)) {
    return failed_precondition("secagg: a re-sent roster entry carries another certificate");
  }
  if (degree_ != 0 && entry.index == 0 &&
      (entry.graph_seed.size != kGraphSeedBytes || entry.ring_size != ring_size_ ||
       memcmp(entry.graph_seed.bytes, graph_seed_, kGraphSeedBytes) != 0)) {
    return failed_precondition("secagg: a re-sent roster entry carries another ring seed");
  }
  return Status();
}

Result<uint64_t> SecAggClient::sparse_entry_position(const fedstat_v1_SecAggPeerKeys& entry) const {
  // The seed arrives with the first entry and must be the one SecAggStart committed to: the
  // server fixed the ring before it saw any key.
  const ByteSpan seed = entry.index == 0 ? ByteSpan(entry.graph_seed.bytes, entry.graph_seed.size)
                                         : ByteSpan(graph_seed_, kGraphSeedBytes);
  if (entry.index == 0) {
    if (entry.graph_seed.size != kGraphSeedBytes) {
      return invalid_argument("secagg: a sparse roster's first entry carries the 32-byte seed");
    }
    // |U1|: at most the n the bound was checked for, and the roster a full neighbourhood of it
    // (no short roster of hand-picked members).
    if (entry.ring_size < entry.count || entry.ring_size > max_clients_ ||
        entry.count != neighbourhood_size(entry.ring_size, degree_)) {
      return invalid_argument(
          "secagg: the ring size (|U1|) must be at most max_clients and the roster hold "
          "min(degree + 1, |U1|) entries");
    }
    uint8_t opened[kGraphSeedBytes];
    FEDSTAT_RETURN_IF_ERROR(graph_commitment(session_, seed, MutableByteSpan(opened, 32)));
    if (memcmp(opened, graph_commitment_, kGraphSeedBytes) != 0) {
      return permission_denied(
          "secagg: the ring seed does not open SecAggStart's graph commitment (the server "
          "changed the graph after the start)");
    }
  }
  FEDSTAT_ASSIGN_OR_RETURN(const uint64_t position,
                           ring_position(session_, seed, entry.keys.client_id));
  // Out of ring order already (a second step down): refused before anything is held.
  RingOrderCheck tentative = ring_check_;
  tentative.add(position, entry.keys.client_id);
  if (tentative.descents() > 1) {
    return invalid_argument(
        "secagg: roster entries out of ring order (not the neighbourhood the committed seed "
        "gives)");
  }
  return position;
}

Status SecAggClient::on_peer_keys(const fedstat_v1_SecAggPeerKeys& entry) {
  const bool roster_known = stage_ == SecAggStage::kSharing || stage_ == SecAggStage::kShared;
  if (stage_ != SecAggStage::kAdvertised && !roster_known) {
    return failed_precondition("secagg: roster keys arrived outside the key round");
  }
  const fedstat_v1_SecAggKeys& keys = entry.keys;
  if (!entry.has_keys || keys.session != session_) {
    return invalid_argument("secagg: roster entry for another session");
  }
  // An entry already held, sent again (a resume): it must be the same, and changes nothing.
  if (entry.index < count_) return check_held_entry(entry);
  if (roster_known) return invalid_argument("secagg: the roster is complete");
  if (entry.index != count_) {
    return invalid_argument("secagg: roster entries must arrive in index order, each once");
  }
  if (entry.count < threshold_) {
    return fail(aborted("secagg: fewer advertised clients than the threshold; aborting"));
  }
  if (entry.count > neighbourhood_size(max_clients_, degree_)) {
    return invalid_argument(
        degree_ == 0 ? "secagg: the roster is larger than the session's max_clients"
                     : "secagg: the roster is larger than a neighbourhood (degree + 1 entries)");
  }
  if (entry.count > peers_.size()) {
    return resource_exhausted("secagg: the roster is larger than this client's storage");
  }
  if (count_ > 0 && entry.count != cursor_) {  // cursor_ holds the first entry's count
    return invalid_argument("secagg: roster entries disagree about the roster size");
  }
  if (keys.client_id == 0 || keys.client_id > 0x80000000u || keys.encryption_key.size != 32 ||
      keys.masking_key.size != 32 || keys.commitment.size != kCommitmentBytes) {
    return invalid_argument("secagg: malformed roster entry (id, key or commitment sizes)");
  }
  uint64_t position = 0;
  if (degree_ != 0) {
    FEDSTAT_ASSIGN_OR_RETURN(position, sparse_entry_position(entry));
  }
  // A key an honest server refuses (host_server/secagg/secagg_server.cpp): this client refuses the
  // roster rather than agree on a secret the server may know (see the header: why not a dropout).
  FEDSTAT_RETURN_IF_ERROR(check_public_key(ByteSpan(keys.encryption_key.bytes, 32)));
  FEDSTAT_RETURN_IF_ERROR(check_public_key(ByteSpan(keys.masking_key.bytes, 32)));
  for (size_t i = 0; i < count_; ++i) {
    if (peers_[i].id == keys.client_id) {
      return already_exists("secagg: a client id appears twice in the roster");
    }
    if (memcmp(peers_[i].encryption_key, keys.encryption_key.bytes, 32) == 0 ||
        memcmp(peers_[i].masking_key, keys.masking_key.bytes, 32) == 0) {
      return already_exists("secagg: two roster entries carry the same public key");
    }
  }
  if (keys.client_id == id_) {
    if (memcmp(encryption_public_, keys.encryption_key.bytes, 32) != 0 ||
        memcmp(masking_public_, keys.masking_key.bytes, 32) != 0 ||
        memcmp(commitment_, keys.commitment.bytes, kCommitmentBytes) != 0) {
      return permission_denied(
          "secagg: the roster lists other keys or another commitment under this client's id");
    }
    self_index_ = count_;
  }
  uint8_t signing_key[64] = {};
  if (signing_ != nullptr) {
    // An uncertified key, or one its owner did not sign for this session: no key agreement with
    // it. Before anything of the entry is held or hashed; the session ends here.
    const Status certified =
        verify_signed_keys(ByteSpan(signing_->ca_public_key, credential::kPublicKeyBytes), keys,
                           ByteSpan(start_digest_, 32));
    if (certified.code() == StatusCode::kPermissionDenied) on_abort();
    FEDSTAT_RETURN_IF_ERROR(certified);
    memcpy(signing_key, keys.certificate.public_key.bytes + 1, 64);
  }
  if (count_ > 0 && peers_[count_ - 1].id > keys.client_id) roster_ascending_ = false;
  if (degree_ == 0) {  // a sparse session's hash is common to the session, not the roster
    uint8_t entry_bytes[kRosterEntryBytes];
    encode_roster_entry(keys.client_id, keys.encryption_key.bytes, keys.masking_key.bytes,
                        keys.commitment.bytes, entry_bytes);
    FEDSTAT_RETURN_IF_ERROR(roster_hash_.update(ByteSpan(entry_bytes, sizeof(entry_bytes))));
  } else {
    if (entry.index == 0) {
      memcpy(graph_seed_, entry.graph_seed.bytes, kGraphSeedBytes);
      ring_size_ = entry.ring_size;
    }
    ring_check_.add(position, keys.client_id);
  }
  SecAggPeer& peer = peers_[count_];
  peer = SecAggPeer();
  peer.id = keys.client_id;
  memcpy(peer.encryption_key, keys.encryption_key.bytes, 32);
  memcpy(peer.masking_key, keys.masking_key.bytes, 32);
  memcpy(peer.signing_key, signing_key, sizeof(peer.signing_key));
  cursor_ = entry.count;
  ++count_;
  if (count_ == entry.count) {
    bool self_present = false;
    for (size_t i = 0; i < count_; ++i) self_present = self_present || peers_[i].id == id_;
    if (!self_present) {
      return fail(aborted("secagg: this client is not in the roster; aborting"));
    }
    if (degree_ == 0) {
      FEDSTAT_RETURN_IF_ERROR(roster_hash_.finish(Span<uint8_t>(session_hash_, 32)));
    } else {
      // Not this client's neighbourhood under the committed seed: the server placed it
      // elsewhere than the ring it committed to. Nothing was shared yet; abort, reveal nothing.
      const Status ring = ring_check_.finish(count_, degree_, self_index_);
      if (!ring.ok()) return fail(aborted(ring.message()));
      FEDSTAT_RETURN_IF_ERROR(sparse_session_hash(session_, threshold_, length_, bits_, degree_,
                                                  max_clients_, ByteSpan(graph_seed_, 32),
                                                  ring_size_, MutableByteSpan(session_hash_, 32)));
    }
    stage_ = SecAggStage::kSharing;
    cursor_ = 0;
  }
  return Status();
}

}  // namespace secagg
}  // namespace fedstat
