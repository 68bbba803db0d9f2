// Credentials file parsing (every error names its line) and the fleet PSK derivation.
#include "host_server/net/credentials.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <utility>
#include <vector>

namespace fedstat {
namespace net {
namespace {

constexpr char kKeyA[] = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
constexpr char kKeyB[] = "FFEEDDCCBBAA99887766554433221100ffeeddccbbaa99887766554433221100";

DeviceKeys parse(const std::string& text) {
  std::istringstream in(text);
  return parse_credentials(in);
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const CredentialsError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Credentials, ParsesDevicesCommentsAndBlankLines) {
  const DeviceKeys keys =
      parse(std::string("# fleet\n\n17 ") + kKeyA + "  # lab phone\n  42\t" + kKeyB + "\n");
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys.at(17)[0], 0x00);
  EXPECT_EQ(keys.at(17)[31], 0x1f);
  EXPECT_EQ(keys.at(42)[0], 0xff);  // upper-case hex accepted
  EXPECT_EQ(keys.at(42)[31], 0x00);
}

TEST(Credentials, EveryErrorNamesItsLine) {
  EXPECT_NE(error_of(std::string("# ok\n17\n")).find("line 2:"), std::string::npos);
  EXPECT_NE(error_of(std::string("17 ") + kKeyA + " extra\n").find("line 1: unexpected third"),
            std::string::npos);
  EXPECT_NE(error_of(std::string("\n\nx17 ") + kKeyA + "\n").find("line 3: device id"),
            std::string::npos);
  EXPECT_NE(error_of(std::string("017 ") + kKeyA + "\n").find("line 1: device id"),
            std::string::npos);
  EXPECT_NE(error_of(std::string("0 ") + kKeyA + "\n").find("line 1: device id"),
            std::string::npos);
  EXPECT_NE(error_of(std::string("18446744073709551615 ") + kKeyA + "\n").find("line 1: device id"),
            std::string::npos);
  EXPECT_NE(error_of(std::string("18446744073709551616 ") + kKeyA + "\n").find("line 1: device id"),
            std::string::npos);
  EXPECT_NE(error_of("17 abcd\n").find("line 1: key for device 17"), std::string::npos);
  EXPECT_NE(error_of(std::string("17 ") + std::string(63, 'a') + "g\n").find("line 1: key"),
            std::string::npos);
  EXPECT_NE(error_of(std::string("17 ") + kKeyA + "\n17 " + kKeyB + "\n")
                .find("line 2: device 17 is listed twice"),
            std::string::npos);
}

TEST(Credentials, MissingFileIsNamed) {
  try {
    load_credentials("/nonexistent/fedstat-credentials");
    FAIL() << "no error";
  } catch (const CredentialsError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/fedstat-credentials"), std::string::npos);
  }
}

// tls_revoked_devices' file: ids with comments and blank lines; every error names its line.
TEST(RevokedDevices, ParsesIdsAndNamesTheLineOfAnError) {
  std::istringstream good("# revoked after the 2026-12 leak\n17\n\n21  # lost phone\n17\n");
  EXPECT_EQ(parse_revoked_devices(good), (std::set<uint64_t>{17, 21}));
  for (const auto& [text, expected] : std::vector<std::pair<std::string, std::string>>{
           {"17\n017\n", "revoked devices line 2: device id \"017\""},
           {"0\n", "revoked devices line 1: device id"},
           {"18446744073709551615\n", "revoked devices line 1: device id"},
           {"\n17 21\n", "revoked devices line 2: unexpected second field \"21\""}}) {
    std::istringstream in(text);
    try {
      parse_revoked_devices(in);
      ADD_FAILURE() << "no error for " << text;
    } catch (const CredentialsError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
  try {
    load_revoked_devices("/nonexistent/fedstat-revoked");
    ADD_FAILURE() << "no error";
  } catch (const CredentialsError& e) {
    EXPECT_NE(std::string(e.what()).find("revoked devices file \"/nonexistent/fedstat-revoked\""),
              std::string::npos)
        << e.what();
  }
}

TEST(Credentials, DeviceIdentityIsCanonicalDecimal) {
  EXPECT_EQ(parse_device_identity("17"), std::optional<uint64_t>(17));
  EXPECT_EQ(parse_device_identity("18446744073709551614"),
            std::optional<uint64_t>(18446744073709551614ull));
  for (const char* bad : {"", "0", "017", "+17", "-17", "17 ", "1e3", "18446744073709551615",
                          "99999999999999999999"}) {
    EXPECT_FALSE(parse_device_identity(bad).has_value()) << bad;
  }
}

std::array<uint8_t, 32> counting_secret() {
  std::array<uint8_t, 32> secret{};
  for (size_t i = 0; i < secret.size(); ++i) secret[i] = static_cast<uint8_t>(i);
  return secret;
}

TEST(DeriveDevicePsk, MatchesIndependentHkdfSha256) {
  // Python: hmac over HKDF-Extract(salt = 32 zero bytes, ikm = 00..1f), then
  // HKDF-Expand(info = "fedstat device psk v1" || 00 00 00 00 00 00 00 11, 32 bytes).
  const DevicePsk key = derive_device_psk(counting_secret(), 17);
  const DevicePsk expected = {0x1c, 0x99, 0x9c, 0xe0, 0xf2, 0x2f, 0xde, 0xe6, 0xb6, 0x57, 0xf2,
                              0xba, 0x46, 0xdb, 0xb6, 0x88, 0x39, 0xba, 0xf9, 0x06, 0xf5, 0x39,
                              0x2b, 0xb8, 0x2d, 0xe9, 0xfd, 0x9c, 0xb3, 0x1d, 0xa5, 0x0c};
  EXPECT_EQ(key, expected);
}

TEST(DeriveDevicePsk, DeterministicAndDistinctPerDeviceAndSecret) {
  const auto secret = counting_secret();
  EXPECT_EQ(derive_device_psk(secret, 17), derive_device_psk(secret, 17));
  std::set<DevicePsk> keys;
  for (uint64_t id = 1; id <= 1000; ++id) keys.insert(derive_device_psk(secret, id));
  keys.insert(derive_device_psk(secret, uint64_t{1} << 56));  // id byte order matters
  EXPECT_EQ(keys.size(), 1001u);
  auto other = secret;
  other[31] ^= 1;
  EXPECT_NE(derive_device_psk(other, 17), derive_device_psk(secret, 17));
}

}  // namespace
}  // namespace net
}  // namespace fedstat
