// Mutual TLS through the C ABI (c/tls.h fedstat_tls_channel_connect_certificate, issue 42): a C
// ABI device connects with the X.509 certificate fedstat-ca's code writes for its credential's
// key (host_server/credential/x509_certificates.h, as tests/net's TlsCertificateTest) to the
// host's real TlsServer in "certificate" mode, and completes a session of the scripted server
// (c_device.h serve) over it: the report must be the SDK's sketch for the device's data and seed.
// An untrusted server, a wrong server name, a key that is not the certificate's, a certificate of
// another CA, a non-device certificate and a PSK-only server are each refused with their own
// status and message, before any frame. The server's io_context runs on its own thread; the test
// thread waits on condition variables, never sleeps. Paper: Bonawitz et al. 2017 §4 (the PKI).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fedstat/fedstat.h"
#include "host_server/credential/fleet_credentials.h"
#include "host_server/credential/x509_certificates.h"
#include "host_server/hex.h"
#include "host_server/net/credentials.h"
#include "host_server/net/tls_server.h"
#include "tests/cabi/c_device.h"
#include "tests/client/client_test_support.h"
#include "tests/net/tls_test_support.h"

namespace fedstat {
namespace client_test {
namespace {

constexpr char kServerName[] = "127.0.0.1";
constexpr uint32_t kTimeoutMs = 10000;

using tls_test::Fleet;

// The 64 hex digits fedstat_client_set_credential takes (and the channel).
std::string key_hex(const credential::DeviceCredential& device) {
  return host::encode_hex(device.private_key, sizeof(device.private_key));
}

// The server's end: every connection's frames queued for serve() (one connection at a time),
// its sends posted to the io thread. Records how and as whom each connection authenticated.
class ServerEnd : public net::FrameHandler, public client::FrameChannel {
 public:
  explicit ServerEnd(asio::io_context& io) : io_(io) {}
  void on_authenticated(net::ConnectionId, const net::PeerAuthentication& how) override {
    std::lock_guard<std::mutex> lock(mutex_);
    methods_.push_back(how.method);
  }
  void on_open(net::ConnectionId id, const std::string& identity) override {
    std::lock_guard<std::mutex> lock(mutex_);
    connection_ = id;
    identities_.push_back(identity);
    closed_ = false;
    changed_.notify_all();
  }
  void on_frame(net::ConnectionId, const wire::Envelope& envelope) override {
    std::lock_guard<std::mutex> lock(mutex_);
    frames_.push_back(envelope);
    changed_.notify_all();
  }
  void on_close(net::ConnectionId id, const std::string&) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (id != connection_) return;  // an earlier connection's close may come after this one opened
    closed_ = true;
    changed_.notify_all();
  }
  Status send(const wire::Envelope& message) override {
    net::ConnectionId id;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (closed_) return unavailable("the device closed the connection");
      id = connection_;
    }
    asio::post(io_, [this, id, message] { server->send(id, message); });
    return Status();
  }
  Status receive(wire::Envelope& out, uint32_t timeout_ms) override {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                      [&] { return !frames_.empty() || closed_; });
    if (frames_.empty()) return closed_ ? unavailable("closed") : deadline_exceeded("no frame");
    out = frames_.front();
    frames_.pop_front();
    return Status();
  }
  void close() override {}
  // The identities opened so far, once there are `at_least` of them (on_open runs on the io
  // thread, possibly after the device's connect returned) or 10 s have passed.
  std::vector<std::string> identities(size_t at_least = 0) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, std::chrono::seconds(10),
                      [&] { return identities_.size() >= at_least; });
    return identities_;
  }
  std::vector<net::AuthenticationMethod> methods() {
    std::lock_guard<std::mutex> lock(mutex_);
    return methods_;
  }
  net::TlsServer* server = nullptr;

 private:
  asio::io_context& io_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<wire::Envelope> frames_;
  net::ConnectionId connection_{};
  bool closed_ = true;
  std::vector<std::string> identities_;
  std::vector<net::AuthenticationMethod> methods_;
};

std::array<uint8_t, 32> fleet_secret() {
  std::array<uint8_t, 32> secret{};
  for (size_t i = 0; i < secret.size(); ++i) secret[i] = static_cast<uint8_t>(0x40 + i);
  return secret;
}

