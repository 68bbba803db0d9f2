// PeerAddress: the one place that decides which peers a per-address limit counts together — the
// handshake rate limit (host_server/peer_handshake_limit.h) and the listener's cap on connections
// per address (tls_server.h, max_connections_per_address). An IPv4 address counts as itself; an
// IPv6 address by its /64 (one host holds a whole /64); an IPv4-mapped (::ffff:a.b.c.d) or NAT64
// (64:ff9b::a.b.c.d, RFC 6052's well-known prefix; not the local-use 64:ff9b:1::/48) address as
// its IPv4 address. Loopback: 127/8, ::1 and ::ffff:127/104 (a NAT64 address never is: RFC 6052
// maps global addresses only). Errors: none. Memory: 16 bytes. Paper: none.
#ifndef FEDSTAT_HOST_SERVER_NET_PEER_ADDRESS_H_
#define FEDSTAT_HOST_SERVER_NET_PEER_ADDRESS_H_

#include <algorithm>
#include <asio/ip/address.hpp>
#include <cstdint>
#include <functional>
#include <string>

namespace fedstat {
namespace net {

struct PeerAddress {
  bool ipv6 = false;      // key is an IPv6 /64 prefix (else an IPv4 address)
  bool loopback = false;  // the peer is on this machine's loopback
  uint64_t key = 0;       // the IPv4 address, or the /64 prefix

  bool operator==(const PeerAddress& o) const { return ipv6 == o.ipv6 && key == o.key; }
  // "203.0.113.5" or "2001:db8::/64".
  std::string text() const {
    if (!ipv6) return asio::ip::address_v4(static_cast<uint32_t>(key)).to_string();
    asio::ip::address_v6::bytes_type bytes{};
    for (size_t i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(key >> (56 - 8 * i));
    return asio::ip::address_v6(bytes).to_string() + "/64";
  }
};

inline PeerAddress peer_address(const asio::ip::address& peer) {
  PeerAddress out;
  if (peer.is_v6() && !peer.to_v6().is_v4_mapped()) {
    const asio::ip::address_v6::bytes_type bytes = peer.to_v6().to_bytes();
    static constexpr uint8_t kNat64[12] = {0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
    if (std::equal(bytes.begin(), bytes.begin() + 12, kNat64)) {
      out.key = uint64_t{bytes[12]} << 24 | uint64_t{bytes[13]} << 16 | uint64_t{bytes[14]} << 8 |
                bytes[15];
      return out;  // never loopback
    }
    out.ipv6 = true;
    out.loopback = peer.is_loopback();
    for (size_t i = 0; i < 8; ++i) out.key = out.key << 8 | bytes[i];
    return out;
  }
  const asio::ip::address_v4 v4 =
      peer.is_v4() ? peer.to_v4() : asio::ip::make_address_v4(asio::ip::v4_mapped, peer.to_v6());
  out.key = v4.to_uint();
  out.loopback = v4.is_loopback();
  return out;
}

struct PeerAddressHash {
  size_t operator()(const PeerAddress& a) const {
    return std::hash<uint64_t>()(a.key) ^ (a.ipv6 ? 0x9e3779b97f4a7c15ull : 0);
  }
};

}  // namespace net
}  // namespace fedstat

#endif  // FEDSTAT_HOST_SERVER_NET_PEER_ADDRESS_H_
