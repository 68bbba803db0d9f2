// fedstat-netfault: one hostile peer (or crowd of them) against a running fedstat-server, one
// attack per run, and what the server did about it — for the network-fault tests
// (tests/emulation/netfault_test.sh, label netfault) and for trying a server by hand.
//
//   fedstat-netfault --attack KIND --server HOST:PORT [--fleet-secret HEX --id ID]
//                    [--seconds S] [--count N] [--interval-ms MS] [--wait-seconds W]
//                    [--source ADDRESS] [--no-reopen] [--ready-file PATH] [--stop-file PATH]
//                    [--watch-pid PID] [--json]
//
// Attacks (each runs for --seconds — then, with --stop-file, until that file exists — and then
// waits up to --wait-seconds for the server to close what is still open; a connection the server
// closes while the attack runs is opened again, unless --no-reopen or slot_hog):
//   silent            --count (1) TCP connections that send nothing
//   slowloris         --count (1) TCP connections sending a real TLS ClientHello (an mbedTLS
//                     client's, as a device's) one byte every --interval-ms (1000)
//   idle_flood        --count (1000) TCP connections opened at once, sending nothing
//   huge_frame        a device (--id, --fleet-secret) completes the TLS-PSK handshake and sends,
//                     inside TLS, a frame prefix announcing 2^32 bytes (the varint 80 80 80 80 10);
//                     again every --interval-ms (200)
//   hello_flood       --count (1) workers, each checking in as device --id back to back as fast as
//                     they can: TLS-PSK (the SDK's TlsPskChannel), ClientHello, the first answer,
//                     close
//   drop_every_round  device --id checks in, takes its Task and TaskData, and drops without a
//                     reply; again every --interval-ms (100)
//   handshake_flood   --count (1) workers, each opening a TCP connection, sending a real TLS
//                     ClientHello (no credential needed) in one write, reading the server's first
//                     answer (its ServerHello .. ServerHelloDone: the server made a key pair) or
//                     its close, and closing — back to back as fast as they can
//   slot_hog          --count (1) connections as device --id, opened one after another, each
//                     completing the TLS-PSK handshake and then sending, every --interval-ms
//                     (500), a frame that is not a ClientHello (an Ack) — never checking in, never
//                     idle; the server's answers are read and dropped, and a connection the
//                     server closes is not opened again (how many it keeps is what this measures)
// --source ADDRESS   the local address the attack's TCP connections are made from (e.g. a
//                    non-loopback one, which a per-address limit applies to)
// --no-reopen        silent, slowloris, idle_flood: a connection the server closes is not opened
//                    again (what the server keeps of one wave is then what still_open counts)
// --ready-file PATH  written ("ready") once the attack is under way: every connection of the first
//                    wave open (raw attacks), or the first session done (the others)
// --stop-file PATH   after --seconds, the attack goes on until PATH exists (at most 600 s in all)
// --watch-pid PID    samples the server's VmRSS, open descriptors and CPU time (/proc/PID) every
//                    50 ms
//
// --json prints one object. Always: attack, seconds, connections (opened), connect_failures.
// Raw attacks (silent, slowloris, idle_flood): closed_by_server, still_open (open when the wait
// ended: the server never closed them), peak_open, lifetime_ms {min, median, max} (connect to
// the server's close), bytes_sent, bytes_received. huge_frame: attempts, handshake_failures,
// closed_by_server, still_open, close_ms {min, median, max} (prefix sent to the server's close),
// bytes_received (plaintext the server sent before closing). hello_flood, drop_every_round:
// sessions, sessions_per_second, handshake_failures, offered (answered with a Task), rate_limited
// (RETRY_LATER for too many check-ins), refused (any other ServerError, by detail in
// "refusals"), errors, offered_before_first_limit, task_id. handshake_flood: attempts, answered
// (the server sent its handshake answer), closed_unanswered (closed with no byte: refused before
// any TLS work), attempts_per_second, answered_per_second. slot_hog: handshake_failures,
// handshake_errors, closed_by_server, still_open, lifetime_ms {min, median, max} (the handshake's
// end to the server's close), frames_sent, bytes_received. With --watch-pid: server
// {rss_before_kb, rss_max_kb, fds_before, fds_max, cpu_seconds (user + system during the
// attack), samples}.
// Exit codes: 0 the attack ran (whatever the server did: see the JSON); 1 a runtime failure; 2
// usage.
#include <dirent.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "host_server/net/credentials.h"
#include "host_server/server_config.h"
#include "host_server/tools/cli_conventions.h"
#include "host_server/tools/process_stats.h"
#include "mbedtls/ctr_drbg.h"
#include "mbedtls/entropy.h"
#include "mbedtls/error.h"
#include "mbedtls/net_sockets.h"
#include "mbedtls/ssl.h"
#include "nlohmann/json.hpp"
#include "sdk/tls/tls_channel.h"
#include "sdk/version.h"
#include "sdk/wire/envelope_codec.h"

