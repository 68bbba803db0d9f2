// PeerHandshakeLimit: a per-address rate limit on full TLS handshakes (TlsServerConfig::
// admit_peer), off by default. A peer needs no credential to start a handshake, and each
// ClientHello costs the server an ephemeral key pair (X25519 or P-256) before the PSK identity is
// even sent; from one host, as fast as it can send ClientHellos, that takes the io thread from the
// honest fleet. The listener asks only for full handshakes, before their key pair: a device that
// resumes a session the server holds (back within tls_session_lifetime_seconds) is not charged.
// Each address may make `per_minute` full handshakes at once, then that many a minute (a token
// bucket per address: CheckInLimit's, rounds/check_in_limit.h); one beyond is dropped before any
// TLS work. An IPv6 address counts by its /64 (one host holds a whole /64); an IPv4-mapped
// (::ffff:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d; not the local-use 64:ff9b:1::/48) address as its
// IPv4 address (net/peer_address.h). Loopback peers (127/8, ::1, ::ffff:127/104) are not limited
// unless exempt_loopback is false (a local proxy, the load generator and the emulated fleets
// connect from there; config exempt_loopback_peers). At most kMaxTrackedAddresses buckets
// are kept; past that, full buckets are dropped at once (at most once a second) and, if none is
// full, new addresses share one bucket: an attacker with a /48 of /64s can fill the table and make
// new honest addresses share per_minute. What it does not do (an operator's choice to turn it on,
// and to size it):
//   - devices behind one NAT, carrier-grade NAT, a load balancer's SNAT, share one bucket: an
//     attacker behind the same address can use up their new devices' full handshakes (returning
//     devices resume uncharged);
//   - an attacker with many addresses (a /48 of /64s, 6to4, Teredo) gets a bucket for each;
//   - a refused connection still costs an accept, the ClientHello's parse and a close (~30 µs), and
//     connections that never finish a hello are bounded only by max_connections and the
//     handshake time-out: a SYN or connection flood is for the kernel's firewall (e.g. an
//     nftables meter per source /64);
//   - a resumption is not charged, though an observer can replay a held session id: the server
//     then derives keys and answers without a key pair, and the peer cannot finish.
// Time: whole seconds of the injected clock (steady_clock by default). Memory: one bucket (about
// 60 bytes with the map's node) per address that made a full handshake within the last minute, at
// most kMaxTrackedAddresses (about 4 MB). Not thread-safe (the listener's io thread). Paper: none.
#ifndef FEDSTAT_HOST_PEER_HANDSHAKE_LIMIT_H_
#define FEDSTAT_HOST_PEER_HANDSHAKE_LIMIT_H_

#include <asio/ip/address.hpp>
#include <cstdint>
#include <functional>

#include "host_server/rounds/check_in_limit.h"

namespace fedstat {
namespace host {

// The addresses with a bucket of their own, at most.
inline constexpr size_t kMaxTrackedAddresses = 65536;

class PeerHandshakeLimit {
 public:
  // per_minute == 0: no limit. `clock`: whole seconds; empty: steady_clock. `exempt_loopback`:
  // loopback peers always pass (else they are limited like any address).
  explicit PeerHandshakeLimit(uint32_t per_minute, std::function<uint64_t()> clock = {},
                              bool exempt_loopback = true);
  // Takes a token for `peer`'s address (or /64) if it has one; loopback passes when exempt.
  bool admit(const asio::ip::address& peer);
  // Addresses currently tracked (both families, and the shared overflow bucket).
  size_t tracked() const { return ipv4_.tracked() + ipv6_.tracked() + overflow_.tracked(); }

 private:
  bool admit_key(CheckInLimit& family, uint64_t key, uint64_t now);
  // Drops both families' full buckets (the same as none).
  void prune(uint64_t now);

  std::function<uint64_t()> clock_;
  bool exempt_loopback_;
  CheckInLimit ipv4_, ipv6_;  // keyed by the IPv4 address; by the IPv6 /64 prefix
  CheckInLimit overflow_;     // one bucket (key 0) for new addresses while the others are full
  uint64_t pruned_at_ = 0;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_PEER_HANDSHAKE_LIMIT_H_
