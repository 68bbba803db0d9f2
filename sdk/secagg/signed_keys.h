/// @file
/// Signed secure-aggregation keys and the consistency round (protocol version 5, issue 42): the
/// statements a device signs with its credential (sdk/credential/device_credential.h) and checks
/// of its peers, and the conversions between the credential's certificate and its message.
///
/// Every statement is a SHA-256 digest with a domain tag (no terminator), little-endian integers:
///
///     start digest   = SHA-256("fedstat secagg start v1" ‖ LE32 threshold ‖ LE32 vector_length ‖
///                      LE32 bits ‖ LE32 max_clients ‖ LE32 degree ‖ graph_commitment (0 or 32
///                      bytes) ‖ LE32 dropout_ppm ‖ LE32 corrupt_ppm)
///     keys digest    = SHA-256("fedstat secagg keys v1" ‖ LE64 session ‖ LE32 client_id ‖
///                      c_pk (32) ‖ s_pk (32) ‖ commitment (32) ‖ start digest (32))
///     consistency    = SHA-256("fedstat secagg consistency v1" ‖ session hash (32) ‖
///                      LE32 signer_id ‖ signer's c_pk (32) ‖ signer's s_pk (32) ‖ LE32 count ‖
///                      LE32 ids of U3, ascending)
///     U2 view (D8)   = the consistency digest's fields under the tag "fedstat secagg u2 v1", with
///                      the ids of U2 in the signer's roster (itself included), ascending
///
/// The keys digest binds a device's X25519 keys and self-mask commitment to its id, the session
/// and the parameters it was started with: a signature cannot be replayed into another session,
/// another device's roster entry, or a session the server started with other parameters (a lower
/// threshold). The consistency digest binds a device's view of U3 to the session hash (which
/// covers the roster), so a server that shows two groups different U3 sets cannot pass one
/// group's signatures off to the other, and to the signer's X25519 keys of this round: a sparse
/// session hash covers no keys (graph.h), and a server that reuses a session id with the same
/// parameters could otherwise replay a neighbour's signature of an earlier round over the same
/// view (tests/adversary, C_ReplayIntoARoundReusingTheSessionId_SparseConsistency).
/// The U2 view (rule D8, signed sparse sessions, protocol 6; docs/secagg_many_worlds.md §5): a
/// device signs, with its masked input, the members of its roster it masked with; a neighbour
/// reveals its share of the device's self-mask seed only when that signed view names it. Bound
/// like the consistency digest (session hash, signer, its round keys), under its own tag, so a U2
/// view and a U3 view never stand for each other.
///
/// @memory none beyond the stack (one SHA-256 context, ≈ 120 bytes); ConsistencyDigest holds one
/// SHA-256 context.
/// @paper Bonawitz et al. 2017 §4 (the actively secure variant: signed keys, ConsistencyCheck).
#ifndef FEDSTAT_SDK_SECAGG_SIGNED_KEYS_H_
#define FEDSTAT_SDK_SECAGG_SIGNED_KEYS_H_

#include <stddef.h>
#include <stdint.h>

#include "fedstat/v1/envelope.pb.h"
#include "sdk/base/crypto.h"
#include "sdk/base/span.h"
#include "sdk/base/status.h"
#include "sdk/credential/device_credential.h"
#include "sdk/secagg/graph_parameters.h"

