// Known-answer vectors shared by the host/AArch64 unit tests and the Cortex-M image, so that every
// architecture is checked against the same published (or independently computed) values.
#ifndef FEDSTAT_TESTS_COMMON_GOLDEN_VECTORS_H_
#define FEDSTAT_TESTS_COMMON_GOLDEN_VECTORS_H_

#include <stddef.h>
#include <stdint.h>

namespace fedstat {
namespace golden {

// SipHash-2-4, key 00 01 .. 0f, message 00 01 .. (n-1), for n = 0..17: the reference vectors of
// Aumasson & Bernstein's SipHash paper (vectors.h of the reference implementation).
constexpr uint64_t kSipHash24[18] = {
    0x726fdb47dd0e0e31ULL, 0x74f839c593dc67fdULL, 0x0d6c8009d9a94f5aULL, 0x85676696d7fb7e2dULL,
    0xcf2794e0277187b7ULL, 0x18765564cd99a68dULL, 0xcbc9466e58fee3ceULL, 0xab0200f58b01d137ULL,
    0x93f5f5799a932462ULL, 0x9e0082df0ba9e4b0ULL, 0x7a5dbbc594ddb9f3ULL, 0xf4b32f46226bada7ULL,
    0x751e8fbc860ee5fbULL, 0x14ea5627c0843d90ULL, 0xf723ca908e7af2eeULL, 0xa129ca6149be45e5ULL,
    0x3f2acc7f57c29bdbULL, 0x699ae9f52cbe4794ULL};

// SHA-256 of "abc" and of the empty string (FIPS 180-4 examples).
constexpr uint8_t kSha256Abc[32] = {
    0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
    0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
constexpr uint8_t kSha256Empty[32] = {
    0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
    0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55};

// NIST SP 800-38A F.5.5, CTR-AES256.Encrypt (four blocks).
constexpr uint8_t kAesCtrKey[32] = {
    0x60, 0x3d, 0xeb, 0x10, 0x15, 0xca, 0x71, 0xbe, 0x2b, 0x73, 0xae, 0xf0, 0x85, 0x7d, 0x77, 0x81,
    0x1f, 0x35, 0x2c, 0x07, 0x3b, 0x61, 0x08, 0xd7, 0x2d, 0x98, 0x10, 0xa3, 0x09, 0x14, 0xdf, 0xf4};
constexpr uint8_t kAesCtrCounter[16] = {0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7,
                                        0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff};
constexpr uint8_t kAesCtrPlaintext[64] = {
    0x6b, 0xc1, 0xbe, 0xe2, 0x2e, 0x40, 0x9f, 0x96, 0xe9, 0x3d, 0x7e, 0x11, 0x73, 0x93, 0x17, 0x2a,
    0xae, 0x2d, 0x8a, 0x57, 0x1e, 0x03, 0xac, 0x9c, 0x9e, 0xb7, 0x6f, 0xac, 0x45, 0xaf, 0x8e, 0x51,
    0x30, 0xc8, 0x1c, 0x46, 0xa3, 0x5c, 0xe4, 0x11, 0xe5, 0xfb, 0xc1, 0x19, 0x1a, 0x0a, 0x52, 0xef,
    0xf6, 0x9f, 0x24, 0x45, 0xdf, 0x4f, 0x9b, 0x17, 0xad, 0x2b, 0x41, 0x7b, 0xe6, 0x6c, 0x37, 0x10};
constexpr uint8_t kAesCtrCiphertext[64] = {
    0x60, 0x1e, 0xc3, 0x13, 0x77, 0x57, 0x89, 0xa5, 0xb7, 0xa7, 0xf5, 0x04, 0xbb, 0xf3, 0xd2, 0x28,
    0xf4, 0x43, 0xe3, 0xca, 0x4d, 0x62, 0xb5, 0x9a, 0xca, 0x84, 0xe9, 0x90, 0xca, 0xca, 0xf5, 0xc5,
    0x2b, 0x09, 0x30, 0xda, 0xa2, 0x3d, 0xe9, 0x4c, 0xe8, 0x70, 0x17, 0xba, 0x2d, 0x84, 0x98, 0x8d,
    0xdf, 0xc9, 0xc5, 0x8d, 0xb6, 0x7a, 0xad, 0xa6, 0x13, 0xc2, 0xdd, 0x08, 0x45, 0x79, 0x41, 0xa6};

// SeededStream with seed bytes 00 01 .. 1f: the first 32 bytes of stream 0 and of stream 1.
// Computed independently of fedstat with OpenSSL:
//   head -c 32 /dev/zero | openssl enc -aes-256-ctr -K 000102..1f -iv <BE64(id) || 0^8>
constexpr uint8_t kSeededStream0[32] = {
    0xf2, 0x90, 0x00, 0xb6, 0x2a, 0x49, 0x9f, 0xd0, 0xa9, 0xf3, 0x9a, 0x6a, 0xdd, 0x2e, 0x77, 0x80,
    0xf0, 0x5d, 0x76, 0xae, 0x4a, 0xb9, 0x9f, 0xe5, 0xa6, 0xf6, 0x9b, 0x31, 0x48, 0xc2, 0x36, 0x3d};
constexpr uint8_t kSeededStream1[32] = {
    0x51, 0x1d, 0xd5, 0xef, 0x9a, 0x68, 0x2b, 0x7d, 0xa4, 0x9f, 0x91, 0xc8, 0x6c, 0x4f, 0x7a, 0xc3,
    0x40, 0xc5, 0x3c, 0xef, 0x92, 0xef, 0x2d, 0x64, 0x3f, 0x63, 0x8b, 0x82, 0x22, 0xdb, 0x1e, 0x85};

// Sampler outputs pinned for cross-architecture equality (not a correctness oracle: the
// statistical tests are). RandomBits over SeededStream(seed 00..1f, stream 7), drawn in this
// order: 8 × Skellam(λ = 100), then 8 × discrete Gaussian(σ² = 10), then 8 × discrete
// Laplace(T = 3). Recorded from the x86-64 build; AArch64 and Cortex-M must reproduce them.
constexpr int64_t kSkellam100[8] = {12, -31, 7, -2, 3, 4, 10, 14};
constexpr int64_t kDiscreteGaussian10[8] = {4, -3, -4, -2, -4, 1, -3, 2};
constexpr int64_t kDiscreteLaplace3[8] = {-6, -3, 7, 5, -2, -11, 1, 3};

// TabulatedSkellamSampler(λ = 100) over RandomBits(SeededStream(seed 00..1f, stream 8)): its
// first 8 draws; then, on the same bits, the first 8 of a TabulatedSkellamSampler(λ = 10), which
// splits a Poisson(20) draw by a popcount. Which bits each decision reads depends only on the
// exact acceptance probabilities, never on a rounding of the table, so Cortex-M (software double)
// must reproduce them. Re-recorded on x86-64 for issue 15 item 3 (alias-block proposal, decisions
// at the first differing bit instead of 64 bits, the λ ≤ 32 split): the same seed now gives other
// (equally exact) samples.
constexpr int64_t kTabulatedSkellam100[8] = {-12, -4, -5, 1, 6, 22, -1, -19};
constexpr int64_t kTabulatedSkellam10[8] = {-7, -10, 3, 1, 0, -3, -2, -3};

// CRC-32 of the serialised SparseHistogram (capacity 256) after adding, for i = 0..199, the id
// (i·2654435761) mod 1000003 with count i mod 7 + 1, over the blob without its trailing CRC.
// Recorded on x86-64, with the history-independent (Robin Hood, ties by id) layout.
constexpr uint32_t kSparseHistogramBlobCrc = 0x8CBCD5DEu;

// CRC-32 check value (the catalogue's "check": crc32("123456789")).
constexpr uint32_t kCrc32Check = 0xCBF43926u;

// RFC 7748 §6.1 (X25519 Diffie–Hellman example).
constexpr uint8_t kX25519AlicePrivate[32] = {
    0x77, 0x07, 0x6d, 0x0a, 0x73, 0x18, 0xa5, 0x7d, 0x3c, 0x16, 0xc1, 0x72, 0x51, 0xb2, 0x66, 0x45,
    0xdf, 0x4c, 0x2f, 0x87, 0xeb, 0xc0, 0x99, 0x2a, 0xb1, 0x77, 0xfb, 0xa5, 0x1d, 0xb9, 0x2c, 0x2a};
constexpr uint8_t kX25519AlicePublic[32] = {
    0x85, 0x20, 0xf0, 0x09, 0x89, 0x30, 0xa7, 0x54, 0x74, 0x8b, 0x7d, 0xdc, 0xb4, 0x3e, 0xf7, 0x5a,
    0x0d, 0xbf, 0x3a, 0x0d, 0x26, 0x38, 0x1a, 0xf4, 0xeb, 0xa4, 0xa9, 0x8e, 0xaa, 0x9b, 0x4e, 0x6a};
constexpr uint8_t kX25519BobPrivate[32] = {
    0x5d, 0xab, 0x08, 0x7e, 0x62, 0x4a, 0x8a, 0x4b, 0x79, 0xe1, 0x7f, 0x8b, 0x83, 0x80, 0x0e, 0xe6,
    0x6f, 0x3b, 0xb1, 0x29, 0x26, 0x18, 0xb6, 0xfd, 0x1c, 0x2f, 0x8b, 0x27, 0xff, 0x88, 0xe0, 0xeb};
constexpr uint8_t kX25519BobPublic[32] = {
    0xde, 0x9e, 0xdb, 0x7d, 0x7b, 0x7d, 0xc1, 0xb4, 0xd3, 0x5b, 0x61, 0xc2, 0xec, 0xe4, 0x35, 0x37,
    0x3f, 0x83, 0x43, 0xc8, 0x5b, 0x78, 0x67, 0x4d, 0xad, 0xfc, 0x7e, 0x14, 0x6f, 0x88, 0x2b, 0x4f};
constexpr uint8_t kX25519Shared[32] = {
    0x4a, 0x5d, 0x9d, 0x5b, 0xa4, 0xce, 0x2d, 0xe1, 0x72, 0x8e, 0x3b, 0xf4, 0x80, 0x35, 0x0f, 0x25,
    0xe0, 0x7e, 0x21, 0xc9, 0x47, 0xd1, 0x9e, 0x33, 0x76, 0xf0, 0x9b, 0x3c, 0x1e, 0x16, 0x17, 0x42};
// RFC 5869 test case 1 (HKDF-SHA256): IKM = 22 × 0x0b, salt = 0x00..0x0c, info = 0xf0..0xf9.
constexpr uint8_t kHkdfOkm[42] = {0x3c, 0xb2, 0x5f, 0x25, 0xfa, 0xac, 0xd5, 0x7a, 0x90, 0x43, 0x4f,
                                  0x64, 0xd0, 0x36, 0x2f, 0x2a, 0x2d, 0x2d, 0x0a, 0x90, 0xcf, 0x1a,
                                  0x5a, 0x4c, 0x5d, 0xb0, 0x2d, 0x56, 0xec, 0xc4, 0xc5, 0xbf, 0x34,
                                  0x00, 0x72, 0x08, 0xd5, 0xb8, 0x87, 0x18, 0x58, 0x65};
// AES-256-GCM: key = 0x00..0x1f, IV = 0x64..0x6f, AAD = "fedstat secagg", plaintext =
// "Shamir shares of b_u and s_u^SK!"; values from Python cryptography 38 (AESGCM).
constexpr uint8_t kGcmCiphertext[32] = {
    0x1b, 0x73, 0xbf, 0x0b, 0x10, 0x9b, 0x76, 0xed, 0x56, 0x03, 0x2d, 0x8d, 0xa9, 0x45, 0x05, 0x9b,
    0x62, 0xa0, 0x59, 0x7f, 0xab, 0x0d, 0x9d, 0x16, 0x87, 0xa2, 0xf3, 0x3d, 0xa5, 0xf0, 0xee, 0x69};
constexpr uint8_t kGcmTag[16] = {0x95, 0x05, 0x7d, 0x34, 0xfb, 0x07, 0xaa, 0x27,
                                 0xd9, 0x32, 0xdc, 0xc7, 0x01, 0xd2, 0x67, 0x4a};

// CRC-32 of a ShiftSketch report without its trailing CRC (tests/unit/sketch/shift_sketch_test.cpp:
// R = 3, w = 64, H = 16, k = 64, seed bytes 7·31 + i, 400 items), pinned on x86-64 and reproduced
// on AArch64 and the M4. Report version 2 (one SipHash per item, rows by multiply-shift, the
// fixed-length weight): 0x8CB49645 was version 1's. kShiftSketchBufferedReportCrc: the same
// updates through a 64-slot pre-aggregation buffer (the same counters; the heap offers differ).
// The heap ids are written in heap order, so the heap's arity is in these bytes: 0xFD40AFE8 and
// 0xE1B8ED40 were the binary heap's (the same counters and, here, the same items).
constexpr uint32_t kShiftSketchReportCrc = 0xAA3D1765u;
constexpr uint32_t kShiftSketchBufferedReportCrc = 0xA243EB93u;
// The long skewed stream of ShiftSketch.LongBufferedStreamGivesPinnedBytes through a 1024-slot
// buffer (R = 3, w = 256, H = 64, k = 256, seed bytes 11·31 + i), pinned with the scalar buffer
// code before its SSE2 path existed (0xDB7F4264 with the binary heap).
constexpr uint32_t kShiftSketchLongBufferedReportCrc = 0xEBD1017Eu;
// CRC-32 of the whole report examples/first_report prints (the first-integration walk-throughs:
// 1000 events in a sparse histogram, a 4 KiB sketch for seed bytes 7i + 1), pinned on x86-64;
// tests/consumer/run_consumer.cmake checks it on x86-64, AArch64 and the Cortex-M4.
constexpr uint32_t kFirstReportCrc = 0x2144DF1Cu;

// CRC-32 of whole device reports (client::build_contribution's words, little-endian) for the
// four tasks of tests/common/device_reports.h, pinned on x86-64; checked by
// tests/unit/tasks/device_report_test.cpp (x86-64, AArch64) and the Cortex-M4 self-test.
constexpr uint32_t kDeviceReportCrcDataShift = 0xA5CB738Fu;
constexpr uint32_t kDeviceReportCrcDataShiftDist = 0xE7EEDCF8u;
constexpr uint32_t kDeviceReportCrcKlAnswers = 0xFE95333Fu;
constexpr uint32_t kDeviceReportCrcModelUpdate = 0x5F64CAB6u;

// The sampling weights' test points (tests/unit/sketch/sampling_weight_test.cpp and the Cortex-M4
// self-test): hash i < 1024 is splitmix64 output 2i + 1 from state 13, shifted right (i mod 3 =
// 1) or filled with ones from the top (i mod 3 = 2) by output 2i + 2 mod 64 bits; then 0 and
// all ones. kSamplingWeightCrc: the CRC-32 of ω (little-endian u64) for every hash at every k of
// kWeightTestK, in that order (k outer), pinned on x86-64.
constexpr size_t kWeightTestHashes = 1026;
constexpr uint32_t kWeightTestK[13] = {1,    2,    3,    7,     64,       146,        147,
                                       1000, 3072, 4096, 32768, 1u << 20, 4000000000u};
constexpr uint64_t splitmix64_output(uint64_t state, uint64_t n) {  // the n-th output, n ≥ 1
  uint64_t z = state + n * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
constexpr uint64_t weight_test_hash(size_t i) {
  if (i == 1024) return 0;
  if (i == 1025) return ~uint64_t{0};
  const uint64_t h = splitmix64_output(13, 2 * uint64_t{i} + 1);
  const unsigned shift = static_cast<unsigned>(splitmix64_output(13, 2 * uint64_t{i} + 2) % 64);
  if (i % 3 == 1) return h >> shift;
  if (i % 3 == 2) return ~(~h >> shift);
  return h;
}
constexpr uint32_t kSamplingWeightCrc = 0xF152CEB4u;

// The privacy ledger's conversions through sdk/base/portable_math.h, pinned on x86-64 (the bit
// patterns of the results) and checked by tests/unit/base/portable_math_test.cpp (x86-64,
// AArch64) and the Cortex-M4 self-test: a device charges what the server computes, bit for bit.
struct RdpToDpCase {  // privacy::rdp_to_dp(alpha, rdp, delta)
  uint32_t alpha;
  double rdp, delta;
  uint64_t epsilon_bits;
};
constexpr RdpToDpCase kRdpToDp[5] = {
    {2, 0.5, 1e-6, 0x4029DBC239B0B862ull},        // 12.929216196844383
    {3, 2.0, 0.1, 0x40019279C19776BFull},         // 2.1965212940548038
    {8, 0.03125, 1e-9, 0x40047D2D9274FB31ull},    // 2.5611220781278452
    {32, 1.25, 1e-5, 0x3FF7A539860060C5ull},      // 1.4778380617554359
    {256, 0.001, 1e-12, 0x3FB56D2EE187805Bull}};  // 0.083697252331604785
struct LaplaceDeltaCase {  // privacy::truncated_discrete_laplace_delta(scale, bound, sensitivity)
  double scale;
  uint64_t bound, sensitivity;
  uint64_t delta_bits;
};
constexpr LaplaceDeltaCase kTruncatedLaplaceDelta[5] = {
    {0.05, 3, 1, 0x3A85AE1919197EE6ull},         // 8.7565107265994935e-27
    {0.5, 20, 1, 0x3C4DD7A8E7E3232Cull},         // 3.2355217732598835e-18
    {3.0, 40, 2, 0x3EA57FDBD34CBB49ull},         // 6.4073348102719184e-07
    {10.0, 200, 1, 0x3DDC4E0095A736E5ull},       // 1.0297188571721459e-10
    {1000.0, 99999, 1, 0x363B3630C1A7B1C1ull}};  // 1.8618988011749143e-47
struct KlSensitivityCase {                       // tasks::kl_answer_sensitivity(m1, m2).l2
  uint32_t m1, m2;
  uint64_t l2_bits;
};
constexpr KlSensitivityCase kKlSensitivity[5] = {{1u, 1u, 0x3FF6A09E667F3BCDull},
                                                 {3u, 4u, 0x40052A7FA9D2F8EAull},
                                                 {1000u, 24u, 0x4040000000000000ull},
                                                 {0u, 7u, 0x40052A7FA9D2F8EAull},
                                                 {4294967295u, 4294967295u, 0x40F6A09E6673EB7Dull}};

}  // namespace golden
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_COMMON_GOLDEN_VECTORS_H_
