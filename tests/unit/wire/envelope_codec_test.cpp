#include "sdk/wire/envelope_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace fedstat {
namespace wire {
namespace {

Envelope hello(uint64_t client_id, const char* version) {
  Envelope e = make_envelope();
  e.which_body = fedstat_v1_Envelope_client_hello_tag;
  e.body.client_hello.client_id = client_id;
  std::strncpy(e.body.client_hello.sdk_version, version,
               sizeof(e.body.client_hello.sdk_version) - 1);
  return e;
}

// Envelope{protocol_version: 6 (kProtocolVersion), client_hello: {client_id: 42, sdk_version:
// "0.1.0"}} as the protobuf encoding rules give it, byte by byte:
//   08 06                 field 1 (varint) = 6
//   12 09                 field 2 (length-delimited), 9 bytes:
//     08 2a               field 1 (varint) = 42
//     12 05 30 2e 31 2e 30  field 2 (string) = "0.1.0"
const std::vector<uint8_t> kHelloBytes = {0x08, 0x06, 0x12, 0x09, 0x08, 0x2a, 0x12,
                                          0x05, 0x30, 0x2e, 0x31, 0x2e, 0x30};

TEST(EnvelopeCodecTest, EncodesTheProtobufBytes) {
  uint8_t out[kMaxEnvelopeBytes];
  auto n = encode_envelope(hello(42, "0.1.0"), MutableByteSpan(out));
  ASSERT_TRUE(n.ok()) << n.status().message();
  EXPECT_EQ(std::vector<uint8_t>(out, out + n.value()), kHelloBytes);
}

TEST(EnvelopeCodecTest, RoundTripsEveryBodyKind) {
  uint8_t buffer[kMaxEnvelopeBytes];
  const Envelope h = hello(0xFFFFFFFFFFFFFFFFULL, "99.99.99-rc1");
  auto n = encode_envelope(h, MutableByteSpan(buffer));
  ASSERT_TRUE(n.ok());
  Envelope decoded{};
  ASSERT_TRUE(decode_envelope(ByteSpan(buffer, n.value()), decoded).ok());
  EXPECT_EQ(decoded.which_body, fedstat_v1_Envelope_client_hello_tag);
  EXPECT_EQ(decoded.body.client_hello.client_id, 0xFFFFFFFFFFFFFFFFULL);
  EXPECT_STREQ(decoded.body.client_hello.sdk_version, "99.99.99-rc1");

  Envelope error = make_envelope();
  error.which_body = fedstat_v1_Envelope_server_error_tag;
  error.body.server_error.status_code = static_cast<uint32_t>(StatusCode::kPermissionDenied);
  std::strcpy(error.body.server_error.detail, "unknown client");
  n = encode_envelope(error, MutableByteSpan(buffer));
  ASSERT_TRUE(n.ok());
  ASSERT_TRUE(decode_envelope(ByteSpan(buffer, n.value()), decoded).ok());
  EXPECT_EQ(decoded.which_body, fedstat_v1_Envelope_server_error_tag);
  EXPECT_STREQ(decoded.body.server_error.detail, "unknown client");
}

TEST(EnvelopeCodecTest, EveryTruncationIsRejectedAndLeavesTheOutputUntouched) {
  Envelope kept = hello(7, "kept");
  for (size_t n = 1; n < kHelloBytes.size(); ++n) {
    const Status s = decode_envelope(ByteSpan(kHelloBytes.data(), n), kept);
    EXPECT_FALSE(s.ok()) << "accepted a " << n << "-byte prefix";
    EXPECT_EQ(kept.body.client_hello.client_id, 7u);
  }
}

TEST(EnvelopeCodecTest, VersionAndBodyAreValidated) {
  uint8_t buffer[kMaxEnvelopeBytes];
  Envelope e = hello(1, "x");
  e.protocol_version = 0;
  EXPECT_EQ(encode_envelope(e, MutableByteSpan(buffer)).status().code(),
            StatusCode::kInvalidArgument);
  Envelope out{};
  // A version newer than kProtocolVersion (field 1 = kProtocolVersion + 1), hand-built: this
  // build must refuse it.
  std::vector<uint8_t> newer = kHelloBytes;
  newer[1] = static_cast<uint8_t>(kProtocolVersion + 1);
  EXPECT_EQ(decode_envelope(ByteSpan(newer.data(), newer.size()), out).code(),
            StatusCode::kUnimplemented);
  const uint8_t no_body[] = {0x08, 0x01};
  EXPECT_EQ(decode_envelope(ByteSpan(no_body), out).code(), StatusCode::kInvalidArgument);
  const uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  EXPECT_EQ(decode_envelope(ByteSpan(garbage), out).code(), StatusCode::kDataLoss);
}

TEST(EnvelopeCodecTest, SmallOutputBufferIsResourceExhausted) {
  uint8_t tiny[5];
  EXPECT_EQ(encode_envelope(hello(42, "0.1.0"), MutableByteSpan(tiny)).status().code(),
            StatusCode::kResourceExhausted);
}

TEST(EnvelopeCodecTest, FramesArriveByteByByte) {
  uint8_t stream[2 * kMaxFrameBytes];
  auto a = encode_frame(hello(1, "a"), MutableByteSpan(stream));
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(stream[0], a.value() - 1);  // one-byte varint prefix
  auto b = encode_frame(hello(2, "b"), MutableByteSpan(stream).subspan(a.value()));
  ASSERT_TRUE(b.ok());
  const size_t total = a.value() + b.value();

  // Feed the receiver one more byte at a time, as a slow network would.
  std::vector<uint64_t> ids;
  size_t start = 0;
  for (size_t available = 0; available <= total; ++available) {
    Envelope out{};
    auto r = decode_frame(ByteSpan(stream + start, available - start), out);
    ASSERT_TRUE(r.ok()) << r.status().message();
    if (r->complete) {
      ids.push_back(out.body.client_hello.client_id);
      start += r->consumed;
    }
  }
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(start, total);
}

// A receiver's buffer: bytes arrive in uneven pieces; take_frame hands out each whole frame once
// and keeps the rest of the next one at the front.
TEST(EnvelopeCodecTest, TakeFrameReassemblesFramesFromPieces) {
  uint8_t stream[3 * kMaxFrameBytes];
  size_t total = 0;
  for (uint64_t id = 1; id <= 3; ++id) {
    auto n = encode_frame(hello(id, "x"), MutableByteSpan(stream).subspan(total));
    ASSERT_TRUE(n.ok());
    total += n.value();
  }
  uint8_t buffer[kMaxFrameBytes];
  size_t buffered = 0;
  std::vector<uint64_t> ids;
  for (size_t sent = 0; sent < total;) {
    const size_t piece = std::min<size_t>(total - sent, 7);  // not aligned with the frames
    std::memcpy(buffer + buffered, stream + sent, piece);
    buffered += piece;
    sent += piece;
    for (;;) {
      Envelope out{};
      auto taken = take_frame(MutableByteSpan(buffer), buffered, out);
      ASSERT_TRUE(taken.ok()) << taken.status().message();
      if (!taken.value()) break;
      ids.push_back(out.body.client_hello.client_id);
    }
  }
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(buffered, 0u);

  // A buffer too small for the frame under way gets a verdict instead of waiting forever.
  uint8_t small[4];
  std::memcpy(small, stream, sizeof(small));
  size_t full = sizeof(small);
  Envelope out{};
  EXPECT_EQ(take_frame(MutableByteSpan(small), full, out).status().code(), StatusCode::kOutOfRange);
  // A malformed prefix is decode_frame's verdict.
  uint8_t padded[] = {0x85, 0x00};
  size_t two = sizeof(padded);
  EXPECT_EQ(take_frame(MutableByteSpan(padded), two, out).status().code(), StatusCode::kDataLoss);
}

TEST(EnvelopeCodecTest, OversizedAndMalformedPrefixesAreRejected) {
  Envelope out{};
  const uint8_t huge[] = {0xff, 0xff, 0x03};  // 65535 > kMaxEnvelopeBytes
  EXPECT_EQ(decode_frame(ByteSpan(huge), out).status().code(), StatusCode::kOutOfRange);
  const uint8_t endless[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80};
  EXPECT_EQ(decode_frame(ByteSpan(endless), out).status().code(), StatusCode::kDataLoss);
  const uint8_t partial[] = {0x80};
  auto r = decode_frame(ByteSpan(partial), out);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->complete);
}

// The prefix is at most as long as the minimal varint of kMaxEnvelopeBytes, and the frame buffer
// a receiver needs is derived from it.
TEST(EnvelopeCodecTest, FrameLimitsFollowFromTheLargestEnvelope) {
  EXPECT_EQ(varint_bytes(127), 1u);
  EXPECT_EQ(varint_bytes(128), 2u);
  EXPECT_EQ(varint_bytes(16383), 2u);
  EXPECT_EQ(varint_bytes(16384), 3u);
  EXPECT_EQ(varint_bytes(UINT64_MAX), 10u);
  EXPECT_EQ(kMaxFramePrefixBytes, varint_bytes(kMaxEnvelopeBytes));
  EXPECT_EQ(kMaxFrameBytes, kMaxEnvelopeBytes + kMaxFramePrefixBytes);
  // The largest message nanopb can encode gets a prefix that fits kMaxFrameBytes.
  Envelope chunk = make_envelope();
  chunk.which_body = fedstat_v1_Envelope_secagg_masked_chunk_tag;
  chunk.body.secagg_masked_chunk.session = UINT64_MAX;
  chunk.body.secagg_masked_chunk.client_id = UINT32_MAX;
  chunk.body.secagg_masked_chunk.offset = UINT32_MAX;
  chunk.body.secagg_masked_chunk.words_count = 64;
  for (uint64_t& w : chunk.body.secagg_masked_chunk.words) w = UINT64_MAX;
  uint8_t buffer[kMaxFrameBytes];
  auto n = encode_frame(chunk, MutableByteSpan(buffer));
  ASSERT_TRUE(n.ok()) << n.status().message();
  Envelope out{};
  auto r = decode_frame(ByteSpan(buffer, n.value()), out);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->complete);
  EXPECT_EQ(r->consumed, n.value());
}

