// Mutual TLS (issue 42 item 1): TlsServer with certificates against the device's real
// TlsCertificateChannel (and TlsPskChannel) on loopback, with certificates fedstat-ca's code
// writes (host_server/credential/x509_certificates.h). The server's io_context runs on its own
// thread; the test thread waits on condition variables, never sleeps.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "host_server/credential/fleet_credentials.h"
#include "host_server/credential/x509_certificates.h"
#include "host_server/net/credentials.h"
#include "host_server/net/tls_server.h"
#include "mbedtls/ctr_drbg.h"
#include "mbedtls/entropy.h"
#include "mbedtls/net_sockets.h"
#include "mbedtls/oid.h"
#include "mbedtls/x509_crt.h"
#include "sdk/tls/tls_certificate_channel.h"
#include "sdk/tls/tls_channel.h"
#include "tests/net/tls_test_support.h"

namespace fedstat {
namespace net {
namespace {

constexpr uint32_t kClientTimeoutMs = 10000;
constexpr auto kWaitLimit = std::chrono::seconds(20);  // a cap on waits, not a synchroniser
constexpr char kServerName[] = "127.0.0.1";

std::array<uint8_t, 32> fleet_secret() {
  std::array<uint8_t, 32> secret{};
  for (size_t i = 0; i < secret.size(); ++i) secret[i] = static_cast<uint8_t>(0x40 + i);
  return secret;
}

ByteSpan text_span(const std::string& pem) {  // PEM with its NUL, as mbedTLS wants
  return ByteSpan(reinterpret_cast<const uint8_t*>(pem.c_str()), pem.size() + 1);
}

using tls_test::Fleet;
using tls_test::hello;

// Records how each connection authenticated, opens and closes; echoes frames.
class RecordingHandler : public FrameHandler {
 public:
  void on_authenticated(ConnectionId id, const PeerAuthentication& how) override {
    std::lock_guard<std::mutex> lock(mutex_);
    how_[id] = how;
  }
  void on_open(ConnectionId id, const std::string& identity) override {
    std::lock_guard<std::mutex> lock(mutex_);
    opened_[id] = identity;
    changed_.notify_all();
  }
  void on_frame(ConnectionId id, const wire::Envelope& envelope) override {
    server->send(id, envelope);
  }
  void on_close(ConnectionId id, const std::string& reason) override {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_[id] = reason;
    changed_.notify_all();
  }
  // Waits until `count` connections were closed (or opened); the reasons / identities.
  std::map<ConnectionId, std::string> closed_after(size_t count) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, kWaitLimit, [&] { return closed_.size() >= count; });
    return closed_;
  }
  std::map<ConnectionId, std::string> opened() {
    std::lock_guard<std::mutex> lock(mutex_);
    return opened_;
  }
  std::map<ConnectionId, PeerAuthentication> how() {
    std::lock_guard<std::mutex> lock(mutex_);
    return how_;
  }
  TlsServer* server = nullptr;

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<ConnectionId, std::string> opened_, closed_;
  std::map<ConnectionId, PeerAuthentication> how_;
};

Status exchange(client::FrameChannel& channel, uint64_t id) {
  Status status = channel.send(hello(id));
  if (!status.ok()) return status;
  wire::Envelope echoed{};
  status = channel.receive(echoed, kClientTimeoutMs);
  if (!status.ok()) return status;
  if (echoed.which_body != fedstat_v1_Envelope_client_hello_tag ||
      echoed.body.client_hello.client_id != id) {
    return data_loss("echo does not match what was sent");
  }
  return Status();
}

class TlsCertificateTest : public ::testing::Test {
 protected:
  TlsCertificateTest() : fleet_(7), other_fleet_(8) {
    config_.lookup_psk = [](const std::string& identity) -> std::optional<DevicePsk> {
      const std::optional<uint64_t> id = parse_device_identity(identity);
      if (!id) return std::nullopt;
      return derive_device_psk(fleet_secret(), *id);
    };
    const host::ServerCertificate server = fleet_.server(kServerName);
    config_.certificates =
        TlsCertificates{server.certificate_pem, server.private_key_pem, fleet_.ca_pem};
    config_.device_authentication = DeviceAuthentication::kEither;
  }
  ~TlsCertificateTest() override {
    if (!server_) return;
    asio::post(io_, [this] { server_->stop(); });
    io_thread_.join();
  }
  void start() {
    server_ = std::make_unique<TlsServer>(io_, config_, handler_);
    handler_.server = server_.get();
    server_->start();
    endpoint_ = "127.0.0.1:" + std::to_string(server_->port());
    io_thread_ = std::thread([this] { io_.run(); });
  }
  TlsServerStats stats() {
    std::promise<TlsServerStats> promise;
    asio::post(io_, [&] { promise.set_value(server_->stats()); });
    return promise.get_future().get();
  }
  // Device `device` connects with `certificate` (its own by default), trusting `ca_pem`.
  Status connect(tls::TlsCertificateChannel& channel, const credential::DeviceCredential& device,
                 const std::string* certificate = nullptr, const std::string* ca_pem = nullptr,
                 const char* server_name = kServerName) {
    const std::string own = certificate != nullptr ? *certificate : fleet_.certificate_of(device);
    const std::string& ca = ca_pem != nullptr ? *ca_pem : fleet_.ca_pem;
    return channel.connect(endpoint_.c_str(), server_name, text_span(ca), text_span(own),
                           ByteSpan(device.private_key, sizeof(device.private_key)),
                           kClientTimeoutMs);
  }
  Status connect_psk(tls::TlsPskChannel& channel, uint64_t id) {
    const std::string identity = std::to_string(id);
    const DevicePsk key = derive_device_psk(fleet_secret(), id);
    return channel.connect(
        endpoint_.c_str(),
        ByteSpan(reinterpret_cast<const uint8_t*>(identity.data()), identity.size()),
        ByteSpan(key.data(), key.size()), kClientTimeoutMs);
  }

