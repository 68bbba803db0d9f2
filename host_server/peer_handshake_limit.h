// PeerHandshakeLimit: the per-address rate limit on new TLS connections (TlsServerConfig::
// admit_peer). A peer needs no credential to start a handshake, and each ClientHello costs the
// server an ephemeral key pair (X25519 or P-256) before the PSK identity is even sent; from one
// host, as fast as it can send ClientHellos, that would take the io thread from the honest fleet.
// Each address may open `per_minute` connections at once, then that many a minute (a token
// bucket per address: CheckInLimit's, rounds/check_in_limit.h); one beyond is closed at accept,
// before any TLS work. An IPv6 address is limited by its /64 (one host holds a whole /64); an
// IPv4-mapped IPv6 address as its IPv4 address. Loopback peers are never limited (a local proxy,
// the load generator and the emulated fleets connect from there).
// Honest devices behind one NAT share its address: the default, 3,000 a minute (50 a second
// after a burst of 3,000), lets through 18,000 devices checking in every 15 minutes per address.
// Time: whole seconds of the injected clock (steady_clock by default). Memory: one bucket
// (16 bytes plus the map's node) per address limited within the last minute; forgotten a minute
// after its last connection. Not thread-safe (the listener's io thread). Paper: none.
#ifndef FEDSTAT_HOST_PEER_HANDSHAKE_LIMIT_H_
#define FEDSTAT_HOST_PEER_HANDSHAKE_LIMIT_H_

#include <asio/ip/address.hpp>
#include <cstdint>
#include <functional>

#include "host_server/rounds/check_in_limit.h"

namespace fedstat {
namespace host {

// The default of handshakes_per_address_per_minute (server_config.h).
inline constexpr uint32_t kDefaultHandshakesPerAddressPerMinute = 3000;

class PeerHandshakeLimit {
 public:
  // per_minute == 0: no limit. `clock`: whole seconds; empty: steady_clock.
  explicit PeerHandshakeLimit(uint32_t per_minute = kDefaultHandshakesPerAddressPerMinute,
                              std::function<uint64_t()> clock = {});
  // Takes a token for `peer`'s address (or /64) if it has one; loopback always passes.
  bool admit(const asio::ip::address& peer);
  // Addresses currently tracked (both families).
  size_t tracked() const { return ipv4_.tracked() + ipv6_.tracked(); }

 private:
  std::function<uint64_t()> clock_;
  CheckInLimit ipv4_, ipv6_;  // keyed by the IPv4 address; by the IPv6 /64 prefix
  uint64_t pruned_at_ = 0;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_PEER_HANDSHAKE_LIMIT_H_