class CabiTlsCertificateTest : public StorageTest {
 protected:
  CabiTlsCertificateTest() : fleet_(7), other_fleet_(8), end_(io_) {
    const host::ServerCertificate server = fleet_.server(kServerName);
    config_.certificates =
        net::TlsCertificates{server.certificate_pem, server.private_key_pem, fleet_.ca_pem};
    config_.device_authentication = net::DeviceAuthentication::kCertificate;
    size_t bytes = 0;
    EXPECT_EQ(fedstat_tls_channel_size(&bytes), FEDSTAT_OK);
    memory_.resize(bytes / 8 + 1);
    EXPECT_EQ(fedstat_tls_channel_create(memory_.data(), bytes, &channel_), FEDSTAT_OK);
  }
  void SetUp() override {
    StorageTest::SetUp();
    ASSERT_EQ(fedstat_set_storage_directory(directory_.c_str()), FEDSTAT_OK);
  }
  ~CabiTlsCertificateTest() override {
    if (channel_ != nullptr) fedstat_tls_channel_destroy(channel_);
    if (!server_) return;
    asio::post(io_, [this] { server_->stop(); });
    io_thread_.join();
  }
  void start() {
    server_ = std::make_unique<net::TlsServer>(io_, config_, end_);
    end_.server = server_.get();
    server_->start();
    port_ = server_->port();
    io_thread_ = std::thread([this] { io_.run(); });
  }
  // Device `device` connects with `certificate` (its own by default) and `key` (its own).
  fedstat_status connect(const credential::DeviceCredential& device,
                         const std::string* certificate = nullptr,
                         const char* server_name = kServerName, const std::string* key = nullptr) {
    const std::string own = certificate != nullptr ? *certificate : fleet_.certificate_of(device);
    const std::string hex = key != nullptr ? *key : key_hex(device);
    return fedstat_tls_channel_connect_certificate(channel_, "127.0.0.1", port_, server_name,
                                                   fleet_.ca_pem.c_str(), 0, own.c_str(), 0,
                                                   hex.c_str(), kTimeoutMs);
  }
  std::string error() const { return fedstat_tls_channel_last_error(channel_); }

  Fleet fleet_, other_fleet_;
  asio::io_context io_;
  net::TlsServerConfig config_;
  ServerEnd end_;
  std::unique_ptr<net::TlsServer> server_;
  std::thread io_thread_;
  uint16_t port_ = 0;
  std::vector<uint64_t> memory_;
  fedstat_tls_channel* channel_ = nullptr;
};

TEST_F(CabiTlsCertificateTest, ACDeviceCompletesASessionWithItsCertificate) {
  start();
  const uint64_t id = 17;
  const credential::DeviceCredential device = fleet_.device(id);
  const fedstat_v1_Task task = data_shift_task(fedstat_v1_TrustModel_TRUSTED, 1.0);
  CDevice c(id, client::Client::memory_bytes(task, 256).value());
  CHistogram h(2);
  ASSERT_EQ(fedstat_client_set_histogram(c.client, h.histogram), FEDSTAT_OK);

  // The certificate's id is the channel's: a Client of another id is refused, nothing sent.
  ASSERT_EQ(connect(device), FEDSTAT_OK) << error();
  int resumed = -1;
  EXPECT_EQ(fedstat_tls_channel_resumed(channel_, &resumed), FEDSTAT_OK);
  EXPECT_EQ(resumed, 0);
  EXPECT_EQ(connect(device), FEDSTAT_FAILED_PRECONDITION);  // connected: the connection stays
  CDevice other(id + 1, 1 << 16);
  fedstat_session_outcome outcome = {-1, 0};
  EXPECT_EQ(fedstat_client_run_session_tls(other.client, channel_, &outcome),
            FEDSTAT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fedstat_client_last_error(other.client)).find("another device id"),
            std::string::npos);

  // Again, and one whole session: the report is the SDK's sketch of the device's data.
  ASSERT_EQ(connect(device), FEDSTAT_OK) << error();
  Seen seen;
  std::thread thread([&] { seen = serve(end_, task, {}); });
  const fedstat_status status = fedstat_client_run_session_tls(c.client, channel_, &outcome);
  thread.join();
  ASSERT_EQ(status, FEDSTAT_OK) << fedstat_client_last_error(c.client);
  EXPECT_EQ(outcome.result, FEDSTAT_SESSION_COMPLETED);
  EXPECT_EQ(outcome.task_id, task.task_id);
  EXPECT_TRUE(seen.hello);
  OwnedHistogram expected_data(2);
  SeededStream same(test_seed(99), id);
  EXPECT_EQ(seen.report, expected_sketch(task, expected_data.histogram, same));
  EXPECT_DOUBLE_EQ(c.spent(), 1.0);
  EXPECT_EQ(end_.identities(2), (std::vector<std::string>{"17", "17"}));
  EXPECT_EQ(end_.methods(),
            (std::vector<net::AuthenticationMethod>{net::AuthenticationMethod::kCertificate,
                                                    net::AuthenticationMethod::kCertificate}));
}