  Fleet fleet_, other_fleet_;
  asio::io_context io_;
  TlsServerConfig config_;
  RecordingHandler handler_;
  std::unique_ptr<TlsServer> server_;
  std::thread io_thread_;
  std::string endpoint_;
};

TEST_F(TlsCertificateTest, DeviceIsIdentifiedByItsCertificate) {
  start();
  const credential::DeviceCredential device = fleet_.device(17);
  tls::TlsCertificateChannel channel;
  const Status status = connect(channel, device);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_TRUE(exchange(channel, 17).ok());
  const auto opened = handler_.opened();
  ASSERT_EQ(opened.size(), 1u);
  EXPECT_EQ(opened.begin()->second, "17");
  const auto how = handler_.how();
  ASSERT_EQ(how.size(), 1u);
  EXPECT_EQ(how.begin()->second.method, AuthenticationMethod::kCertificate);
  ASSERT_TRUE(how.begin()->second.certificate_key.has_value());
  EXPECT_EQ(0, std::memcmp(how.begin()->second.certificate_key->data(),
                           device.certificate.public_key, 65));
  EXPECT_EQ(stats().certificate_handshakes, 1u);
  channel.close();
  // A second connection is a full handshake again (certificate sessions are not cached).
  ASSERT_TRUE(connect(channel, device).ok());
  EXPECT_EQ(stats().certificate_handshakes, 2u);
  EXPECT_EQ(stats().resumed_handshakes, 0u);
}

TEST_F(TlsCertificateTest, CertificateFromAnotherCaIsRefused) {
  start();
  const credential::DeviceCredential stranger = other_fleet_.device(17);
  const std::string certificate = other_fleet_.certificate_of(stranger);
  tls::TlsCertificateChannel channel;
  const Status status = connect(channel, stranger, &certificate);
  EXPECT_EQ(status.code(), StatusCode::kPermissionDenied) << status.message();
  EXPECT_NE(std::string(status.message()).find("refused this device's certificate"),
            std::string::npos)
      << status.message();
  const auto closed = handler_.closed_after(1);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_NE(closed.begin()->second.find("not issued by the client CA"), std::string::npos)
      << closed.begin()->second;
  EXPECT_TRUE(handler_.opened().empty());
}

TEST_F(TlsCertificateTest, DeviceRefusesAnotherDevicesCertificateWithItsKey) {
  start();
  const credential::DeviceCredential a = fleet_.device(17);
  const credential::DeviceCredential b = fleet_.device(18);
  const std::string a_certificate = fleet_.certificate_of(a);
  tls::TlsCertificateChannel channel;
  const Status status = connect(channel, b, &a_certificate);  // A's certificate, B's key
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(status.message()).find("wrong key"), std::string::npos) << status.message();
  EXPECT_TRUE(handler_.opened().empty());
}

