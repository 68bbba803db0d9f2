/// @file
/// SecAggClient: one device's side of secure aggregation (Bonawitz et al., CCS 2017, semi-honest
/// server), a state machine in caller memory driven one message at a time.
///
///     idle ──on_start──► advertised (sends SecAggKeys: c_u^PK for shares, s_u^PK for masks,
///            and the commitment c_u to its self-mask seed b_u, self_mask_commitment())
///          ──on_peer_keys × |U1|──► sharing (roster U1 known; session hash = SHA-256 of it, every
///            member's keys and commitment included)
///          ──next_share × (|U1|−1)──► shared: for every peer v, Shamir shares (t of |U1|,
///            x = v's id) of the self-mask seed b_u and of s_u^SK, AES-256-GCM-encrypted under
///            HKDF(X25519(c_u^SK, c_v^PK)); the server only routes them. That key is symmetric
///            (v opens u's share with the same one), so it is derived once per peer: kept in v's
///            share slots until v's share to u arrives and is opened with it (then overwritten),
///            and wiped when U2 arrives or the session aborts — 2(|U1|−1) agreements a session
///            (n−1 for shares, n−1 for masks), not 3(|U1|−1); no extra memory
///          ──on_share (peers' shares to u) … on_roster(round 2: U2)──► ready to mask
///          ──mask(x)──► masked:
///            y = x + PRG(b_u) + Σ_{v∈U2, v<u} PRG(s_uv) − Σ_{v∈U2, v>u} PRG(s_uv)
///            mod 2^bits (sdk/secagg/mask.h), sent with next_chunk
///          ──on_roster(round 3: U3)──► unmasking: next_reveal gives, for v ∈ U2, the share of
///            b_v if v ∈ U3 (its input is in the sum) or of s_v^SK if not (it dropped) — never
///            both for one peer; u's own b-share too ──► done.
///
/// The graph (protocol 4, sdk/secagg/graph.h). SecAggStart.degree = 0 is the complete graph
/// above: the roster is U1. An even degree k is SecAgg+'s sparse graph: the roster is this
/// client's neighbourhood — k + 1 entries in ring order, itself at index k/2 (or all of U1, in
/// ring order, when |U1| ≤ k + 1) — and every step above (shares, masks, U2/U3 bitmaps, reveals)
/// runs over it; t counts among those k + 1 holders (2·t > k + 1, t ≤ k + 1). Entry 0 opens the
/// ring seed SecAggStart.graph_commitment committed to, and the client checks every entry's ring
/// position: the roster must be one turn of the ring with this client in its middle, or the
/// session aborts before any share is made. The session hash is then the sparse one (graph.h),
/// common to all members. Whether (k, t) meets SecAgg+'s bound for max_clients is the Client's
/// check of the task (sdk/client/contribution.h), under the device's own threat model; this class
/// checks the structure. What a device cannot see of the ring: docs/protocol.md, "The sparse
/// graph".
///
/// Resumption after a lost channel (the same object, nothing drawn again; Client, sdk/client):
/// what the client already holds may arrive again — the same SecAggStart (on_start gives the same
/// keys), roster entries and rosters are accepted and change nothing, while any that differ are
/// refused (kFailedPrecondition) and change nothing; a share from a peer whose share is held is
/// ignored (the held one stays). A masked input is made for one U2 and reveals for one U3,
/// whatever arrives later.
/// rewind(round, held) then makes next_share / next_chunk / next_reveal continue after the `held`
/// messages the server stored, giving the same bytes again (the share IV is fixed per sender and
/// recipient and the plaintext is the same: an identical ciphertext).
/// Any violation (fewer than t survivors, a roster that grows, a message for another session,
/// client or round, a session larger than the client's storage or than kMaxRosterClients, a
/// threshold of at most half the session's max_clients, a roster larger than max_clients, a
/// roster key that check_public_key() refuses) returns a specific error and changes nothing held;
/// below threshold the client aborts and reveals nothing from then on.
///
/// One bad peer is not this client's failure (issue 39). A peer's share to this client that
/// arrives but is bad — the wrong length, failed authentication, a sealed sender or recipient
/// that does not match, a value outside the field — is recorded as "no share held from that
/// peer" and on_share succeeds. U2 may then name the peer (the server cannot see inside the
/// ciphertext): this client masks with the peer's pairwise mask as U2 says, and at unmasking
/// reveals nothing about it (a reveal with an empty share, so one reveal per U2 peer still goes
/// out). This does not remove the peer from the round: it stays in U2 (and U3), and if fewer
/// than t holders hold a readable share of it the server cannot rebuild its secret and aborts
/// the round, naming the peer and how many holders sent no share (docs/protocol.md, "What
/// remains": a dealer of unreadable shares can still abort a round). Why it is safe:
///   - it only ever reveals less: the shares it reveals are a subset of what it would reveal with
///     the peer's share held, still at most one kind per peer (b_v if v ∈ U3, s_v^SK if not), so
///     the rule that keeps the server from both kinds about anyone is untouched;
///   - a server that corrupts a share in transit (it routes them) gains nothing it could not get
///     by dropping the share: this client reveals less, masks the same, and the sum needs t other
///     holders' shares — with 2·t > max_clients the server still cannot split the honest clients;
///   - masking is unchanged (U2 decides it), and the server verifies every secret it rebuilds
///     (the commitment, the public key), so a sum that is published is correct whatever is
///     revealed.
/// A share that never arrived is different: an honest server sends each U2 member's share before
/// U2, so U2 naming such a peer is the server's error (kInvalidArgument, as before), not the
/// peer's. A roster entry with a malformed, non-canonical or low-order key (check_public_key) is
/// refused (kInvalidArgument), failing this client's session before it sends any share: an honest
/// server refuses such a key (the sender is excluded and never enters U1), so it comes only from a
/// server that skipped the check. Treating that peer as a dropout instead would need this client
/// either to encrypt its shares under a key agreement whose result the server may know, or to leave
/// the peer out of its masks while U2 names it, which breaks the sum for everyone. Randomness
/// (keys, seeds, polynomial seeds, X25519 blinding) comes from the caller's RandomSource — the
/// platform Csprng in production, a SeededStream in tests.
///
/// The commitment (review finding F2): the server rebuilds b_v from its holders' reveals, and
/// colluding holders — or holders beyond what the shares' consistency check can see — could make
/// it rebuild another seed and publish a wrong sum. c_u, sent in round 0 before any share, lets
/// the server check every b_v it rebuilds. b_u is 256 uniformly random bits used for nothing
/// else, so c_u (a SHA-256 of it) tells the server and the peers nothing about b_u or the input.
/// A peer's commitment is not stored here (the server checks it); it is part of the roster
/// entry this client hashes, so a server that shows two devices different commitments gives them
/// different session hashes.
///
/// Signed sessions (protocol 5, issue 42; sdk/secagg/signed_keys.h) — against a server that does
/// not follow the protocol. A client given a device credential (set_credential) joins only
/// sessions whose SecAggStart says signed_keys; it then signs its keys (keys_digest: the session,
/// its id, both X25519 keys, its commitment and the digest of the start parameters) and sends its
/// certificate with them, and accepts a roster entry only when its certificate was issued by the
/// fleet CA, names the entry's id, and its key signature verifies over the same session and start
/// parameters as this client's own — else the session aborts before any share is made
/// (kPermissionDenied). The server cannot mint certificates (it holds only the CA's public key),
/// so it can neither add members of its own nor stand between two members. After U3 comes the
/// consistency round (stage kConsistency): the client signs its view of U3 (consistency_message)
/// and counts its peers' signatures the server forwards (on_consistency); it reveals only once
/// `threshold` distinct members of its roster, itself included, signed a view that agrees with
/// its own. On the complete graph the views are one set, and a signature over another simply does
/// not verify (not counted). On the sparse graph each member lists its view; a verified view that
/// disagrees with this client's about any member both rosters hold (within degree/2 ring
/// positions of the signer) is proof of a split and aborts the session, revealing nothing.
/// Signed sparse sessions also run rule D8 (protocol 6; docs/secagg_many_worlds.md): after its
/// masked input the client signs its U2 view (masked_view_message: the ids of U2 in its roster);
/// the server forwards its neighbours' U2 views before their consistency messages, and the client
/// reveals its share of b_v only when v's verified U2 view names it — else an empty share. A
/// server that shows the neighbourhood several worlds then needs 2t − k corrupt neighbours of a
/// victim (more than the t1 graph_parameters.h bounds), not 2t − k − 1.
/// Without a credential the client refuses signed sessions; unsigned sessions are as above.
///
/// @memory sizeof(SecAggClient) (832 bytes on a 64-bit host; 32 of them the commitment, 104 the
/// sparse graph's commitment, seed and ring check, 128 the signed session's: start digest, key
/// signature, credential pointers and count) + secagg_client_memory_bytes(
/// neighbourhood_size(max_clients, degree)) of caller storage (sizeof(SecAggPeer) = 208 bytes
/// per roster entry, 64 of them a signed session's peer signing key, 1 D8's mark, in what was
/// padding: max_clients entries for the
/// complete graph, k + 1 for the sparse one); the signature checks use ≈ 300 bytes of stack (a
/// SHA-256 context, a digest, a 65-byte key) and mbedTLS's pool for the curve arithmetic;
/// mask() works in place on the caller's vector; X25519/HKDF/GCM use mbedTLS's pool on
/// microcontrollers.
/// @paper Bonawitz et al. 2017 §4, Figure 4 (rounds 0–3; the actively secure variant's signed
/// keys and ConsistencyCheck round); Bell et al. 2020 §3 (the sparse graph); 000 Alg. 3, 001
/// §4.7, 002 §2.2.
#ifndef FEDSTAT_SDK_SECAGG_SECAGG_CLIENT_H_
#define FEDSTAT_SDK_SECAGG_SECAGG_CLIENT_H_