using namespace fedstat;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point from, Clock::time_point to = Clock::now()) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

json spread(std::vector<double> values) {
  if (values.empty()) return json{{"min", nullptr}, {"median", nullptr}, {"max", nullptr}};
  std::sort(values.begin(), values.end());
  return json{
      {"min", values.front()}, {"median", values[values.size() / 2]}, {"max", values.back()}};
}

struct Endpoint {
  std::string host, port;
};

Endpoint split_endpoint(const std::string& server) {
  const size_t colon = server.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == server.size()) {
    throw std::invalid_argument("--server must be HOST:PORT, not '" + server + "'");
  }
  return {server.substr(0, colon), server.substr(colon + 1)};
}

// A blocking TCP connect; -1 on failure.
int tcp_connect(const Endpoint& endpoint, const std::string& source = "") {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(endpoint.host.c_str(), endpoint.port.c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    bool bound = true;
    if (!source.empty()) {  // the local address, any port
      addrinfo local_hints{};
      local_hints.ai_family = a->ai_family;
      local_hints.ai_socktype = SOCK_STREAM;
      local_hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
      addrinfo* local = nullptr;
      bound = getaddrinfo(source.c_str(), "0", &local_hints, &local) == 0 &&
              bind(fd, local->ai_addr, local->ai_addrlen) == 0;
      if (local != nullptr) freeaddrinfo(local);
    }
    if (!bound || connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd >= 0) {
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  return fd;
}

// Whether the attack goes on: for `seconds` from `start`, then — with a stop file — until that
// file exists (at most kLongestRunSeconds in all).
constexpr double kLongestRunSeconds = 600;
bool going_on(Clock::time_point start, double seconds, const std::string& stop_file) {
  const double elapsed = ms_since(start) / 1000;
  if (elapsed < seconds) return true;
  if (stop_file.empty() || elapsed >= kLongestRunSeconds) return false;
  return access(stop_file.c_str(), F_OK) != 0;
}

void write_ready(const std::string& path) {
  if (path.empty()) return;
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary);
    out << "ready\n";
  }
  std::rename(temporary.c_str(), path.c_str());
}

// ---- The server's memory and descriptors, sampled from /proc ---------------------------------

class ServerWatch {
 public:
  explicit ServerWatch(int pid) : pid_(pid) {
    if (pid_ <= 0) return;
    rss_before_ = rss_kb();
    fds_before_ = fds();
    cpu_before_ = cpu_seconds();
    rss_max_ = rss_before_;
    fds_max_ = fds_before_;
    thread_ = std::thread([this] {
      while (!stop_) {
        sample();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the sampling period
      }
    });
  }
  ~ServerWatch() { finish(); }
  void finish() {
    if (!thread_.joinable()) return;
    stop_ = true;
    thread_.join();
    sample();
  }
  json report() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return json{{"rss_before_kb", rss_before_},
                {"rss_max_kb", rss_max_},
                {"fds_before", fds_before_},
                {"fds_max", fds_max_},
                {"cpu_seconds", cpu_last_ - cpu_before_},
                {"samples", samples_}};
  }

 private:
  long rss_kb() const { return tools::process_status_kb(pid_, "VmRSS"); }
  double cpu_seconds() const { return std::max(0.0, tools::process_cpu_seconds(pid_)); }
  long fds() const {
    DIR* dir = opendir(("/proc/" + std::to_string(pid_) + "/fd").c_str());
    if (dir == nullptr) return -1;
    long n = 0;
    while (dirent* entry = readdir(dir)) {
      if (entry->d_name[0] != '.') ++n;
    }
    closedir(dir);
    return n;
  }
  void sample() {
    const long rss = rss_kb(), open = fds();
    const double cpu = cpu_seconds();
    std::lock_guard<std::mutex> lock(mutex_);
    cpu_last_ = std::max(cpu_last_, cpu);
    rss_max_ = std::max(rss_max_, rss);
    fds_max_ = std::max(fds_max_, open);
    ++samples_;
  }

  int pid_;
  long rss_before_ = -1, fds_before_ = -1;
  mutable std::mutex mutex_;
  long rss_max_ = -1, fds_max_ = -1;
  double cpu_before_ = 0, cpu_last_ = 0;
  long samples_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// ---- TLS-PSK straight on mbedTLS, for bytes the SDK's channel would never send ---------------