// A TLS client written straight on mbedTLS that presents `certificate_pem` with `key` (no check
// that they match, unlike TlsCertificateChannel): for what a device's channel would never send.
// Returns mbedtls_ssl_handshake's code.
int raw_certificate_handshake(uint16_t port, const std::string& ca_pem,
                              const std::string& certificate_pem, mbedtls_pk_context& key) {
  mbedtls_x509_crt ca, own;
  mbedtls_net_context net;
  mbedtls_entropy_context entropy;
  mbedtls_ctr_drbg_context drbg;
  mbedtls_ssl_config config;
  mbedtls_ssl_context ssl;
  mbedtls_x509_crt_init(&ca);
  mbedtls_x509_crt_init(&own);
  mbedtls_net_init(&net);
  mbedtls_entropy_init(&entropy);
  mbedtls_ctr_drbg_init(&drbg);
  mbedtls_ssl_config_init(&config);
  mbedtls_ssl_init(&ssl);
  int rc = mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &entropy, nullptr, 0);
  if (rc == 0) rc = mbedtls_x509_crt_parse(&ca, text_span(ca_pem).data(), text_span(ca_pem).size());
  if (rc == 0) {
    rc = mbedtls_x509_crt_parse(&own, text_span(certificate_pem).data(),
                                text_span(certificate_pem).size());
  }
  if (rc == 0) {
    rc =
        mbedtls_net_connect(&net, "127.0.0.1", std::to_string(port).c_str(), MBEDTLS_NET_PROTO_TCP);
  }
  if (rc == 0) {
    rc = mbedtls_ssl_config_defaults(&config, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                     MBEDTLS_SSL_PRESET_DEFAULT);
  }
  if (rc == 0) {
    mbedtls_ssl_conf_ciphersuites(&config, tls::kTlsCertificateCiphersuites);
    mbedtls_ssl_conf_rng(&config, mbedtls_ctr_drbg_random, &drbg);
    mbedtls_ssl_conf_authmode(&config, MBEDTLS_SSL_VERIFY_REQUIRED);
    mbedtls_ssl_conf_ca_chain(&config, &ca, nullptr);
    rc = mbedtls_ssl_conf_own_cert(&config, &own, &key);
  }
  if (rc == 0) rc = mbedtls_ssl_setup(&ssl, &config);
  if (rc == 0) rc = mbedtls_ssl_set_hostname(&ssl, kServerName);
  if (rc == 0) {
    mbedtls_ssl_set_bio(&ssl, &net, mbedtls_net_send, mbedtls_net_recv, nullptr);
    rc = mbedtls_ssl_handshake(&ssl);
  }
  mbedtls_ssl_free(&ssl);
  mbedtls_ssl_config_free(&config);
  mbedtls_ctr_drbg_free(&drbg);
  mbedtls_entropy_free(&entropy);
  mbedtls_net_free(&net);
  mbedtls_x509_crt_free(&own);
  mbedtls_x509_crt_free(&ca);
  return rc;
}

// The server's side of the same attack, from a client that skips the device's key check: the
// CertificateVerify made with B's key does not verify under A's certificate.
TEST_F(TlsCertificateTest, ServerRefusesAnotherDevicesCertificateWithItsKey) {
  start();
  const credential::DeviceCredential a = fleet_.device(17);
  const credential::DeviceCredential b = fleet_.device(18);
  mbedtls_pk_context key;
  mbedtls_pk_init(&key);
  ASSERT_EQ(0, mbedtls_pk_setup(&key, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY)));
  mbedtls_ecp_keypair* ec = mbedtls_pk_ec(key);
  ASSERT_EQ(0, mbedtls_ecp_group_load(&ec->grp, MBEDTLS_ECP_DP_SECP256R1));
  ASSERT_EQ(0, mbedtls_mpi_read_binary(&ec->d, b.private_key, sizeof(b.private_key)));
  ASSERT_EQ(0, mbedtls_ecp_point_read_binary(&ec->grp, &ec->Q, b.certificate.public_key, 65));
  EXPECT_NE(
      0, raw_certificate_handshake(server_->port(), fleet_.ca_pem, fleet_.certificate_of(a), key));
  mbedtls_pk_free(&key);
  const auto closed = handler_.closed_after(1);
  EXPECT_EQ(closed.size(), 1u);
  EXPECT_TRUE(handler_.opened().empty());
}

// A certificate of the right CA that is not a device's (a server certificate: serverAuth, no
// "fedstat-device <id>" name), presented with its own key: refused.
TEST_F(TlsCertificateTest, ServerRefusesACertificateThatIsNotADevices) {
  start();
  const host::ServerCertificate not_a_device =
      host::make_server_certificate(fleet_.ca, "device.example", nullptr);
  mbedtls_pk_context key;
  mbedtls_pk_init(&key);
  ASSERT_EQ(0,
            mbedtls_pk_parse_key(
                &key, reinterpret_cast<const unsigned char*>(not_a_device.private_key_pem.c_str()),
                not_a_device.private_key_pem.size() + 1, nullptr, 0));
  EXPECT_NE(0, raw_certificate_handshake(server_->port(), fleet_.ca_pem,
                                         not_a_device.certificate_pem, key));
  mbedtls_pk_free(&key);
  const auto closed = handler_.closed_after(1);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_NE(closed.begin()->second.find("not a device certificate"), std::string::npos)
      << closed.begin()->second;
  EXPECT_TRUE(handler_.opened().empty());
}

