// The per-address rate limit on new TLS connections (peer_handshake_limit.h).
#include "host_server/peer_handshake_limit.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace fedstat {
namespace host {

PeerHandshakeLimit::PeerHandshakeLimit(uint32_t per_minute, std::function<uint64_t()> clock)
    : clock_(std::move(clock)), ipv4_(per_minute), ipv6_(per_minute), overflow_(per_minute) {
  if (!clock_) {
    clock_ = [] {
      return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                       std::chrono::steady_clock::now().time_since_epoch())
                                       .count());
    };
  }
}

bool PeerHandshakeLimit::admit(const asio::ip::address& peer) {
  if (ipv4_.per_minute() == 0 || peer.is_loopback()) return true;
  const uint64_t now = clock_();
  if (now >= pruned_at_ + 60 || now < pruned_at_) {  // full buckets are the same as none
    prune(now);
    overflow_.prune(now);
  }
  if (peer.is_v6() && !peer.to_v6().is_v4_mapped()) {
    const asio::ip::address_v6::bytes_type bytes = peer.to_v6().to_bytes();
    // NAT64's well-known prefix 64:ff9b::/96 carries the client's IPv4 address in its last 32 bits.
    static constexpr uint8_t kNat64[12] = {0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
    if (std::equal(bytes.begin(), bytes.begin() + 12, kNat64)) {
      const uint32_t v4 = uint32_t{bytes[12]} << 24 | uint32_t{bytes[13]} << 16 |
                          uint32_t{bytes[14]} << 8 | bytes[15];
      return admit_key(ipv4_, v4, now);  // never loopback: RFC 6052 maps global addresses only
    }
    uint64_t prefix = 0;
    for (size_t i = 0; i < 8; ++i) prefix = prefix << 8 | bytes[i];
    return admit_key(ipv6_, prefix, now);
  }
  const asio::ip::address_v4 v4 =
      peer.is_v4() ? peer.to_v4() : asio::ip::make_address_v4(asio::ip::v4_mapped, peer.to_v6());
  if (v4.is_loopback()) return true;
  return admit_key(ipv4_, v4.to_uint(), now);
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