std::string mbedtls_text(int rc) {
  char text[160];
  mbedtls_strerror(rc, text, sizeof(text));
  return text;
}

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
std::vector<uint8_t> captured_client_hello(const PskClientConfig& config) {
  struct Capture {
    std::vector<uint8_t> bytes;
  } capture;
  mbedtls_ssl_context ssl;
  mbedtls_ssl_init(&ssl);
  int rc = mbedtls_ssl_setup(&ssl, config.get());
  if (rc == 0) {
    mbedtls_ssl_set_bio(
        &ssl, &capture,
        [](void* c, const unsigned char* bytes, size_t n) -> int {
          auto* out = static_cast<Capture*>(c);
          out->bytes.insert(out->bytes.end(), bytes, bytes + n);
          return static_cast<int>(n);
        },
        [](void*, unsigned char*, size_t) -> int { return MBEDTLS_ERR_SSL_WANT_READ; }, nullptr);
    rc = mbedtls_ssl_handshake(&ssl);  // writes the ClientHello, then wants the server's answer
  }
  mbedtls_ssl_free(&ssl);
  if (rc != MBEDTLS_ERR_SSL_WANT_READ || capture.bytes.empty()) {
    throw std::runtime_error("could not build a TLS ClientHello: " + mbedtls_text(rc));
  }
  return capture.bytes;
}

// ---- silent, slowloris, idle_flood --------------------------------------------------------------

struct RawOptions {
  size_t count = 1;
  double seconds = 10, wait_seconds = 30;
  uint32_t trickle_ms = 0;       // 0: send nothing; else one byte of `trickle` this often
  std::vector<uint8_t> trickle;  // the bytes to trickle
  std::string ready_file, stop_file;
  std::string source;  // the local address to connect from ("": any)
  bool reopen = true;  // open a connection again when the server closes it
};

