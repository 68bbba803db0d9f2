// PeerHandshakeLimit (host_server/peer_handshake_limit.h): a token bucket per IPv4 address or
// IPv6 /64, loopback exempt, 0 = no limit. The clock is the test's (whole seconds).
#include "host_server/peer_handshake_limit.h"

#include <gtest/gtest.h>

#include <string>

namespace fedstat {
namespace host {
namespace {

asio::ip::address at(const std::string& text) {
  return asio::ip::make_address(text);
}

class PeerHandshakeLimitTest : public ::testing::Test {
 protected:
  // How many of `tries` connections from `peer` are admitted now.
  int admitted(const std::string& peer, int tries) {
    int n = 0;
    for (int i = 0; i < tries; ++i) n += limit_.admit(at(peer));
    return n;
  }
  uint64_t now_ = 1000;
  PeerHandshakeLimit limit_{3, [this] { return now_; }};  // a burst of 3, then 3 a minute
};

TEST_F(PeerHandshakeLimitTest, EachAddressHasABurstThenItsRate) {
  EXPECT_EQ(admitted("203.0.113.5", 10), 3);
  EXPECT_EQ(admitted("203.0.113.6", 10), 3);  // another address has its own bucket
  now_ += 19;
  EXPECT_EQ(admitted("203.0.113.5", 10), 0);  // 3 a minute: a token every 20 s
  now_ += 1;
  EXPECT_EQ(admitted("203.0.113.5", 10), 1);
  now_ += 60;
  EXPECT_EQ(admitted("203.0.113.5", 10), 3);  // a minute refills the burst, no more
}

TEST_F(PeerHandshakeLimitTest, AnIpv6Slash64IsOnePeerAndAMappedIpv4AddressIsItsIpv4) {
  EXPECT_EQ(admitted("2001:db8::1", 2), 2);
  EXPECT_EQ(admitted("2001:db8::ffff:2", 5), 1);  // the same /64: one token left
  EXPECT_EQ(admitted("2001:db8:0:1::1", 5), 3);   // the next /64
  EXPECT_EQ(admitted("::ffff:198.51.100.7", 2), 2);
  EXPECT_EQ(admitted("198.51.100.7", 5), 1);
  // NAT64's well-known prefix carries the client's IPv4 address: it counts as that address.
  EXPECT_EQ(admitted("64:ff9b::203.0.113.9", 2), 2);
  EXPECT_EQ(admitted("203.0.113.9", 5), 1);
  EXPECT_EQ(admitted("64:ff9b::127.0.0.1", 10), 3);  // not loopback: limited as 127.0.0.1
}

TEST_F(PeerHandshakeLimitTest, PastTheTrackedAddressesNewOnesShareOneBucket) {
  for (size_t i = 0; i < kMaxTrackedAddresses; ++i) {
    ASSERT_TRUE(limit_.admit(asio::ip::address_v4(static_cast<uint32_t>(0x0b000000u + i))));
  }
  EXPECT_EQ(limit_.tracked(), kMaxTrackedAddresses);
  // Every bucket is taken: new addresses share one burst of 3, and no bucket is added.
  EXPECT_EQ(admitted("198.51.100.1", 2) + admitted("198.51.100.2", 2) + admitted("2001:db8::1", 2),
            3);
  EXPECT_EQ(limit_.tracked(), kMaxTrackedAddresses + 1);
  EXPECT_EQ(admitted("11.0.0.1", 5), 2);  // a tracked address keeps its own bucket
  // 20 s later the addresses that took one token have it back: their full buckets are dropped
  // at once for a new address (not 11.0.0.1's, nor the overflow), which gets a bucket of its own.
  now_ += 20;
  EXPECT_EQ(admitted("198.51.100.3", 5), 3);
  EXPECT_EQ(limit_.tracked(), 3u);
  now_ += 61;  // the full buckets are dropped at the next check
  EXPECT_EQ(admitted("198.51.100.1", 5), 3);
  EXPECT_EQ(limit_.tracked(), 1u);  // every bucket was full again: only 198.51.100.1 now
}

TEST_F(PeerHandshakeLimitTest, LoopbackIsNeverLimited) {
  EXPECT_EQ(admitted("127.0.0.1", 100), 100);
  EXPECT_EQ(admitted("127.8.9.10", 100), 100);
  EXPECT_EQ(admitted("::1", 100), 100);
  EXPECT_EQ(admitted("::ffff:127.0.0.1", 100), 100);
  EXPECT_EQ(limit_.tracked(), 0u);
}

TEST_F(PeerHandshakeLimitTest, LoopbackIsLimitedWhenNotExempt) {
  PeerHandshakeLimit counted(
      3, [this] { return now_; }, /*exempt_loopback=*/false);
  int n = 0;
  for (int i = 0; i < 10; ++i) n += counted.admit(at("127.0.0.1"));
  EXPECT_EQ(n, 3);
  for (int i = 0; i < 10; ++i) n += counted.admit(at("127.0.0.2"));  // another address
  EXPECT_EQ(n, 6);
}

TEST_F(PeerHandshakeLimitTest, ZeroIsNoLimit) {
  PeerHandshakeLimit none(0, [this] { return now_; });
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(none.admit(at("203.0.113.5")));
  EXPECT_EQ(none.tracked(), 0u);
}

TEST_F(PeerHandshakeLimitTest, AnAddressIsForgottenAMinuteAfterItsLastConnection) {
  for (int i = 0; i < 50; ++i) admitted("203.0.113." + std::to_string(i), 1);
  EXPECT_EQ(limit_.tracked(), 50u);
  now_ += 61;
  admitted("2001:db8::1", 1);
  EXPECT_EQ(limit_.tracked(), 1u);  // the 50 buckets were full again: dropped
}

}  // namespace
}  // namespace host
}  // namespace fedstat