#include <stddef.h>
#include <stdint.h>

#include "fedstat/v1/envelope.pb.h"
#include "sdk/base/checked_size.h"
#include "sdk/base/crypto.h"
#include "sdk/base/random_source.h"
#include "sdk/credential/device_credential.h"
#include "sdk/secagg/graph.h"
#include "sdk/secagg/shamir.h"
#include "sdk/secagg/signed_keys.h"

namespace fedstat {
namespace secagg {

/// One roster entry in the caller's storage: a peer's public keys and the shares it sent this
/// client. Filled in by SecAggClient; callers only provide the memory.
struct SecAggPeer {
  uint32_t id = 0;                               ///< the peer's client id
  uint8_t encryption_key[32] = {};               ///< c_v^PK: X25519 key for the shares' channel
  uint8_t masking_key[32] = {};                  ///< s_v^PK: X25519 key for the pairwise masks
  uint32_t self_mask_share[kShamirPieces] = {};  ///< v's share of b_v, for me (x = my id)
  uint32_t key_share[kShamirPieces] = {};        ///< v's share of s_v^SK, for me
  /// Signed sessions (protocol 5): X ‖ Y of v's certificate key (its SEC1 point without the 0x04
  /// prefix), checked against its consistency signature; zero otherwise.
  uint8_t signing_key[64] = {};
  uint8_t flags = 0;  ///< the client's bookkeeping (shares held, in U2/U3, what was revealed)
  /// Signed sparse sessions (rule D8): 1 once v's signed U2 view verified and named this client
  /// — only then is v's self-mask share revealed. In the struct's padding: no memory added.
  uint8_t u2_names_me = 0;
};

/// Bytes of caller storage for a roster of up to `max_clients` entries (the `peers` span of
/// SecAggClient::init()); kSizeOverflow (sdk/base/checked_size.h) when it does not fit in size_t.
constexpr size_t secagg_client_memory_bytes(size_t max_clients) {
  return size_mul(max_clients, sizeof(SecAggPeer));
}
/// The roster bitmap (SecAggRoster.members, envelope.options) names at most this many clients;
/// on_start refuses a session that allows more.
constexpr uint32_t kMaxRosterClients = 8 * sizeof(fedstat_v1_SecAggRoster_members_t::bytes);

/// Bytes of an encrypted share's plaintext: from, to (4 + 4) and two 36-byte shares.
constexpr size_t kSharePlainBytes = 8 + 2 * kShareBytes;
/// Bytes of an encrypted share on the wire: the plaintext's length plus the 16-byte GCM tag.
constexpr size_t kShareCipherBytes = kSharePlainBytes + crypto::kGcmTagBytes;
/// Words per SecAggMaskedChunk (envelope.options).
constexpr size_t kChunkWords = 64;
/// Bytes of the commitment to a self-mask seed (SecAggKeys.commitment).
constexpr size_t kCommitmentBytes = 32;

/// The commitment c_u a client sends in round 0 for its self-mask seed b_u (32 bytes):
/// SHA-256("fedstat secagg self-mask commitment v1" ‖ LE64 session ‖ LE32 client_id ‖ b_u), the
/// tag without a terminator. Bound to the session and the client, so it cannot be replayed for
/// another; the server recomputes it for each b_v it rebuilds (host_server/secagg). b_u is 256
/// uniformly random bits, so c_u hides it.
/// @errors kInvalidArgument: `seed` or `out` is not 32 bytes. kInternal: SHA-256 failed inside
/// mbedTLS (not expected).
Status self_mask_commitment(uint64_t session, uint32_t client_id, ByteSpan seed,
                            MutableByteSpan out);

/// Whether `key` may stand in a roster as an X25519 public key (c^PK or s^PK): 32 bytes, the
/// canonical encoding of a u-coordinate (below 2^255 − 19, bit 255 clear, as RFC 7748 writes
/// them) and none of the five canonical u-coordinates of low order (0, 1, 2^255 − 20 and the two
/// of order 8), with which X25519 gives the all-zero secret whatever the private key. A byte
/// comparison, no curve arithmetic: cheap enough for a device to check every roster entry. A
/// non-canonical encoding is refused, not reduced, so that one key has one encoding (the
/// roster's duplicate-key check compares bytes).
/// @errors kInvalidArgument: not 32 bytes, non-canonical, or of low order (the message says which).
Status check_public_key(ByteSpan key);

/// Where a SecAggClient is in the protocol (the state machine of the file comment).
enum class SecAggStage : uint8_t {
  kIdle,         ///< initialised; no session started
  kAdvertised,   ///< keys sent (on_start); receiving the roster U1 (on_peer_keys)
  kSharing,      ///< roster complete; making the encrypted shares (next_share)
  kShared,       ///< every share made; receiving peers' shares until U2 (on_roster)
  kReadyToMask,  ///< U2 known; mask() next
  kMasked,       ///< input masked; sending it (next_chunk) until U3 (on_roster)
  kConsistency,  ///< signed sessions: U3 known; its signature out (consistency_message), peers'
                 ///< signatures in (on_consistency) until threshold of them verify and agree
  kUnmasking,    ///< U3 known; revealing shares (next_reveal)
  kDone,         ///< every reveal made
  kAborted,      ///< abandoned: secrets wiped, nothing more revealed
};

/// One device's side of secure aggregation: a state machine in caller memory driven one message
/// at a time (see the file comment).
class SecAggClient {
 public:
  /// Sets the client id (in [1, 2^31]), the roster storage (`peers`: room for the largest roster
  /// the client will accept) and the randomness (`random`: the platform Csprng in production, a
  /// SeededStream in tests); `peers` and `random` must outlive the client. Stage: kIdle. Called
  /// again (the next session on the same object), it first wipes what the last session held in
  /// the object, finished or aborted, as on_abort() does: its secrets, dealers, public keys and
  /// session hash (on_start() restarts the roster hash). The roster storage `peers` is the
  /// caller's: wipe it to forget the last roster's shares and any share key still kept there (a
  /// session that ended before U2 without on_abort; the Client does).
  /// @errors kInvalidArgument: client_id = 0 or above 2^31, or `peers` has fewer than 2 entries
  /// (nothing changed).
  Status init(uint32_t client_id, Span<SecAggPeer> peers, RandomSource& random);

