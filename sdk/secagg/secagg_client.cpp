#include "sdk/secagg/secagg_client.h"

#include <string.h>

#include "sdk/base/bytes.h"
#include "sdk/secagg/graph.h"
#include "sdk/secagg/mask.h"
#include "sdk/secagg/session_hash.h"
#include "sdk/secagg/signed_keys.h"

namespace fedstat {
namespace secagg {
namespace {

enum PeerFlag : uint8_t {
  kHaveShares = 1,
  kInU2 = 2,
  kInU3 = 4,
  kRevealedSelf = 8,
  kRevealedKey = 16,
  // The peer's share slots hold the share key made for this client's share to it (next_share),
  // not yet its share: on_share opens the peer's share with it instead of a second X25519
  // agreement (the key is symmetric: HKDF of X25519(c_u^SK, c_v^PK) = X25519(c_v^SK, c_u^PK)).
  // Never set together with kHaveShares; the key is overwritten by the peer's shares when they
  // arrive and wiped when U2 closes the sharing round.
  kHoldsShareKey = 32,
  // The peer's share to this client arrived and was bad (failed authentication, a sealed sender
  // or recipient that does not match, the wrong length, a value outside the field): this client
  // holds no share of the peer's secrets. Cleared if a valid share arrives after it.
  kBadShare = 64,
  // Signed sessions: the peer's consistency signature verified over a view that agrees with this
  // client's, and was counted towards the threshold (once).
  kConsistencyCounted = 128,
};
static_assert(sizeof(SecAggPeer::self_mask_share) >= 32, "a share key fits a peer's share slot");

constexpr char kShareKeyLabel[] = "fedstat secagg share key v1";
constexpr char kCommitmentTag[] = "fedstat secagg self-mask commitment v1";

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
    if (start.degree == 0) {
      // Against a lying server the consistency round holds only if two views cannot each gather
      // t signatures (signed_keys.h), at the larger of the declared corrupt fraction and this
      // device's floor.
      const uint32_t ppm =
          start.corrupt_ppm > assumed_corrupt_ppm_ ? start.corrupt_ppm : assumed_corrupt_ppm_;
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

template <typename Visit>
Status SecAggClient::for_each_u3_ascending(Visit&& visit) const {
  auto in_u3 = [&](size_t i) { return i == self_index_ || (peers_[i].flags & kInU3) != 0; };
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
  FEDSTAT_RETURN_IF_ERROR(for_each_u3_ascending([&](uint32_t id) { return digest.add(id); }));
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
    FEDSTAT_RETURN_IF_ERROR(for_each_u3_ascending([&](uint32_t id) {
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
    for (pb_size_t m = 0; m < message.members_count; ++m) {
      if (message.members[m] == 0 || (m > 0 && message.members[m] <= message.members[m - 1])) {
        return invalid_argument(
            "secagg: a consistency message's members are not strictly ascending client ids");
      }
    }
    FEDSTAT_RETURN_IF_ERROR(
        consistency_digest(ByteSpan(session_hash_, 32), message.signer_id,
                           ByteSpan(peer.encryption_key, 32), ByteSpan(peer.masking_key, 32),
                           Span<const uint32_t>(message.members, message.members_count),
                           MutableByteSpan(digest, sizeof(digest))));
  }
  uint8_t key[credential::kPublicKeyBytes];
  key[0] = 0x04;  // SEC1 uncompressed
  memcpy(key + 1, peer.signing_key, sizeof(peer.signing_key));
  const Status verified =
      credential::verify_digest(ByteSpan(key, sizeof(key)), ByteSpan(digest, sizeof(digest)),
                                ByteSpan(message.signature.bytes, credential::kSignatureBytes));
  if (verified.code() == StatusCode::kPermissionDenied ||
      verified.code() == StatusCode::kInvalidArgument) {
    return permission_denied(
        "secagg: a consistency signature does not verify (another U3, session or signer); not "
        "counted");
  }
  FEDSTAT_RETURN_IF_ERROR(verified);
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
