// TlsServer (host) against TlsPskChannel (the real device code) on loopback. The server's
// io_context runs on its own thread; the test thread waits on condition variables and joins,
// never sleeps.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "host_server/net/credentials.h"
#include "host_server/net/tls_server.h"
#include "mbedtls/ctr_drbg.h"
#include "mbedtls/entropy.h"
#include "mbedtls/net_sockets.h"
#include "sdk/tls/tls_channel.h"
#include "tests/net/tls_test_support.h"

namespace fedstat {
namespace net {
namespace {

constexpr uint32_t kClientTimeoutMs = 10000;
constexpr auto kWaitLimit = std::chrono::seconds(20);  // a cap on waits, not a synchroniser
constexpr uint64_t kUnknownDevice = 999;

std::array<uint8_t, 32> fleet_secret() {
  std::array<uint8_t, 32> secret{};
  for (size_t i = 0; i < secret.size(); ++i) secret[i] = static_cast<uint8_t>(0xA0 + i);
  return secret;
}

using tls_test::hello;

// Records every callback; echoes every frame back to its sender.
class EchoHandler : public FrameHandler {
 public:
  void on_open(ConnectionId id, const std::string& identity) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      opened_[id] = identity;
      changed_.notify_all();
    }
    for (size_t i = 0; i < burst_on_open; ++i) server->send(id, hello(i));
    if (keep_open_ms != 0) server->keep_open(id, keep_open_ms);
  }
  void on_frame(ConnectionId id, const wire::Envelope& envelope) override {
    if (check_in_on_frame) server->check_in(id);
    server->send(id, envelope);
    std::lock_guard<std::mutex> lock(mutex_);
    ++frames_;
  }
  void on_close(ConnectionId id, const std::string& reason) override {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_[id] = reason;
    changed_.notify_all();
  }

  template <typename Predicate>
  bool wait_for(Predicate predicate) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, kWaitLimit, [&] { return predicate(); });
  }
  size_t opened_count() {
    std::lock_guard<std::mutex> lock(mutex_);
    return opened_.size();
  }
  std::map<ConnectionId, std::string> opened() {
    std::lock_guard<std::mutex> lock(mutex_);
    return opened_;
  }
  std::map<ConnectionId, std::string> closed() {
    std::lock_guard<std::mutex> lock(mutex_);
    return closed_;
  }
  // Unlocked views for use inside wait_for's predicate (the lock is held there).
  const std::map<ConnectionId, std::string>& opened_locked() const { return opened_; }
  const std::map<ConnectionId, std::string>& closed_locked() const { return closed_; }

  TlsServer* server = nullptr;
  size_t burst_on_open = 0;        // frames sent to each device as soon as it is open
  uint32_t keep_open_ms = 0;       // keep_open called for each device as soon as it is open
  bool check_in_on_frame = false;  // check_in(id) at each frame (await_check_in)

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<ConnectionId, std::string> opened_;
  std::map<ConnectionId, std::string> closed_;
  size_t frames_ = 0;
};

// A TLS client written straight on mbedTLS (blocking sockets), for bytes the device's channel
// would never send: it authenticates like a device, then writes whatever the test gives it.
class RawTlsClient {
 public:
  // `offer`: a session to offer for resumption (mbedtls_ssl_set_session) before the handshake.
  explicit RawTlsClient(uint16_t port, uint64_t id, const mbedtls_ssl_session* offer = nullptr) {
    mbedtls_net_init(&net_);
    mbedtls_entropy_init(&entropy_);
    mbedtls_ctr_drbg_init(&drbg_);
    mbedtls_ssl_config_init(&config_);
    mbedtls_ssl_init(&ssl_);
    const std::string identity = std::to_string(id);
    const DevicePsk key = derive_device_psk(fleet_secret(), id);
    int rc = mbedtls_net_connect(&net_, "127.0.0.1", std::to_string(port).c_str(),
                                 MBEDTLS_NET_PROTO_TCP);
    if (rc == 0) rc = mbedtls_ctr_drbg_seed(&drbg_, mbedtls_entropy_func, &entropy_, nullptr, 0);
    if (rc == 0) {
      rc = mbedtls_ssl_config_defaults(&config_, MBEDTLS_SSL_IS_CLIENT,
                                       MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
    }
    if (rc == 0) {
      mbedtls_ssl_conf_ciphersuites(&config_, tls::kTlsPskCiphersuites);
      mbedtls_ssl_conf_rng(&config_, mbedtls_ctr_drbg_random, &drbg_);
      rc = mbedtls_ssl_conf_psk(&config_, key.data(), key.size(),
                                reinterpret_cast<const unsigned char*>(identity.data()),
                                identity.size());
    }
    if (rc == 0) rc = mbedtls_ssl_setup(&ssl_, &config_);
    if (rc == 0 && offer != nullptr) rc = mbedtls_ssl_set_session(&ssl_, offer);
    if (rc == 0) {
      mbedtls_ssl_set_bio(&ssl_, &net_, mbedtls_net_send, mbedtls_net_recv, nullptr);
      rc = mbedtls_ssl_handshake(&ssl_);
    }
    handshake_ = rc;
  }
  ~RawTlsClient() {
    mbedtls_ssl_free(&ssl_);
    mbedtls_ssl_config_free(&config_);
    mbedtls_ctr_drbg_free(&drbg_);
    mbedtls_entropy_free(&entropy_);
    mbedtls_net_free(&net_);
  }
  int handshake() const { return handshake_; }
  // A copy of the session (the caller frees it with mbedtls_ssl_session_free).
  bool session(mbedtls_ssl_session* out) const { return mbedtls_ssl_get_session(&ssl_, out) == 0; }
  bool write(const std::vector<uint8_t>& bytes) {
    return mbedtls_ssl_write(&ssl_, bytes.data(), bytes.size()) == static_cast<int>(bytes.size());
  }
  // Reads until the server ends the session; true if it did.
  bool read_until_closed() {
    unsigned char sink[256];
    for (;;) {
      const int rc = mbedtls_ssl_read(&ssl_, sink, sizeof(sink));
      if (rc > 0) continue;
      return rc == 0 || rc == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY ||
             rc == MBEDTLS_ERR_NET_CONN_RESET || rc == MBEDTLS_ERR_SSL_CONN_EOF;
    }
  }

 private:
  mbedtls_net_context net_;
  mbedtls_entropy_context entropy_;
  mbedtls_ctr_drbg_context drbg_;
  mbedtls_ssl_config config_;
  mbedtls_ssl_context ssl_;
  int handshake_ = -1;
};

// decode_frame's verdict on `bytes`, the reason the server must give.
std::string decode_verdict(const std::vector<uint8_t>& bytes) {
  wire::Envelope envelope{};
  const Result<wire::FrameResult> frame =
      wire::decode_frame(ByteSpan(bytes.data(), bytes.size()), envelope);
  return frame.ok() ? "no error" : frame.status().message();
}

class TlsServerTest : public ::testing::Test {
 protected:
  TlsServerTest() {
    config_.lookup_psk = [](const std::string& identity) -> std::optional<DevicePsk> {
      const std::optional<uint64_t> id = parse_device_identity(identity);
      if (!id || *id == kUnknownDevice) return std::nullopt;
      return derive_device_psk(fleet_secret(), *id);
    };
  }
  ~TlsServerTest() override {
    if (!server_) return;
    asio::post(io_, [this] { server_->stop(); });
    io_thread_.join();  // run() returns once every handler has completed
  }