// A stream of frames (valid, then invalid) cut at every pair of points: the receiver, which keeps
// what it has not consumed and calls decode_frame after every arrival, sees the same frames and
// the same final error whatever the cuts, and never an error before the byte that settles it.
struct StreamOutcome {
  std::vector<uint64_t> ids;
  StatusCode error = StatusCode::kOk;
  size_t error_at = 0;  // bytes received when the error was reported
  bool operator==(const StreamOutcome& o) const {
    return ids == o.ids && error == o.error && error_at == o.error_at;
  }
};

StreamOutcome receive(const std::vector<uint8_t>& stream, const std::vector<size_t>& cuts) {
  StreamOutcome outcome;
  size_t start = 0;
  for (size_t c = 0; c <= cuts.size(); ++c) {
    const size_t available = c < cuts.size() ? cuts[c] : stream.size();
    for (;;) {  // take every complete frame the arrival made available
      Envelope out{};
      auto r = decode_frame(ByteSpan(stream.data() + start, available - start), out);
      if (!r.ok()) {
        outcome.error = r.status().code();
        outcome.error_at = available;
        return outcome;
      }
      if (!r->complete) break;
      outcome.ids.push_back(out.body.client_hello.client_id);
      start += r->consumed;
    }
  }
  return outcome;
}

