// Issue 39 item 10: a network observer (or anyone who tries identities) must not learn which
// PSK identities the server knows from the alert it ends a failed handshake with. Before, an
// unknown identity got unknown_psk_identity (115) and a known one with a wrong key
// bad_record_mac (20). Here the TlsServer (in process, on loopback) against a client on mbedTLS
// itself, which reads the alert's description byte. Host only.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>

#include "host_server/net/credentials.h"
#include "host_server/net/tls_server.h"
#include "mbedtls/ctr_drbg.h"
#include "mbedtls/entropy.h"
#include "mbedtls/net_sockets.h"
#include "mbedtls/ssl.h"
#include "sdk/tls/tls_channel.h"

namespace fedstat {
namespace audit {
namespace {

constexpr uint64_t kUnknown = 999;

std::array<uint8_t, 32> fleet_secret() {
  std::array<uint8_t, 32> secret{};
  secret.fill(0x33);
  return secret;
}

class Ignore final : public net::FrameHandler {
 public:
  void on_open(net::ConnectionId, const std::string&) override {}
  void on_frame(net::ConnectionId, const wire::Envelope&) override {}
  void on_close(net::ConnectionId, const std::string&) override {}
};

// The description byte of the fatal alert a full handshake as `identity` with `key` ends with;
// -1 when it did not end with one (`rc` says how it ended).
int handshake_alert(uint16_t port, const std::string& identity, const net::DevicePsk& key,
                    int& rc) {
  mbedtls_net_context socket;
  mbedtls_entropy_context entropy;
  mbedtls_ctr_drbg_context drbg;
  mbedtls_ssl_config config;
  mbedtls_ssl_context ssl;
  mbedtls_net_init(&socket);
  mbedtls_entropy_init(&entropy);
  mbedtls_ctr_drbg_init(&drbg);
  mbedtls_ssl_config_init(&config);
  mbedtls_ssl_init(&ssl);
  rc = mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &entropy, nullptr, 0);
  if (rc == 0) {
    rc = mbedtls_ssl_config_defaults(&config, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                     MBEDTLS_SSL_PRESET_DEFAULT);
  }
  if (rc == 0) {
    tls::pin_psk_profile(config, drbg);  // the device's suite, groups and version
    mbedtls_ssl_conf_read_timeout(&config, 10000);
    rc = mbedtls_ssl_conf_psk(&config, key.data(), key.size(),
                              reinterpret_cast<const unsigned char*>(identity.data()),
                              identity.size());
  }
  if (rc == 0) {
    rc = mbedtls_net_connect(&socket, "127.0.0.1", std::to_string(port).c_str(),
                             MBEDTLS_NET_PROTO_TCP);
  }
  if (rc == 0) rc = mbedtls_ssl_setup(&ssl, &config);
  if (rc == 0) {
    mbedtls_ssl_set_bio(&ssl, &socket, mbedtls_net_send, nullptr, mbedtls_net_recv_timeout);
    do {
      rc = mbedtls_ssl_handshake(&ssl);
    } while (rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE);
  }
  // What the record layer left: level, description (ssl_tls.c, on a fatal alert received).
  const int alert = rc == MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE ? ssl.in_msg[1] : -1;
  mbedtls_ssl_free(&ssl);
  mbedtls_ssl_config_free(&config);
  mbedtls_ctr_drbg_free(&drbg);
  mbedtls_entropy_free(&entropy);
  mbedtls_net_free(&socket);
  return alert;
}

TEST(TlsAlert, AnUnknownIdentityEndsWithTheSameAlertAsAWrongKey) {
  asio::io_context io;
  Ignore handler;
  net::TlsServerConfig config;
  config.lookup_psk = [](const std::string& identity) -> std::optional<net::DevicePsk> {
    const std::optional<uint64_t> id = net::parse_device_identity(identity);
    if (!id || *id == kUnknown) return std::nullopt;
    return net::derive_device_psk(fleet_secret(), *id);
  };
  net::TlsServer server(io, config, handler);
  server.start();
  std::thread io_thread([&] { io.run(); });

  int unknown_rc = 0, wrong_rc = 0;
  // Any key for the identity the server does not know; a key off by one bit for one it does.
  const int unknown = handshake_alert(server.port(), std::to_string(kUnknown),
                                      net::derive_device_psk(fleet_secret(), 1), unknown_rc);
  net::DevicePsk wrong = net::derive_device_psk(fleet_secret(), 17);
  wrong[0] ^= 1;
  const int wrong_key = handshake_alert(server.port(), "17", wrong, wrong_rc);

  asio::post(io, [&] { server.stop(); });
  io_thread.join();
  EXPECT_NE(wrong_key, -1) << "a wrong key ended without an alert: " << wrong_rc;
  EXPECT_NE(unknown, -1) << "an unknown identity ended without an alert: " << unknown_rc;
  EXPECT_EQ(unknown, wrong_key) << "alert " << unknown << " for an unknown identity, " << wrong_key
                                << " for a wrong key: an observer tells them apart";
}

}  // namespace
}  // namespace audit
}  // namespace fedstat
