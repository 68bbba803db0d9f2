// fedstat-netfault's TLS attacks (netfault_attacks.h): handshake_flood (ClientHellos with no
// credential), slot_hog (TLS-PSK connections that never check in) and huge_frame (a 4 GiB frame
// header inside TLS).
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "host_server/testing/netfault_attacks.h"
#include "mbedtls/net_sockets.h"

namespace fedstat {
namespace netfault {

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

}  // namespace netfault
}  // namespace fedstat