TEST(EnvelopeCodecTest, EverySplitOfAStreamGivesTheSameVerdict) {
  std::vector<uint8_t> frames;
  for (uint64_t id : {1u, 300u}) {
    uint8_t buffer[kMaxFrameBytes];
    auto n = encode_frame(hello(id, "split"), MutableByteSpan(buffer));
    ASSERT_TRUE(n.ok());
    frames.insert(frames.end(), buffer, buffer + n.value());
  }
  const std::vector<std::vector<uint8_t>> endings = {
      {},                                          // clean end
      {0x85, 0x80, 0x00, 1, 2, 3, 4, 5},           // padded prefix
      {0x8d, 0x00},                                // padded two-byte prefix
      {0xe1, 0x05},                                // 737 > kMaxEnvelopeBytes
      {0x06, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},  // a garbage message
  };
  const StatusCode expected[] = {StatusCode::kOk, StatusCode::kDataLoss, StatusCode::kDataLoss,
                                 StatusCode::kOutOfRange, StatusCode::kDataLoss};
  for (size_t e = 0; e < endings.size(); ++e) {
    std::vector<uint8_t> stream = frames;
    stream.insert(stream.end(), endings[e].begin(), endings[e].end());
    const StreamOutcome whole = receive(stream, {});
    EXPECT_EQ(whole.ids, (std::vector<uint64_t>{1, 300})) << e;
    EXPECT_EQ(whole.error, expected[e]) << e;
    for (size_t a = 0; a <= stream.size(); ++a) {
      for (size_t b = a; b <= stream.size(); ++b) {
        const StreamOutcome split = receive(stream, {a, b});
        // An error is reported at the first arrival that holds its settling byte: the same error,
        // possibly at an earlier cut than "everything"; never an error the whole stream lacks.
        EXPECT_EQ(split.ids, whole.ids) << e << " cut at " << a << ", " << b;
        EXPECT_EQ(split.error, whole.error) << e << " cut at " << a << ", " << b;
      }
    }
    // Byte by byte, the error comes exactly when its settling byte arrives.
    std::vector<size_t> every;
    for (size_t k = 0; k < stream.size(); ++k) every.push_back(k);
    const StreamOutcome slow = receive(stream, every);
    EXPECT_EQ(slow.ids, whole.ids) << e;
    EXPECT_EQ(slow.error, whole.error) << e;
    if (e == 1 || e == 3) {  // 85 80 … and e1 05 are settled by their second byte
      EXPECT_EQ(slow.error_at, frames.size() + 2) << e;
    }
  }
}

}  // namespace
}  // namespace wire
}  // namespace fedstat
