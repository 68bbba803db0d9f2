// The per-address rate limit on new TLS connections (peer_handshake_limit.h).
#include "host_server/peer_handshake_limit.h"

#include "host_server/net/peer_address.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace fedstat {
namespace host {

PeerHandshakeLimit::PeerHandshakeLimit(uint32_t per_minute, std::function<uint64_t()> clock,
                                       bool exempt_loopback)
    : clock_(std::move(clock)),
      exempt_loopback_(exempt_loopback),
      ipv4_(per_minute),
      ipv6_(per_minute),
      overflow_(per_minute) {
  if (!clock_) {
    clock_ = [] {
      return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                       std::chrono::steady_clock::now().time_since_epoch())
                                       .count());
    };
  }
}

bool PeerHandshakeLimit::admit(const asio::ip::address& peer) {
  if (ipv4_.per_minute() == 0) return true;
  const net::PeerAddress address = net::peer_address(peer);  // an IPv4 address or an IPv6 /64
  if (address.loopback && exempt_loopback_) return true;
  const uint64_t now = clock_();
  if (now >= pruned_at_ + 60 || now < pruned_at_) {  // full buckets are the same as none
    prune(now);
    overflow_.prune(now);
  }
  return admit_key(address.ipv6 ? ipv6_ : ipv4_, address.key, now);
}

void PeerHandshakeLimit::prune(uint64_t now) {
  ipv4_.prune(now);
  ipv6_.prune(now);
  pruned_at_ = now;
}

bool PeerHandshakeLimit::admit_key(CheckInLimit& family, uint64_t key, uint64_t now) {
  // A new address while every bucket is taken: the full ones are dropped at once (at most once a
  // second), and if none is, it shares the overflow bucket: memory stays bounded.
  bool room = ipv4_.tracked() + ipv6_.tracked() < kMaxTrackedAddresses;
  if (!room && !family.tracks(key) && now != pruned_at_) {
    prune(now);
    room = ipv4_.tracked() + ipv6_.tracked() < kMaxTrackedAddresses;
  }
  CheckInLimit& bucket = room || family.tracks(key) ? family : overflow_;
  return bucket.admit(&bucket == &overflow_ ? 0 : key, now) == CheckInLimit::Verdict::kAdmitted;
}

}  // namespace host
}  // namespace fedstat
