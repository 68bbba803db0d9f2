// InProcessServer: the server's real rounds (host::Coordinator over a FakeStore) reached by real
// Clients on their own threads through in-memory links, for tests of what happens when a link or
// the server dies. One mutex serialises the Coordinator, as the server's io thread does; frames
// are encoded and decoded on the way (sdk/wire/envelope_codec.h), as on a wire.
//   * A link can be cut from the device's side (Link::cut_after_sends): the device's send fails
//     with kUnavailable, and the server is not told — as with a connection that died silently —
//     until the device's resume replaces the link (Coordinator::bind closes the older one).
//   * A device's process can die (Link::process_died): its link closes and the server hears of
//     it, as from a socket the kernel closed; the test then builds a new Client over the same
//     storage (a reboot). Every SecAggReveal a device sends is recorded (reveals()).
//   * The server can die once the store holds `kill_at_events` events: every link is cut at
//     once, the Coordinator is dropped (nothing of it survives but the store), and a new one is
//     built over the same store (recovery by replay), as a restart after kill -9 would.
// Receives block on a condition variable with the Client's own time-out, never a sleep.
// Memory: host test code. Paper: none.
#ifndef FEDSTAT_TESTS_CLIENT_IN_PROCESS_SERVER_H_
#define FEDSTAT_TESTS_CLIENT_IN_PROCESS_SERVER_H_

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "host_server/rounds/coordinator.h"
#include "tests/client/in_memory_channel.h"
#include "tests/rounds/fake_store.h"

namespace fedstat {
namespace client_test {

class InProcessServer {
 public:
  // The device's end of one connection.
  class Link : public client::FrameChannel {
   public:
    Link(InProcessServer& server, host::ConnectionId id, std::shared_ptr<Pipe> inbound)
        : server_(server), id_(id), inbound_(std::move(inbound)) {}

    // Cut after this many sends (the last one reaches the server when `delivered`); 0: never.
    size_t cut_after_sends = 0;
    bool delivered = true;

    Status send(const wire::Envelope& message) override {
      std::vector<uint8_t> frame(wire::kMaxFrameBytes);
      Result<size_t> n = wire::encode_frame(message, MutableByteSpan(frame.data(), frame.size()));
      if (!n.ok()) return n.status();
      wire::Envelope decoded;
      Result<wire::FrameResult> r = wire::decode_frame(ByteSpan(frame.data(), n.value()), decoded);
      if (!r.ok()) return r.status();
      ++sends_;
      if (message.which_body == fedstat_v1_Envelope_secagg_reveal_tag) {
        server_.record_reveal(
            message.body.secagg_reveal);  // what left the device, delivered or not
      }
      const bool cut_now = cut_after_sends != 0 && sends_ == cut_after_sends;
      if (!cut_now || delivered) {
        if (!server_.deliver(id_, decoded)) return unavailable("in-process link: cut");
      }
      if (cut_now) {
        close_inbound();
        return unavailable("in-process link: cut by the test");
      }
      return Status();
    }

    Status receive(wire::Envelope& out, uint32_t timeout_ms) override {
      std::unique_lock<std::mutex> lock(inbound_->mutex);
      const bool ready =
          inbound_->changed.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                                     [&] { return !inbound_->frames.empty() || inbound_->closed; });
      if (!ready) return deadline_exceeded("in-process link: no frame in time");
      if (inbound_->frames.empty()) return unavailable("in-process link: closed");
      const std::vector<uint8_t> frame = std::move(inbound_->frames.front());
      inbound_->frames.pop_front();
      Result<wire::FrameResult> r = wire::decode_frame(ByteSpan(frame.data(), frame.size()), out);
      return r.ok() ? Status() : r.status();
    }

    // The device's process died (its link cut or not): the kernel closes its socket, so the
    // server hears of it.
    void process_died() {
      close_inbound();
      server_.device_closed(id_);
    }

    // The device closes its end: the server hears of it (unless the link was already cut).
    void close() override {
      const bool was_open = close_inbound();
      if (was_open) server_.device_closed(id_);
    }

   private:
    bool close_inbound() {
      std::lock_guard<std::mutex> lock(inbound_->mutex);
      const bool was_open = !inbound_->closed;
      inbound_->closed = true;
      inbound_->changed.notify_all();
      return was_open;
    }

    InProcessServer& server_;
    host::ConnectionId id_;
    std::shared_ptr<Pipe> inbound_;
    size_t sends_ = 0;
  };

  InProcessServer(std::vector<host::TaskSpec> specs, uint64_t now, size_t kill_at_events = 0)
      : specs_(std::move(specs)), now_(now), kill_at_(kill_at_events), outbox_(*this) {
    coordinator_ = std::make_unique<host::Coordinator>(store_, outbox_, specs_, now_);
  }

  std::unique_ptr<Link> connect(uint64_t device_id) {
    std::lock_guard<std::mutex> lock(mutex_);
    const host::ConnectionId id = next_id_++;
    auto pipe = std::make_shared<Pipe>();
    pipes_[id] = pipe;
    coordinator_->on_open(id, std::to_string(device_id));
    return std::make_unique<Link>(*this, id, pipe);
  }

