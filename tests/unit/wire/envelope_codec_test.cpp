#include "sdk/wire/envelope_codec.h"

#include <gtest/gtest.h>

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

// Envelope{protocol_version: 1, client_hello: {client_id: 42, sdk_version: "0.1.0"}} as the
// protobuf encoding rules give it, byte by byte:
//   08 01                 field 1 (varint) = 1
//   12 09                 field 2 (length-delimited), 9 bytes:
//     08 2a               field 1 (varint) = 42
//     12 05 30 2e 31 2e 30  field 2 (string) = "0.1.0"
const std::vector<uint8_t> kHelloBytes = {0x08, 0x01, 0x12, 0x09, 0x08, 0x2a, 0x12,
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
  // Version 2 from a newer sender (field 1 = 2), hand-built: this build must refuse it.
  std::vector<uint8_t> newer = kHelloBytes;
  newer[1] = 0x02;
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

TEST(EnvelopeCodecTest, OversizedAndMalformedPrefixesAreRejected) {
  Envelope out{};
  const uint8_t huge[] = {0xff, 0xff, 0x03};  // 65535 > kMaxEnvelopeBytes
  EXPECT_EQ(decode_frame(ByteSpan(huge), out).status().code(), StatusCode::kOutOfRange);
  const uint8_t endless[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80};
  EXPECT_EQ(decode_frame(ByteSpan(endless), out).status().code(), StatusCode::kDataLoss);
  const uint8_t partial[] = {0x80, 0x80};
  auto r = decode_frame(ByteSpan(partial), out);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->complete);
}

}  // namespace
}  // namespace wire
}  // namespace fedstat
