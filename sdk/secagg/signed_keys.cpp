#include "sdk/secagg/signed_keys.h"

#include <string.h>

#include "sdk/base/bytes.h"

namespace fedstat {
namespace secagg {
namespace {

constexpr char kStartTag[] = "fedstat secagg start v1";
constexpr char kKeysTag[] = "fedstat secagg keys v1";
constexpr char kConsistencyTag[] = "fedstat secagg consistency v1";
constexpr char kMaskedViewTag[] = "fedstat secagg u2 v1";

ByteSpan tag_bytes(const char* tag, size_t size_with_nul) {
  return ByteSpan(reinterpret_cast<const uint8_t*>(tag), size_with_nul - 1);
}

Status update_le32(crypto::Sha256& hash, uint32_t value) {
  uint8_t bytes[4];
  store_le32(bytes, value);
  return hash.update(ByteSpan(bytes, sizeof(bytes)));
}

// A credential call's status as this file's: the verification failures (and malformed
// certificate contents) are the peer's — kPermissionDenied with `message`; the pool and the
// library's own failures pass through.
Status as_denied(const Status& status, const char* message) {
  if (status.ok()) return status;
  if (status.code() == StatusCode::kResourceExhausted || status.code() == StatusCode::kInternal) {
    return status;
  }
  return permission_denied(message);
}

}  // namespace

Status start_parameters_digest(const fedstat_v1_SecAggStart& start, MutableByteSpan out) {
  if (out.size() != kSignedDigestBytes) return invalid_argument("secagg: a digest is 32 bytes");
  crypto::Sha256 hash;
  FEDSTAT_RETURN_IF_ERROR(hash.update(tag_bytes(kStartTag, sizeof(kStartTag))));
  FEDSTAT_RETURN_IF_ERROR(update_le32(hash, start.threshold));
  FEDSTAT_RETURN_IF_ERROR(update_le32(hash, start.vector_length));
  FEDSTAT_RETURN_IF_ERROR(update_le32(hash, start.bits));
  FEDSTAT_RETURN_IF_ERROR(update_le32(hash, start.max_clients));
  FEDSTAT_RETURN_IF_ERROR(update_le32(hash, start.degree));
  if (start.graph_commitment.size == 32) {
    FEDSTAT_RETURN_IF_ERROR(hash.update(ByteSpan(start.graph_commitment.bytes, 32)));
  }
  FEDSTAT_RETURN_IF_ERROR(update_le32(hash, start.dropout_ppm));
  FEDSTAT_RETURN_IF_ERROR(update_le32(hash, start.corrupt_ppm));
  return hash.finish(out);
}

Status keys_digest(uint64_t session, uint32_t client_id, ByteSpan encryption_key,
                   ByteSpan masking_key, ByteSpan commitment, ByteSpan start_digest,
                   MutableByteSpan out) {
  if (encryption_key.size() != 32 || masking_key.size() != 32 || commitment.size() != 32 ||
      start_digest.size() != 32 || out.size() != kSignedDigestBytes) {
    return invalid_argument("secagg: keys, commitment and digests are 32 bytes each");
  }
  crypto::Sha256 hash;
  uint8_t header[12];
  store_le64(header, session);
  store_le32(header + 8, client_id);
  FEDSTAT_RETURN_IF_ERROR(hash.update(tag_bytes(kKeysTag, sizeof(kKeysTag))));
  FEDSTAT_RETURN_IF_ERROR(hash.update(ByteSpan(header, sizeof(header))));
  FEDSTAT_RETURN_IF_ERROR(hash.update(encryption_key));
  FEDSTAT_RETURN_IF_ERROR(hash.update(masking_key));
  FEDSTAT_RETURN_IF_ERROR(hash.update(commitment));
  FEDSTAT_RETURN_IF_ERROR(hash.update(start_digest));
  return hash.finish(out);
}

Status ConsistencyDigest::begin(ByteSpan session_hash, uint32_t signer_id, ByteSpan encryption_key,
                                ByteSpan masking_key, uint32_t count, ViewRound round) {
  if (session_hash.size() != 32) return invalid_argument("secagg: a session hash is 32 bytes");
  if (encryption_key.size() != 32 || masking_key.size() != 32) {
    return invalid_argument("secagg: a signer's round keys are 32 bytes each");
  }
  FEDSTAT_RETURN_IF_ERROR(hash_.reset());
  expected_ = count;
  added_ = 0;
  FEDSTAT_RETURN_IF_ERROR(hash_.update(round == ViewRound::kU2
                                           ? tag_bytes(kMaskedViewTag, sizeof(kMaskedViewTag))
                                           : tag_bytes(kConsistencyTag, sizeof(kConsistencyTag))));
  FEDSTAT_RETURN_IF_ERROR(hash_.update(session_hash));
  FEDSTAT_RETURN_IF_ERROR(update_le32(hash_, signer_id));
  FEDSTAT_RETURN_IF_ERROR(hash_.update(encryption_key));
  FEDSTAT_RETURN_IF_ERROR(hash_.update(masking_key));
  return update_le32(hash_, count);
}

Status ConsistencyDigest::add(uint32_t id) {
  ++added_;
  return update_le32(hash_, id);
}

Status ConsistencyDigest::finish(MutableByteSpan out) {
  if (out.size() != kSignedDigestBytes) return invalid_argument("secagg: a digest is 32 bytes");
  if (added_ != expected_) {
    FEDSTAT_RETURN_IF_ERROR(hash_.reset());
    return failed_precondition("secagg: a consistency view's ids differ from its count");
  }
  return hash_.finish(out);
}

Status consistency_digest(ByteSpan session_hash, uint32_t signer_id, ByteSpan encryption_key,
                          ByteSpan masking_key, Span<const uint32_t> ids_ascending,
                          MutableByteSpan out, ViewRound round) {
  if (out.size() != kSignedDigestBytes) return invalid_argument("secagg: a digest is 32 bytes");
  ConsistencyDigest digest;
  FEDSTAT_RETURN_IF_ERROR(digest.begin(session_hash, signer_id, encryption_key, masking_key,
                                       static_cast<uint32_t>(ids_ascending.size()), round));
  for (size_t i = 0; i < ids_ascending.size(); ++i) {
    FEDSTAT_RETURN_IF_ERROR(digest.add(ids_ascending[i]));
  }
  return digest.finish(out);
}

Status certificate_from_message(const fedstat_v1_DeviceCertificate& in,
                                credential::DeviceCertificate& out) {
  if (in.public_key.size != credential::kPublicKeyBytes ||
      in.ca_signature.size != credential::kSignatureBytes) {
    return invalid_argument(
        "secagg: a certificate carries a 65-byte public key and a 64-byte CA signature");
  }
  out.client_id = in.client_id;
  memcpy(out.public_key, in.public_key.bytes, credential::kPublicKeyBytes);
  memcpy(out.ca_signature, in.ca_signature.bytes, credential::kSignatureBytes);
  return Status();
}

void certificate_to_message(const credential::DeviceCertificate& in,
                            fedstat_v1_DeviceCertificate& out) {
  out = fedstat_v1_DeviceCertificate_init_zero;
  out.client_id = in.client_id;
  out.public_key.size = credential::kPublicKeyBytes;
  memcpy(out.public_key.bytes, in.public_key, credential::kPublicKeyBytes);
  out.ca_signature.size = credential::kSignatureBytes;
  memcpy(out.ca_signature.bytes, in.ca_signature, credential::kSignatureBytes);
}

Status sign_keys(const credential::DeviceCredential& credential, ByteSpan start_digest,
                 fedstat_v1_SecAggKeys& keys) {
  if (credential.certificate.client_id != keys.client_id) {
    return invalid_argument("secagg: the device credential is for another client id");
  }
  uint8_t digest[kSignedDigestBytes];
  FEDSTAT_RETURN_IF_ERROR(keys_digest(keys.session, keys.client_id,
                                      ByteSpan(keys.encryption_key.bytes, keys.encryption_key.size),
                                      ByteSpan(keys.masking_key.bytes, keys.masking_key.size),
                                      ByteSpan(keys.commitment.bytes, keys.commitment.size),
                                      start_digest, MutableByteSpan(digest, sizeof(digest))));
  FEDSTAT_RETURN_IF_ERROR(credential::sign_digest(
      ByteSpan(credential.private_key, credential::kPrivateKeyBytes),
      ByteSpan(digest, sizeof(digest)),
      MutableByteSpan(keys.key_signature.bytes, credential::kSignatureBytes)));
  keys.key_signature.size = credential::kSignatureBytes;
  certificate_to_message(credential.certificate, keys.certificate);
  keys.has_certificate = true;
  return Status();
}

Status verify_signed_keys(ByteSpan ca_public_key, const fedstat_v1_SecAggKeys& keys,
                          ByteSpan start_digest) {
  if (ca_public_key.size() != credential::kPublicKeyBytes) {
    return invalid_argument("secagg: the CA public key is 65 bytes");
  }
  if (!keys.has_certificate) {
    return permission_denied("secagg: signed session: keys without a device certificate");
  }
  credential::DeviceCertificate certificate;
  if (!certificate_from_message(keys.certificate, certificate).ok()) {
    return permission_denied("secagg: signed session: a malformed device certificate");
  }
  const Status issued = credential::verify_certificate(ca_public_key, certificate);
  if (issued.code() == StatusCode::kInvalidArgument &&
      !credential::check_public_key(ca_public_key).ok()) {
    return invalid_argument("secagg: the CA public key is not a valid P-256 key");
  }
  FEDSTAT_RETURN_IF_ERROR(
      as_denied(issued, "secagg: signed session: a device certificate the fleet CA did not issue"));
  if (certificate.client_id != keys.client_id) {
    return permission_denied(
        "secagg: signed session: the certificate is for another client id than the keys");
  }
  if (keys.key_signature.size != credential::kSignatureBytes) {
    return permission_denied("secagg: signed session: keys without a 64-byte key signature");
  }
  uint8_t digest[kSignedDigestBytes];
  FEDSTAT_RETURN_IF_ERROR(keys_digest(keys.session, keys.client_id,
                                      ByteSpan(keys.encryption_key.bytes, keys.encryption_key.size),
                                      ByteSpan(keys.masking_key.bytes, keys.masking_key.size),
                                      ByteSpan(keys.commitment.bytes, keys.commitment.size),
                                      start_digest, MutableByteSpan(digest, sizeof(digest))));
  return as_denied(
      credential::verify_digest(ByteSpan(certificate.public_key, credential::kPublicKeyBytes),
                                ByteSpan(digest, sizeof(digest)),
                                ByteSpan(keys.key_signature.bytes, credential::kSignatureBytes)),
      "secagg: signed session: the key signature does not verify (another key, session, id or "
      "start parameters)");
}

Result<SecAggGraph> choose_signed_sparse_graph(uint32_t max_clients,
                                               const SecAggThreatModel& model) {
  if (max_clients < 2) return invalid_argument("secagg graph: max_clients < 2");
  FEDSTAT_RETURN_IF_ERROR(check_threat_model(model));
  const uint32_t ppm =
      model.corrupt_ppm > kDefaultCorruptFloorPpm ? model.corrupt_ppm : kDefaultCorruptFloorPpm;
  const uint64_t corrupt = assumed_corrupt_devices(max_clients, ppm);
  for (uint32_t degree = 2; degree <= kMaxSignedSparseDegree && uint64_t{degree} + 1 < max_clients;
       degree += 2) {
    const Result<SecAggThresholdRange> range = sparse_threshold_range(max_clients, degree, model);
    if (!range.ok()) continue;
    // The least t with 2t > k + c, and at least the bound's least.
    uint64_t threshold = (uint64_t{degree} + corrupt) / 2 + 1;
    if (threshold < range.value().min_threshold) threshold = range.value().min_threshold;
    if (threshold > range.value().max_threshold || threshold > uint64_t{degree} + 1) continue;
    const uint32_t t = static_cast<uint32_t>(threshold);
    if (!check_sparse_graph(max_clients, degree, t, model).ok() ||
        !signed_sparse_threshold_holds(t, degree, max_clients, ppm)) {
      continue;
    }
    SecAggGraph graph;
    graph.degree = degree;
    graph.threshold = t;
    return graph;
  }
  return not_found(
      "secagg graph: no signed sparse graph of degree <= 126 meets both the bound and 2 * "
      "threshold > degree + ceil(corrupt fraction * max_clients) at this max_clients: use the "
      "complete graph (max_clients <= 1024), fewer max_clients, or an unsigned session");
}

}  // namespace secagg
}  // namespace fedstat