namespace fedstat {
namespace secagg {

/// Bytes of every digest below.
constexpr size_t kSignedDigestBytes = 32;
/// The largest degree of a signed sparse session: a consistency view (SecAggConsistency.members)
/// names at most 127 ids, the k + 1 of a neighbourhood.
constexpr uint32_t kMaxSignedSparseDegree = 126;

/// The corrupt fraction (parts per million) a device assumes at least when the server declares
/// less: the default of SecAggClient::set_assumed_corrupt_ppm and of the server's planning (5 %).
constexpr uint32_t kDefaultCorruptFloorPpm = 50000;

/// ⌈corrupt_ppm · max_clients / 10^6⌉: the corrupt devices a round of `max_clients` is assumed to
/// hold at `corrupt_ppm` (the signed rules below). No overflow for any uint32_t arguments.
constexpr uint64_t assumed_corrupt_devices(uint32_t max_clients, uint32_t corrupt_ppm) {
  return (uint64_t{corrupt_ppm} * max_clients + 999999) / 1000000;
}

/// Whether a signed complete-graph session of `threshold` among `max_clients` holds against
/// c = ⌈γ·max_clients⌉ colluders (γ = corrupt_ppm / 10^6, at most 10^6): they can sign both of
/// two U3 views, so two views must not each gather t signatures — 2·t > max_clients + c
/// (Bonawitz et al. 2017 §4; tests/adversary CollusionBound_TwoTMinusNColludersSplitTheRound).
/// The one rule the device (SecAggClient::on_start), the server's planning and the simulation
/// apply.
constexpr bool signed_complete_threshold_holds(uint32_t threshold, uint32_t max_clients,
                                               uint32_t corrupt_ppm) {
  return uint64_t{2} * threshold >
         uint64_t{max_clients} + assumed_corrupt_devices(max_clients, corrupt_ppm);
}

/// Whether a signed sparse session of degree `degree` and `threshold` among `max_clients` holds
/// against c = ⌈γ·max_clients⌉ colluders wherever they sit: the server fixes U1 knowing every ring
/// position (it chose the seed), so it can make all of them one victim's neighbours, and under
/// rules D8 + F splitting a sparse round needs 2t − k corrupt neighbours of the victim
/// (docs/secagg_many_worlds.md §4; tests/adversary A_U1ChosenToSurroundTheVictim) — so
/// 2·t > degree + c.
constexpr bool signed_sparse_threshold_holds(uint32_t threshold, uint32_t degree,
                                             uint32_t max_clients, uint32_t corrupt_ppm) {
  return uint64_t{2} * threshold >
         uint64_t{degree} + assumed_corrupt_devices(max_clients, corrupt_ppm);
}

/// The (degree, threshold) a signed sparse session of `max_clients` devices gets: the smallest
/// even degree k ≤ kMaxSignedSparseDegree (k < max_clients − 1) with a threshold that passes both
/// check_sparse_graph (graph_parameters.h: the σ/η bound under `model`) and
/// signed_sparse_threshold_holds at γ = max(model.corrupt_ppm, kDefaultCorruptFloorPpm), with the
/// smallest such threshold. What the server's planning (host_server/tasks/task_plan.cpp) and
/// fedstat-secagg-sim --signed use; O(k²) work for the k returned (k ≤ 126: microseconds).
/// At 5 % corrupt: n = 100 → (16, 11), 500 → (60, 43), 1,000 → (98, 75); none above 1,420
/// (signed_keys_test SignedSparseGraph.*).
/// @errors kInvalidArgument: max_clients < 2. kOutOfRange: the model fails check_threat_model.
/// kNotFound: no degree ≤ 126 passes both (a round this large needs the complete graph if ≤ 1024
/// devices, fewer max_clients, or an unsigned session).
Result<SecAggGraph> choose_signed_sparse_graph(uint32_t max_clients,
                                               const SecAggThreatModel& model);

/// The start digest of `start` (above) into `out` (32 bytes). A graph commitment of any size
/// other than 32 bytes is hashed as absent (a session that carries one is refused elsewhere).
/// @errors kInvalidArgument: `out` is not 32 bytes. kInternal: SHA-256 failed inside mbedTLS.
Status start_parameters_digest(const fedstat_v1_SecAggStart& start, MutableByteSpan out);

/// The keys digest (above) into `out`; `encryption_key`, `masking_key`, `commitment` and
/// `start_digest` are 32 bytes each.
/// @errors kInvalidArgument: a span that is not 32 bytes. kInternal: SHA-256 failed.
Status keys_digest(uint64_t session, uint32_t client_id, ByteSpan encryption_key,
                   ByteSpan masking_key, ByteSpan commitment, ByteSpan start_digest,
                   MutableByteSpan out);

/// Which view a digest covers: the U3 view of the consistency round, or (rule D8) the U2 view a
/// device signs with its masked input (SecAggConsistency.round 2).
enum class ViewRound : uint8_t { kU3, kU2 };

/// The consistency digest (above; the U2 view digest with `round` kU2) into `out` of
/// `ids_ascending` (strictly ascending, not checked here) signed by `signer_id`, whose round keys
/// are `encryption_key` and `masking_key` (32 bytes each), in the session whose hash is
/// `session_hash` (32 bytes).
/// @errors kInvalidArgument: `session_hash`, a key or `out` not 32 bytes. kInternal: SHA-256
/// failed.
Status consistency_digest(ByteSpan session_hash, uint32_t signer_id, ByteSpan encryption_key,
                          ByteSpan masking_key, Span<const uint32_t> ids_ascending,
                          MutableByteSpan out, ViewRound round = ViewRound::kU3);

/// The consistency digest fed one id at a time (ascending), for views too large to list at once
/// (a complete graph's U3 of up to 1,024 ids): begin(), add() × count, finish().
class ConsistencyDigest {
 public:
  /// Starts the digest of `count` ids signed by `signer_id`, whose round keys are
  /// `encryption_key` and `masking_key` (the U2 view's digest with `round` kU2).
  /// @errors kInvalidArgument: `session_hash` or a key not 32 bytes. kInternal: SHA-256 failed.
  Status begin(ByteSpan session_hash, uint32_t signer_id, ByteSpan encryption_key,
               ByteSpan masking_key, uint32_t count, ViewRound round = ViewRound::kU3);
  /// The next id (ascending).
  /// @errors kInternal: SHA-256 failed.
  Status add(uint32_t id);
  /// The digest into `out` (32 bytes); the object is ready for begin() again.
  /// @errors kInvalidArgument: `out` not 32 bytes. kFailedPrecondition: fewer or more ids added
  /// than begin() announced. kInternal: SHA-256 failed.
  Status finish(MutableByteSpan out);