  /// The device credential for signed sessions (protocol 5; sdk/secagg/signed_keys.h), or
  /// nullptr for none (the default). The caller keeps it alive while the client may use it. It
  /// takes effect at the next on_start() — a session under way keeps the credential it started
  /// with — and survives init(). With a credential the client joins only signed sessions
  /// (SecAggStart.signed_keys), signs its keys, agrees keys only with peers whose certificate and
  /// key signature verify, and reveals only after the consistency round; without one it refuses
  /// signed sessions. The credential is not checked here: credential::check_credential() is the
  /// caller's, once, when the device is provisioned.
  void set_credential(const credential::DeviceCredential* credential) { credential_ = credential; }
  /// Signed sessions: the corrupt fraction (parts per million) this device assumes at least,
  /// whatever the start declares (the Client passes its TaskPolicy's min_assumed_corrupt_ppm;
  /// default 5 %). on_start() then requires, with γ the larger of the two, 2·t > max_clients +
  /// ⌈γ·max_clients⌉ in a complete graph (c colluding members can sign two U3 views) and
  /// 2·t > degree + ⌈γ·max_clients⌉ in a sparse one (the server can place all c next to one
  /// device; signed_keys.h).
  void set_assumed_corrupt_ppm(uint32_t ppm) { assumed_corrupt_ppm_ = ppm; }

