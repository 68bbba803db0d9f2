// TLS-PSK handshakes per second against the real fedstat-server, as a ratio against mbedTLS's own
// handshake loop measured in the same run (issue 13 item 6).
//
//   BM_ServerHandshake  a real fedstat-server (the built binary, a child process; fleet_secret,
//       no tasks) on loopback; each iteration is one device connection as a device makes it:
//       tls::TlsPskChannel::connect (TCP connect, the TLS 1.2 ECDHE-PSK handshake with device 1's
//       PSK, HKDF(fleet secret, 1)), then close() (close_notify, TCP close). One connection at a
//       time; the server's handshake (its PSK callback derives the key) runs in its process.
//       Every iteration is a full handshake (the channel forgets its session first).
//   BM_ServerResumedHandshake  the same connections, the channel keeping its session: after the
//       first, each resumes it (an abbreviated handshake, no key exchange;
//       host_server/net/tls_session_cache.h). Fails if one does not. Printed beside the others.
//   BM_MbedtlsHandshakeLoop  the same handshake with no sockets and no server around it: an
//       mbedTLS client and server in this thread over in-memory buffers, one handshake after
//       another. The server side is what TlsServer does per connection (net/tls_server.cpp): one
//       shared config (TLS 1.2 only, tls::kTlsPskCiphersuites, tls::kTlsPskCurves, a CTR-DRBG
//       over mbedtls_entropy, a PSK callback deriving the device's key from the fleet secret, as
//       server_app.cpp's) and a fresh mbedtls_ssl_context per connection; the client side is what
//       TlsPskChannel::connect and close do per connection (a fresh config and CTR-DRBG seeded
//       from platform entropy, the same versions, suites, curves, no session tickets, the PSK;
//       close_notify at the end).
// "handshakes/s" is iterations ÷ wall seconds; the printed ratio is server ÷ loop (1.0: the
// server, TCP and the process boundary cost nothing beyond the handshake's own cryptography).
// Both sides do the client's and the server's cryptography on this machine's cores: the loop on
// one thread, the server run in two processes that mostly take turns.
// Run from a Release build: build/host-release/tests/bench/fedstat_tls_handshake_bench
// (--benchmark_min_time=2 for steadier figures; about 2 ms of CPU per handshake per side here).
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "host_server/hex.h"
#include "host_server/net/credentials.h"
#include "mbedtls/ctr_drbg.h"
#include "mbedtls/entropy.h"
#include "mbedtls/ssl.h"
#include "nlohmann/json.hpp"
#include "platform/platform.h"
#include "sdk/tls/tls_channel.h"
#include "tests/bench/same_run_reporter.h"
#include "tests/common/server_process.h"

