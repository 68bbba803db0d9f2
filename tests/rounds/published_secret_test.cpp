// A fleet_secret published in the repository (examples/server/server.json's, the demos' 5a…5a)
// makes every device's key public: the server refuses to serve it off loopback (issue 44 review),
// and only warns on loopback. Paper: none.
#include <gtest/gtest.h>

#include <array>
#include <sstream>
#include <stdexcept>
#include <string>

#include "host_server/file_access.h"
#include "host_server/server_app.h"
#include "host_server/server_config.h"

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

}  // namespace
}  // namespace testing
}  // namespace host
}  // namespace fedstat
