/// @file
/// Envelope codec: nanopb encode/decode of fedstat.v1.Envelope (proto/fedstat/v1/envelope.proto)
/// into caller buffers, and the stream framing used on every transport.
///
/// Framing is protobuf's standard length-delimited form (a varint byte count, then the message),
/// as written by nanopb's PB_ENCODE_DELIMITED and by other languages' writeDelimitedTo, so a host
/// in any language can read a device's stream.
///
/// Checks on decode, each with its own status: malformed or truncated bytes (kDataLoss), a frame
/// longer than kMaxEnvelopeBytes (kOutOfRange), a missing protocol version or message body
/// (kInvalidArgument), a protocol version newer than this build (kUnimplemented).
///
/// Frame prefixes are stricter than nanopb's varint reader (which takes up to 10 bytes and
/// padding): only the minimal encoding, at most kMaxFramePrefixBytes long, is accepted. A padded
/// prefix (85 00) or one running past kMaxFramePrefixBytes (85 80 …) is kDataLoss; a prefix whose
/// value exceeds kMaxEnvelopeBytes (ff 7f) is kOutOfRange. Each verdict is given as soon as the
/// byte that settles it arrives, and is the same whichever way the bytes are split across calls;
/// an incomplete frame is reported as incomplete, never as an error the whole frame would not get.
///
/// @memory fedstat_v1_Envelope_size bytes of output buffer per message; decoding needs
/// sizeof(fedstat_v1_Envelope) for the result; no other state.
/// @paper none (transport for all).
#ifndef FEDSTAT_SDK_WIRE_ENVELOPE_CODEC_H_
#define FEDSTAT_SDK_WIRE_ENVELOPE_CODEC_H_

#include <stddef.h>
#include <stdint.h>

#include "fedstat/v1/envelope.pb.h"
#include "sdk/base/result.h"
#include "sdk/base/span.h"

namespace fedstat {
namespace wire {

/// The nanopb struct of fedstat.v1.Envelope (proto/fedstat/v1/envelope.proto).
using Envelope = fedstat_v1_Envelope;

/// The protocol version this build speaks and accepts (accepts 1..kProtocolVersion). 2: Report
/// and TaggAggregate words are fixed64 in new fields; 3: SecAggKeys carries a commitment to the
/// self-mask seed, which a DIST server requires; 4: the sparse secure-aggregation graph
/// (Task.secagg_degree and threat model, SecAggStart's degree and graph commitment,
/// SecAggPeerKeys.graph_seed), which a server offers only to version-4 devices
/// (docs/protocol.md, "Versions"); 5: signed secure aggregation (issue 42) — device certificates
/// and key signatures in SecAggKeys, SecAggStart.signed_keys, the consistency round
/// (SecAggConsistency; sdk/secagg/signed_keys.h); 6: rule D8 in signed sparse sessions — each
/// device signs its U2 view after its masked input (SecAggConsistency.round = 2), forwarded to its
/// neighbours, which reveal its self-mask share only when that view names them; a server offers
/// signed sparse tasks only to version-6 devices.
constexpr uint32_t kProtocolVersion = 6;
/// Largest encoded Envelope (nanopb computes it from the .options limits).
constexpr size_t kMaxEnvelopeBytes = fedstat_v1_Envelope_size;
/// Bytes of the minimal varint that encodes n (7 bits per byte).
constexpr size_t varint_bytes(uint64_t n) {
  size_t bytes = 1;
  while (n >= 0x80) {
    n >>= 7;
    ++bytes;
  }
  return bytes;
}
/// Longest accepted length prefix: the minimal varint of kMaxEnvelopeBytes (2 bytes for 736).
constexpr size_t kMaxFramePrefixBytes = varint_bytes(kMaxEnvelopeBytes);
static_assert(kMaxFramePrefixBytes <= 4, "decode_frame's prefix loop assumes lengths < 2^28");
/// Largest frame: the longest accepted prefix plus the largest message. A receiver whose buffer
/// holds kMaxFrameBytes always gets a verdict: decode_frame refuses any longer frame.
constexpr size_t kMaxFrameBytes = kMaxEnvelopeBytes + kMaxFramePrefixBytes;

/// An empty envelope (all fields zero, no body) stamped with kProtocolVersion.
Envelope make_envelope();

/// Encodes `envelope` (without framing) into `out`; returns the byte count. The envelope is
/// validated as decode_envelope() would validate it.
/// @errors kInvalidArgument: the envelope has no protocol version or no message body, or a field
/// exceeds its nanopb limit. kUnimplemented: its protocol version is newer than
/// kProtocolVersion. kResourceExhausted: `out` is too small (kMaxEnvelopeBytes always suffices).
/// kInternal: nanopb failed to encode a message it had sized.
Result<size_t> encode_envelope(const Envelope& envelope, MutableByteSpan out);
/// Decodes and validates exactly `bytes` as one Envelope; `out` changes only on success.
/// @errors kOutOfRange: `bytes` is longer than kMaxEnvelopeBytes. kDataLoss: the message bytes are
/// malformed or truncated. kInvalidArgument: the envelope has no protocol version or no message
/// body. kUnimplemented: its protocol version is newer than kProtocolVersion.
Status decode_envelope(ByteSpan bytes, Envelope& out);

/// Encodes a frame (minimal varint length prefix + message) into `out`; returns the byte count.
/// @errors kInvalidArgument: the envelope has no protocol version or no message body, or a field
/// exceeds its nanopb limit. kUnimplemented: its protocol version is newer than
/// kProtocolVersion. kResourceExhausted: `out` is too small (kMaxFrameBytes always suffices).
/// kInternal: nanopb failed to encode a message it had sized.
Result<size_t> encode_frame(const Envelope& envelope, MutableByteSpan out);

/// What decode_frame() found at the front of the bytes received so far.
struct FrameResult {
  bool complete = false;  ///< false: more bytes are needed; nothing was consumed
  size_t consumed = 0;    ///< bytes of `buffered` the frame took (when complete)
};
/// Tries to take one frame from the front of `buffered` (bytes received so far), decoding its
/// message into `out` when it is complete; `out` changes only then.
/// @errors kDataLoss: the length prefix is padded or longer than kMaxFramePrefixBytes, or the
/// message is malformed. kOutOfRange: the prefix announces more than kMaxEnvelopeBytes.
/// kInvalidArgument: the envelope has no protocol version or no message body. kUnimplemented: its
/// protocol version is newer than kProtocolVersion. Each is given as soon as the bytes settle it;
/// an error leaves no way to skip the frame: drop the connection.
Result<FrameResult> decode_frame(ByteSpan buffered, Envelope& out);

/// A receiver's reassembly step: decodes one frame from the front of buffer[0, buffered) into
/// `out` and moves the bytes after it to the front (buffered shrinks). false: the frame is still
/// incomplete, nothing moved — read more into buffer[buffered, size).
/// @errors kInvalidArgument: `buffered` > buffer.size(). kOutOfRange: the buffer is full without
/// a verdict (it is smaller than kMaxFrameBytes). Otherwise as decode_frame(): kDataLoss,
/// kOutOfRange, kInvalidArgument, kUnimplemented.
Result<bool> take_frame(MutableByteSpan buffer, size_t& buffered, Envelope& out);

}  // namespace wire
}  // namespace fedstat

#endif  // FEDSTAT_SDK_WIRE_ENVELOPE_CODEC_H_
