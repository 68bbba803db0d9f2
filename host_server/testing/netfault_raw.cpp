// fedstat-netfault's raw attacks (netfault_attacks.h): silent, slowloris and idle_flood — TCP
// connections that send nothing or trickle a ClientHello, and how long the server keeps them.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>

#include "host_server/testing/netfault_attacks.h"

namespace fedstat {
namespace netfault {

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

}  // namespace netfault
}  // namespace fedstat