json raw_attack(const Endpoint& endpoint, const RawOptions& o) {
  struct Peer {
    int fd = -1;
    Clock::time_point opened, next_byte;
    size_t sent = 0;
  };
  json out;
  std::vector<Peer> peers;
  std::vector<double> lifetimes;
  size_t opened = 0, connect_failures = 0, closed_by_server = 0, peak_open = 0;
  uint64_t bytes_sent = 0, bytes_received = 0;
  const Clock::time_point start = Clock::now();
  std::optional<Clock::time_point> wait_end;  // set when the attack stops opening connections
  const auto open_one = [&]() {
    const int fd = tcp_connect(endpoint, o.source);
    if (fd < 0) {
      ++connect_failures;
      return false;
    }
    Peer p;
    p.fd = fd;
    p.opened = Clock::now();
    p.next_byte = p.opened;
    peers.push_back(p);
    ++opened;
    peak_open = std::max(peak_open, peers.size());
    return true;
  };
  // The first wave, all at once.
  for (size_t i = 0; i < o.count; ++i) open_one();
  write_ready(o.ready_file);
  std::vector<pollfd> polled;
  while (!peers.empty()) {
    const Clock::time_point now = Clock::now();
    if (!wait_end && !going_on(start, o.seconds, o.stop_file)) {
      wait_end = now + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(o.wait_seconds));
    }
    if (wait_end && now >= *wait_end) break;
    // Trickle: one byte to every peer whose time has come.
    Clock::time_point next_wake = now + std::chrono::milliseconds(100);
    if (o.trickle_ms != 0) {
      for (Peer& p : peers) {
        if (p.sent >= o.trickle.size()) continue;
        if (p.next_byte <= now) {
          const ssize_t n = send(p.fd, o.trickle.data() + p.sent, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
          if (n == 1) {
            ++p.sent;
            ++bytes_sent;
          }  // a failed send: the peer is gone, which the poll below sees
          p.next_byte = now + std::chrono::milliseconds(o.trickle_ms);
        }
        next_wake = std::min(next_wake, p.next_byte);
      }
    }
    polled.clear();
    for (const Peer& p : peers) polled.push_back(pollfd{p.fd, POLLIN, 0});
    const int timeout = static_cast<int>(std::max<double>(0, ms_since(Clock::now(), next_wake)));
    if (poll(polled.data(), polled.size(), timeout) < 0 && errno != EINTR) {
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    size_t replaced = 0;
    for (size_t i = 0; i < polled.size(); ++i) {
      if (polled[i].revents == 0) continue;
      uint8_t sink[512];
      const ssize_t n = recv(polled[i].fd, sink, sizeof(sink), MSG_DONTWAIT);
      if (n > 0) {
        bytes_received += static_cast<uint64_t>(n);  // e.g. a TLS alert before the close
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      // EOF or a reset: the server closed this peer.
      Peer& p = peers[i];
      lifetimes.push_back(ms_since(p.opened));
      ++closed_by_server;
      close(p.fd);
      p.fd = -1;
      ++replaced;
    }
    if (replaced != 0) {
      peers.erase(
          std::remove_if(peers.begin(), peers.end(), [](const Peer& p) { return p.fd < 0; }),
          peers.end());
      for (size_t i = 0; i < replaced && !wait_end && o.reopen; ++i) open_one();
    }
  }
  const size_t still_open = peers.size();
  for (Peer& p : peers) close(p.fd);
  out["seconds"] = ms_since(start) / 1000;
  out["connections"] = opened;
  out["connect_failures"] = connect_failures;
  out["closed_by_server"] = closed_by_server;
  out["still_open"] = still_open;
  out["peak_open"] = peak_open;
  out["lifetime_ms"] = spread(lifetimes);
  out["bytes_sent"] = bytes_sent;
  out["bytes_received"] = bytes_received;
  return out;
}

// ---- handshake_flood ----------------------------------------------------------------------------

json handshake_flood_attack(const Endpoint& endpoint, const std::string& source,
                            const std::vector<uint8_t>& client_hello, size_t workers,
                            double seconds, const std::string& ready_file,
                            const std::string& stop_file) {
  std::atomic<uint64_t> attempts{0}, answered{0}, unanswered{0}, connect_failures{0};
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> threads;
  for (size_t w = 0; w < workers; ++w) {
    threads.emplace_back([&] {
      while (going_on(start, seconds, stop_file)) {
        const int fd = tcp_connect(endpoint, source);
        if (fd < 0) {
          ++connect_failures;
          continue;
        }
        ++attempts;
        send(fd, client_hello.data(), client_hello.size(), MSG_NOSIGNAL);
        pollfd p{fd, POLLIN, 0};
        uint8_t sink[512];
        if (poll(&p, 1, 5000) > 0 && recv(fd, sink, sizeof(sink), 0) > 0) {
          ++answered;
        } else {
          ++unanswered;
        }
        close(fd);
      }
    });
  }
  write_ready(ready_file);
  for (std::thread& t : threads) t.join();
  const double elapsed = ms_since(start) / 1000;
  json out;
  out["seconds"] = elapsed;
  out["attempts"] = attempts.load();
  out["answered"] = answered.load();
  out["closed_unanswered"] = unanswered.load();
  out["connect_failures"] = connect_failures.load();
  out["attempts_per_second"] = static_cast<double>(attempts.load()) / elapsed;
  out["answered_per_second"] = static_cast<double>(answered.load()) / elapsed;
  return out;
}

// ---- slot_hog -----------------------------------------------------------------------------------

json slot_hog_attack(const Endpoint& endpoint, const std::string& source,
                     const std::string& identity, const net::DevicePsk& psk, size_t count,
                     double seconds, double wait_seconds, uint32_t interval_ms,
                     const std::string& ready_file, const std::string& stop_file) {
  struct Hog {
    mbedtls_net_context net;
    mbedtls_ssl_context ssl;
    Clock::time_point opened;
    bool open = false;
    Hog() {
      mbedtls_net_init(&net);
      mbedtls_ssl_init(&ssl);
    }
    ~Hog() {
      mbedtls_ssl_free(&ssl);
      mbedtls_net_free(&net);
    }
  };
  PskClientConfig config(identity, psk);
  wire::Envelope ack = wire::make_envelope();  // any message but a ClientHello
  ack.which_body = fedstat_v1_Envelope_ack_tag;
  std::array<uint8_t, wire::kMaxFrameBytes> frame{};
  const Result<size_t> encoded =
      wire::encode_frame(ack, MutableByteSpan(frame.data(), frame.size()));
  if (!encoded.ok()) throw std::runtime_error(std::string("ack: ") + encoded.status().message());
  std::vector<std::unique_ptr<Hog>> hogs;
  std::vector<double> lifetimes;
  std::map<std::string, size_t> handshake_errors;
  size_t connections = 0, connect_failures = 0, handshake_failures = 0, closed = 0;
  uint64_t frames_sent = 0, bytes_received = 0;
  const Clock::time_point start = Clock::now();
  const auto gone = [&](Hog& h) {
    h.open = false;
    ++closed;
    lifetimes.push_back(ms_since(h.opened));
  };
  for (size_t i = 0; i < count; ++i) {
    const int fd = tcp_connect(endpoint, source);
    if (fd < 0) {
      ++connect_failures;
      continue;
    }
    ++connections;
    auto h = std::make_unique<Hog>();
    h->net.fd = fd;
    int rc = mbedtls_ssl_setup(&h->ssl, config.get());
    if (rc == 0) {
      mbedtls_ssl_set_bio(&h->ssl, &h->net, mbedtls_net_send, nullptr, mbedtls_net_recv_timeout);
      do {
        rc = mbedtls_ssl_handshake(&h->ssl);
      } while (rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE);
    }
    if (rc != 0) {
      ++handshake_failures;
      ++handshake_errors[mbedtls_text(rc)];
      continue;
    }
    h->opened = Clock::now();
    h->open = true;
    mbedtls_net_set_nonblock(&h->net);
    mbedtls_ssl_set_bio(&h->ssl, &h->net, mbedtls_net_send, mbedtls_net_recv, nullptr);
    hogs.push_back(std::move(h));
  }
  write_ready(ready_file);
  std::optional<Clock::time_point> wait_end;
  Clock::time_point next_send = Clock::now();
  std::vector<pollfd> polled;
  std::vector<Hog*> polled_hogs;
  for (;;) {
    const Clock::time_point now = Clock::now();
    if (!wait_end && !going_on(start, seconds, stop_file)) {
      wait_end = now + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(wait_seconds));
    }
    if (wait_end && now >= *wait_end) break;
    if (!wait_end && now >= next_send) {  // never idle: a frame on every connection
      for (auto& h : hogs) {
        if (!h->open) continue;
        const int rc = mbedtls_ssl_write(&h->ssl, frame.data(), encoded.value());
        if (rc > 0) {
          ++frames_sent;
        } else if (rc != MBEDTLS_ERR_SSL_WANT_WRITE && rc != MBEDTLS_ERR_SSL_WANT_READ) {
          gone(*h);  // the server closed it (a reset, or its close_notify)
        }
      }
      next_send = now + std::chrono::milliseconds(interval_ms);
    }
    polled.clear();
    polled_hogs.clear();
    for (auto& h : hogs) {
      if (!h->open) continue;
      polled.push_back(pollfd{h->net.fd, POLLIN, 0});
      polled_hogs.push_back(h.get());
    }
    if (polled.empty()) break;
    const Clock::time_point wake =
        wait_end ? std::min(*wait_end, now + std::chrono::milliseconds(100)) : next_send;
    const int timeout = static_cast<int>(std::max<double>(0, ms_since(Clock::now(), wake)));
    if (poll(polled.data(), polled.size(), timeout) < 0 && errno != EINTR) {
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    for (size_t i = 0; i < polled.size(); ++i) {
      if (polled[i].revents == 0) continue;
      Hog& h = *polled_hogs[i];
      unsigned char sink[512];
      for (;;) {  // the server's answers (its refusals), until the socket has no more
        const int rc = mbedtls_ssl_read(&h.ssl, sink, sizeof(sink));
        if (rc > 0) {
          bytes_received += static_cast<uint64_t>(rc);
          continue;
        }
        if (rc != MBEDTLS_ERR_SSL_WANT_READ && rc != MBEDTLS_ERR_SSL_WANT_WRITE) gone(h);
        break;  // 0, close_notify, EOF or a reset: gone; else nothing more for now
      }
    }
  }
  size_t still_open = 0;
  for (auto& h : hogs) still_open += h->open ? 1 : 0;
  return json{{"seconds", ms_since(start) / 1000},
              {"connections", connections},
              {"connect_failures", connect_failures},
              {"handshake_failures", handshake_failures},
              {"handshake_errors", handshake_errors},
              {"closed_by_server", closed},
              {"still_open", still_open},
              {"lifetime_ms", spread(lifetimes)},
              {"frames_sent", frames_sent},
              {"bytes_received", bytes_received}};
}

// ---- huge_frame ---------------------------------------------------------------------------------

json huge_frame_attack(const Endpoint& endpoint, const std::string& identity,
                       const net::DevicePsk& psk, double seconds, uint32_t interval_ms,
                       const std::string& ready_file, const std::string& stop_file) {
  // Varint 2^32: what a frame header announcing 4 GiB looks like on fedstat's wire.
  const uint8_t prefix[] = {0x80, 0x80, 0x80, 0x80, 0x10};
  PskClientConfig config(identity, psk);
  std::vector<double> close_ms;
  size_t attempts = 0, handshake_failures = 0, closed = 0, still_open = 0;
  uint64_t received = 0;
  std::map<std::string, size_t> handshake_errors;
  const Clock::time_point start = Clock::now();
  bool ready = false;
  do {
    const Clock::time_point attempt_start = Clock::now();
    ++attempts;
    mbedtls_net_context net;
    mbedtls_net_init(&net);
    mbedtls_ssl_context ssl;
    mbedtls_ssl_init(&ssl);
    int rc = mbedtls_net_connect(&net, endpoint.host.c_str(), endpoint.port.c_str(),
                                 MBEDTLS_NET_PROTO_TCP);
    if (rc == 0) rc = mbedtls_ssl_setup(&ssl, config.get());
    if (rc == 0) {
      mbedtls_ssl_set_bio(&ssl, &net, mbedtls_net_send, nullptr, mbedtls_net_recv_timeout);
      do {
        rc = mbedtls_ssl_handshake(&ssl);
      } while (rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE);
    }
    if (rc != 0) {
      ++handshake_failures;
      ++handshake_errors[mbedtls_text(rc)];
    } else {
      const Clock::time_point sent = Clock::now();
      rc = mbedtls_ssl_write(&ssl, prefix, sizeof(prefix));
      bool gone = rc < 0;
      unsigned char sink[256];
      while (!gone) {
        rc = mbedtls_ssl_read(&ssl, sink, sizeof(sink));
        if (rc > 0) {
          received += static_cast<uint64_t>(rc);
        } else if (rc == MBEDTLS_ERR_SSL_TIMEOUT) {
          break;  // 10 s without the server closing
        } else if (rc != MBEDTLS_ERR_SSL_WANT_READ) {
          gone = true;  // 0, close_notify, EOF or a reset
        }
      }
      if (gone) {
        ++closed;
        close_ms.push_back(ms_since(sent));
      } else {
        ++still_open;
      }
    }
    mbedtls_ssl_free(&ssl);
    mbedtls_net_free(&net);
    if (!ready) {
      write_ready(ready_file);
      ready = true;
    }
    const auto next = attempt_start + std::chrono::milliseconds(interval_ms);
    if (next > Clock::now()) std::this_thread::sleep_until(next);  // the attack's pace
  } while (going_on(start, seconds, stop_file));
  return json{{"seconds", ms_since(start) / 1000},
              {"connections", attempts},
              {"connect_failures", handshake_failures},
              {"attempts", attempts},
              {"handshake_failures", handshake_failures},
              {"handshake_errors", handshake_errors},
              {"closed_by_server", closed},
              {"still_open", still_open},
              {"close_ms", spread(close_ms)},
              {"bytes_received", received}};
}

// ---- hello_flood, drop_every_round ------------------------------------------------------------

struct SessionCounts {
  size_t sessions = 0, handshake_failures = 0, offered = 0, rate_limited = 0, refused = 0,
         errors = 0;
  std::optional<size_t> offered_before_first_limit;
  uint32_t task_id = 0;
  std::map<std::string, size_t> refusals, error_details;
};

wire::Envelope client_hello(uint64_t id) {
  wire::Envelope e = wire::make_envelope();
  e.which_body = fedstat_v1_Envelope_client_hello_tag;
  fedstat_v1_ClientHello& hello = e.body.client_hello;
  hello.client_id = id;
  std::snprintf(hello.sdk_version, sizeof(hello.sdk_version), "%s", FEDSTAT_VERSION_STRING);
  hello.memory_bytes = 4u << 20;
  hello.word_bits = 64;
  return e;
}

// One check-in: connect, ClientHello, the first answer (and with `take_data`, the TaskData after
// a Task), close without a reply. Adds what happened to `counts` (under `mutex`).
void check_in_once(const std::string& server, uint64_t id, const net::DevicePsk& psk,
                   bool take_data, SessionCounts& counts, std::mutex& mutex) {
  const std::string identity = std::to_string(id);
  tls::TlsPskChannel channel;
  const Status connected = channel.connect(
      server.c_str(), ByteSpan(reinterpret_cast<const uint8_t*>(identity.data()), identity.size()),
      ByteSpan(psk.data(), psk.size()), 10000);
  std::string error;
  bool offered = false, limited = false;
  std::string refusal;
  uint32_t task_id = 0;
  if (!connected.ok()) {
    error = std::string("connect: ") + connected.message();
  } else {
    Status status = channel.send(client_hello(id));
    wire::Envelope answer{};
    if (status.ok()) status = channel.receive(answer, 10000);
    if (!status.ok()) {
      error = std::string("hello: ") + status.message();
    } else if (answer.which_body == fedstat_v1_Envelope_task_tag) {
      offered = true;
      task_id = answer.body.task.task_id;
      uint32_t words = 0;
      while (take_data && words < answer.body.task.data_words) {
        wire::Envelope data{};
        if (!channel.receive(data, 10000).ok() ||
            data.which_body != fedstat_v1_Envelope_task_data_tag) {
          error = "the TaskData did not follow the Task";
          break;
        }
        words += data.body.task_data.words_count;
      }
    } else if (answer.which_body == fedstat_v1_Envelope_server_error_tag) {
      const fedstat_v1_ServerError& e = answer.body.server_error;
      const std::string detail = e.detail;
      limited = e.action == fedstat_v1_ErrorAction_RETRY_LATER &&
                e.status_code == static_cast<uint32_t>(StatusCode::kResourceExhausted) &&
                detail.find("check-ins a minute") != std::string::npos;
      if (!limited) refusal = detail.empty() ? "(no detail)" : detail;
    } else {
      error = "an answer other than Task or ServerError";
    }
  }
  channel.close();  // a drop: no TaskReply, no close of the round
  std::lock_guard<std::mutex> lock(mutex);
  ++counts.sessions;
  if (!connected.ok()) ++counts.handshake_failures;
  if (offered) {
    ++counts.offered;
    counts.task_id = task_id;
  }
  if (limited) {
    if (!counts.offered_before_first_limit) counts.offered_before_first_limit = counts.offered;
    ++counts.rate_limited;
  }
  if (!refusal.empty()) {
    ++counts.refused;
    ++counts.refusals[refusal];
  }
  if (!error.empty()) {
    ++counts.errors;
    ++counts.error_details[error];
  }
}

json check_in_attack(const std::string& server, uint64_t id, const net::DevicePsk& psk,
                     double seconds, size_t workers, uint32_t interval_ms, bool take_data,
                     const std::string& ready_file, const std::string& stop_file) {
  SessionCounts counts;
  std::mutex mutex;
  std::atomic<bool> ready{false};
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> threads;
  for (size_t w = 0; w < workers; ++w) {
    threads.emplace_back([&]() {
      do {
        const Clock::time_point session_start = Clock::now();
        check_in_once(server, id, psk, take_data, counts, mutex);
        if (!ready.exchange(true)) write_ready(ready_file);
        const auto next = session_start + std::chrono::milliseconds(interval_ms);
        if (next > Clock::now()) std::this_thread::sleep_until(next);  // the device's pace
      } while (going_on(start, seconds, stop_file));
    });
  }
  for (auto& t : threads) t.join();
  const double elapsed = ms_since(start) / 1000;
  json out{{"seconds", elapsed},
           {"connections", counts.sessions},
           {"connect_failures", counts.handshake_failures},
           {"sessions", counts.sessions},
           {"sessions_per_second", counts.sessions / std::max(elapsed, 1e-9)},
           {"handshake_failures", counts.handshake_failures},
           {"offered", counts.offered},
           {"rate_limited", counts.rate_limited},
           {"refused", counts.refused},
           {"refusals", counts.refusals},
           {"errors", counts.errors},
           {"error_details", counts.error_details},
           {"task_id", counts.task_id}};
  out["offered_before_first_limit"] =
      counts.offered_before_first_limit ? json(*counts.offered_before_first_limit) : json();
  return out;
}

void raise_descriptor_limit(size_t wanted) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  const rlim_t target = std::min<rlim_t>(limit.rlim_max, static_cast<rlim_t>(wanted));
  if (limit.rlim_cur < target) {
    limit.rlim_cur = target;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "fedstat-netfault: one network fault against a running fedstat-server (a silent peer, a "
      "slowloris, 1,000 idle connections, a 4 GiB frame header, a check-in flood, a device that "
      "drops in every round, one credential's connections that never check in) and what the "
      "server did about it."};
  fedstat::tools::apply_conventions(
      app, "fedstat-netfault",
      {"fedstat-netfault --attack idle_flood --server 127.0.0.1:7443 --count 1000 --seconds 10 "
       "--watch-pid $(pidof fedstat-server) --json",
       "fedstat-netfault --attack hello_flood --server 127.0.0.1:7443 --fleet-secret "
       "$(cat fleet.key) --id 9001 --seconds 10 --json"},
      {{0, "the attack ran, whatever the server did (see the JSON)"},
       {1, "a runtime failure (the reason is on stderr)"},
       {2, "the command line was wrong"}});
  std::string attack, server, secret_hex, ready_file, stop_file, source;
  uint64_t id = 900001;
  double seconds = 10, wait_seconds = 30;
  size_t count = 0;
  uint32_t interval_ms = 0;
  int watch_pid = 0;
  bool json_output = false;
  app.add_option("--attack", attack, "the fault")
      ->required()
      ->check(CLI::IsMember({"silent", "slowloris", "idle_flood", "huge_frame", "hello_flood",
                             "drop_every_round", "handshake_flood", "slot_hog"}));
  app.add_option("--server", server, "the server's HOST:PORT")->required();
  app.add_option("--fleet-secret", secret_hex,
                 "64 hex digits: the device key is HKDF(secret, id) (huge_frame, hello_flood, "
                 "drop_every_round, slot_hog)");
  app.add_option("--id", id, "the device id (PSK identity) the attack uses")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 62));
  app.add_option("--seconds", seconds, "how long the attack goes on")
      ->check(CLI::Range(0.0, 3600.0));
  app.add_option("--count", count,
                 "connections at once (silent, slowloris, slot_hog: 1; idle_flood: 1000) or "
                 "workers (hello_flood: 1)")
      ->check(CLI::Range(size_t{1}, size_t{100000}));
  app.add_option("--interval-ms", interval_ms,
                 "slowloris: between bytes (1000); huge_frame: between attempts (200); "
                 "drop_every_round: between check-ins (100); hello_flood: between a worker's "
                 "check-ins (0); slot_hog: between frames (500)")
      ->check(CLI::Range(0u, 600000u));
  app.add_option("--wait-seconds", wait_seconds,
                 "after --seconds, how long to wait for the server to close what is still open")
      ->check(CLI::Range(0.0, 3600.0));
  app.add_option("--source", source, "the local address to connect from");
  bool no_reopen = false;
  app.add_flag("--no-reopen", no_reopen,
               "silent, slowloris, idle_flood: do not open again what the server closes");
  app.add_option("--ready-file", ready_file, "written once the attack is under way");
  app.add_option("--stop-file", stop_file,
                 "after --seconds, go on until this file exists (at most 600 s in all)");
  app.add_option("--watch-pid", watch_pid, "the server's process id: sample its memory and fds")
      ->check(CLI::Range(1, 1 << 30));
  app.add_flag("--json", json_output, "print one JSON object");
  if (auto code = fedstat::tools::parse_command_line(app, argc, argv)) return *code;
  try {
    const Endpoint endpoint = split_endpoint(server);
    // slowloris sends only a ClientHello, which carries no key (TLS 1.2 names the PSK identity
    // later, in the ClientKeyExchange): any key builds it.
    const bool needs_key = attack != "silent" && attack != "idle_flood" && attack != "slowloris" &&
                           attack != "handshake_flood";
    if (needs_key && secret_hex.empty()) {
      throw std::invalid_argument("--attack " + attack + " needs --fleet-secret");
    }
    const net::DevicePsk psk =
        needs_key ? net::derive_device_psk(host::parse_hex32(secret_hex, "--fleet-secret"), id)
                  : net::DevicePsk{};
    const std::string identity = std::to_string(id);
    if (count == 0) count = attack == "idle_flood" ? 1000 : 1;
    raise_descriptor_limit(count + 64);

    ServerWatch watch(watch_pid);
    json out;
    if (attack == "silent" || attack == "slowloris" || attack == "idle_flood") {
      RawOptions o;
      o.count = count;
      o.seconds = seconds;
      o.wait_seconds = wait_seconds;
      o.ready_file = ready_file;
      o.stop_file = stop_file;
      o.source = source;
      o.reopen = !no_reopen;
      if (attack == "slowloris") {
        PskClientConfig config(identity, psk);
        o.trickle = captured_client_hello(config);
        o.trickle_ms = interval_ms != 0 ? interval_ms : 1000;
      }
      out = raw_attack(endpoint, o);
      if (attack == "slowloris") out["client_hello_bytes"] = o.trickle.size();
    } else if (attack == "handshake_flood") {
      PskClientConfig config(identity, psk);
      out = handshake_flood_attack(endpoint, source, captured_client_hello(config), count, seconds,
                                   ready_file, stop_file);
    } else if (attack == "slot_hog") {
      out = slot_hog_attack(endpoint, source, identity, psk, count, seconds, wait_seconds,
                            interval_ms ? interval_ms : 500, ready_file, stop_file);
    } else if (attack == "huge_frame") {
      out = huge_frame_attack(endpoint, identity, psk, seconds, interval_ms ? interval_ms : 200,
                              ready_file, stop_file);
    } else {
      const bool drop = attack == "drop_every_round";
      const uint32_t pace = drop ? (interval_ms ? interval_ms : 100) : interval_ms;
      out = check_in_attack(server, id, psk, seconds, count, pace, drop, ready_file, stop_file);
    }
    watch.finish();
    out["attack"] = attack;
    out["id"] = needs_key ? json(id) : json();
    out["count"] = count;
    if (watch_pid != 0) out["server"] = watch.report();
    if (json_output) {
      std::cout << out.dump() << "\n";
    } else {
      std::cout << attack << ": " << out.dump(2) << "\n";
    }
    return 0;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "fedstat-netfault: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fedstat-netfault: %s\n", e.what());
    return 1;
  }
}