  // The server's clock reaches `now` (its once-a-second tick: admission windows and phase
  // time-outs that have passed close) once each of `clients` has replied to `task` or its round
  // is over — waiting on deliveries (a condition variable), at most `timeout_ms`. False: they
  // had not replied by then (the tick happens all the same).
  bool tick_once_replied(uint64_t now, uint32_t task, const std::vector<uint64_t>& clients,
                         uint32_t timeout_ms = 30000) {
    std::unique_lock<std::mutex> lock(mutex_);
    const bool replied = delivered_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] {
      const host::TaskRound* round = coordinator_->round(task);
      if (round == nullptr || round->finished()) return true;
      for (uint64_t c : clients) {
        if (!round->replied(c)) return false;
      }
      return true;
    });
    coordinator_->on_tick(now);
    return replied;
  }

  host::FakeStore& store() { return store_; }
  // Every SecAggReveal a device sent (or tried to: a cut link's last message counts too).
  struct SentReveal {
    uint32_t from_id, about_id;
    bool self_mask;
  };
  std::vector<SentReveal> reveals() {
    std::lock_guard<std::mutex> lock(reveals_mutex_);
    return reveals_;
  }
  size_t restarts() const { return restarts_; }
  std::string task_state(uint32_t task) {
    std::lock_guard<std::mutex> lock(mutex_);
    return coordinator_->task_state(task);
  }

 private:
  class PipeOutbox : public host::Outbox {
   public:
    explicit PipeOutbox(InProcessServer& server) : server_(server) {}
    void send(host::ConnectionId c, const fedstat_v1_Envelope& e) override {
      auto pipe = server_.pipe(c);
      if (!pipe) return;
      std::vector<uint8_t> frame(wire::kMaxFrameBytes);
      Result<size_t> n = wire::encode_frame(e, MutableByteSpan(frame.data(), frame.size()));
      EXPECT_TRUE(n.ok()) << n.status().message();
      if (!n.ok()) return;
      frame.resize(n.value());
      std::lock_guard<std::mutex> lock(pipe->mutex);
      if (pipe->closed) return;
      pipe->frames.push_back(std::move(frame));
      pipe->changed.notify_all();
    }
    // Called with the server's mutex held (from inside the Coordinator): it hears of the close
    // at once, as the net layer reports it.
    void close(host::ConnectionId c) override {
      auto pipe = server_.pipe(c);
      if (!pipe) return;
      {
        std::lock_guard<std::mutex> lock(pipe->mutex);
        pipe->closed = true;
        pipe->changed.notify_all();
      }
      server_.pipes_.erase(c);
      server_.coordinator_->on_close(c, "closed by the server");
    }
    void keep_open(host::ConnectionId, uint32_t) override {}

   private:
    InProcessServer& server_;
  };

  std::shared_ptr<Pipe> pipe(host::ConnectionId c) {
    auto it = pipes_.find(c);
    return it == pipes_.end() ? nullptr : it->second;
  }

  // False when the link is gone (cut by the server, or the server died since it connected).
  bool deliver(host::ConnectionId c, const wire::Envelope& e) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pipes_.count(c) == 0) return false;
    coordinator_->on_frame(c, e);
    delivered_.notify_all();
    if (kill_at_ != 0 && restarts_ == 0 && store_.event_count() >= kill_at_) restart();
    return true;
  }

  void record_reveal(const fedstat_v1_SecAggReveal& r) {
    std::lock_guard<std::mutex> lock(reveals_mutex_);
    reveals_.push_back(SentReveal{r.from_id, r.about_id, r.self_mask});
  }

  void device_closed(host::ConnectionId c) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pipes_.erase(c) != 0) coordinator_->on_close(c, "closed by the device");
  }

  // kill -9 and a restart: every link cut, the Coordinator gone, a new one over the store.
  void restart() {
    for (auto& [id, pipe] : pipes_) {
      std::lock_guard<std::mutex> lock(pipe->mutex);
      pipe->closed = true;
      pipe->changed.notify_all();
    }
    pipes_.clear();
    coordinator_.reset();
    ++restarts_;
    coordinator_ = std::make_unique<host::Coordinator>(store_, outbox_, specs_, now_ + 1);
  }

  std::vector<host::TaskSpec> specs_;
  uint64_t now_;
  size_t kill_at_;
  std::mutex mutex_;
  std::condition_variable delivered_;  // after each delivered frame
  std::mutex reveals_mutex_;
  std::vector<SentReveal> reveals_;
  host::FakeStore store_;
  PipeOutbox outbox_;
  std::unique_ptr<host::Coordinator> coordinator_;
  std::map<host::ConnectionId, std::shared_ptr<Pipe>> pipes_;
  host::ConnectionId next_id_ = 1;
  size_t restarts_ = 0;
};

}  // namespace client_test
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_CLIENT_IN_PROCESS_SERVER_H_
