// A tiny application that uses fedstat only through its installed package (find_package(fedstat)
// and fedstat::sdk; headers as <fedstat/...>). It builds a data-shift sketch report, draws exact
// Skellam noise from a seeded stream, and round-trips a ClientHello through the wire codec, then
// prints what it got. The same program runs on x86-64, AArch64 (qemu-aarch64) and the Cortex-M4
// (qemu-system-arm, semihosting); tests/consumer/run_consumer.cmake compares its output with the
// golden values every architecture must reproduce (tests/common/golden_vectors.h).
// Memory: static buffers only (about 10 KiB), so it fits the 64 KiB M4 image and the 16 KiB M0.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <fedstat/sdk/base/crc32.h>
#include <fedstat/sdk/base/random_bits.h>
#include <fedstat/sdk/base/seeded_stream.h>
#include <fedstat/sdk/base/span.h>
#include <fedstat/sdk/noise/poisson.h>
#include <fedstat/sdk/sketch/shift_sketch.h>
#include <fedstat/sdk/version.h>
#include <fedstat/sdk/wire/envelope_codec.h>

namespace {

using fedstat::ByteSpan;
using fedstat::MutableByteSpan;

int g_failures = 0;

// printf("%lld") is not in newlib-nano (the Cortex-M4 image's C library): decimal by hand.
void print_int64(int64_t v) {
  char digits[21];
  size_t n = 0;
  uint64_t magnitude = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  do {
    digits[n++] = static_cast<char>('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude != 0);
  printf(" %s", v < 0 ? "-" : "");
  while (n > 0) putchar(digits[--n]);
}

void fail(const char* what, const fedstat::Status& status) {
  ++g_failures;
  printf("FAILED %s: %s\n", what, status.message());
}

// The data-shift sketch of tests/unit/sketch/shift_sketch_test.cpp SameBytesOnEveryArchitecture:
// R = 3, w = 64, H = 16, k = 64, seed bytes 7·31 + i, 400 updates.
void sketch_report() {
  namespace sketch = fedstat::sketch;
  constexpr sketch::ShiftSketchParams kShape{3, 64, 16, 64, fedstat::Seed256{}, 0};
  alignas(8) static uint8_t memory[sketch::shift_sketch_memory_bytes(kShape)];
  static uint8_t report[sketch::shift_sketch_report_bytes(kShape, 16)];
  static sketch::ShiftSketch s;
  sketch::ShiftSketchParams p = kShape;
  for (int i = 0; i < 32; ++i) p.seed.bytes[i] = static_cast<uint8_t>(7 * 31 + i);
  fedstat::Status status = s.init(p, MutableByteSpan(memory));
  for (uint32_t i = 0; i < 400 && status.ok(); ++i) {
    status = s.add((i * 2654435761u) % 1000003u, i % 9 + 1);
  }
  if (!status.ok()) return fail("sketch", status);
  const auto size = s.serialize(MutableByteSpan(report));
  if (!size.ok()) return fail("sketch report", size.status());
  // The report's last 4 bytes are its own CRC; the golden value is over the bytes before it.
  printf("sketch report: %u bytes, crc32 %08x\n", static_cast<unsigned>(size.value()),
         static_cast<unsigned>(fedstat::crc32(ByteSpan(report, size.value() - 4))));
}

// Exact Skellam(100) from RandomBits over SeededStream(seed 00..1f, stream 7).
void skellam_noise() {
  fedstat::Seed256 seed;
  for (int i = 0; i < 32; ++i) seed.bytes[i] = static_cast<uint8_t>(i);
  static fedstat::SeededStream stream(seed, 7);
  static fedstat::RandomBits bits(stream);
  fedstat::noise::SkellamSampler skellam;
  const fedstat::Status status = skellam.init(fedstat::noise::Rational{100, 1});
  if (!status.ok()) return fail("skellam", status);
  printf("skellam(100):");
  for (int i = 0; i < 8; ++i) {
    const auto v = skellam.sample(bits);
    if (!v.ok()) return fail("skellam sample", v.status());
    print_int64(v.value());
  }
  printf("\n");
}

// nanopb and the generated fedstat/v1/envelope.pb.h through the SDK's codec.
void envelope_round_trip() {
  namespace wire = fedstat::wire;
  wire::Envelope hello = wire::make_envelope();
  hello.which_body = fedstat_v1_Envelope_client_hello_tag;
  hello.body.client_hello.client_id = 42;
  strncpy(hello.body.client_hello.sdk_version, FEDSTAT_VERSION_STRING,
          sizeof(hello.body.client_hello.sdk_version) - 1);
  static uint8_t buffer[wire::kMaxFrameBytes];
  const auto frame = wire::encode_frame(hello, MutableByteSpan(buffer));
  if (!frame.ok()) return fail("encode_frame", frame.status());
  static wire::Envelope decoded;
  const auto result = wire::decode_frame(ByteSpan(buffer, frame.value()), decoded);
  if (!result.ok()) return fail("decode_frame", result.status());
  const bool same = result->complete &&
                    decoded.which_body == fedstat_v1_Envelope_client_hello_tag &&
                    decoded.body.client_hello.client_id == 42 &&
                    strcmp(decoded.body.client_hello.sdk_version, FEDSTAT_VERSION_STRING) == 0;
  if (!same) {
    ++g_failures;
    printf("FAILED envelope: the decoded ClientHello differs\n");
    return;
  }
  printf("envelope: %u-byte frame round trip\n", static_cast<unsigned>(frame.value()));
}

}  // namespace

int main() {
  printf("fedstat %s (%d.%d.%d)\n", FEDSTAT_VERSION_STRING, FEDSTAT_VERSION_MAJOR,
         FEDSTAT_VERSION_MINOR, FEDSTAT_VERSION_PATCH);
  sketch_report();
  skellam_noise();
  envelope_round_trip();
  printf("consumer: %s\n", g_failures == 0 ? "ok" : "FAILED");
  return g_failures == 0 ? 0 : 1;
}