TEST_F(CabiTlsCertificateTest, OneChannelSwitchesBetweenCertificateAndPsk) {
  config_.device_authentication = net::DeviceAuthentication::kEither;
  config_.lookup_psk = [](const std::string& identity) -> std::optional<net::DevicePsk> {
    const std::optional<uint64_t> id = net::parse_device_identity(identity);
    if (!id) return std::nullopt;
    return net::derive_device_psk(fleet_secret(), *id);
  };
  start();
  const net::DevicePsk psk = net::derive_device_psk(fleet_secret(), 21);
  ASSERT_EQ(fedstat_tls_channel_connect(channel_, "127.0.0.1", port_, 21, psk.data(), psk.size(),
                                        kTimeoutMs),
            FEDSTAT_OK)
      << error();
  EXPECT_EQ(fedstat_tls_channel_close(channel_), FEDSTAT_OK);
  ASSERT_EQ(connect(fleet_.device(17)), FEDSTAT_OK) << error();
  EXPECT_EQ(fedstat_tls_channel_close(channel_), FEDSTAT_OK);
  ASSERT_EQ(fedstat_tls_channel_connect(channel_, "127.0.0.1", port_, 21, psk.data(), psk.size(),
                                        kTimeoutMs),
            FEDSTAT_OK)
      << error();
  int resumed = -1;
  EXPECT_EQ(fedstat_tls_channel_resumed(channel_, &resumed), FEDSTAT_OK);
  EXPECT_EQ(resumed, 0);  // the certificate connect wiped the saved PSK session
  EXPECT_EQ(fedstat_tls_channel_close(channel_), FEDSTAT_OK);
  EXPECT_EQ(end_.identities(3), (std::vector<std::string>{"21", "17", "21"}));
  EXPECT_EQ(end_.methods(),
            (std::vector<net::AuthenticationMethod>{net::AuthenticationMethod::kPsk,
                                                    net::AuthenticationMethod::kCertificate,
                                                    net::AuthenticationMethod::kPsk}));
  // With no certificate connect between, the same server resumes: the 0 above is the wipe.
  ASSERT_EQ(fedstat_tls_channel_connect(channel_, "127.0.0.1", port_, 21, psk.data(), psk.size(),
                                        kTimeoutMs),
            FEDSTAT_OK)
      << error();
  EXPECT_EQ(fedstat_tls_channel_resumed(channel_, &resumed), FEDSTAT_OK);
  EXPECT_EQ(resumed, 1);
  EXPECT_EQ(fedstat_tls_channel_close(channel_), FEDSTAT_OK);
}

TEST_F(CabiTlsCertificateTest, UntrustedServerIsPermissionDenied) {
  const host::ServerCertificate impostor = other_fleet_.server(kServerName);
  config_.certificates->certificate_pem = impostor.certificate_pem;
  config_.certificates->private_key_pem = impostor.private_key_pem;
  start();
  EXPECT_EQ(connect(fleet_.device(17)), FEDSTAT_PERMISSION_DENIED);
  EXPECT_NE(error().find("untrusted server"), std::string::npos) << error();
  EXPECT_TRUE(end_.identities().empty());
}