 private:
  crypto::Sha256 hash_;
  uint32_t expected_ = 0, added_ = 0;
};

/// The certificate carried in a message as the credential's struct.
/// @errors kInvalidArgument: a public key that is not 65 bytes or a CA signature not 64 (the
/// certificate is not verified here: credential::verify_certificate()).
Status certificate_from_message(const fedstat_v1_DeviceCertificate& in,
                                credential::DeviceCertificate& out);

/// The credential's certificate as a message (every field set).
void certificate_to_message(const credential::DeviceCertificate& in,
                            fedstat_v1_DeviceCertificate& out);

/// Fills `keys.certificate` with `credential`'s certificate and `keys.key_signature` with its
/// signature over keys_digest(keys.session, keys.client_id, keys' X25519 keys and commitment,
/// `start_digest`). `keys` must already carry its two 32-byte keys and 32-byte commitment.
/// @errors kInvalidArgument: keys, commitment or `start_digest` not 32 bytes, or the credential's
/// certificate names another client id than `keys.client_id`. credential::sign_digest()'s
/// errors (kInvalidArgument for a private key out of range, kResourceExhausted, kInternal).
Status sign_keys(const credential::DeviceCredential& credential, ByteSpan start_digest,
                 fedstat_v1_SecAggKeys& keys);

/// OK when `keys` carries a certificate issued by the CA `ca_public_key` for `keys.client_id`
/// and a key signature under the certificate's key over keys_digest(…, `start_digest`).
/// @errors kPermissionDenied, each with its own message: no certificate, a malformed
/// certificate (sizes, key not on the curve), a certificate the CA did not issue, a certificate
/// for another client id, no 64-byte key signature, a key signature that does not verify
/// (another key, session, id, commitment or start parameters). kInvalidArgument: the keys or
/// commitment not 32 bytes, `ca_public_key` not a valid P-256 key or `start_digest` not 32
/// bytes. kResourceExhausted: mbedTLS's pool is full. kInternal: SHA-256 failed.
Status verify_signed_keys(ByteSpan ca_public_key, const fedstat_v1_SecAggKeys& keys,
                          ByteSpan start_digest);

}  // namespace secagg
}  // namespace fedstat

#endif  // FEDSTAT_SDK_SECAGG_SIGNED_KEYS_H_