  /// Round 0: draws this session's key pairs, self-mask seed and polynomial seeds, and fills `out`
  /// with the public keys to advertise and the commitment to the self-mask seed (stage
  /// kAdvertised). The same SecAggStart again while advertised (a resume) gives the same keys and
  /// commitment and draws nothing.
  /// @errors kFailedPrecondition: a start after the session began (stage not kIdle, unless the
  /// same start while kAdvertised). kInvalidArgument: threshold outside [2, max_clients],
  /// vector_length = 0, bits outside 1..64; complete graph (degree 0): a threshold of at most
  /// half of max_clients (2·t ≤ max_clients: two disjoint groups of t could be shown different
  /// U3s) or max_clients > kMaxRosterClients; sparse graph: an odd degree or one above
  /// kMaxGraphDegree, max_clients > kMaxSparseClients, a graph commitment that is not 32 bytes,
  /// or a threshold outside (degree + 1)/2 < t ≤ degree + 1.
  /// kResourceExhausted: the roster (max_clients entries, or degree + 1 when sparse) exceeds this
  /// client's roster storage, or mbedTLS's pool is full. The random source's error (e.g.
  /// kUnavailable) or kInternal from the crypto library; the stage stays kIdle.
  /// Signed sessions (protocol 5): kPermissionDenied: this client holds a credential and the
  /// start is not signed (SecAggStart.signed_keys false: it joins signed sessions only).
  /// kFailedPrecondition: a signed start and no device credential (set_credential()).
  /// kInvalidArgument: a signed sparse session of degree above kMaxSignedSparseDegree (126), a
  /// signed complete-graph session with 2·t ≤ max_clients + ⌈γ·max_clients⌉, a signed sparse
  /// session with 2·t ≤ degree + ⌈γ·max_clients⌉ (signed_sparse_threshold_holds: the server can
  /// make every colluder one device's neighbour; γ per set_assumed_corrupt_ppm()), or a
  /// credential for another client id.
  /// credential::sign_digest()'s errors. The stage stays kIdle.
  Status on_start(const fedstat_v1_SecAggStart& start, fedstat_v1_SecAggKeys& out);
  /// Round 1: one roster entry (index order, each once); the last one completes U1, fixes the
  /// session hash and moves to kSharing. An entry already held, sent again, must be identical and
  /// changes nothing.
  /// @errors kFailedPrecondition: outside the key round, or a re-sent entry that differs from
  /// the one held (its keys; a peer's commitment is not kept, so not compared). kInvalidArgument:
  /// an entry without keys or for another session, a new entry after the roster is complete, out
  /// of index order, disagreeing about the roster size, a roster larger than the session's
  /// max_clients, malformed (id, key sizes, a commitment that is not 32 bytes), or a key that
  /// check_public_key() refuses (non-canonical, low order). kResourceExhausted: the roster is
  /// larger than this client's storage. kAlreadyExists: a client id or public key appears twice.
  /// kPermissionDenied: the roster lists other keys or another commitment under this client's
  /// id, or (sparse) entry 0's ring seed does not open SecAggStart's graph commitment.
  /// kInvalidArgument also (sparse): entry 0 without a 32-byte seed or with a ring size above
  /// max_clients or whose neighbourhood (min(degree + 1, ring size)) is not the roster's count,
  /// a roster larger than degree + 1, or an entry out of ring order. kAborted: fewer
  /// advertised clients than the threshold, this client missing from the complete roster, or
  /// (sparse) the complete roster not one turn of the ring with this client in its middle (the
  /// session is aborted). kInternal: SHA-256 failed inside mbedTLS.
  /// Signed sessions (protocol 5): kPermissionDenied, and the session is aborted (an honest
  /// server excludes such keys before U1): an entry without a device certificate, with one the
  /// fleet CA (the credential's ca_public_key) did not issue or that names another client id, or
  /// whose key signature does not verify under the certificate's key over keys_digest() of this
  /// session and of the start parameters this client was started with (signed_keys.h); a re-sent
  /// entry whose certificate key differs is kFailedPrecondition. kResourceExhausted: mbedTLS's
  /// pool is full (nothing changed; the call can be retried). kInvalidArgument: this client's
  /// credential holds a CA key that is not a P-256 point (nothing changed).
  Status on_peer_keys(const fedstat_v1_SecAggPeerKeys& entry);
  /// Round 1: the next peer's encrypted shares (of b_u and s_u^SK). True with `out` filled while
  /// shares remain; false once every peer's share was produced (stage kShared). A failure
  /// advances nothing: the call can be retried.
  /// @errors kFailedPrecondition: not in the sharing round. The X25519 and HKDF errors
  /// (kInvalidArgument for a peer's malformed or low-order key, kResourceExhausted when mbedTLS's
  /// pool is full, kUnavailable when the blinding randomness fails, kInternal); kInternal from
  /// Shamir dealing or AES-GCM.
  Result<bool> next_share(fedstat_v1_SecAggShare& out);
  /// Round 1: a peer's encrypted shares for this client, checked and stored. A share from a peer
  /// whose share is held already is ignored (OK; the held one stays). A bad share (a wrong
  /// ciphertext length, failed authentication, a sealed sender or recipient that does not match,
  /// a share value that is not a field element) is the peer's fault: OK, recorded as no share
  /// held from that peer (see the file comment); a valid share from it later replaces that.
  /// @errors kFailedPrecondition: outside the sharing round, or a new peer's share after U2.
  /// kInvalidArgument: for another session, addressed to another client, or from this client
  /// itself. kNotFound: the sender is not in the roster. The X25519 and HKDF errors
  /// (kInvalidArgument for a malformed or low-order key, kResourceExhausted, kUnavailable,
  /// kInternal).
  Status on_share(const fedstat_v1_SecAggShare& share);
  /// Rounds 2 and 3: the survivors U2 (stage kReadyToMask) or U3 (stage kUnmasking). The roster
  /// this client already acted on, sent again, changes nothing.
  /// @errors kFailedPrecondition: a U2 or U3 other than the one already acted on; U2 before this
  /// client made all its shares; U3 before its whole masked input was sent. kInvalidArgument:
  /// another session, a bitmap of the wrong size or naming clients that do not exist, U2 naming a
  /// peer whose share never arrived (one whose share arrived bad is accepted), U3 naming a peer
  /// outside U2, or a round other than 2 and 3.
  /// kAborted: fewer survivors than the threshold, or this client dropped (the session is aborted
  /// and reveals nothing). In a signed session U3 leads to kConsistency, not kUnmasking.
  Status on_roster(const fedstat_v1_SecAggRoster& roster);
  /// Signed sessions, after U3: this client's consistency message — its signature over
  /// consistency_digest(session hash, its id, the ids of U3 in its roster, ascending), with
  /// `members` those ids for a sparse graph and empty for the complete graph. Deterministic: the
  /// same bytes again on every call (a resume). Available from kConsistency until kDone.
  /// @errors kFailedPrecondition: not a signed session, or before U3 (or aborted).
  /// credential::sign_digest()'s errors (kResourceExhausted when mbedTLS's pool is full,
  /// kInternal). kInternal: SHA-256 failed.
  Status consistency_message(fedstat_v1_SecAggConsistency& out);
  /// Signed sparse sessions (protocol 6, rule D8), from kMasked on: this client's U2 view, sent
  /// after its last masked chunk — round 2, `members` the ids of U2 in its roster (itself
  /// included, ascending), its signature over consistency_digest(…, ViewRound::kU2) with its round
  /// keys. Deterministic: the same bytes again on every call (a resume).
  /// @errors kFailedPrecondition: not a signed sparse session, or before the input is masked (or
  /// aborted). credential::sign_digest()'s errors (kResourceExhausted, kInternal). kInternal:
  /// SHA-256 failed.
  Status masked_view_message(fedstat_v1_SecAggConsistency& out);
  /// Signed sessions, after U3: a peer's consistency message, forwarded by the server.
  /// With round 2 (signed sparse sessions, rule D8) it is the peer's U2 view instead: accepted in
  /// kConsistency only, from a member of this client's U3 (kInvalidArgument otherwise, or on a
  /// complete graph, or from itself, or members not strictly ascending, or a signature not 64
  /// bytes); a verified view that names this client marks the peer, and next_reveal() gives its
  /// self-mask share only for marked peers (an empty share otherwise). kPermissionDenied, nothing
  /// marked: a signature that does not verify (another view, session, round keys or signer), a
  /// view that does not name this client, or a view arriving after the reveals began (one
  /// already marked is OK). A round other than 0 and 2: kInvalidArgument. A valid
  /// one from a member of this client's U3 whose view agrees with this client's, and from which
  /// this client holds a valid share, is counted once; when the count reaches the threshold —
  /// this client included for the complete graph, besides it for a sparse graph — the stage
  /// becomes kUnmasking and next_reveal() works. Complete graph: the signature must verify over
  /// this client's own U3 ids. Sparse graph: it must verify over `members`, and `members` must
  /// agree with this client's U3 on every roster entry within degree/2 ring positions of the signer
  /// (all of the roster when it is all of U1) and name no roster entry outside them. A message from
  /// a signer already counted changes nothing (OK, not verified again: a resume).
  /// @errors kFailedPrecondition: not a signed session, or not in kConsistency, kUnmasking or
  /// kDone. kInvalidArgument: another session, a signer outside this client's U3 or this client
  /// itself, a signature that is not 64 bytes, members on a complete graph, or (sparse) members
  /// not strictly ascending. kNotFound: the signer is not in the roster. kPermissionDenied: the
  /// signature does not verify (another view, session or signer), or a signer from which this
  /// client holds no valid share: nothing counted, the session goes on. kAborted (sparse): a
  /// verified view that disagrees with this client's — evidence that the server showed members
  /// different U3 sets; the session is aborted and reveals nothing. kResourceExhausted: mbedTLS's
  /// pool is full (nothing counted; may be retried). kInternal: SHA-256 failed.
  Status on_consistency(const fedstat_v1_SecAggConsistency& message);
  /// Round 2: masks the input in place with the self mask and every pairwise mask of U2;
  /// vector.size() == the session's length. Masked once or never: a failure part way wipes the
  /// vector and aborts the session (a second try would mask it twice).
  /// @errors kFailedPrecondition: not kReadyToMask (before U2, or masked already).
  /// kInvalidArgument: the wrong length. Any mask or X25519 failure (kInvalidArgument for a
  /// peer's malformed or low-order key, kResourceExhausted, kUnavailable, kInternal): the vector
  /// is wiped and the stage becomes kAborted.
  Status mask(Span<uint64_t> vector);
  /// As the 64-bit overload, for 32-bit words: the session's bits must be ≤ 32 (half the memory
  /// of 64-bit words on a microcontroller).
  /// @errors kInvalidArgument: the session's bits exceed 32, or the wrong length.
  /// kFailedPrecondition: not kReadyToMask. Any mask or X25519 failure (kInvalidArgument,
  /// kResourceExhausted, kUnavailable, kInternal): the vector is wiped and the stage becomes
  /// kAborted.
  Status mask(Span<uint32_t> vector);
  /// Round 2: the next chunk (up to kChunkWords words) of the masked 64-bit input. True with
  /// `out` filled while words remain; false once all were sent.
  /// @errors kFailedPrecondition: not kMasked. kInvalidArgument: `masked` has the wrong length.
  Result<bool> next_chunk(Span<const uint64_t> masked, fedstat_v1_SecAggMaskedChunk& out);
  /// Round 2: the next chunk (up to kChunkWords words) of the masked 32-bit input. True with
  /// `out` filled while words remain; false once all were sent.
  /// @errors kFailedPrecondition: not kMasked. kInvalidArgument: `masked` has the wrong length.
  Result<bool> next_chunk(Span<const uint32_t> masked, fedstat_v1_SecAggMaskedChunk& out);
  /// Round 3: the next reveal: this client's own share of b_u first, then for each peer of U2
  /// its share of b_v (v in U3) or of s_v^SK (v dropped), never both — an empty share for a peer
  /// whose share to this client was bad (nothing held, nothing revealed), and in a signed sparse
  /// session (rule D8) for a peer of U3 whose verified U2 view did not name this client. True with
  /// `out` filled; false once all were made (stage kDone).
  /// @errors kFailedPrecondition: not in the unmasking round (before U3, before threshold
  /// consistency signatures in a signed session, or aborted).
  /// kPermissionDenied: the reveal would give both shares of one peer. kInternal: Shamir
  /// dealing failed inside mbedTLS (not expected).
  Result<bool> next_reveal(fedstat_v1_SecAggReveal& out);
  /// The server holds the first `held` of this client's messages of `round` (1: shares, 2: words
  /// of masked input, a whole number of chunks, 3: reveals): the next next_share / next_chunk /
  /// next_reveal continues after them, giving the same bytes again.
  /// @errors kFailedPrecondition: outside that round's stages (round 1: sharing or shared; 2:
  /// masked; 3: unmasking or done). kInvalidArgument: a `held` beyond what the round makes (or
  /// not a whole number of chunks), or a round other than 1, 2 and 3.
  Status rewind(uint32_t round, uint32_t held);
  /// The server abandoned the round: the secrets, public keys, session hash and any share key
  /// still kept in the roster are wiped and nothing more will be revealed (stage kAborted).
  void on_abort();

