// The per-address rate limit on new TLS connections (peer_handshake_limit.h).
#include "host_server/peer_handshake_limit.h"

#include <chrono>
#include <utility>

namespace fedstat {
namespace host {

PeerHandshakeLimit::PeerHandshakeLimit(uint32_t per_minute, std::function<uint64_t()> clock)
    : clock_(std::move(clock)), ipv4_(per_minute), ipv6_(per_minute) {
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
    ipv4_.prune(now);
    ipv6_.prune(now);
    pruned_at_ = now;
  }
  if (peer.is_v6() && !peer.to_v6().is_v4_mapped()) {
    const asio::ip::address_v6::bytes_type bytes = peer.to_v6().to_bytes();
    uint64_t prefix = 0;
    for (size_t i = 0; i < 8; ++i) prefix = prefix << 8 | bytes[i];
    return ipv6_.admit(prefix, now) == CheckInLimit::Verdict::kAdmitted;
  }
  const asio::ip::address_v4 v4 =
      peer.is_v4() ? peer.to_v4() : asio::ip::make_address_v4(asio::ip::v4_mapped, peer.to_v6());
  if (v4.is_loopback()) return true;
  return ipv4_.admit(v4.to_uint(), now) == CheckInLimit::Verdict::kAdmitted;
}

}  // namespace host
}  // namespace fedstat
