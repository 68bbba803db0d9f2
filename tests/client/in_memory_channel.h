// In-memory FrameChannel pairs for the Client's tests: two queues of Envelopes, each frame
// encoded and decoded on the way (sdk/wire/envelope_codec.h), so a message the codec refuses
// fails here as it would on a wire. Blocking receive with a condition variable, never a sleep.
// Memory: host test code (std containers). Paper: none.
#ifndef FEDSTAT_TESTS_CLIENT_IN_MEMORY_CHANNEL_H_
#define FEDSTAT_TESTS_CLIENT_IN_MEMORY_CHANNEL_H_

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "sdk/client/frame_channel.h"
#include "sdk/wire/envelope_codec.h"

namespace fedstat {
namespace client_test {

// One direction: frames in order, and whether either end closed the connection.
struct Pipe {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::vector<uint8_t>> frames;
  bool closed = false;
};

class InMemoryChannel : public client::FrameChannel {
 public:
  InMemoryChannel(std::shared_ptr<Pipe> in, std::shared_ptr<Pipe> out)
      : in_(std::move(in)), out_(std::move(out)) {}
  virtual ~InMemoryChannel() = default;

  Status send(const wire::Envelope& message) override {
    std::vector<uint8_t> frame(wire::kMaxFrameBytes);
    Result<size_t> n = wire::encode_frame(message, MutableByteSpan(frame.data(), frame.size()));
    if (!n.ok()) return n.status();
    frame.resize(n.value());
    std::lock_guard<std::mutex> lock(out_->mutex);
    if (out_->closed) return unavailable("in-memory channel: closed");
    out_->frames.push_back(std::move(frame));
    ++sent_;
    out_->changed.notify_all();
    return Status();
  }

  Status receive(wire::Envelope& out, uint32_t timeout_ms) override {
    std::unique_lock<std::mutex> lock(in_->mutex);
    const bool ready = in_->changed.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                                             [&] { return !in_->frames.empty() || in_->closed; });
    if (!ready) return deadline_exceeded("in-memory channel: no frame in time");
    if (in_->frames.empty()) return unavailable("in-memory channel: peer closed");
    const std::vector<uint8_t> frame = std::move(in_->frames.front());
    in_->frames.pop_front();
    Result<wire::FrameResult> r = wire::decode_frame(ByteSpan(frame.data(), frame.size()), out);
    if (!r.ok()) return r.status();
    if (!r.value().complete || r.value().consumed != frame.size()) {
      return data_loss("in-memory channel: partial frame");
    }
    return Status();
  }

  void close() override {
    for (Pipe* pipe : {in_.get(), out_.get()}) {
      std::lock_guard<std::mutex> lock(pipe->mutex);
      pipe->closed = true;
      pipe->changed.notify_all();
    }
  }

  size_t sent() const { return sent_; }

 private:
  std::shared_ptr<Pipe> in_, out_;
  size_t sent_ = 0;
};

// The two ends of one connection: first the device's, second the server's.
inline std::pair<std::unique_ptr<InMemoryChannel>, std::unique_ptr<InMemoryChannel>>
make_channel_pair() {
  auto up = std::make_shared<Pipe>();
  auto down = std::make_shared<Pipe>();
  return {std::make_unique<InMemoryChannel>(down, up), std::make_unique<InMemoryChannel>(up, down)};
}

}  // namespace client_test
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_CLIENT_IN_MEMORY_CHANNEL_H_