  /// The current stage.
  SecAggStage stage() const { return stage_; }
  /// The client id given to init().
  uint32_t id() const { return id_; }
  /// Roster entries received so far (all of U1 from kSharing on).
  size_t roster_size() const { return count_; }
  /// SHA-256 of the session header and the roster (32 bytes; set when the roster completes).
  ByteSpan session_hash() const { return ByteSpan(session_hash_, sizeof(session_hash_)); }
  /// Whether the current session is signed (protocol 5: started with signed_keys).
  bool signed_session() const { return signing_ != nullptr; }
  /// Signed sessions: the members whose consistency signature this client counted, itself
  /// included (0 before U3). Unmasking starts at threshold (complete graph) or threshold + 1
  /// (sparse: t neighbours besides itself).
  uint32_t consistency_count() const { return consistency_count_; }

 private:
  Status check_start(const fedstat_v1_SecAggStart& start) const;
  // A sparse roster entry's ring position; index 0 opens the committed seed.
  Result<uint64_t> sparse_entry_position(const fedstat_v1_SecAggPeerKeys& entry) const;
  Status fail(Status status);          // aborts on kAborted, else leaves the state as it was
  Status bad_share(SecAggPeer& peer);  // records that peer's share to this client was bad
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
  // The share key of `peer`: the one kept in its share slots if any, else share_key's, kept
  // there when `keep` and the slots hold no share yet.
  Status held_or_new_share_key(SecAggPeer& peer, MutableByteSpan key, bool keep);
  // Wipes every share key still kept in a peer's share slots.
  void wipe_held_share_keys();
  // on_abort's part in the object alone (init's: the last roster may not be ours any more).
  void wipe_session();
  Result<size_t> index_of(uint32_t id) const;
  Status read_members(const fedstat_v1_SecAggRoster& roster, uint8_t required, uint8_t set_flag,
                      size_t& members);
  // Signed sessions: checks a new roster entry's certificate and key signature and keeps the
  // certificate key in `peer` (on failure: kPermissionDenied, and the caller aborts).
  Status check_signed_entry(const fedstat_v1_SecAggKeys& keys, SecAggPeer& peer) const;
  // The ids of U3 (or U2) in this client's roster (itself included), ascending, to `visit`.
  template <typename Visit>
  Status for_each_ascending(uint8_t flag, Visit&& visit) const;  // flag kInU3 or kInU2
  // D8: a neighbour's U2 view (on_consistency with round 2).
  Status on_masked_view(const fedstat_v1_SecAggConsistency& message);
  uint32_t u3_in_roster() const;
  // The consistency digest of this client's own U3 view as signed by `signer`.
  Status own_view_digest(uint32_t signer, MutableByteSpan out) const;
  // Sparse: whether `message.members` agrees with this client's U3 around the signer (roster
  // index `signer_index`).
  bool views_agree(const fedstat_v1_SecAggConsistency& message, size_t signer_index) const;