TEST_F(TlsCertificateTest, DeviceRefusesAnUntrustedServer) {
  const host::ServerCertificate impostor = other_fleet_.server(kServerName);
  config_.certificates->certificate_pem = impostor.certificate_pem;
  config_.certificates->private_key_pem = impostor.private_key_pem;
  start();
  tls::TlsCertificateChannel channel;
  const Status status = connect(channel, fleet_.device(17));
  EXPECT_EQ(status.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(std::string(status.message()).find("untrusted server"), std::string::npos)
      << status.message();
  EXPECT_TRUE(handler_.opened().empty());
}

TEST_F(TlsCertificateTest, DeviceRefusesAServerWithAnotherName) {
  start();
  tls::TlsCertificateChannel channel;
  const Status status =
      connect(channel, fleet_.device(17), nullptr, nullptr, "fedstat.example.org");
  EXPECT_EQ(status.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(std::string(status.message()).find("server name mismatch"), std::string::npos)
      << status.message();
  EXPECT_TRUE(handler_.opened().empty());
}

TEST_F(TlsCertificateTest, CertificateModeRefusesPsk) {
  config_.device_authentication = DeviceAuthentication::kCertificate;
  config_.lookup_psk = nullptr;  // the server needs no device secret
  start();
  tls::TlsPskChannel psk;
  const Status refused = connect_psk(psk, 17);
  EXPECT_FALSE(refused.ok());
  EXPECT_TRUE(handler_.opened().empty());
  tls::TlsCertificateChannel channel;
  const Status status = connect(channel, fleet_.device(17));
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(handler_.opened().size(), 1u);
}

TEST_F(TlsCertificateTest, PskModeRefusesCertificates) {
  config_.device_authentication = DeviceAuthentication::kPsk;
  start();
  tls::TlsCertificateChannel channel;
  const Status status = connect(channel, fleet_.device(17));
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(std::string(status.message()).find("no common cipher suite"), std::string::npos)
      << status.message();
  EXPECT_TRUE(handler_.opened().empty());
}

TEST_F(TlsCertificateTest, EitherModeAcceptsBothAndPskStillResumes) {
  start();
  tls::TlsPskChannel psk;
  ASSERT_TRUE(connect_psk(psk, 21).ok());
  ASSERT_TRUE(exchange(psk, 21).ok());
  psk.close();
  ASSERT_TRUE(connect_psk(psk, 21).ok());
  EXPECT_TRUE(psk.resumed());
  tls::TlsCertificateChannel channel;
  ASSERT_TRUE(connect(channel, fleet_.device(17)).ok());
  ASSERT_TRUE(exchange(channel, 17).ok());
  std::map<std::string, AuthenticationMethod> by_identity;
  const auto opened = handler_.opened();
  const auto how = handler_.how();
  for (const auto& [id, identity] : opened)
    by_identity[identity + "/" + std::to_string(id)] = how.at(id).method;
  ASSERT_EQ(by_identity.size(), 3u);
  std::vector<AuthenticationMethod> methods;
  for (const auto& [id, identity] : opened) methods.push_back(how.at(id).method);
  EXPECT_EQ(methods, (std::vector<AuthenticationMethod>{AuthenticationMethod::kPsk,
                                                        AuthenticationMethod::kPskResumed,
                                                        AuthenticationMethod::kCertificate}));
  const TlsServerStats s = stats();
  EXPECT_EQ(s.full_handshakes, 2u);
  EXPECT_EQ(s.resumed_handshakes, 1u);
  EXPECT_EQ(s.certificate_handshakes, 1u);
}

TEST_F(TlsCertificateTest, ServerRefusesMissingOrMismatchedCertificates) {
  TlsServerConfig no_certificates = config_;
  no_certificates.certificates.reset();
  EXPECT_THROW(TlsServer(io_, no_certificates, handler_), std::invalid_argument);
  TlsServerConfig wrong_key = config_;
  wrong_key.certificates->private_key_pem = other_fleet_.server("other").private_key_pem;
  try {
    TlsServer server(io_, wrong_key, handler_);
    ADD_FAILURE() << "a key that is not the certificate's was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("not the server certificate's key"), std::string::npos)
        << e.what();
  }
}

TEST(TlsCertificateChannel, RefusesBadArguments) {
  Fleet fleet(7);
  const credential::DeviceCredential device = fleet.device(3);
  const std::string certificate = fleet.certificate_of(device);
  tls::TlsCertificateChannel channel;
  const ByteSpan key(device.private_key, sizeof(device.private_key));
  EXPECT_EQ(
      channel.connect("127.0.0.1:1", "", text_span(fleet.ca_pem), text_span(certificate), key, 100)
          .code(),
      StatusCode::kInvalidArgument);
  const Status no_nul = channel.connect(
      "127.0.0.1:1", kServerName,
      ByteSpan(reinterpret_cast<const uint8_t*>(fleet.ca_pem.data()), fleet.ca_pem.size()),
      text_span(certificate), key, 100);
  EXPECT_EQ(no_nul.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(no_nul.message()).find("terminating NUL"), std::string::npos);
  const std::string garbage = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
  const Status bad = channel.connect("127.0.0.1:1", kServerName, text_span(fleet.ca_pem),
                                     text_span(garbage), key, 100);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(bad.message()).find("bad certificate"), std::string::npos);
  EXPECT_EQ(channel
                .connect("127.0.0.1:1", kServerName, text_span(fleet.ca_pem),
                         text_span(certificate), ByteSpan(device.private_key, 31), 100)
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(channel.connected());
  wire::Envelope out{};
  EXPECT_EQ(channel.send(hello(1)).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(channel.receive(out, 10).code(), StatusCode::kFailedPrecondition);
}

TEST(DeviceCommonName, OnlyCanonicalIdsInRange) {
  EXPECT_EQ(host::device_id_of_common_name("fedstat-device 17"), 17u);
  EXPECT_EQ(host::device_id_of_common_name("fedstat-device 2147483648"), 2147483648u);
  EXPECT_FALSE(host::device_id_of_common_name("fedstat-device 2147483649"));
  EXPECT_FALSE(host::device_id_of_common_name("fedstat-device 0"));
  EXPECT_FALSE(host::device_id_of_common_name("fedstat-device 017"));
  EXPECT_FALSE(host::device_id_of_common_name("fedstat-device 1x"));
  EXPECT_FALSE(host::device_id_of_common_name("fedstat-device "));
  EXPECT_FALSE(host::device_id_of_common_name("127.0.0.1"));
}

// ---- Attacks on mutual TLS (issue 42 item 1, helper attackmtls) ----

// `device`'s P-256 key pair as an mbedTLS key (scalar and public point).
void load_device_key(mbedtls_pk_context& key, const credential::DeviceCredential& device) {
  mbedtls_pk_init(&key);
  ASSERT_EQ(0, mbedtls_pk_setup(&key, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY)));
  mbedtls_ecp_keypair* ec = mbedtls_pk_ec(key);
  ASSERT_EQ(0, mbedtls_ecp_group_load(&ec->grp, MBEDTLS_ECP_DP_SECP256R1));
  ASSERT_EQ(0, mbedtls_mpi_read_binary(&ec->d, device.private_key, sizeof(device.private_key)));
  ASSERT_EQ(0, mbedtls_ecp_point_read_binary(&ec->grp, &ec->Q, device.certificate.public_key,
                                             sizeof(device.certificate.public_key)));
}

// The PEM of a P-256 private key given as its 32-byte scalar and 65-byte public point.
std::string private_key_pem(const uint8_t* scalar, const uint8_t* point) {
  mbedtls_pk_context key;
  mbedtls_pk_init(&key);
  std::string out;
  unsigned char buffer[1024];
  if (mbedtls_pk_setup(&key, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY)) == 0) {
    mbedtls_ecp_keypair* ec = mbedtls_pk_ec(key);
    if (mbedtls_ecp_group_load(&ec->grp, MBEDTLS_ECP_DP_SECP256R1) == 0 &&
        mbedtls_mpi_read_binary(&ec->d, scalar, 32) == 0 &&
        mbedtls_ecp_point_read_binary(&ec->grp, &ec->Q, point, 65) == 0 &&
        mbedtls_pk_write_key_pem(&key, buffer, sizeof(buffer)) == 0) {
      out = reinterpret_cast<const char*>(buffer);
    }
  }
  mbedtls_pk_free(&key);
  return out;
}

// A device with a valid certificate (17) acts as its own CA: it signs, with its device key, a
// certificate "CN=fedstat-device 18" for a key pair it made, and presents the chain [forged, its
// own certificate]. Its certificate is no CA (basicConstraints cA false, keyUsage
// digitalSignature only): the server must refuse the chain, whatever the forged leaf says.
TEST_F(TlsCertificateTest, AttackDeviceCertificateCannotIssueAnotherDevicesCertificate) {
  start();
  const credential::DeviceCredential issuer = fleet_.device(17);
  const credential::DeviceCredential victim = fleet_.device(18);  // the attacker's new key pair
  mbedtls_pk_context issuer_key, subject_key;
  load_device_key(issuer_key, issuer);
  load_device_key(subject_key, victim);
  mbedtls_entropy_context entropy;
  mbedtls_ctr_drbg_context drbg;
  mbedtls_entropy_init(&entropy);
  mbedtls_ctr_drbg_init(&drbg);
  ASSERT_EQ(0, mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &entropy, nullptr, 0));
  mbedtls_x509write_cert w;
  mbedtls_x509write_crt_init(&w);
  mbedtls_x509write_crt_set_version(&w, MBEDTLS_X509_CRT_VERSION_3);
  mbedtls_x509write_crt_set_md_alg(&w, MBEDTLS_MD_SHA256);
  mbedtls_x509write_crt_set_issuer_key(&w, &issuer_key);
  mbedtls_x509write_crt_set_subject_key(&w, &subject_key);
  ASSERT_EQ(0, mbedtls_x509write_crt_set_issuer_name(&w, "CN=fedstat-device 17,O=fedstat"));
  ASSERT_EQ(0, mbedtls_x509write_crt_set_subject_name(&w, "CN=fedstat-device 18,O=fedstat"));
  ASSERT_EQ(0, mbedtls_x509write_crt_set_validity(&w, "20240101000000", "20991231235959"));
  mbedtls_mpi serial;
  mbedtls_mpi_init(&serial);
  ASSERT_EQ(0, mbedtls_mpi_lset(&serial, 18));
  ASSERT_EQ(0, mbedtls_x509write_crt_set_serial(&w, &serial));
  ASSERT_EQ(0, mbedtls_x509write_crt_set_basic_constraints(&w, 0, -1));
  ASSERT_EQ(0, mbedtls_x509write_crt_set_key_usage(&w, MBEDTLS_X509_KU_DIGITAL_SIGNATURE));
  unsigned char buffer[4096];
  ASSERT_EQ(0,
            mbedtls_x509write_crt_pem(&w, buffer, sizeof(buffer), mbedtls_ctr_drbg_random, &drbg));
  const std::string chain =
      std::string(reinterpret_cast<const char*>(buffer)) + fleet_.certificate_of(issuer);
  mbedtls_mpi_free(&serial);
  mbedtls_x509write_crt_free(&w);
  mbedtls_ctr_drbg_free(&drbg);
  mbedtls_entropy_free(&entropy);
  EXPECT_NE(0, raw_certificate_handshake(server_->port(), fleet_.ca_pem, chain, subject_key));
  mbedtls_pk_free(&issuer_key);
  mbedtls_pk_free(&subject_key);
  const auto closed = handler_.closed_after(1);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_NE(closed.begin()->second.find("not issued by the client CA"), std::string::npos)
      << closed.begin()->second;
  EXPECT_TRUE(handler_.opened().empty());
}

