#include "capi/channel.h"

#include "platform/platform.h"

namespace fedstat {
namespace capi {

Status CallbackChannel::send(const wire::Envelope& message) {
  if (closed_) return unavailable("channel: closed");
  FEDSTAT_ASSIGN_OR_RETURN(const size_t size, wire::encode_frame(message, send_buffer_));
  return callback_status(channel_.send(channel_.context, send_buffer_.data(), size));
}

Status CallbackChannel::receive(wire::Envelope& out, uint32_t timeout_ms) {
  if (closed_) return unavailable("channel: closed");
  if (broken_) return data_loss("channel: an earlier frame was malformed; the channel is unusable");
  const uint64_t start_us = platform::monotonic_micros();
  for (;;) {
    if (buffered_ > 0) {
      const Result<bool> frame = wire::take_frame(receive_buffer_, buffered_, out);
      if (!frame.ok()) {
        broken_ = true;
        return frame.status();
      }
      if (frame.value()) return Status();
    }
    const uint64_t elapsed_ms = (platform::monotonic_micros() - start_us) / 1000;
    if (elapsed_ms >= timeout_ms) return deadline_exceeded("channel: no whole frame in time");
    const uint32_t wait_ms = static_cast<uint32_t>(timeout_ms - elapsed_ms);
    const size_t room = receive_buffer_.size() - buffered_;
    size_t received = 0;
    const fedstat_status got = channel_.receive(
        channel_.context, receive_buffer_.data() + buffered_, room, &received, wait_ms);
    FEDSTAT_RETURN_IF_ERROR(callback_status(got));
    if (received == 0 || received > room) {
      broken_ = true;
      return internal_error("channel: the receive callback reported 0 bytes or more than offered");
    }
    buffered_ += received;
  }
}

void CallbackChannel::close() {
  if (closed_) return;
  closed_ = true;
  if (channel_.close != nullptr) channel_.close(channel_.context);
}

}  // namespace capi
}  // namespace fedstat
