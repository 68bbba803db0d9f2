#include "sdk/wire/envelope_codec.h"

#include <string.h>

#include "pb_decode.h"
#include "pb_encode.h"

namespace fedstat {
namespace wire {
namespace {

Status validate(const Envelope& envelope) {
  if (envelope.protocol_version == 0) {
    return invalid_argument("Envelope has no protocol_version: the sender must set it");
  }
  if (envelope.protocol_version > kProtocolVersion) {
    return unimplemented(
        "Envelope speaks a newer protocol version than this build understands: update fedstat");
  }
  if (envelope.which_body == 0) return invalid_argument("Envelope carries no message body");
  return Status();
}

Result<size_t> encode(const Envelope& envelope, MutableByteSpan out, bool delimited) {
  FEDSTAT_RETURN_IF_ERROR(validate(envelope));
  size_t message_size = 0;
  if (!pb_get_encoded_size(&message_size, fedstat_v1_Envelope_fields, &envelope)) {
    return invalid_argument("Envelope could not be encoded (a field exceeds its nanopb limit)");
  }
  size_t needed = message_size;
  if (delimited) {
    pb_ostream_t sizing = PB_OSTREAM_SIZING;
    (void)pb_encode_varint(&sizing, message_size);
    needed += sizing.bytes_written;
  }
  if (needed > out.size()) {
    return resource_exhausted("output buffer too small for the Envelope: size it kMaxFrameBytes");
  }
  pb_ostream_t stream = pb_ostream_from_buffer(out.data(), out.size());
  if (!pb_encode_ex(&stream, fedstat_v1_Envelope_fields, &envelope,
                    delimited ? PB_ENCODE_DELIMITED : 0)) {
    return internal_error("nanopb failed to encode an Envelope it had sized");
  }
  return stream.bytes_written;
}

}  // namespace

Envelope make_envelope() {
  Envelope envelope = fedstat_v1_Envelope_init_zero;
  envelope.protocol_version = kProtocolVersion;
  return envelope;
}

Result<size_t> encode_envelope(const Envelope& envelope, MutableByteSpan out) {
  return encode(envelope, out, /*delimited=*/false);
}

Result<size_t> encode_frame(const Envelope& envelope, MutableByteSpan out) {
  return encode(envelope, out, /*delimited=*/true);
}

Status decode_envelope(ByteSpan bytes, Envelope& out) {
  if (bytes.size() > kMaxEnvelopeBytes) {
    return out_of_range("Envelope is longer than any valid message (kMaxEnvelopeBytes)");
  }
  Envelope decoded = fedstat_v1_Envelope_init_zero;
  pb_istream_t stream = pb_istream_from_buffer(bytes.data(), bytes.size());
  if (!pb_decode(&stream, fedstat_v1_Envelope_fields, &decoded)) {
    return data_loss("malformed or truncated Envelope: the bytes are not a valid message");
  }
  FEDSTAT_RETURN_IF_ERROR(validate(decoded));
  out = decoded;  // `out` changes only when the whole message is valid
  return Status();
}

Result<FrameResult> decode_frame(ByteSpan buffered, Envelope& out) {
  // The prefix, decoded here byte by byte (nanopb's reader takes up to 10 bytes and padding):
  // base-128 little-endian groups, the high bit set on every byte but the last. Each verdict is
  // settled by one byte, so it is the same however the bytes arrive; until that byte arrives the
  // answer is "incomplete", never an error.
  uint32_t length = 0;
  size_t prefix = 0;
  for (;;) {
    if (prefix == buffered.size()) return FrameResult{};  // the prefix has not fully arrived yet
    const uint8_t byte = buffered[prefix];
    length |= static_cast<uint32_t>(byte & 0x7Fu) << (7 * prefix);  // prefix ≤ 3: no overflow
    ++prefix;
    if ((byte & 0x80u) == 0) {
      if (byte == 0 && prefix > 1) {
        return data_loss("frame length prefix is padded (not minimal): drop the connection");
      }
      break;
    }
    if (length > kMaxEnvelopeBytes) {  // more bytes only add to it
      return out_of_range("frame is longer than any valid Envelope: drop the connection");
    }
    if (prefix == kMaxFramePrefixBytes) {
      return data_loss(
          "frame length prefix is longer than kMaxFramePrefixBytes (padded, or a frame longer "
          "than any valid Envelope): drop the connection");
    }
  }
  if (length > kMaxEnvelopeBytes) {
    return out_of_range("frame is longer than any valid Envelope: drop the connection");
  }
  if (buffered.size() - prefix < length) return FrameResult{};  // the message is still arriving
  FEDSTAT_RETURN_IF_ERROR(decode_envelope(buffered.subspan(prefix, length), out));
  FrameResult result;
  result.complete = true;
  result.consumed = prefix + length;
  return result;
}

Result<bool> take_frame(MutableByteSpan buffer, size_t& buffered, Envelope& out) {
  if (buffered > buffer.size()) return invalid_argument("take_frame: buffered > buffer size");
  Result<FrameResult> frame = decode_frame(ByteSpan(buffer.data(), buffered), out);
  FEDSTAT_RETURN_IF_ERROR(frame.status());
  if (!frame.value().complete) {
    // A buffer of kMaxFrameBytes always gets a verdict; a smaller full one never would.
    if (buffered == buffer.size()) return out_of_range("take_frame: the buffer is full");
    return false;
  }
  const size_t consumed = frame.value().consumed;
  memmove(buffer.data(), buffer.data() + consumed, buffered - consumed);
  buffered -= consumed;
  return true;
}

}  // namespace wire
}  // namespace fedstat
