// fedstat-netfault's shared pieces (host_server/testing): clock and JSON helpers, the server's
// address and a blocking TCP connect, an attack's pacing (how long it goes on, the ready file),
// and TLS-PSK straight on mbedTLS, for bytes the SDK's channel would never send. Host only;
// errors: exceptions, as each says. Memory: none to speak of. Paper: none.
#ifndef FEDSTAT_HOST_TESTING_NETFAULT_SUPPORT_H_
#define FEDSTAT_HOST_TESTING_NETFAULT_SUPPORT_H_

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "host_server/net/credentials.h"
#include "mbedtls/ctr_drbg.h"
#include "mbedtls/entropy.h"
#include "mbedtls/ssl.h"
#include "nlohmann/json.hpp"
#include "sdk/tls/tls_channel.h"

namespace fedstat {
namespace netfault {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// Milliseconds from `from` to `to`.
double ms_since(Clock::time_point from, Clock::time_point to = Clock::now());
// {min, median, max} of `values` (nulls when empty).
json spread(std::vector<double> values);

struct Endpoint {
  std::string host, port;
};

// HOST:PORT split; std::invalid_argument otherwise.
Endpoint split_endpoint(const std::string& server);

// A blocking TCP connect; -1 on failure.
int tcp_connect(const Endpoint& endpoint, const std::string& source = "");

// Whether the attack goes on: for `seconds` from `start`, then — with a stop file — until that
// file exists (at most kLongestRunSeconds in all).
constexpr double kLongestRunSeconds = 600;
bool going_on(Clock::time_point start, double seconds, const std::string& stop_file);
// Writes "ready" to `path` (through a temporary file and a rename; nothing when empty).
void write_ready(const std::string& path);

// ---- TLS-PSK straight on mbedTLS, for bytes the SDK's channel would never send ---------------

// mbedTLS's text for an error code.
std::string mbedtls_text(int rc);

// The device's TLS configuration (sdk/tls/tls_channel.h's suite, groups and version) for one
// identity; sessions share it (one thread).
class PskClientConfig {
 public:
  PskClientConfig(const std::string& identity, const net::DevicePsk& psk) {
    mbedtls_entropy_init(&entropy_);
    mbedtls_ctr_drbg_init(&drbg_);
    mbedtls_ssl_config_init(&config_);
    int rc = mbedtls_ctr_drbg_seed(&drbg_, mbedtls_entropy_func, &entropy_, nullptr, 0);
    if (rc == 0) {
      rc = mbedtls_ssl_config_defaults(&config_, MBEDTLS_SSL_IS_CLIENT,
                                       MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
    }
    if (rc == 0) {
      tls::pin_psk_profile(config_, drbg_);
      mbedtls_ssl_conf_read_timeout(&config_, 10000);  // every blocking read: at most 10 s
      rc = mbedtls_ssl_conf_psk(&config_, psk.data(), psk.size(),
                                reinterpret_cast<const unsigned char*>(identity.data()),
                                identity.size());
    }
    if (rc != 0) {
      mbedtls_ssl_config_free(&config_);
      mbedtls_ctr_drbg_free(&drbg_);
      mbedtls_entropy_free(&entropy_);
      throw std::runtime_error("mbedTLS client setup failed: " + mbedtls_text(rc));
    }
  }
  ~PskClientConfig() {
    mbedtls_ssl_config_free(&config_);
    mbedtls_ctr_drbg_free(&drbg_);
    mbedtls_entropy_free(&entropy_);
  }
  PskClientConfig(const PskClientConfig&) = delete;
  PskClientConfig& operator=(const PskClientConfig&) = delete;
  const mbedtls_ssl_config* get() const { return &config_; }

 private:
  mbedtls_entropy_context entropy_;
  mbedtls_ctr_drbg_context drbg_;
  mbedtls_ssl_config config_;
};

// The first flight a device sends (its ClientHello record), captured from an mbedTLS client
// talking to a buffer.
std::vector<uint8_t> captured_client_hello(const PskClientConfig& config);

}  // namespace netfault
}  // namespace fedstat

#endif  // FEDSTAT_HOST_TESTING_NETFAULT_SUPPORT_H_