// A raw mbedTLS server on loopback (not TlsServer, which refuses a certificate that is not a
// server's at start) presenting `certificate_pem` with `key_pem` to one client: what a malicious
// device with its own fleet-CA credential would run. Returns its port; serve() runs the one
// handshake (its result is the client's to judge).
class RawServer {
 public:
  RawServer(const std::string& certificate_pem, const std::string& key_pem) {
    mbedtls_net_init(&listen_);
    mbedtls_net_init(&client_);
    mbedtls_entropy_init(&entropy_);
    mbedtls_ctr_drbg_init(&drbg_);
    mbedtls_ssl_config_init(&config_);
    mbedtls_ssl_init(&ssl_);
    mbedtls_x509_crt_init(&own_);
    mbedtls_pk_init(&key_);
    int rc = mbedtls_ctr_drbg_seed(&drbg_, mbedtls_entropy_func, &entropy_, nullptr, 0);
    if (rc == 0)
      rc = mbedtls_x509_crt_parse(&own_, text_span(certificate_pem).data(),
                                  text_span(certificate_pem).size());
    // A malicious server's own stack need not check its certificate's use: mbedTLS's server
    // (ssl_pick_cert) skips a certificate without serverAuth, so the parsed copy forgets its
    // extendedKeyUsage. What goes on the wire is the certificate's unchanged DER (own_.raw).
    own_.ext_types &= ~MBEDTLS_X509_EXT_EXTENDED_KEY_USAGE;
    if (rc == 0)
      rc = mbedtls_pk_parse_key(&key_, text_span(key_pem).data(), text_span(key_pem).size(),
                                nullptr, 0);
    if (rc == 0) rc = mbedtls_net_bind(&listen_, "127.0.0.1", "0", MBEDTLS_NET_PROTO_TCP);
    if (rc == 0) {
      rc = mbedtls_ssl_config_defaults(&config_, MBEDTLS_SSL_IS_SERVER,
                                       MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
    }
    if (rc == 0) {
      mbedtls_ssl_conf_rng(&config_, mbedtls_ctr_drbg_random, &drbg_);
      mbedtls_ssl_conf_ciphersuites(&config_, tls::kTlsCertificateCiphersuites);
      mbedtls_ssl_conf_authmode(&config_, MBEDTLS_SSL_VERIFY_NONE);
      rc = mbedtls_ssl_conf_own_cert(&config_, &own_, &key_);
    }
    if (rc == 0) rc = mbedtls_ssl_setup(&ssl_, &config_);
    sockaddr_in address{};
    socklen_t length = sizeof(address);
    if (rc == 0 && getsockname(listen_.fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
      port_ = ntohs(address.sin_port);
    }
    thread_ = std::thread([this] {
      if (port_ == 0 || mbedtls_net_accept(&listen_, &client_, nullptr, 0, nullptr) != 0) return;
      mbedtls_ssl_set_bio(&ssl_, &client_, mbedtls_net_send, mbedtls_net_recv, nullptr);
      mbedtls_ssl_handshake(&ssl_);
      mbedtls_ssl_close_notify(&ssl_);
      mbedtls_net_free(&client_);
    });
  }
  ~RawServer() {
    thread_.join();
    mbedtls_net_free(&listen_);
    mbedtls_ssl_free(&ssl_);
    mbedtls_ssl_config_free(&config_);
    mbedtls_pk_free(&key_);
    mbedtls_x509_crt_free(&own_);
    mbedtls_ctr_drbg_free(&drbg_);
    mbedtls_entropy_free(&entropy_);
  }
  uint16_t port() const { return port_; }

 private:
  mbedtls_net_context listen_, client_;
  mbedtls_entropy_context entropy_;
  mbedtls_ctr_drbg_context drbg_;
  mbedtls_ssl_config config_;
  mbedtls_ssl_context ssl_;
  mbedtls_x509_crt own_;
  mbedtls_pk_context key_;
  uint16_t port_ = 0;
  std::thread thread_;
};

// A malicious device (5) plays the server to another device with its own fleet-CA certificate
// and key. Even where the name would match (the device expects "fedstat-device 5": the name is
// not what protects here), the device refuses: a device certificate is for clientAuth
// (extendedKeyUsage), not serverAuth.
TEST(TlsCertificateAttack, DeviceRefusesADeviceCertificateAsTheServers) {
  const Fleet fleet(7);
  const credential::DeviceCredential impostor = fleet.device(5);
  const std::string key = private_key_pem(impostor.private_key, impostor.certificate.public_key);
  ASSERT_FALSE(key.empty());
  RawServer server(fleet.certificate_of(impostor), key);
  ASSERT_NE(server.port(), 0);
  const credential::DeviceCredential device = fleet.device(17);
  const std::string own = fleet.certificate_of(device);
  const std::string endpoint = "127.0.0.1:" + std::to_string(server.port());
  tls::TlsCertificateChannel channel;
  const Status status =
      channel.connect(endpoint.c_str(), "fedstat-device 5", text_span(fleet.ca_pem), text_span(own),
                      ByteSpan(device.private_key, sizeof(device.private_key)), kClientTimeoutMs);
  EXPECT_EQ(status.code(), StatusCode::kPermissionDenied) << status.message();
  // The refusal names the reason (mbedTLS reports a usage failure as a bad certificate).
  EXPECT_NE(std::string(status.message()).find("not for serverAuth"), std::string::npos)
      << status.message();
}

// The server's own certificate must be a server certificate. Given the fleet CA's certificate
// and the CA's private key (as PEM: a converted ca.key, which the "fedstat-ca private key"
// check on tls_private_key does not recognise), the server started, holding the key that mints
// device certificates; given a device's certificate and key, it started as that device. Both
// must be refused at start.
TEST_F(TlsCertificateTest, AttackServerRefusesACaOrDeviceCertificateAsItsOwn) {
  TlsServerConfig as_ca = config_;
  as_ca.certificates->certificate_pem = fleet_.ca_pem;
  as_ca.certificates->private_key_pem =
      private_key_pem(fleet_.ca.private_key.data(), fleet_.ca.public_key.data());
  ASSERT_FALSE(as_ca.certificates->private_key_pem.empty());
  try {
    TlsServer server(io_, as_ca, handler_);
    ADD_FAILURE() << "the fleet CA's certificate and private key were taken as the server's";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("CA"), std::string::npos) << e.what();
  }
  const credential::DeviceCredential device = fleet_.device(5);
  TlsServerConfig as_device = config_;
  as_device.certificates->certificate_pem = fleet_.certificate_of(device);
  as_device.certificates->private_key_pem =
      private_key_pem(device.private_key, device.certificate.public_key);
  ASSERT_FALSE(as_device.certificates->private_key_pem.empty());
  try {
    TlsServer server(io_, as_device, handler_);
    ADD_FAILURE() << "a device certificate (clientAuth) was taken as the server's";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("serverAuth"), std::string::npos) << e.what();
  }
}

