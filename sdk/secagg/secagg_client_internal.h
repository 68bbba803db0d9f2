/// @file
/// What the pieces of SecAggClient (secagg_client*.cpp) share: the flags each roster entry
/// carries through a session. Internal to sdk/secagg, never installed
/// (FEDSTAT_INTERNAL_HEADERS).
///
/// @memory none (declarations only).
/// @paper Bonawitz et al., CCS 2017 (the sets U2, U3 the flags record).
#ifndef FEDSTAT_SDK_SECAGG_SECAGG_CLIENT_INTERNAL_H_
#define FEDSTAT_SDK_SECAGG_SECAGG_CLIENT_INTERNAL_H_

#include <stdint.h>

#include "sdk/secagg/secagg_client.h"

namespace fedstat {
namespace secagg {

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

}  // namespace secagg
}  // namespace fedstat

#endif  // FEDSTAT_SDK_SECAGG_SECAGG_CLIENT_INTERNAL_H_