namespace fedstat {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kDevice = 1;

std::array<uint8_t, 32> fleet_secret() {
  std::array<uint8_t, 32> secret;
  secret.fill(0x5a);
  return secret;
}

void server_handshakes(benchmark::State& state, bool resume) {
  char pattern[] = "/tmp/fedstat-handshake-XXXXXX";
  if (mkdtemp(pattern) == nullptr) {
    state.SkipWithError("mkdtemp failed");
    return;
  }
  const fs::path dir = pattern;
  const std::array<uint8_t, 32> secret = fleet_secret();
  const nlohmann::json config{{"listen", "127.0.0.1:0"},
                              {"store", (dir / "server.db").string()},
                              {"fleet_secret", host::encode_hex(secret.data(), secret.size())}};
  std::ofstream(dir / "server.json") << config.dump();
  {
    testing::ServerProcess server(dir / "server.json", dir / "port", dir / "server.log");
    const std::string endpoint = "127.0.0.1:" + std::to_string(server.port());
    const std::string identity = std::to_string(kDevice);
    const net::DevicePsk psk = net::derive_device_psk(secret, kDevice);
    tls::TlsPskChannel channel;
    uint64_t connections = 0;  // this server's: its first is a full handshake
    for (auto _ : state) {
      if (!resume) channel.forget_session();
      const Status connected = channel.connect(
          endpoint.c_str(),
          ByteSpan(reinterpret_cast<const uint8_t*>(identity.data()), identity.size()),
          ByteSpan(psk.data(), psk.size()), 10000);
      if (!connected.ok()) {
        state.SkipWithError(connected.message());
        break;
      }
      if (resume && connections++ > 0 && !channel.resumed()) {
        state.SkipWithError("a connection did not resume the channel's session");
        break;
      }
      channel.close();
    }
  }
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  state.counters["handshakes/s"] =
      benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
}
void BM_ServerHandshake(benchmark::State& state) {
  server_handshakes(state, false);
}
BENCHMARK(BM_ServerHandshake)->Unit(benchmark::kMicrosecond)->UseRealTime();
void BM_ServerResumedHandshake(benchmark::State& state) {
  server_handshakes(state, true);
}
BENCHMARK(BM_ServerResumedHandshake)->Unit(benchmark::kMicrosecond)->UseRealTime();

// One direction of the in-memory link: bytes one side wrote, not yet read by the other.
struct Pipe {
  std::vector<uint8_t> bytes;
  size_t taken = 0;
};

struct Link {
  Pipe to_server, to_client;
};

int pipe_send(Pipe& pipe, const unsigned char* data, size_t length) {
  pipe.bytes.insert(pipe.bytes.end(), data, data + length);
  return static_cast<int>(length);
}

int pipe_receive(Pipe& pipe, unsigned char* out, size_t length) {
  const size_t available = pipe.bytes.size() - pipe.taken;
  if (available == 0) return MBEDTLS_ERR_SSL_WANT_READ;
  const size_t n = std::min(available, length);
  std::memcpy(out, pipe.bytes.data() + pipe.taken, n);
  pipe.taken += n;
  if (pipe.taken == pipe.bytes.size()) {
    pipe.bytes.clear();
    pipe.taken = 0;
  }
  return static_cast<int>(n);
}

int client_send(void* link, const unsigned char* data, size_t length) {
  return pipe_send(static_cast<Link*>(link)->to_server, data, length);
}
int client_receive(void* link, unsigned char* out, size_t length) {
  return pipe_receive(static_cast<Link*>(link)->to_client, out, length);
}
int server_send(void* link, const unsigned char* data, size_t length) {
  return pipe_send(static_cast<Link*>(link)->to_client, data, length);
}
int server_receive(void* link, unsigned char* out, size_t length) {
  return pipe_receive(static_cast<Link*>(link)->to_server, out, length);
}

// TlsServer's PSK callback with server_app.cpp's fleet-secret lookup.
int server_psk(void* secret, mbedtls_ssl_context* ssl, const unsigned char* identity,
               size_t length) {
  const auto id =
      net::parse_device_identity(std::string(reinterpret_cast<const char*>(identity), length));
  if (!id) return -1;
  const net::DevicePsk key =
      net::derive_device_psk(*static_cast<std::array<uint8_t, 32>*>(secret), *id);
  return mbedtls_ssl_set_hs_psk(ssl, key.data(), key.size());
}

int platform_entropy(void* /*unused*/, unsigned char* out, size_t length) {
  return platform::fill_entropy(MutableByteSpan(out, length)).ok()
             ? 0
             : MBEDTLS_ERR_ENTROPY_SOURCE_FAILED;
}

// TlsServer's shared configuration (its constructor).
class ServerConfig {
 public:
  explicit ServerConfig(std::array<uint8_t, 32>& secret) {
    mbedtls_entropy_init(&entropy_);
    mbedtls_ctr_drbg_init(&drbg_);
    mbedtls_ssl_config_init(&config_);
    static constexpr char kPersonalisation[] = "fedstat tls server";
    int rc = mbedtls_ctr_drbg_seed(&drbg_, mbedtls_entropy_func, &entropy_,
                                   reinterpret_cast<const unsigned char*>(kPersonalisation),
                                   sizeof(kPersonalisation) - 1);
    if (rc == 0) {
      rc = mbedtls_ssl_config_defaults(&config_, MBEDTLS_SSL_IS_SERVER,
                                       MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
    }
    if (rc != 0) throw std::runtime_error("mbedTLS server setup failed");
    tls::pin_psk_profile(config_, drbg_);
    mbedtls_ssl_conf_psk_cb(&config_, server_psk, &secret);
  }
  ~ServerConfig() {
    mbedtls_ssl_config_free(&config_);
    mbedtls_ctr_drbg_free(&drbg_);
    mbedtls_entropy_free(&entropy_);
  }
  const mbedtls_ssl_config* get() const { return &config_; }

 private:
  mbedtls_entropy_context entropy_;
  mbedtls_ctr_drbg_context drbg_;
  mbedtls_ssl_config config_;
};

// What TlsPskChannel::connect sets up per connection (its setup()).
class ClientSide {
 public:
  ClientSide(const std::string& identity, const net::DevicePsk& psk, Link& link) {
    mbedtls_ssl_init(&ssl_);
    mbedtls_ssl_config_init(&config_);
    mbedtls_ctr_drbg_init(&drbg_);
    static constexpr char kPersonalisation[] = "fedstat tls psk channel";
    bool ok =
        mbedtls_ctr_drbg_seed(&drbg_, platform_entropy, nullptr,
                              reinterpret_cast<const unsigned char*>(kPersonalisation),
                              sizeof(kPersonalisation) - 1) == 0 &&
        mbedtls_ssl_config_defaults(&config_, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                    MBEDTLS_SSL_PRESET_DEFAULT) == 0;
    if (ok) {
      tls::pin_psk_profile(config_, drbg_);
      mbedtls_ssl_conf_session_tickets(&config_, MBEDTLS_SSL_SESSION_TICKETS_DISABLED);
      ok = mbedtls_ssl_conf_psk(&config_, psk.data(), psk.size(),
                                reinterpret_cast<const unsigned char*>(identity.data()),
                                identity.size()) == 0 &&
           mbedtls_ssl_setup(&ssl_, &config_) == 0;
    }
    if (!ok) throw std::runtime_error("mbedTLS client setup failed");
    mbedtls_ssl_set_bio(&ssl_, &link, client_send, client_receive, nullptr);
  }
  ~ClientSide() {
    mbedtls_ssl_free(&ssl_);
    mbedtls_ssl_config_free(&config_);
    mbedtls_ctr_drbg_free(&drbg_);
  }
  mbedtls_ssl_context* ssl() { return &ssl_; }

