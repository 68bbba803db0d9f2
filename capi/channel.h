// Internal to the C ABI (never installed): the app's fedstat_channel as the Client's
// FrameChannel. Frames are encoded into, and reassembled from, two buffers of kMaxFrameBytes the
// caller owns (in the Client handle), so bytes may arrive split or joined in any way; a whole
// receive() — however many callback calls it takes — is bounded by its timeout through the
// platform's monotonic clock. A callback's error code becomes the session's status (handle.h
// callback_status); a callback that claims more bytes than it was offered ends the session.
//
// Memory: the two caller buffers (2·kMaxFrameBytes) and the adapter's own few words.
// Paper: none.
#ifndef FEDSTAT_CAPI_CHANNEL_H_
#define FEDSTAT_CAPI_CHANNEL_H_

#include "capi/handle.h"
#include "sdk/client/frame_channel.h"

namespace fedstat {
namespace capi {

class CallbackChannel final : public client::FrameChannel {
 public:
  // `send_buffer` and `receive_buffer` hold kMaxFrameBytes each.
  CallbackChannel(const fedstat_channel& channel, MutableByteSpan send_buffer,
                  MutableByteSpan receive_buffer)
      : channel_(channel), send_buffer_(send_buffer), receive_buffer_(receive_buffer) {}

  Status send(const wire::Envelope& message) override;
  Status receive(wire::Envelope& out, uint32_t timeout_ms) override;
  void close() override;

 private:
  fedstat_channel channel_;
  MutableByteSpan send_buffer_;
  MutableByteSpan receive_buffer_;
  size_t buffered_ = 0;  // bytes of receive_buffer_ that hold the start of the next frame(s)
  bool broken_ = false;  // a malformed frame or a lying callback: nothing more is read
  bool closed_ = false;
};

}  // namespace capi
}  // namespace fedstat

#endif  // FEDSTAT_CAPI_CHANNEL_H_
