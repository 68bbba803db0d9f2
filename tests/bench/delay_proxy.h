// DelayProxy: a TCP proxy on 127.0.0.1 that delivers every byte `one_way_ms` after it arrived, in
// each direction — a link with a round-trip time of 2 · one_way_ms and no bandwidth limit — for
// benchmarks of what latency does to a protocol (ingest_bench.cpp, BM_ReportOverLatency).
// Bytes keep their order; an end of stream is passed on after the same delay. Host only; threads:
// one accepting, two per direction of each connection. Errors: std::runtime_error when it cannot
// listen. Memory: the bytes in flight.
#ifndef FEDSTAT_TESTS_BENCH_DELAY_PROXY_H_
#define FEDSTAT_TESTS_BENCH_DELAY_PROXY_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace fedstat {
namespace bench {

class DelayProxy {
 public:
  DelayProxy(int target_port, int one_way_ms)
      : target_port_(target_port), delay_(std::chrono::milliseconds(one_way_ms)) {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address = loopback(0);
    socklen_t length = sizeof(address);
    if (listener_ < 0 || bind(listener_, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        listen(listener_, 64) != 0 ||
        getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      throw std::runtime_error("DelayProxy: cannot listen on 127.0.0.1");
    }
    port_ = ntohs(address.sin_port);
    accepting_ = std::thread([this] { accept_loop(); });
  }
  ~DelayProxy() {
    stopping_ = true;
    accepting_.join();  // no link is added after this
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (int fd : sockets_) shutdown(fd, SHUT_RDWR);  // unblocks every recv
      for (const auto& link : links_) link->wake();
    }
    for (std::thread& t : threads_) t.join();
    for (int fd : sockets_) close(fd);
    close(listener_);
  }
  DelayProxy(const DelayProxy&) = delete;
  DelayProxy& operator=(const DelayProxy&) = delete;

  int port() const { return port_; }

 private:
  using Clock = std::chrono::steady_clock;
  // One direction: bytes read from `from` are written to `to` after the delay.
  struct Link {
    std::mutex mutex;
    std::condition_variable changed;
    std::deque<std::pair<Clock::time_point, std::vector<uint8_t>>> queue;  // empty bytes: EOF
    void wake() {
      std::lock_guard<std::mutex> lock(mutex);
      changed.notify_all();
    }
  };

  static sockaddr_in loopback(int port) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return address;
  }

  void accept_loop() {
    while (!stopping_) {
      pollfd p{listener_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;  // wakes to see stopping_
      const int client = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      const int server = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      const sockaddr_in target = loopback(target_port_);
      if (server < 0 ||
          connect(server, reinterpret_cast<const sockaddr*>(&target), sizeof(target)) != 0) {
        close(client);
        if (server >= 0) close(server);
        continue;
      }
      const int one = 1;
      setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      std::lock_guard<std::mutex> lock(mutex_);
      sockets_.push_back(client);
      sockets_.push_back(server);
      for (const auto& [from, to] : {std::pair{client, server}, std::pair{server, client}}) {
        auto link = std::make_shared<Link>();
        links_.push_back(link);
        threads_.emplace_back([this, link, from = from] { read_into(*link, from); });
        threads_.emplace_back([this, link, to = to] { write_from(*link, to); });
      }
    }
  }

  void read_into(Link& link, int from) {
    std::vector<uint8_t> buffer(16384);
    for (;;) {
      const ssize_t n = recv(from, buffer.data(), buffer.size(), 0);
      std::lock_guard<std::mutex> lock(link.mutex);
      link.queue.emplace_back(Clock::now() + delay_,
                              n > 0 ? std::vector<uint8_t>(buffer.begin(), buffer.begin() + n)
                                    : std::vector<uint8_t>());
      link.changed.notify_all();
      if (n <= 0) return;
    }
  }

  void write_from(Link& link, int to) {
    for (;;) {
      std::unique_lock<std::mutex> lock(link.mutex);
      link.changed.wait(lock, [&] { return stopping_ || !link.queue.empty(); });
      if (link.queue.empty()) return;  // stopping
      const Clock::time_point due = link.queue.front().first;
      if (Clock::now() < due) {
        link.changed.wait_until(lock, due, [&] { return stopping_.load(); });
        if (stopping_) return;
        continue;
      }
      std::vector<uint8_t> bytes = std::move(link.queue.front().second);
      link.queue.pop_front();
      lock.unlock();
      if (bytes.empty()) {  // the other side ended its stream
        shutdown(to, SHUT_WR);
        return;
      }
      for (size_t sent = 0; sent < bytes.size();) {
        const ssize_t n = send(to, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) return;
        sent += static_cast<size_t>(n);
      }
    }
  }

  int target_port_;
  Clock::duration delay_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread accepting_;
  std::mutex mutex_;  // sockets_, links_, threads_ (appended by the accepting thread)
  std::vector<int> sockets_;
  std::vector<std::shared_ptr<Link>> links_;
  std::vector<std::thread> threads_;
};

}  // namespace bench
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_BENCH_DELAY_PROXY_H_
