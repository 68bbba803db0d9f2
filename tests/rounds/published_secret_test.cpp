// A fleet_secret published in the repository (examples/server/server.json's, the demos' 5a…5a)
// makes every device's key public: the server refuses to serve it off loopback (issue 44 review),
// and only warns on loopback. Paper: none.
#include <gtest/gtest.h>

#include <array>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "host_server/file_access.h"
#include "host_server/hex.h"
#include "host_server/net/credentials.h"
#include "host_server/server_app.h"
#include "host_server/server_config.h"
#include "tests/store/temp_dir.h"

namespace fedstat {
namespace host {
namespace testing {
namespace {

std::array<uint8_t, 32> example_secret() {
  // examples/server/server.json's fleet_secret, decoded.
  return parse_hex32("66656473746174206578616d706c65206f6e6c792c206e657665722075736521", "t");
}

// The std::invalid_argument `config` is refused with ("" when it is not).
std::string refusal(const ServerConfig& config) {
  try {
    refuse_published_fleet_secret_off_loopback(config);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(PublishedFleetSecret, IsRefusedOffLoopbackAndOnlyWarnedOnLoopback) {
  ServerConfig config;
  config.fleet_secret = example_secret();
  for (const char* address : {"127.0.0.1", "127.3.2.1", "::1", "localhost"}) {
    config.address = address;
    EXPECT_EQ(refusal(config), "") << address;
  }
  for (const char* address : {"0.0.0.0", "::", "192.0.2.7", "::ffff:127.0.0.1", ""}) {
    config.address = address;
    EXPECT_NE(refusal(config).find("published in the fedstat repository"), std::string::npos)
        << address;
  }
  config.fleet_secret->fill(0x5a);  // the demos' and emulation tests'
  config.address = "0.0.0.0";
  EXPECT_NE(refusal(config), "");
  for (uint8_t b : {0x00, 0x11, 0xaa, 0xff}) {  // one byte repeated: guessed first
    config.fleet_secret->fill(b);
    EXPECT_NE(refusal(config), "") << int{b};
  }
  (*config.fleet_secret)[31] = 0xfe;  // not one byte repeated, not published: serves
  EXPECT_EQ(refusal(config), "");
}

TEST(PublishedFleetSecret, AnOperatorsOwnSecretOrCredentialsServeAnywhere) {
  ServerConfig config;
  config.address = "0.0.0.0";
  config.fleet_secret = example_secret();
  (*config.fleet_secret)[0] ^= 1;
  EXPECT_EQ(refusal(config), "");
  config.fleet_secret.reset();
  config.credentials_path = "devices.txt";
  EXPECT_EQ(refusal(config), "");
}

// Mutual TLS (issue 42): with device_authentication "certificate" the listener takes no PSK, so a
// fleet_secret or credentials file is a device secret held for nothing; the server says so.
TEST(PublishedFleetSecret, CertificateModeWarnsOfDeviceSecretsItNeverUses) {
  auto warned = [](const ServerConfig& config) {
    for (const std::string& warning : start_warnings(config)) {
      if (warning.find("holds device secrets it never uses") != std::string::npos) return true;
    }
    return false;
  };
  ServerConfig config;
  config.device_authentication = "certificate";
  EXPECT_FALSE(warned(config));
  config.fleet_secret = example_secret();
  (*config.fleet_secret)[0] ^= 1;
  EXPECT_TRUE(warned(config));
  config.device_authentication = "either";  // PSK devices use it there
  EXPECT_FALSE(warned(config));
  config.device_authentication = "certificate";
  config.fleet_secret.reset();
  config.credentials_path = "devices.txt";
  EXPECT_TRUE(warned(config));
}

TEST(PublishedFleetSecret, ServeRefusesBeforeOpeningTheStore) {
  ServerConfig config;
  config.address = "0.0.0.0";
  config.fleet_secret = example_secret();
  config.store_path = "/nonexistent-fedstat-dir/server.db";  // opening it would fail otherwise
  std::ostringstream log;
  std::string message;
  try {
    serve(config, "", log);
  } catch (const std::exception& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("published in the fedstat repository"), std::string::npos) << message;
}

TEST(PublishedFleetSecret, KeysDerivedFromItAreFoundInACredentialsFile) {
  std::array<uint8_t, 32> demo;
  demo.fill(0x5a);
  net::DeviceKeys keys;
  keys[1] = net::derive_device_psk(example_secret(), 1);  // examples/report_to_server/README.md
  keys[2].fill(0x17);                                     // a key of its own
  keys[7] = net::derive_device_psk(demo, 7);
  EXPECT_EQ(devices_with_published_keys(keys), (std::vector<uint64_t>{1, 7}));
  keys.erase(1);
  keys.erase(7);
  EXPECT_TRUE(devices_with_published_keys(keys).empty());
}

TEST(PublishedFleetSecret, ServeRefusesACredentialsFileOfPublishedKeysOffLoopback) {
  fedstat::testing::TempDir dir;
  const net::DevicePsk key = net::derive_device_psk(example_secret(), 1);
  std::ofstream(dir.file("devices.txt")) << "1 " << encode_hex(key.data(), key.size()) << "\n";
  ServerConfig config;
  config.address = "0.0.0.0";
  config.credentials_path = dir.file("devices.txt");
  config.store_path = dir.file("server.db");
  std::ostringstream log;
  std::string message;
  try {
    serve(config, "", log);  // without the refusal: it would serve (and this test hang)
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("the key of device 1 derives from a fleet secret published"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace testing
}  // namespace host
}  // namespace fedstat