TEST_F(CabiTlsCertificateTest, DeviceRefusalsHaveTheirOwnStatusAndMessage) {
  start();
  const credential::DeviceCredential a = fleet_.device(17);
  const credential::DeviceCredential b = fleet_.device(18);
  // Another name than the server's certificate's.
  EXPECT_EQ(connect(a, nullptr, "fedstat.example.org"), FEDSTAT_PERMISSION_DENIED);
  EXPECT_NE(error().find("server name mismatch"), std::string::npos) << error();
  // B's key with A's certificate: refused before connecting.
  const std::string b_key = key_hex(b);
  EXPECT_EQ(connect(a, nullptr, kServerName, &b_key), FEDSTAT_INVALID_ARGUMENT);
  EXPECT_NE(error().find("wrong key"), std::string::npos) << error();
  // A certificate (and key) of another CA: the server refuses it.
  const credential::DeviceCredential stranger = other_fleet_.device(17);
  const std::string stranger_certificate = other_fleet_.certificate_of(stranger);
  EXPECT_EQ(connect(stranger, &stranger_certificate), FEDSTAT_PERMISSION_DENIED);
  EXPECT_NE(error().find("refused this device's certificate"), std::string::npos) << error();
  // A server's certificate is not a device's.
  const std::string server_certificate = fleet_.server("device.example").certificate_pem;
  EXPECT_EQ(connect(a, &server_certificate), FEDSTAT_INVALID_ARGUMENT);
  EXPECT_NE(error().find("not a device certificate"), std::string::npos) << error();
  // Keys and certificates that are not of their form.
  const std::string short_key = key_hex(a).substr(2);
  EXPECT_EQ(connect(a, nullptr, kServerName, &short_key), FEDSTAT_INVALID_ARGUMENT);
  EXPECT_NE(error().find("64 hex digits"), std::string::npos) << error();
  const std::string garbage =
      "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n";
  EXPECT_EQ(connect(a, &garbage), FEDSTAT_INVALID_ARGUMENT);
  EXPECT_NE(error().find("does not parse"), std::string::npos) << error();
  const std::string own = fleet_.certificate_of(a), hex = key_hex(a);
  EXPECT_EQ(fedstat_tls_channel_connect_certificate(channel_, "127.0.0.1", port_, "",
                                                    fleet_.ca_pem.c_str(), 0, own.c_str(), 0,
                                                    hex.c_str(), kTimeoutMs),
            FEDSTAT_INVALID_ARGUMENT);
  EXPECT_NE(error().find("server name is empty"), std::string::npos) << error();
  EXPECT_EQ(
      fedstat_tls_channel_connect_certificate(channel_, "127.0.0.1", port_, kServerName, nullptr, 0,
                                              own.c_str(), 0, hex.c_str(), kTimeoutMs),
      FEDSTAT_INVALID_ARGUMENT);
  EXPECT_NE(error().find("CA certificate or the device certificate is NULL"), std::string::npos)
      << error();
  EXPECT_EQ(fedstat_tls_channel_connect_certificate(channel_, "127.0.0.1", port_, kServerName,
                                                    fleet_.ca_pem.c_str(), 0, own.c_str(), 0,
                                                    nullptr, kTimeoutMs),
            FEDSTAT_INVALID_ARGUMENT);
  EXPECT_NE(error().find("private key is NULL"), std::string::npos) << error();
  // PEM whose length leaves out the NUL.
  EXPECT_EQ(fedstat_tls_channel_connect_certificate(channel_, "127.0.0.1", port_, kServerName,
                                                    fleet_.ca_pem.c_str(), fleet_.ca_pem.size(),
                                                    own.c_str(), 0, hex.c_str(), kTimeoutMs),
            FEDSTAT_INVALID_ARGUMENT);
  EXPECT_NE(error().find("terminating NUL"), std::string::npos) << error();
  EXPECT_EQ(fedstat_tls_channel_connect_certificate(nullptr, "127.0.0.1", port_, kServerName,
                                                    fleet_.ca_pem.c_str(), 0, own.c_str(), 0,
                                                    hex.c_str(), kTimeoutMs),
            FEDSTAT_INVALID_ARGUMENT);
  EXPECT_TRUE(end_.identities().empty());  // no device was let in
  // The same arguments, right: connected as 17 (the refusals left the channel usable).
  EXPECT_EQ(connect(a), FEDSTAT_OK) << error();
}

TEST_F(CabiTlsCertificateTest, PskOnlyServerClosedPortAndSilentPeer) {
  config_.device_authentication = net::DeviceAuthentication::kPsk;
  config_.lookup_psk = [](const std::string&) -> std::optional<net::DevicePsk> {
    return std::nullopt;
  };
  start();
  EXPECT_EQ(connect(fleet_.device(17)), FEDSTAT_UNAVAILABLE);
  EXPECT_NE(error().find("no common cipher suite"), std::string::npos) << error();

  // A socket that listens and never answers: the connect's timeout; then, closed, refused.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const uint16_t silent = ntohs(address.sin_port);
  const credential::DeviceCredential a = fleet_.device(17);
  const std::string own = fleet_.certificate_of(a), hex = key_hex(a);
  const auto begin = std::chrono::steady_clock::now();
  EXPECT_EQ(fedstat_tls_channel_connect_certificate(channel_, "127.0.0.1", silent, kServerName,
                                                    fleet_.ca_pem.c_str(), 0, own.c_str(), 0,
                                                    hex.c_str(), 300),
            FEDSTAT_DEADLINE_EXCEEDED);
  EXPECT_NE(error().find("timed out"), std::string::npos) << error();
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(5));
  ::close(fd);
  EXPECT_EQ(fedstat_tls_channel_connect_certificate(channel_, "127.0.0.1", silent, kServerName,
                                                    fleet_.ca_pem.c_str(), 0, own.c_str(), 0,
                                                    hex.c_str(), kTimeoutMs),
            FEDSTAT_UNAVAILABLE);
  EXPECT_NE(error().find("connection refused"), std::string::npos) << error();
}

}  // namespace
}  // namespace client_test
}  // namespace fedstat