  uint32_t id_ = 0;
  Span<SecAggPeer> peers_;
  RandomSource* random_ = nullptr;
  SecAggStage stage_ = SecAggStage::kIdle;
  uint64_t session_ = 0;
  uint32_t threshold_ = 0, length_ = 0, bits_ = 0, max_clients_ = 0;
  uint32_t degree_ = 0;  // 0: the complete graph; k: sparse (graph.h)
  size_t count_ = 0, self_index_ = 0, cursor_ = 0;
  bool own_share_revealed_ = false;
  uint8_t encryption_secret_[32] = {};
  uint8_t masking_secret_[32] = {};
  uint8_t self_mask_seed_[32] = {};
  uint8_t session_hash_[32] = {};
  uint8_t encryption_public_[32] = {};
  uint8_t masking_public_[32] = {};
  uint8_t commitment_[kCommitmentBytes] = {};       // c_u, sent in round 0
  uint8_t graph_commitment_[kGraphSeedBytes] = {};  // sparse: SecAggStart's, to the ring seed
  uint8_t graph_seed_[kGraphSeedBytes] = {};        // sparse: the seed, once opened (round 1)
  RingOrderCheck ring_check_;                       // sparse: the roster's ring order so far
  uint32_t ring_size_ = 0;                          // sparse: |U1|, from roster entry 0
  ShamirDealer self_mask_dealer_, key_dealer_;
  crypto::Sha256 roster_hash_;
  const credential::DeviceCredential* credential_ = nullptr;  // set_credential(): next sessions
  uint32_t assumed_corrupt_ppm_ = kDefaultCorruptFloorPpm;    // set_assumed_corrupt_ppm()
  const credential::DeviceCredential* signing_ = nullptr;     // this session's (signed sessions)
  uint8_t start_digest_[32] = {};                             // signed: start_parameters_digest
  uint8_t key_signature_[64] = {};                            // signed: this client's, round 0
  uint32_t consistency_count_ = 0;  // signed: verified agreeing signers, itself included
  bool roster_ascending_ = true;    // the roster's ids ascend by index (U3 views in one pass)
};

}  // namespace secagg
}  // namespace fedstat

#endif  // FEDSTAT_SDK_SECAGG_SECAGG_CLIENT_H_
