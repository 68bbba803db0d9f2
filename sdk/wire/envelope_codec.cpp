#include "sdk/wire/envelope_codec.h"

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
  // The prefix is a base-128 varint: at most 5 bytes for any length up to kMaxEnvelopeBytes.
  constexpr size_t kMaxPrefixBytes = 5;
  pb_istream_t stream = pb_istream_from_buffer(buffered.data(), buffered.size());
  uint32_t length = 0;
  if (!pb_decode_varint32(&stream, &length)) {
    if (stream.bytes_left == 0 && buffered.size() < kMaxPrefixBytes) {
      return FrameResult{};  // the prefix has not fully arrived yet
    }
    return data_loss("frame length prefix is not a valid varint: drop the connection");
  }
  const size_t prefix = buffered.size() - stream.bytes_left;
  if (length > kMaxEnvelopeBytes) {
    return out_of_range("frame is longer than any valid Envelope: drop the connection");
  }
  if (stream.bytes_left < length) return FrameResult{};  // the message has not fully arrived yet
  FEDSTAT_RETURN_IF_ERROR(decode_envelope(buffered.subspan(prefix, length), out));
  FrameResult result;
  result.complete = true;
  result.consumed = prefix + length;
  return result;
}

}  // namespace wire
}  // namespace fedstat