  // Makes lookup_psk give device 17 another key (its first byte flipped) once the returned flag
  // is set: a rotated key. Call before start().
  std::shared_ptr<std::atomic<bool>> rotatable_key_of_17() {
    auto rotated = std::make_shared<std::atomic<bool>>(false);
    const auto lookup = config_.lookup_psk;
    config_.lookup_psk = [lookup,
                          rotated](const std::string& identity) -> std::optional<DevicePsk> {
      std::optional<DevicePsk> key = lookup(identity);
      if (key && *rotated && identity == "17") (*key)[0] ^= 1;
      return key;
    };
    return rotated;
  }

  void start() {
    config_.session_clock = [this] {
      return std::chrono::steady_clock::time_point() + std::chrono::seconds(clock_seconds_.load());
    };
    server_ = std::make_unique<TlsServer>(io_, config_, handler_);
    handler_.server = server_.get();
    server_->start();
    endpoint_ = "127.0.0.1:" + std::to_string(server_->port());
    io_thread_ = std::thread([this] { io_.run(); });
  }

  Status connect_device(tls::TlsPskChannel& channel, uint64_t id, const DevicePsk& key) {
    const std::string identity = std::to_string(id);
    return channel.connect(
        endpoint_.c_str(),
        ByteSpan(reinterpret_cast<const uint8_t*>(identity.data()), identity.size()),
        ByteSpan(key.data(), key.size()), kClientTimeoutMs);
  }
  Status connect_device(tls::TlsPskChannel& channel, uint64_t id) {
    return connect_device(channel, id, derive_device_psk(fleet_secret(), id));
  }

  // A plain TCP socket to the server (no TLS), blocking, on the test thread.
  asio::ip::tcp::socket raw_socket() {
    asio::ip::tcp::socket socket(client_io_);
    socket.connect({asio::ip::make_address("127.0.0.1"), server_->port()});
    return socket;
  }
  // Reads until the server ends the stream; true if it did (EOF or reset).
  static bool read_until_closed(asio::ip::tcp::socket& socket) {
    std::array<uint8_t, 256> sink;
    for (;;) {
      asio::error_code error;
      socket.read_some(asio::buffer(sink), error);
      if (error) return error == asio::error::eof || error == asio::error::connection_reset;
    }
  }

  // The server's stats, read on its io thread.
  TlsServerStats stats() {
    std::promise<TlsServerStats> promise;
    asio::post(io_, [&] { promise.set_value(server_->stats()); });
    return promise.get_future().get();
  }
  // The server's full and resumed handshakes since start, and the sessions it holds.
  void expect_counts(uint64_t full, uint64_t resumed, size_t held) {
    const TlsServerStats s = stats();
    EXPECT_EQ(s.full_handshakes, full);
    EXPECT_EQ(s.resumed_handshakes, resumed);
    EXPECT_EQ(s.cached_sessions, held);
  }

