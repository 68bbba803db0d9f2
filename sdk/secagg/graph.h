/// @file
/// The secure-aggregation graph: who shares with whom (SecAgg+, Bell, Bonawitz, Gascón, Lepoint,
/// Raykova, CCS 2020, §3 — the Harary graph H(n, k) over a random permutation of the clients).
///
/// Complete graph (degree 0): every member of U1 shares with every other, as in Bonawitz et al.
/// 2017. Sparse graph (an even degree k ≥ 2): the members of U1 sit on a ring in the order of
/// their ring positions, and each shares keys, Shamir shares, pairwise masks and reveals with its
/// k/2 predecessors and k/2 successors only (its neighbourhood, k + 1 holders with itself). A
/// client's ring position is
///
///     position(id) = LE64(first 8 bytes of SHA-256("fedstat secagg ring position v1" ‖ LE64
///                    session ‖ r ‖ LE32 id)), ties broken by the smaller id
///
/// where r is 32 bytes the server draws and commits to in SecAggStart, before any key is seen:
///
///     commitment = SHA-256("fedstat secagg graph commitment v1" ‖ LE64 session ‖ r)
///
/// and opens in round 1 (SecAggPeerKeys.graph_seed, roster entry 0). Sorting by a hash of a
/// random seed is a uniformly random permutation; the seed and every id are fixed before the keys
/// arrive, so the server cannot place a client after seeing anyone's keys, a client's keys
/// cannot move it, and a member who drops before U1 only leaves the ring (its neighbours take
/// the next along) instead of reshuffling it. docs/protocol.md ("The sparse graph") says why
/// this choice, and what a commitment does not stop (a server that picks r knowing which ids it
/// controls; issue 42's credentials and an unbiased coin are what close that).
///
/// The session hash (the share encryption's associated data and HKDF salt, the masks' context)
/// of a sparse session is common to all its members — their rosters differ:
///
///     SHA-256(session header (session_hash.h) ‖ LE32 degree ‖ LE32 max_clients ‖ r ‖
///             LE32 ring size |U1|)
///
/// RingOrderCheck is what a device checks of the roster it is sent: every entry's position in
/// turn, the whole forming one turn of the ring (exactly one cyclic descent), with itself in the
/// middle when the roster is a full neighbourhood. A device cannot see the rest of the ring: a
/// server that leaves members out of a neighbourhood has them drop out (δ of the bound).
///
/// @memory none for the functions; sizeof(RingOrderCheck) = 40 bytes.
/// @paper Bell et al. 2020 §3 (Harary graph, Algorithm 2's neighbourhoods); Bonawitz et al.
/// 2017 §4 (the session id).
#ifndef FEDSTAT_SDK_SECAGG_GRAPH_H_
#define FEDSTAT_SDK_SECAGG_GRAPH_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/result.h"
#include "sdk/base/span.h"
#include "sdk/base/status.h"

namespace fedstat {
namespace secagg {

/// Bytes of the ring seed r and of its commitment.
constexpr size_t kGraphSeedBytes = 32;
/// The largest degree a device accepts: its roster (k + 1 entries) must fit the roster bitmap.
constexpr uint32_t kMaxGraphDegree = 1022;
/// The most clients a sparse session may allow (max_clients): the bound is computed up to here.
constexpr uint32_t kMaxSparseClients = 10000000;

/// The commitment to the ring seed `seed` (32 bytes) for `session`, into `out` (32 bytes).
/// @errors kInvalidArgument: `seed` or `out` is not 32 bytes. kInternal: SHA-256 failed inside
/// mbedTLS (not expected).
Status graph_commitment(uint64_t session, ByteSpan seed, MutableByteSpan out);

/// Client `id`'s ring position in `session` under the seed `seed` (32 bytes).
/// @errors kInvalidArgument: `seed` is not 32 bytes. kInternal: SHA-256 failed inside mbedTLS.
Result<uint64_t> ring_position(uint64_t session, ByteSpan seed, uint32_t id);

/// Whether client (position a, id a_id) comes before (position b, id b_id) on the ring.
constexpr bool ring_before(uint64_t a, uint32_t a_id, uint64_t b, uint32_t b_id) {
  return a < b || (a == b && a_id < b_id);
}

/// The session hash of a sparse session (above), into `out` (32 bytes).
/// @errors kInvalidArgument: `seed` or `out` is not 32 bytes. kInternal: SHA-256 failed inside
/// mbedTLS.
Status sparse_session_hash(uint64_t session, uint32_t threshold, uint32_t length, uint32_t bits,
                           uint32_t degree, uint32_t max_clients, ByteSpan seed, uint32_t ring_size,
                           MutableByteSpan out);

/// The roster size of a member of a ring of `members` clients with degree `degree` (0:
/// complete): min(k + 1, members), or `members`.
constexpr uint32_t neighbourhood_size(uint32_t members, uint32_t degree) {
  return degree == 0 || members <= degree ? members : degree + 1;
}

/// A device's check of its sparse roster's ring order, fed one entry at a time (index order).
class RingOrderCheck {
 public:
  /// Forgets every entry fed.
  void reset() { *this = RingOrderCheck(); }
  /// The next entry: its ring position and id.
  void add(uint64_t position, uint32_t id);
  /// After the last of `count` entries: kOk when they form one turn of the ring (a rotation of
  /// ascending order) and, for a full neighbourhood (count = degree + 1), `self_index` is its
  /// middle (degree / 2).
  /// @errors kInvalidArgument: not in ring order, or this client not in the middle.
  Status finish(size_t count, uint32_t degree, size_t self_index) const;
  /// Steps down between consecutive entries fed so far (the wrap back to the first not counted).
  uint32_t descents() const { return descents_; }

 private:
  uint64_t first_position_ = 0, last_position_ = 0;
  uint32_t first_id_ = 0, last_id_ = 0;
  uint32_t descents_ = 0;
  uint32_t entries_ = 0;
};

}  // namespace secagg
}  // namespace fedstat

#endif  // FEDSTAT_SDK_SECAGG_GRAPH_H_
