/// @file
/// FrameChannel: the Client's connection to the server — a reliable, ordered stream of Envelope
/// frames (sdk/wire/envelope_codec.h). On a device it is TLS over the platform transport
/// (sdk/tls/tls_channel.h); tests give the Client an in-memory channel.
///
/// @memory an implementation's own (documented with it); the interface holds nothing.
/// @paper none (transport for all tasks).
#ifndef FEDSTAT_SDK_CLIENT_FRAME_CHANNEL_H_
#define FEDSTAT_SDK_CLIENT_FRAME_CHANNEL_H_

#include <stdint.h>

#include "sdk/base/status.h"
#include "sdk/wire/envelope_codec.h"

namespace fedstat {
namespace client {

/// The Client's connection to the server: a reliable, ordered stream of Envelope frames.
/// Implementations: tls::TlsPskChannel on a device, in-memory channels in tests.
class FrameChannel {
 public:
  /// Sends one whole frame.
  /// @errors kUnavailable: the peer is gone. An implementation may add its own (TlsPskChannel:
  /// kFailedPrecondition when not connected, encode_frame's status for an unencodable message).
  virtual Status send(const wire::Envelope& message) = 0;
  /// Receives the next whole frame into `out`.
  /// @errors kDeadlineExceeded: no frame within `timeout_ms`. kUnavailable: the peer closed the
  /// stream. A malformed frame gets decode_frame's status (kDataLoss, kOutOfRange,
  /// kInvalidArgument, kUnimplemented) and the channel is then unusable.
  virtual Status receive(wire::Envelope& out, uint32_t timeout_ms) = 0;
  /// Ends the connection (idempotent).
  virtual void close() = 0;

 protected:
  ~FrameChannel() = default;
};

}  // namespace client
}  // namespace fedstat

#endif  // FEDSTAT_SDK_CLIENT_FRAME_CHANNEL_H_