  asio::io_context io_;
  asio::io_context client_io_;
  std::atomic<int64_t> clock_seconds_{1000};  // the clock the server's sessions age by
  TlsServerConfig config_;
  EchoHandler handler_;
  std::unique_ptr<TlsServer> server_;
  std::thread io_thread_;
  std::string endpoint_;
};

// Sends `count` hellos and checks each echo; returns the first failure.
Status exchange(tls::TlsPskChannel& channel, uint64_t first_id, int count) {
  for (int i = 0; i < count; ++i) {
    const uint64_t id = first_id + static_cast<uint64_t>(i);
    Status status = channel.send(hello(id));
    if (!status.ok()) return status;
    wire::Envelope echoed{};
    status = channel.receive(echoed, kClientTimeoutMs);
    if (!status.ok()) return status;
    if (echoed.which_body != fedstat_v1_Envelope_client_hello_tag ||
        echoed.body.client_hello.client_id != id) {
      return data_loss("echo does not match what was sent");
    }
  }
  return Status();
}

TEST_F(TlsServerTest, HandshakeThenFramesBothWays) {
  start();
  tls::TlsPskChannel device;
  ASSERT_TRUE(connect_device(device, 17).ok());
  ASSERT_TRUE(handler_.wait_for([&] { return handler_.opened_locked().size() == 1; }));
  EXPECT_EQ(handler_.opened().begin()->second, "17");  // identity = decimal device id
  const Status status = exchange(device, 1000, 5);
  EXPECT_TRUE(status.ok()) << status.message();
  device.close();
  ASSERT_TRUE(handler_.wait_for([&] { return handler_.closed_locked().size() == 1; }));
  EXPECT_EQ(handler_.closed().begin()->second, "peer closed the connection");
}

TEST_F(TlsServerTest, FiftyConcurrentDevicesEachExchangeFrames) {
  start();
  constexpr int kDevices = 50;
  std::vector<Status> results(kDevices);
  std::vector<std::thread> devices;
  for (int d = 0; d < kDevices; ++d) {
    devices.emplace_back([&, d] {
      tls::TlsPskChannel device;
      const uint64_t id = static_cast<uint64_t>(d) + 1;
      Status status = connect_device(device, id);
      if (status.ok()) status = exchange(device, id * 1000, 10);
      results[static_cast<size_t>(d)] = status;
      device.close();
    });
  }
  for (auto& device : devices) device.join();
  for (int d = 0; d < kDevices; ++d) {
    EXPECT_TRUE(results[static_cast<size_t>(d)].ok())
        << "device " << d + 1 << ": " << results[static_cast<size_t>(d)].message();
  }
  ASSERT_TRUE(handler_.wait_for([&] { return handler_.closed_locked().size() == kDevices; }));
  std::set<std::string> identities;
  for (const auto& entry : handler_.opened()) identities.insert(entry.second);
  EXPECT_EQ(identities.size(), static_cast<size_t>(kDevices));
}

// Refused like a wrong key (the same alert: issue 39 item 10, audit.net.TlsAlert); the server's
// own reason says which it was.
TEST_F(TlsServerTest, UnknownIdentityIsRefused) {
  start();
  tls::TlsPskChannel device;
  // Any key: the server has none for this identity.
  const Status status =
      connect_device(device, kUnknownDevice, derive_device_psk(fleet_secret(), 1));
  EXPECT_EQ(status.code(), StatusCode::kPermissionDenied) << status.message();
  EXPECT_FALSE(device.connected());
  EXPECT_NE(std::string(status.message()).find("wrong key, or a device id it does not know"),
            std::string::npos)
      << status.message();
  ASSERT_TRUE(handler_.wait_for([&] { return handler_.closed_locked().size() == 1; }));
  EXPECT_EQ(handler_.closed().begin()->second, "TLS handshake failed: unknown PSK identity");
  EXPECT_EQ(handler_.opened_count(), 0u);
}

TEST_F(TlsServerTest, WrongKeyIsRefused) {
  start();
  tls::TlsPskChannel device;
  DevicePsk wrong = derive_device_psk(fleet_secret(), 17);
  wrong[0] ^= 0x01;
  const Status status = connect_device(device, 17, wrong);
  EXPECT_EQ(status.code(), StatusCode::kPermissionDenied) << status.message();
  EXPECT_NE(std::string(status.message()).find("wrong key"), std::string::npos) << status.message();
  ASSERT_TRUE(handler_.wait_for([&] { return handler_.closed_locked().size() == 1; }));
  EXPECT_NE(handler_.closed().begin()->second.find("TLS handshake failed"), std::string::npos);
  EXPECT_EQ(handler_.opened_count(), 0u);
}

TEST_F(TlsServerTest, GarbageInsteadOfTlsIsClosed) {
  start();
  asio::ip::tcp::socket socket = raw_socket();
  const std::string garbage = "GET / HTTP/1.1\r\nHost: fedstat\r\n\r\n";
  asio::write(socket, asio::buffer(garbage));
  EXPECT_TRUE(read_until_closed(socket));
  ASSERT_TRUE(handler_.wait_for([&] { return handler_.closed_locked().size() == 1; }));
  EXPECT_NE(handler_.closed().begin()->second.find("TLS handshake failed"), std::string::npos);
  EXPECT_EQ(handler_.opened_count(), 0u);
}

TEST_F(TlsServerTest, SilentPeerIsClosedAfterHandshakeTimeout) {
  config_.handshake_timeout_ms = 200;
  start();
  asio::ip::tcp::socket socket = raw_socket();
  ASSERT_TRUE(handler_.wait_for([&] { return handler_.closed_locked().size() == 1; }));
  EXPECT_EQ(handler_.closed().begin()->second,
            "TLS handshake not finished within handshake_timeout_ms");
  EXPECT_TRUE(read_until_closed(socket));
}

TEST_F(TlsServerTest, HonestDeviceCompletesWhileSilentPeerIsConnected) {
  start();  // handshake timeout 10 s: the silent peer stays for the whole exchange
  asio::ip::tcp::socket silent = raw_socket();
  tls::TlsPskChannel device;
  ASSERT_TRUE(connect_device(device, 5).ok());
  const Status status = exchange(device, 1, 20);
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(handler_.closed().empty());  // the silent peer was not closed to make room
  EXPECT_EQ(handler_.opened_count(), 1u);
}

TEST_F(TlsServerTest, IdlePeerIsClosedAndDeviceSeesUnavailable) {
  config_.idle_timeout_ms = 200;
  start();
  tls::TlsPskChannel device;
  ASSERT_TRUE(connect_device(device, 3).ok());
  ASSERT_TRUE(handler_.wait_for([&] { return handler_.closed_locked().size() == 1; }));
  EXPECT_EQ(handler_.closed().begin()->second, "idle for longer than idle_timeout_ms");
  wire::Envelope envelope{};
  EXPECT_EQ(device.receive(envelope, kClientTimeoutMs).code(), StatusCode::kUnavailable);
}

// keep_open (called in on_open, on the io thread) holds an idle connection past
// idle_timeout_ms (200 ms): the device's receive times out after 2 s (kDeadlineExceeded, not
// kUnavailable) with the connection still open, and a frame still echoes; margins of 10x either
// way (kept for 20 s). The idle test above is the control (closed at 200 ms).
TEST_F(TlsServerTest, KeepOpenHoldsAnIdleConnectionPastTheIdleTimeout) {
  config_.idle_timeout_ms = 200;
  handler_.keep_open_ms = 20000;
  start();
  tls::TlsPskChannel device;
  ASSERT_TRUE(connect_device(device, 3).ok());
  wire::Envelope envelope{};
  EXPECT_EQ(device.receive(envelope, 2000).code(), StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(handler_.closed().empty());
  EXPECT_TRUE(exchange(device, 1, 1).ok());
}

TEST_F(TlsServerTest, ConnectionsBeyondTheLimitAreClosedAtOnce) {
  config_.max_connections = 1;
  start();
  tls::TlsPskChannel first;
  ASSERT_TRUE(connect_device(first, 1).ok());
  tls::TlsPskChannel second;
  EXPECT_EQ(connect_device(second, 2).code(), StatusCode::kUnavailable);
  EXPECT_TRUE(exchange(first, 1, 1).ok());
  EXPECT_EQ(handler_.opened_count(), 1u);
}

TEST_F(TlsServerTest, DeviceReceiveTimesOutWithDeadlineExceeded) {
  start();
  tls::TlsPskChannel device;
  ASSERT_TRUE(connect_device(device, 9).ok());
  wire::Envelope envelope{};
  EXPECT_EQ(device.receive(envelope, 50).code(), StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(exchange(device, 1, 1).ok());  // still usable after a timeout
}

TEST_F(TlsServerTest, MalformedFrameClosesThatConnectionOnly) {
  start();
  tls::TlsPskChannel honest;
  ASSERT_TRUE(connect_device(honest, 2).ok());
  RawTlsClient rogue(server_->port(), 4);
  ASSERT_EQ(rogue.handshake(), 0);
  const std::vector<uint8_t> padded_prefix = {0x85, 0x00};  // a non-minimal length varint
  ASSERT_TRUE(rogue.write(padded_prefix));
  EXPECT_TRUE(rogue.read_until_closed());
  ASSERT_TRUE(handler_.wait_for([&] { return handler_.closed_locked().size() == 1; }));
  EXPECT_EQ(handler_.closed().begin()->second, decode_verdict(padded_prefix));
  EXPECT_NE(decode_verdict(padded_prefix), "no error");
  EXPECT_TRUE(exchange(honest, 1, 3).ok());
}

TEST_F(TlsServerTest, OversizedFrameClosesTheConnection) {
  start();
  RawTlsClient rogue(server_->port(), 4);
  ASSERT_EQ(rogue.handshake(), 0);
  const std::vector<uint8_t> huge_prefix = {0xff, 0x7f};  // 16383 bytes > kMaxEnvelopeBytes
  ASSERT_TRUE(rogue.write(huge_prefix));
  EXPECT_TRUE(rogue.read_until_closed());
  ASSERT_TRUE(handler_.wait_for([&] { return handler_.closed_locked().size() == 1; }));
  EXPECT_EQ(handler_.closed().begin()->second, decode_verdict(huge_prefix));
  EXPECT_NE(decode_verdict(huge_prefix), "no error");
}

TEST_F(TlsServerTest, OutputBeyondTheLimitClosesThatPeer) {
  config_.max_pending_output_bytes = 4 * wire::kMaxFrameBytes;
  handler_.burst_on_open = 200;  // far more than the limit before any write can complete
  start();
  tls::TlsPskChannel device;
  ASSERT_TRUE(connect_device(device, 6).ok());
  ASSERT_TRUE(handler_.wait_for([&] { return handler_.closed_locked().size() == 1; }));
  EXPECT_EQ(handler_.closed().begin()->second,
            "unsent output exceeds max_pending_output_bytes (peer not reading)");
}

// Milliseconds of CPU a thread's clock (pthread_getcpuclockid) has run.
double cpu_ms(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// True when the peer of `fd` ends the stream (EOF or reset) within `limit`.
bool closed_within(int fd, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char sink[256];
    const ssize_t n = recv(fd, sink, sizeof(sink), 0);
    if (n <= 0) return true;
  }
}

// Out of descriptors (the process's RLIMIT_NOFILE reached): every accept fails with EMFILE while
// the connections wait in the listen backlog. The io thread must wait between tries, not retry at
// once (which spun it at 100 % for as long as the shortage lasted); once descriptors are back the
// waiting peers are accepted (and here closed by the handshake time-out).
TEST_F(TlsServerTest, AcceptOutOfDescriptorsWaitsInsteadOfSpinning) {
  config_.handshake_timeout_ms = 300;
  start();
  std::vector<int> peers;
  for (int i = 0; i < 4; ++i) peers.push_back(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  for (int fd : peers) ASSERT_GE(fd, 0);
  // The lowest free descriptor: with the soft limit there, no new one can be made (accept's).
  const int lowest_free = dup(peers[0]);
  ASSERT_GE(lowest_free, 0);
  close(lowest_free);
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit tight = saved;
  tight.rlim_cur = static_cast<rlim_t>(lowest_free);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &tight), 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(server_->port());
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool connected = true;
  for (int fd : peers) {  // completed by the kernel into the backlog: no descriptor needed here
    connected = connected && connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) == 0;
  }
  clockid_t io_clock{};
  const bool clock_ok = pthread_getcpuclockid(io_thread_.native_handle(), &io_clock) == 0;
  const double before = clock_ok ? cpu_ms(io_clock) : 0;
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the window measured, not a wait
  const double busy = clock_ok ? cpu_ms(io_clock) - before : 0;
  setrlimit(RLIMIT_NOFILE, &saved);
  ASSERT_TRUE(connected);
  ASSERT_TRUE(clock_ok);
  EXPECT_LT(busy, 150.0) << "the io thread ran " << busy << " ms of 500 on failing accepts";
  for (int fd : peers) {
    EXPECT_TRUE(
        closed_within(fd, std::chrono::duration_cast<std::chrono::milliseconds>(kWaitLimit)))
        << "a peer that waited in the backlog was never accepted";
    close(fd);
  }
  EXPECT_TRUE(handler_.wait_for([&] { return handler_.closed_locked().size() == peers.size(); }));
}

TEST(TlsPskChannel, RefusesBadArgumentsAndUnconnectedUse) {
  tls::TlsPskChannel device;
  const uint8_t key[32] = {1};
  const uint8_t too_long[MBEDTLS_PSK_MAX_LEN + 1] = {1};
  const uint8_t identity[] = {'1'};
  EXPECT_EQ(device.connect("127.0.0.1:1", ByteSpan(), ByteSpan(key), 100).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(device.connect("127.0.0.1:1", ByteSpan(identity), ByteSpan(), 100).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(device.connect("127.0.0.1:1", ByteSpan(identity), ByteSpan(too_long), 100).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(device.send(hello(1)).code(), StatusCode::kFailedPrecondition);
  wire::Envelope envelope{};
  EXPECT_EQ(device.receive(envelope, 10).code(), StatusCode::kFailedPrecondition);
}

// ---- Session resumption (tls_session_cache.h) ----

TEST_F(TlsServerTest, AReturningDeviceResumesItsSessionAsItself) {
  start();
  tls::TlsPskChannel device;
  ASSERT_TRUE(connect_device(device, 17).ok());
  EXPECT_FALSE(device.resumed());  // its first connection: a full handshake
  ASSERT_TRUE(exchange(device, 100, 2).ok());
  device.close();
  const Status again = connect_device(device, 17);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_TRUE(device.resumed());
  const Status frames = exchange(device, 200, 3);  // the resumed session's keys work both ways
  EXPECT_TRUE(frames.ok()) << frames.message();
  device.close();
  ASSERT_TRUE(handler_.wait_for([&] { return handler_.opened_locked().size() == 2; }));
  for (const auto& entry : handler_.opened()) EXPECT_EQ(entry.second, "17");
  expect_counts(1, 1, 1);
}

TEST_F(TlsServerTest, NoResumptionWithoutACache) {
  config_.sessions.max_entries = 0;
  start();
  tls::TlsPskChannel device;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(connect_device(device, 17).ok());
    EXPECT_FALSE(device.resumed());
    device.close();
  }
  expect_counts(2, 0, 0);
}

TEST_F(TlsServerTest, ASessionIsResumedForItsLifetimeFromItsFullHandshakeOnly) {
  config_.sessions.lifetime_seconds = 100;
  start();
  tls::TlsPskChannel device;
  ASSERT_TRUE(connect_device(device, 17).ok());
  device.close();
  clock_seconds_ += 99;  // within the lifetime: resumed (and resuming does not renew it)
  ASSERT_TRUE(connect_device(device, 17).ok());
  EXPECT_TRUE(device.resumed());
  device.close();
  clock_seconds_ += 1;  // 100 s after the full handshake: expired, a full handshake again
  ASSERT_TRUE(connect_device(device, 17).ok());
  EXPECT_FALSE(device.resumed());
  device.close();
  expect_counts(2, 1, 1);  // the expired one forgotten, the new one held
}

TEST_F(TlsServerTest, ARevokedDeviceCannotResume) {
  auto revoked = std::make_shared<std::atomic<bool>>(false);
  const auto lookup = config_.lookup_psk;
  config_.lookup_psk = [lookup, revoked](const std::string& identity) -> std::optional<DevicePsk> {
    if (*revoked && identity == "17") return std::nullopt;
    return lookup(identity);
  };
  start();
  tls::TlsPskChannel device;
  ASSERT_TRUE(connect_device(device, 17).ok());
  device.close();
  revoked->store(true);
  const Status again = connect_device(device, 17);
  EXPECT_EQ(again.code(), StatusCode::kPermissionDenied) << again.message();
  ASSERT_TRUE(handler_.wait_for([&] { return handler_.closed_locked().size() == 2; }));
  EXPECT_EQ(handler_.opened_count(), 1u);
  expect_counts(1, 0, 0);  // the revoked identity's session is forgotten
}

TEST_F(TlsServerTest, ARotatedKeyEndsTheOldKeysSession) {
  const std::shared_ptr<std::atomic<bool>> rotated = rotatable_key_of_17();
  start();
  tls::TlsPskChannel device;
  ASSERT_TRUE(connect_device(device, 17).ok());
  device.close();
  rotated->store(true);
  // The device still has the old key and the session it made with it: no resumption, and the
  // full handshake with the old key fails.
  EXPECT_EQ(connect_device(device, 17).code(), StatusCode::kPermissionDenied);
  DevicePsk new_key = derive_device_psk(fleet_secret(), 17);
  new_key[0] ^= 1;
  ASSERT_TRUE(connect_device(device, 17, new_key).ok());
  EXPECT_FALSE(device.resumed());
  EXPECT_EQ(stats().resumed_handshakes, 0u);
}

TEST_F(TlsServerTest, ASessionIdWithoutItsMasterSecretOpensNothing) {
  start();
  RawTlsClient owner(server_->port(), 5);
  ASSERT_EQ(owner.handshake(), 0);
  mbedtls_ssl_session stolen;
  mbedtls_ssl_session_init(&stolen);
  ASSERT_TRUE(owner.session(&stolen));
  ASSERT_EQ(stolen.id_len, 32u);
  // Device 6 (its own valid key) offers device 5's session id — all an eavesdropper sees — with
  // a master secret that is not that session's.
  for (unsigned char& byte : stolen.master) byte ^= 0x5a;
  RawTlsClient thief(server_->port(), 6, &stolen);
  EXPECT_NE(thief.handshake(), 0);
  mbedtls_ssl_session_free(&stolen);
  ASSERT_TRUE(handler_.wait_for([&] { return handler_.closed_locked().size() == 1; }));
  ASSERT_EQ(handler_.opened_count(), 1u);  // the owner's connection alone
  EXPECT_EQ(handler_.opened().begin()->second, "5");
  EXPECT_EQ(stats().resumed_handshakes, 0u);
}

TEST_F(TlsServerTest, TheCacheForgetsItsOldestSessionWhenFull) {
  config_.sessions.max_entries = 2;
  start();
  tls::TlsPskChannel devices[3];
  for (uint64_t id = 1; id <= 3; ++id) {
    ASSERT_TRUE(connect_device(devices[id - 1], id).ok());
    devices[id - 1].close();
  }
  EXPECT_EQ(stats().cached_sessions, 2u);
  ASSERT_TRUE(connect_device(devices[2], 3).ok());
  EXPECT_TRUE(devices[2].resumed());
  devices[2].close();
  ASSERT_TRUE(connect_device(devices[0], 1).ok());  // the oldest, forgotten: a full handshake
  EXPECT_FALSE(devices[0].resumed());
  devices[0].close();
  expect_counts(4, 1, 2);
}

TEST_F(TlsServerTest, AChannelOffersItsSessionOnlyToTheIdentityThatMadeIt) {
  start();
  tls::TlsPskChannel channel;
  ASSERT_TRUE(connect_device(channel, 7).ok());
  channel.close();
  ASSERT_TRUE(connect_device(channel, 8).ok());  // another device on the same channel object
  EXPECT_FALSE(channel.resumed());
  channel.close();
  ASSERT_TRUE(handler_.wait_for([&] { return handler_.opened_locked().size() == 2; }));
  std::multiset<std::string> identities;
  for (const auto& entry : handler_.opened()) identities.insert(entry.second);
  EXPECT_EQ(identities, (std::multiset<std::string>{"7", "8"}));
  channel.forget_session();
  ASSERT_TRUE(connect_device(channel, 8).ok());  // forgotten: a full handshake
  EXPECT_FALSE(channel.resumed());
  channel.close();
  expect_counts(3, 0, 2);
}

TEST_F(TlsServerTest, OneCredentialCannotFlushTheOthersSessions) {
  config_.sessions.max_entries = 2;
  start();
  tls::TlsPskChannel first, busy;
  ASSERT_TRUE(connect_device(first, 1).ok());
  first.close();
  for (int i = 0; i < 5; ++i) {  // device 2's full handshakes replace its own one session
    busy.forget_session();
    ASSERT_TRUE(connect_device(busy, 2).ok());
    busy.close();
  }
  EXPECT_EQ(stats().cached_sessions, 2u);
  ASSERT_TRUE(connect_device(first, 1).ok());
  EXPECT_TRUE(first.resumed());
  first.close();
}

TEST_F(TlsServerTest, AnIdleServerWipesItsExpiredSessions) {
  config_.sessions.lifetime_seconds = 100;
  config_.session_purge_ms = 5;
  start();
  tls::TlsPskChannel device;
  ASSERT_TRUE(connect_device(device, 17).ok());
  device.close();
  ASSERT_EQ(stats().cached_sessions, 1u);
  clock_seconds_ += 100;  // expired; no one connects again
  // Polls the server's count (the purge timer runs on the io thread every 5 ms); the cap is
  // kWaitLimit, and the sleep only paces the polling.
  const auto give_up = std::chrono::steady_clock::now() + kWaitLimit;
  while (stats().cached_sessions != 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(stats().cached_sessions, 0u);
}

TEST_F(TlsServerTest, ADeviceDropsASessionOlderThanItsMaximumAge) {
  start();
  tls::TlsPskChannel device;
  device.set_max_session_age_seconds(3600);
  ASSERT_TRUE(connect_device(device, 17).ok());
  device.close();
  ASSERT_TRUE(connect_device(device, 17).ok());
  EXPECT_TRUE(device.resumed());
  device.close();
  // Every saved session is at least 0 s old: the held one is dropped at connect, and with a
  // maximum age of 0 none is kept after it.
  device.set_max_session_age_seconds(0);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(connect_device(device, 17).ok());
    EXPECT_FALSE(device.resumed());
    device.close();
  }
  // Nothing was kept at 0: with a day's age allowed again, the next connect is still full.
  device.set_max_session_age_seconds(3600);
  ASSERT_TRUE(connect_device(device, 17).ok());
  EXPECT_FALSE(device.resumed());
  device.close();
  expect_counts(4, 1, 1);
}

// admit_peer is asked for every full handshake before the server's key pair, a resumption is not
// asked; a refused peer is dropped, closed as "TLS handshake refused: <address> ...". A hello that
// offers a held session the server then cannot resume (here: the identity's key was rotated) is
// a full handshake, and asked like any.
TEST_F(TlsServerTest, AFullHandshakeIsAskedForAndAResumptionIsNot) {
  const std::shared_ptr<std::atomic<bool>> rotated = rotatable_key_of_17();
  std::atomic<int> asked{0};
  std::atomic<bool> allow{true};
  config_.admit_peer = [&](const asio::ip::address& peer) {
    EXPECT_TRUE(peer.is_loopback());
    ++asked;
    return allow.load();
  };
  start();
  tls::TlsPskChannel device;
  ASSERT_TRUE(connect_device(device, 21).ok());  // full: asked
  device.close();
  mbedtls_ssl_session held;
  mbedtls_ssl_session_init(&held);
  {
    RawTlsClient owner(server_->port(), 17);  // full: asked
    ASSERT_EQ(owner.handshake(), 0);
    ASSERT_TRUE(owner.session(&held));
  }
  allow = false;
  tls::TlsPskChannel stranger;
  EXPECT_FALSE(connect_device(stranger, 22).ok());  // full: asked, refused
  rotated->store(true);  // 17's session is still held, but restore() now refuses it
  RawTlsClient again(server_->port(), 17, &held);
  EXPECT_NE(again.handshake(), 0);  // full after all: asked, refused
  mbedtls_ssl_session_free(&held);
  ASSERT_TRUE(connect_device(device, 21).ok());  // offers its held session: not asked
  EXPECT_TRUE(device.resumed());
  device.close();
  EXPECT_EQ(asked.load(), 4);
  // Both refusals reach the handler (its on_close may come just after the peer saw the close).
  const auto refusals = [&] {
    size_t n = 0;
    for (const auto& entry : handler_.closed_locked()) {
      n += entry.second.rfind("TLS handshake refused: 127.0.0.1 ", 0) == 0;
    }
    return n;
  };
  // And the server has finished the resumption (the device finishes first: its Finished is last):
  // 21, 17 and 21 again were opened.
  ASSERT_TRUE(
      handler_.wait_for([&] { return refusals() == 2 && handler_.opened_locked().size() == 3; }));
  const TlsServerStats s = stats();
  EXPECT_EQ(s.refused_peers, 2u);
  EXPECT_EQ(s.full_handshakes, 2u);
  EXPECT_EQ(s.resumed_handshakes, 1u);
}

// A non-zero maximum age, passed in real time: a session 1 s old is offered, one past 1 s is
// wiped at connect and the handshake is full, though the server would still resume it (its
// lifetime is 1 h). The wait is the age elapsing, not synchronisation with another thread.
TEST_F(TlsServerTest, ADeviceOffersASessionUntilItsMaximumAgeHasPassed) {
  start();
  tls::TlsPskChannel device;
  device.set_max_session_age_seconds(1);
  ASSERT_TRUE(connect_device(device, 18).ok());
  const auto made = std::chrono::steady_clock::now();
  device.close();
  ASSERT_TRUE(connect_device(device, 18).ok());
  // Only meaningful while the session is under 1 s old (a loaded machine may take longer).
  const bool young = std::chrono::steady_clock::now() - made < std::chrono::milliseconds(900);
  const bool resumed = device.resumed();
  if (young) {
    EXPECT_TRUE(resumed);
  }
  device.close();
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  ASSERT_TRUE(connect_device(device, 18).ok());
  EXPECT_FALSE(device.resumed());
  device.close();
  // The server still held the old session: only the device's age check made the third full.
  expect_counts(resumed ? 2 : 3, resumed ? 1 : 0, 1);
}

// max_connections_per_identity: the identity's oldest open connection makes room for its newest
// (closed "replaced: ..."); the others' connections are not touched.
TEST_F(TlsServerTest, OneIdentityHoldsAtMostItsCapAndItsOldestMakesRoom) {
  config_.max_connections_per_identity = 2;
  start();
  tls::TlsPskChannel first, second, third, other;
  ASSERT_TRUE(connect_device(other, 8).ok());
  ASSERT_TRUE(connect_device(first, 7).ok());
  ASSERT_TRUE(connect_device(second, 7).ok());
  ASSERT_TRUE(connect_device(third, 7).ok());
  wire::Envelope envelope{};
  EXPECT_EQ(first.receive(envelope, kClientTimeoutMs).code(), StatusCode::kUnavailable);
  ASSERT_TRUE(handler_.wait_for([&] { return handler_.closed_locked().size() == 1; }));
  EXPECT_EQ(handler_.closed().begin()->second,
            "replaced: identity 7 opened a newer connection (max_connections_per_identity 2)");
  EXPECT_TRUE(exchange(second, 1, 1).ok());
  EXPECT_TRUE(exchange(third, 1, 1).ok());
  EXPECT_TRUE(exchange(other, 1, 1).ok());
  EXPECT_EQ(stats().replaced_per_identity, 1u);
}

// max_connections_per_address (loopback counted only when not exempt): a connection beyond takes
// the slot of the address's oldest one not checked in (a, idle: closed at once, before the
// handshake time-out a minute away); once the address's connections have all checked in, one
// more is closed at accept (no id, no call).
TEST_F(TlsServerTest, AtItsAddressCapTheOldestNotCheckedInMakesRoom) {
  config_.max_connections_per_address = 2;
  config_.handshake_timeout_ms = 60000;
  config_.exempt_loopback = false;
  start();
  asio::ip::tcp::socket a = raw_socket(), b = raw_socket(), c = raw_socket();
  EXPECT_TRUE(read_until_closed(a));  // at once: the time-out is a minute away
  ASSERT_TRUE(handler_.wait_for([&] { return handler_.closed_locked().size() == 1; }));
  EXPECT_EQ(handler_.closed().begin()->second,
            "closed for a newer connection: not checked in, at max_connections_per_address 2 "
            "from 127.0.0.1");
  EXPECT_EQ(stats().evicted_per_address, 1u);
  tls::TlsPskChannel one, two, three;  // b, then c make room; then both devices hold the cap
  ASSERT_TRUE(connect_device(one, 3).ok());
  ASSERT_TRUE(connect_device(two, 4).ok());
  EXPECT_TRUE(read_until_closed(b));
  EXPECT_TRUE(read_until_closed(c));
  EXPECT_EQ(connect_device(three, 5).code(), StatusCode::kUnavailable);
  EXPECT_EQ(stats().refused_per_address, 1u);
  EXPECT_TRUE(exchange(one, 1, 1).ok());
  EXPECT_TRUE(exchange(two, 1, 1).ok());
}

// max_connections: a newcomer takes the slot of the oldest connection not checked in (whatever
// its address); a device that has checked in is never closed for it.
TEST_F(TlsServerTest, AtMaxConnectionsTheOldestNotCheckedInMakesRoom) {
  config_.max_connections = 2;
  config_.handshake_timeout_ms = 60000;
  start();
  tls::TlsPskChannel device;
  ASSERT_TRUE(connect_device(device, 3).ok());  // checked in at its handshake's end here
  asio::ip::tcp::socket silent = raw_socket();
  tls::TlsPskChannel newcomer;
  ASSERT_TRUE(connect_device(newcomer, 4).ok());
  EXPECT_TRUE(read_until_closed(silent));
  EXPECT_EQ(stats().evicted_full, 1u);
  tls::TlsPskChannel refused;
  EXPECT_EQ(connect_device(refused, 5).code(), StatusCode::kUnavailable);
  EXPECT_EQ(stats().refused_full, 1u);
  EXPECT_TRUE(exchange(device, 1, 1).ok());
  EXPECT_TRUE(exchange(newcomer, 1, 1).ok());
}

TEST_F(TlsServerTest, LoopbackIsNotCappedPerAddressWhenExempt) {
  config_.max_connections_per_address = 1;
  start();  // exempt_loopback: true
  tls::TlsPskChannel one, two;
  ASSERT_TRUE(connect_device(one, 1).ok());
  ASSERT_TRUE(connect_device(two, 2).ok());
  EXPECT_TRUE(exchange(one, 1, 1).ok());
  EXPECT_EQ(stats().refused_per_address, 0u);
}

// await_check_in: frames do not move a connection's deadline until the handler checks it in; the
// one never checked in is closed at handshake_timeout_ms (300 ms), the one checked in at its
// first frame is still open a second later (idle time-out a minute).
TEST_F(TlsServerTest, AConnectionNotCheckedInIsClosedAtTheHandshakeTimeout) {
  config_.await_check_in = true;
  config_.handshake_timeout_ms = 300;
  config_.idle_timeout_ms = 60000;
  start();
  tls::TlsPskChannel rogue;
  ASSERT_TRUE(connect_device(rogue, 4).ok());
  Status status;  // a frame echoed every 50 ms (the wait for one that does not come paces it)
  const auto give_up = std::chrono::steady_clock::now() + kWaitLimit;
  while (status.ok() && std::chrono::steady_clock::now() < give_up) {
    status = exchange(rogue, 1, 1);
    wire::Envelope none{};
    const Status waited = status.ok() ? rogue.receive(none, 50) : status;
    if (waited.code() != StatusCode::kDeadlineExceeded) status = waited;
  }
  EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.message();
  ASSERT_TRUE(handler_.wait_for([&] { return handler_.closed_locked().size() == 1; }));
  EXPECT_EQ(handler_.closed().begin()->second,
            "no check-in (a valid ClientHello) within handshake_timeout_ms");
  EXPECT_EQ(stats().not_checked_in, 1u);

  handler_.check_in_on_frame = true;
  tls::TlsPskChannel device;
  ASSERT_TRUE(connect_device(device, 5).ok());
  ASSERT_TRUE(exchange(device, 1, 1).ok());  // checked in
  wire::Envelope envelope{};
  EXPECT_EQ(device.receive(envelope, 1000).code(), StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(exchange(device, 2, 1).ok());
}

// revoke(): the identity's connections are closed and its held session forgotten; others stay.
TEST_F(TlsServerTest, RevokeClosesTheIdentitysConnectionsAndForgetsItsSession) {
  start();
  tls::TlsPskChannel revoked, kept;
  ASSERT_TRUE(connect_device(revoked, 17).ok());
  ASSERT_TRUE(connect_device(kept, 18).ok());
  ASSERT_EQ(stats().cached_sessions, 2u);
  std::promise<size_t> closed;
  asio::post(io_, [&] { closed.set_value(server_->revoke({"17"})); });
  EXPECT_EQ(closed.get_future().get(), 1u);
  wire::Envelope envelope{};
  EXPECT_EQ(revoked.receive(envelope, kClientTimeoutMs).code(), StatusCode::kUnavailable);
  ASSERT_TRUE(handler_.wait_for([&] { return handler_.closed_locked().size() == 1; }));
  EXPECT_EQ(handler_.closed().begin()->second, "credential revoked (identity 17)");
  const TlsServerStats s = stats();
  EXPECT_EQ(s.cached_sessions, 1u);
  EXPECT_EQ(s.revoked, 1u);
  EXPECT_TRUE(exchange(kept, 1, 1).ok());
}

// A cache whose clock reads `seconds`, holding one session (id 0, 1, ..., 31) of identity "4".
class TlsSessionCacheTest : public ::testing::Test {
 protected:
  void hold_one(uint32_t lifetime_seconds) {
    TlsSessionCacheConfig config;
    config.lifetime_seconds = lifetime_seconds;
    cache_ = std::make_unique<TlsSessionCache>(config, [this] {
      return std::chrono::steady_clock::time_point() + std::chrono::seconds(seconds_);
    });
    mbedtls_ssl_session_init(&session_);
    session_.id_len = 32;
    for (size_t i = 0; i < 32; ++i) session_.id[i] = static_cast<unsigned char>(i);
    ASSERT_TRUE(cache_->store(session_, "4", TlsSessionCache::Key{}));
  }
  ~TlsSessionCacheTest() override { mbedtls_ssl_session_free(&session_); }

  int64_t seconds_ = 0;
  mbedtls_ssl_session session_;
  std::unique_ptr<TlsSessionCache> cache_;
};

TEST_F(TlsSessionCacheTest, PurgeWipesExpiredSessionsWithoutAHandshake) {
  hold_one(10);
  EXPECT_FALSE(cache_->store(session_, "5", TlsSessionCache::Key{}));  // an id is stored once
  seconds_ = 9;
  cache_->purge_expired();
  EXPECT_EQ(cache_->size(), 1u);
  seconds_ = 10;
  cache_->purge_expired();
  EXPECT_EQ(cache_->size(), 0u);
}

TEST_F(TlsSessionCacheTest, LifetimeIsAtMostADay) {
  hold_one(7 * 86400);
  seconds_ = 86400;
  cache_->purge_expired();
  EXPECT_EQ(cache_->size(), 0u);
}

}  // namespace
}  // namespace net
}  // namespace fedstat