 private:
  mbedtls_ssl_context ssl_;
  mbedtls_ssl_config config_;
  mbedtls_ctr_drbg_context drbg_;
};

// A fresh server context per connection (TlsServer::admit), freed after it (~Connection).
class ServerSide {
 public:
  ServerSide(const ServerConfig& config, Link& link) {
    mbedtls_ssl_init(&ssl_);
    if (mbedtls_ssl_setup(&ssl_, config.get()) != 0) {
      mbedtls_ssl_free(&ssl_);
      throw std::runtime_error("mbedtls_ssl_setup (server) failed");
    }
    mbedtls_ssl_set_bio(&ssl_, &link, server_send, server_receive, nullptr);
  }
  ~ServerSide() { mbedtls_ssl_free(&ssl_); }
  mbedtls_ssl_context* ssl() { return &ssl_; }

 private:
  mbedtls_ssl_context ssl_;
};

bool pending(int rc) {
  return rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE;
}

void BM_MbedtlsHandshakeLoop(benchmark::State& state) {
  std::array<uint8_t, 32> secret = fleet_secret();
  const ServerConfig server_config(secret);
  const std::string identity = std::to_string(kDevice);
  const net::DevicePsk psk = net::derive_device_psk(secret, kDevice);
  for (auto _ : state) {
    Link link;
    ClientSide client(identity, psk, link);
    ServerSide server(server_config, link);
    int client_rc = MBEDTLS_ERR_SSL_WANT_READ, server_rc = MBEDTLS_ERR_SSL_WANT_READ;
    // Each side runs until it waits for the other: a TLS 1.2 handshake takes a few turns.
    for (int turn = 0; turn < 64 && (client_rc != 0 || server_rc != 0); ++turn) {
      client_rc = mbedtls_ssl_handshake(client.ssl());
      server_rc = mbedtls_ssl_handshake(server.ssl());
      if ((client_rc != 0 && !pending(client_rc)) || (server_rc != 0 && !pending(server_rc))) {
        break;
      }
    }
    if (client_rc != 0 || server_rc != 0) {
      state.SkipWithError("the in-memory handshake did not complete");
      break;
    }
    (void)mbedtls_ssl_close_notify(client.ssl());  // as TlsPskChannel::close
  }
  state.counters["handshakes/s"] =
      benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_MbedtlsHandshakeLoop)->Unit(benchmark::kMicrosecond)->UseRealTime();

class HandshakeReporter : public bench::SameRunReporter {
 public:
  HandshakeReporter()
      : SameRunReporter("Server TLS-PSK handshakes ÷ mbedTLS's own handshake loop, same run:") {}

 protected:
  std::string describe(const Run& run) override {
    const auto rate = run.counters.find("handshakes/s");
    if (rate == run.counters.end() || run.error_occurred) return "";
    const std::string name = run.benchmark_name();
    if (name.rfind("BM_ServerHandshake", 0) == 0) server_ = rate->second.value;
    if (name.rfind("BM_ServerResumedHandshake", 0) == 0) {
      char line[160];
      std::snprintf(line, sizeof(line), "  resumed sessions: server %8.1f handshakes/s\n",
                    rate->second.value);
      return line;
    }
    if (name.rfind("BM_MbedtlsHandshakeLoop", 0) == 0) loop_ = rate->second.value;
    if (server_ <= 0 || loop_ <= 0 || printed_) return "";
    printed_ = true;
    char line[200];
    std::snprintf(line, sizeof(line),
                  "  ECDHE-PSK-CHACHA20-POLY1305: server %8.1f handshakes/s, mbedTLS loop %8.1f "
                  "handshakes/s, ratio %.3f\n",
                  server_, loop_, server_ / loop_);
    return line;
  }

 private:
  double server_ = 0, loop_ = 0;
  bool printed_ = false;
};

}  // namespace
}  // namespace fedstat

int main(int argc, char** argv) {
  fedstat::HandshakeReporter reporter;
  return fedstat::bench::run_benchmarks(argc, argv, reporter);
}