// "either" mode: the operator revokes device 17 — removes it from the credentials file and lists
// it in tls_revoked_devices; the SIGHUP reload gives the listener the new PSK keys and revoked set
// (lookup_psk, certificate_revoked) and revoke()s the identity. Its open certificate connection
// ends, and neither its PSK nor its certificate connects again. (Before certificate_revoked the
// certificate connected again at once, as device 17, and stayed in the rounds: the attack review's
// F3.) Device 21 with its certificate is served as before.
TEST_F(TlsCertificateTest, AttackRevokedDeviceReconnectsWithItsCertificate) {
  auto revoked_ids = std::make_shared<std::set<uint64_t>>();
  config_.certificate_revoked = [revoked_ids](uint64_t id) { return revoked_ids->count(id) != 0; };
  auto listed = std::make_shared<std::set<uint64_t>>(std::set<uint64_t>{17, 21});
  config_.lookup_psk = [listed](const std::string& identity) -> std::optional<DevicePsk> {
    const std::optional<uint64_t> id = parse_device_identity(identity);
    if (!id || listed->count(*id) == 0) return std::nullopt;
    return derive_device_psk(fleet_secret(), *id);
  };
  start();
  const credential::DeviceCredential device = fleet_.device(17);
  tls::TlsCertificateChannel first;
  ASSERT_TRUE(connect(first, device).ok());
  ASSERT_TRUE(exchange(first, 17).ok());
  std::promise<size_t> revoked;
  asio::post(io_, [&] {
    listed->erase(17);  // the reload's new key set and revoked list, then its revoke()
    revoked_ids->insert(17);
    revoked.set_value(server_->revoke({"17"}));
  });
  EXPECT_EQ(revoked.get_future().get(), 1u);
  EXPECT_EQ(handler_.closed_after(1).size(), 1u);
  tls::TlsPskChannel psk;  // the PSK path is closed to it
  EXPECT_FALSE(connect_psk(psk, 17).ok() && exchange(psk, 17).ok());
  tls::TlsCertificateChannel second;
  const Status status = connect(second, device);
  EXPECT_FALSE(status.ok() && exchange(second, 17).ok())
      << "a revoked device connected again with its certificate";
  EXPECT_NE(std::string(status.message()).find("revoked"), std::string::npos) << status.message();
  EXPECT_EQ(handler_.opened().size(), 1u);
  tls::TlsCertificateChannel other;
  ASSERT_TRUE(connect(other, fleet_.device(21)).ok());
  EXPECT_TRUE(exchange(other, 21).ok());
}

// The certificate's CN is parsed strictly: no padding, sign, embedded NUL, other case, or id that
// wraps at 2^32 (mbedTLS hands the callback the CN's bytes with their length, NULs included).
TEST(TlsCertificateAttack, CommonNameEdgeCasesNameNoDevice) {
  using std::string_literals::operator""s;
  for (const std::string& name :
       {"fedstat-device 1 "s, " fedstat-device 1"s, "fedstat-device  1"s, "fedstat-device +1"s,
        "fedstat-device -1"s, "fedstat-device 1\0"s, "fedstat-device 1\0002"s,
        "fedstat-device 007"s, "Fedstat-device 1"s, "fedstat-device 4294967297"s,
        "fedstat-device 9999999999"s, "fedstat-device 18446744073709551617"s,
        "fedstat-device 0x10"s, "fedstat-device"s}) {
    EXPECT_FALSE(host::device_id_of_common_name(name)) << name;
  }
}

// A device with a valid certificate appends 30 unrelated certificates (another fleet's devices')
// to its own: mbedTLS verifies the leaf against the CA and ignores the rest, and kept the whole
// parsed chain (~13 KB of DER and its structures) with the connection for its life
// (MBEDTLS_SSL_KEEP_PEER_CERTIFICATE), every device doubling the server's memory per connection.
// A device sends its certificate (and at most the CA's): longer chains are refused.
TEST_F(TlsCertificateTest, AttackDeviceWithAJunkChainIsRefused) {
  start();
  const credential::DeviceCredential device = fleet_.device(17);
  std::string chain = fleet_.certificate_of(device);
  for (uint32_t i = 0; i < 30; ++i) {
    chain += other_fleet_.certificate_of(other_fleet_.device(200 + i));
  }
  mbedtls_pk_context key;
  load_device_key(key, device);
  raw_certificate_handshake(server_->port(), fleet_.ca_pem, chain, key);  // its own verdict
  const auto closed = handler_.closed_after(1);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_NE(closed.begin()->second.find("31 certificates"), std::string::npos)
      << closed.begin()->second;
  EXPECT_TRUE(handler_.opened().empty());
  // Its certificate with the CA's after it (what some TLS stacks send) is taken.
  EXPECT_EQ(0, raw_certificate_handshake(server_->port(), fleet_.ca_pem,
                                         fleet_.certificate_of(device) + fleet_.ca_pem, key));
  mbedtls_pk_free(&key);
  EXPECT_EQ(handler_.opened().size(), 1u);
}

}  // namespace
}  // namespace net
}  // namespace fedstat
