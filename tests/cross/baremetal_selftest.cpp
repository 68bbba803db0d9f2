// The Cortex-M4 self-test: SDK code on the microcontroller, checked against the same golden
// vectors as the host and AArch64 unit tests (tests/common/golden_vectors.h), so equal inputs are
// proven to give equal bytes on every architecture. Prints one line per check, the image's
// section sizes, and "selftest: N passed, M failed"; returns M (QEMU passes it to CTest).
// Built with FEDSTAT_SELFTEST_CORE=1 (the Cortex-M0 image, 16 KiB of RAM) it runs the core's
// checks only: status and arena, hashes, AES and the seeded streams, the noise samplers, the
// histogram, the data-shift sketch and its report, and the wire codec.
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <new>

#include "mbedtls/aes.h"
#include "mbedtls/platform.h"
#include "platform/baremetal/hooks.h"
#include "platform/platform.h"
#include "sdk/base/arena.h"
#include "sdk/base/bytes.h"
#include "sdk/base/crc32.h"
#include "sdk/base/crypto.h"
#include "sdk/base/csprng.h"
#include "sdk/base/item_hash.h"
#include "sdk/base/portable_math.h"
#include "sdk/base/random_bits.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/client/client.h"
#include "sdk/credential/device_credential.h"
#include "sdk/histogram/sparse_histogram.h"
#include "sdk/noise/discrete_gaussian.h"
#include "sdk/noise/discrete_laplace.h"
#include "sdk/noise/poisson.h"
#include "sdk/noise/tabulated_poisson.h"
#include "sdk/privacy/accountants.h"
#include "sdk/secagg/mask.h"
#include "sdk/secagg/shamir.h"
#include "sdk/sketch/shift_sketch.h"
#include "sdk/tasks/heterogeneity_task.h"
#include "sdk/tasks/kl_answer_task.h"
#include "sdk/tasks/model_update_task.h"
#include "sdk/wire/envelope_codec.h"
#include "tests/common/device_reports.h"
#include "tests/common/golden_vectors.h"
#include "tests/common/malformed_inputs.h"

using namespace fedstat;  // NOLINT: a test program

extern "C" uint32_t __text_start__, __etext, __data_start__, __data_end__, __bss_start__,
    __bss_end__, __StackTop, __StackLimit;

namespace {

unsigned g_passed = 0;
unsigned g_failed = 0;

void check(bool ok, const char* what) {
  if (ok) {
    ++g_passed;
    printf("  ok    %s\n", what);
  } else {
    ++g_failed;
    printf("  FAIL  %s\n", what);
  }
}

Seed256 counting_seed() {
  Seed256 seed;
  for (int i = 0; i < 32; ++i) seed.bytes[i] = static_cast<uint8_t>(i);
  return seed;
}

void check_status_and_arena() {
  alignas(8) static uint8_t buffer[64];
  Arena arena{MutableByteSpan(buffer)};
  auto a = arena.allocate_array<uint32_t>(10);
  auto b = arena.allocate_array<uint64_t>(4);  // 32 more bytes: does not fit in the last 24
  check(a.ok() && !b.ok() && b.status().code() == StatusCode::kResourceExhausted &&
            arena.used() == 40,
        "arena: carves caller memory, refuses when full, stays unchanged");
  auto c = arena.allocate_array<uint64_t>(3);
  check(c.ok() && reinterpret_cast<uintptr_t>(c->data()) % 8 == 0, "arena: 8-byte alignment");
}

void check_hash_and_crc() {
  uint8_t key[16], message[18];
  for (int i = 0; i < 16; ++i) key[i] = static_cast<uint8_t>(i);
  for (int i = 0; i < 18; ++i) message[i] = static_cast<uint8_t>(i);
  const ItemHasher hasher = ItemHasher::from_key_bytes(key);
  bool all = true;
  for (size_t n = 0; n < 18; ++n)
    all &= hasher.hash_bytes(ByteSpan(message, n)) == golden::kSipHash24[n];
  check(all, "item hash: 18 SipHash-2-4 reference vectors");
  check(hasher.hash_id(0x0706050403020100ULL) == golden::kSipHash24[8], "item hash: hash_id");
  const uint8_t digits[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  check(crc32(ByteSpan(digits)) == golden::kCrc32Check, "crc32: check value");
}

void check_crypto_and_streams() {
  uint8_t digest[32];
  const uint8_t abc[] = {'a', 'b', 'c'};
  check(crypto::sha256(ByteSpan(abc), Span<uint8_t>(digest)).ok() &&
            memcmp(digest, golden::kSha256Abc, 32) == 0,
        "mbedTLS SHA-256: FIPS 180-4 \"abc\"");
  static crypto::Aes256Ctr ctr;
  uint8_t data[64];
  memcpy(data, golden::kAesCtrPlaintext, 64);
  check(ctr.start(ByteSpan(golden::kAesCtrKey), ByteSpan(golden::kAesCtrCounter)).ok() &&
            ctr.apply(MutableByteSpan(data)).ok() &&
            memcmp(data, golden::kAesCtrCiphertext, 64) == 0,
        "mbedTLS AES-256-CTR: SP 800-38A F.5.5");
  // The device's AES encrypts only (platform/baremetal/fedstat_mbedtls_config.h): a decryption
  // key or block is refused, and the refused block comes back as zeros.
  static mbedtls_aes_context aes;
  mbedtls_aes_init(&aes);
  uint8_t block[16];
  memcpy(block, golden::kAesCtrCiphertext, 16);
  const bool refused_key = mbedtls_aes_setkey_dec(&aes, golden::kAesCtrKey, 256) ==
                           MBEDTLS_ERR_PLATFORM_FEATURE_UNSUPPORTED;
  const bool refused_block = mbedtls_aes_setkey_enc(&aes, golden::kAesCtrKey, 256) == 0 &&
                             mbedtls_aes_crypt_ecb(&aes, MBEDTLS_AES_DECRYPT, block, block) ==
                                 MBEDTLS_ERR_PLATFORM_FEATURE_UNSUPPORTED;
  const uint8_t zeros[16] = {};
  check(refused_key && refused_block && memcmp(block, zeros, 16) == 0,
        "mbedTLS AES: encryption only, a decryption is refused");
  mbedtls_aes_free(&aes);
  static SeededStream s0(counting_seed(), 0);
  static SeededStream s1(counting_seed(), 1);
  uint8_t out0[32], out1[32];
  check(s0.fill(MutableByteSpan(out0)).ok() && memcmp(out0, golden::kSeededStream0, 32) == 0 &&
            s1.fill(MutableByteSpan(out1)).ok() && memcmp(out1, golden::kSeededStream1, 32) == 0,
        "seeded stream: same bytes as on x86-64/AArch64 (streams 0 and 1)");
  bool bounded = true;
  for (int i = 0; i < 1000; ++i) {
    auto v = s0.uniform_below(6);
    bounded &= v.ok() && v.value() < 6;
  }
  check(bounded, "seeded stream: uniform_below stays in range");
}

void check_noise() {
  static SeededStream stream(counting_seed(), 7);
  static RandomBits bits(stream);
  static noise::SkellamSampler skellam;
  bool same = skellam.init(noise::Rational{100, 1}).ok();
  for (int64_t expected : golden::kSkellam100) {
    auto v = skellam.sample(bits);
    same &= v.ok() && v.value() == expected;
  }
  check(same, "exact Skellam(100): same draws as x86-64/AArch64");
  same = true;
  for (int64_t expected : golden::kDiscreteGaussian10) {
    auto v = noise::discrete_gaussian(bits, noise::Rational{10, 1});
    same &= v.ok() && v.value() == expected;
  }
  check(same, "exact discrete Gaussian(10): same draws (portable 128-bit arithmetic)");
  same = true;
  for (int64_t expected : golden::kDiscreteLaplace3) {
    auto v = noise::discrete_laplace(bits, noise::Rational{3, 1});
    same &= v.ok() && v.value() == expected;
  }
  check(same, "exact discrete Laplace(3): same draws");

#if !FEDSTAT_SELFTEST_CORE  // 4.8 KiB of table and scratch: not within the Cortex-M0's 16 KiB
  // The tabulated sampler: a table built with software doubles, decisions still exact and the
  // bits they read independent of the table's rounding. λ = 100 (two draws of a Poisson(100)
  // table, 2.8 KiB + 2 KiB of scratch), then λ = 10 (a Poisson(20) draw split by a popcount) in
  // the same memory, on the same bits.
  static noise::PoissonThreshold table[384];
  static uint64_t scratch[256];
  auto sizes = noise::TabulatedSkellamSampler::sizes_for(noise::Rational{100, 1});
  auto split_sizes = noise::TabulatedSkellamSampler::sizes_for(noise::Rational{10, 1});
  static SeededStream stream8(counting_seed(), 8);
  static RandomBits bits8(stream8);
  static noise::TabulatedSkellamSampler tabulated;
  same = sizes.ok() && sizes->table_entries <= 384 && sizes->scratch_limbs <= 256 &&
         tabulated
             .init(noise::Rational{100, 1}, Span<noise::PoissonThreshold>(table),
                   Span<uint64_t>(scratch))
             .ok();
  for (int64_t expected : golden::kTabulatedSkellam100) {
    auto v = tabulated.sample(bits8);
    same &= v.ok() && v.value() == expected;
  }
  check(same, "tabulated exact Skellam(100): same draws (table from software doubles)");
  same = split_sizes.ok() && split_sizes->table_entries <= 384 &&
         split_sizes->scratch_limbs <= 256 &&
         tabulated
             .init(noise::Rational{10, 1}, Span<noise::PoissonThreshold>(table),
                   Span<uint64_t>(scratch))
             .ok() &&
         tabulated.splits();
  int64_t batch[8];
  same = same && tabulated.sample_many(bits8, Span<int64_t>(batch)).ok();
  for (size_t i = 0; i < 8; ++i) same &= batch[i] == golden::kTabulatedSkellam10[i];
  check(same, "tabulated exact Skellam(10), split, batch: same draws");
#endif
}

// The largest sketch check_shift_sketch builds.
constexpr sketch::ShiftSketchParams kLargestSketch{3, 64, 16, 64, Seed256{}, 64};

// The checks run one after another, so the histogram's and the sketch's buffers share one
// region: the Cortex-M0 has 16 KiB of RAM.
// Each check makes its member the active one with placement new.
struct HistogramBuffers {
  histogram::SparseEntry table[256];
  uint8_t blob[histogram::SparseHistogram::serialized_bytes(256)];
};
struct SketchBuffers {
  alignas(8) uint8_t memory[sketch::shift_sketch_memory_bytes(kLargestSketch)];
  uint8_t report[sketch::shift_sketch_report_bytes(kLargestSketch, 16)];
};
union SharedScratch {
  SharedScratch() : sketch() {}
  HistogramBuffers histogram;
  SketchBuffers sketch;
};
SharedScratch g_scratch;

void check_histogram() {
  HistogramBuffers& buffers = *new (&g_scratch.histogram) HistogramBuffers();
  histogram::SparseEntry(&table)[256] = buffers.table;
  uint8_t(&blob)[sizeof(buffers.blob)] = buffers.blob;
  histogram::SparseHistogram h;
  bool ok = h.init(Span<histogram::SparseEntry>(table)).ok();
  for (uint32_t i = 0; i < 200; ++i) {
    ok = ok && h.add(static_cast<uint32_t>((uint64_t{i} * 2654435761u) % 1000003u), i % 7 + 1).ok();
  }
  auto size = h.serialize(MutableByteSpan(blob));
  check(
      ok && size.ok() && crc32(ByteSpan(blob, size.value() - 4)) == golden::kSparseHistogramBlobCrc,
      "sparse histogram: same blob bytes as x86-64/AArch64");
}

#if !FEDSTAT_SELFTEST_CORE
void check_analytics_tasks() {
  // KL answers: counts at the requested points, the total, and a Skellam share replayed exactly.
  static histogram::SparseEntry table[16];
  histogram::SparseHistogram h;
  bool ok = h.init(Span<histogram::SparseEntry>(table)).ok();
  for (uint32_t item : {3u, 3u, 3u, 7u, 9u, 9u}) ok = ok && h.add(item).ok();
  const uint32_t points[] = {9, 3, 4};
  int64_t counts[3];
  uint64_t total = 0;
  ok = ok &&
       tasks::answer_kl_points(h, Span<const uint32_t>(points), Span<int64_t>(counts), &total).ok();
  check(ok && counts[0] == 2 && counts[1] == 3 && counts[2] == 0 && total == 6,
        "kl answer: counts at the requested points and the total");
  noise::NoiseSampler share;
  ok = share.init({noise::NoiseKind::kSkellam, {7, 2}, 1}).ok();
  SeededStream device_stream(Seed256{}, 5), replay_stream(Seed256{}, 5);
  RandomBits device(device_stream), replay(replay_stream);
  ok = ok && tasks::answer_kl_points_noised(h, Span<const uint32_t>(points), share, device,
                                            Span<int64_t>(counts), &total)
                 .ok();
  const int64_t exact[] = {2, 3, 0};
  for (int t = 0; t < 3 && ok; ++t) ok = counts[t] == exact[t] + share.sample(replay).value();
  check(ok, "kl answer: the Dist share is the sampler's own draws");

  // Heterogeneity: x = (0.2, 0.4, 0.6) has s² = 0.08/3, so w = 37.5.
  const double x[] = {0.2, 0.4, 0.6};
  const double mean[] = {0.5, -0.1, 1.3};  // clamped to (0.5, 0, 1)
  const double zero[] = {0, 0, 0};
  double first[8], second[2];
  ok = tasks::heterogeneity_round1(Span<const double>(x), {}, Span<double>(first)).ok() &&
       tasks::heterogeneity_round2(Span<const double>(x), Span<const double>(mean),
                                   Span<const double>(zero), {}, Span<double>(second))
           .ok();
  check(ok && fabs(first[6] - 37.5) < 1e-9 && fabs(first[4] - 15) < 1e-9 &&
            fabs(second[0] - 0.41) < 1e-12 && fabs(second[1] - 21) < 1e-9,
        "heterogeneity: both rounds' contributions on the device");
}

Status counter_bytes(void* context, MutableByteSpan out) {
  uint8_t* counter = static_cast<uint8_t*>(context);
  for (size_t i = 0; i < out.size(); ++i) out[i] = (*counter)++;
  return Status();
}

void check_secagg_crypto() {
  // X25519 (RFC 7748 §6.1) with mbedTLS's bignum running from the SDK's static pool.
  uint8_t counter = 0, alice[32], pub[32], shared[32];
  memcpy(alice, golden::kX25519AlicePrivate, 32);
  crypto::x25519_clamp(Span<uint8_t>(alice, 32));
  bool ok =
      crypto::x25519_public_key(ByteSpan(alice, 32), Span<uint8_t>(pub, 32), counter_bytes,
                                &counter)
          .ok() &&
      memcmp(pub, golden::kX25519AlicePublic, 32) == 0 &&
      crypto::x25519_shared_secret(ByteSpan(alice, 32), ByteSpan(golden::kX25519BobPublic, 32),
                                   Span<uint8_t>(shared, 32), counter_bytes, &counter)
          .ok() &&
      memcmp(shared, golden::kX25519Shared, 32) == 0;
  check(ok, "X25519: RFC 7748 public key and shared secret (heap-free mbedTLS pool)");
  uint8_t ikm[22], salt[13], info[10], okm[42];
  memset(ikm, 0x0b, sizeof(ikm));
  for (int i = 0; i < 13; ++i) salt[i] = static_cast<uint8_t>(i);
  for (int i = 0; i < 10; ++i) info[i] = static_cast<uint8_t>(0xf0 + i);
  ok = crypto::hkdf_sha256(ByteSpan(salt), ByteSpan(ikm), ByteSpan(info), MutableByteSpan(okm))
           .ok() &&
       memcmp(okm, golden::kHkdfOkm, 42) == 0;
  check(ok, "HKDF-SHA256: RFC 5869 test case 1");
  uint8_t key[32], iv[12], sealed[32], tag[16], opened[32];
  for (int i = 0; i < 32; ++i) key[i] = static_cast<uint8_t>(i);
  for (int i = 0; i < 12; ++i) iv[i] = static_cast<uint8_t>(100 + i);
  const char aad[] = "fedstat secagg";
  const char text[] = "Shamir shares of b_u and s_u^SK!";
  const ByteSpan aad_span(reinterpret_cast<const uint8_t*>(aad), 14);
  ok = crypto::aes256_gcm_seal(ByteSpan(key), ByteSpan(iv), aad_span,
                               ByteSpan(reinterpret_cast<const uint8_t*>(text), 32),
                               MutableByteSpan(sealed), MutableByteSpan(tag))
           .ok() &&
       memcmp(sealed, golden::kGcmCiphertext, 32) == 0 && memcmp(tag, golden::kGcmTag, 16) == 0;
  sealed[0] ^= 1;
  ok = ok && crypto::aes256_gcm_open(ByteSpan(key), ByteSpan(iv), aad_span, ByteSpan(sealed),
                                     ByteSpan(tag), MutableByteSpan(opened))
                     .code() == StatusCode::kDataLoss;
  check(ok, "AES-256-GCM: same bytes as the host; a flipped bit fails authentication");

  // Shamir 3-of-5 and a mask that cancels: the device's half of secure aggregation's math.
  secagg::ShamirDealer dealer;
  secagg::ShamirShare shares[5];
  ok = dealer.init(ByteSpan(golden::kX25519Shared, 32), 3, ByteSpan(golden::kX25519BobPublic, 32))
           .ok();
  for (uint32_t i = 0; i < 5 && ok; ++i) ok = dealer.share_for(100 + i, shares[i]).ok();
  uint8_t secret[32];
  ok = ok &&
       secagg::shamir_reconstruct(Span<const secagg::ShamirShare>(shares + 2, 3), 3,
                                  MutableByteSpan(secret))
           .ok() &&
       memcmp(secret, golden::kX25519Shared, 32) == 0;
  uint64_t v[70] = {};
  ok = ok &&
       secagg::apply_mask(ByteSpan(secret), ByteSpan(alice, 32), secagg::MaskKind::kSelf, false, 64,
                          Span<uint64_t>(v))
           .ok() &&
       v[0] != 0 &&
       secagg::apply_mask(ByteSpan(secret), ByteSpan(alice, 32), secagg::MaskKind::kSelf, true, 64,
                          Span<uint64_t>(v))
           .ok();
  for (uint64_t w : v) ok = ok && w == 0;
  check(ok, "secagg: Shamir 3-of-5 round trip and a cancelling 64-bit mask");
}

// Device credentials: RFC 6979 appendix A.2.5 (P-256, SHA-256, message "sample"), the same
// known answer as tests/unit/credential/device_credential_test.cpp, from the static pool.
void check_credentials() {
  static const uint8_t kPrivate[32] = {0xC9, 0xAF, 0xA9, 0xD8, 0x45, 0xBA, 0x75, 0x16,
                                       0x6B, 0x5C, 0x21, 0x57, 0x67, 0xB1, 0xD6, 0x93,
                                       0x4E, 0x50, 0xC3, 0xDB, 0x36, 0xE8, 0x9B, 0x12,
                                       0x7B, 0x8A, 0x62, 0x2B, 0x12, 0x0F, 0x67, 0x21};
  static const uint8_t kPublicX[32] = {0x60, 0xFE, 0xD4, 0xBA, 0x25, 0x5A, 0x9D, 0x31,
                                       0xC9, 0x61, 0xEB, 0x74, 0xC6, 0x35, 0x6D, 0x68,
                                       0xC0, 0x49, 0xB8, 0x92, 0x3B, 0x61, 0xFA, 0x6C,
                                       0xE6, 0x69, 0x62, 0x2E, 0x60, 0xF2, 0x9F, 0xB6};
  static const uint8_t kSignature[64] = {
      0xEF, 0xD4, 0x8B, 0x2A, 0xAC, 0xB6, 0xA8, 0xFD, 0x11, 0x40, 0xDD, 0x9C, 0xD4,
      0x5E, 0x81, 0xD6, 0x9D, 0x2C, 0x87, 0x7B, 0x56, 0xAA, 0xF9, 0x91, 0xC3, 0x4D,
      0x0E, 0xA8, 0x4E, 0xAF, 0x37, 0x16, 0xF7, 0xCB, 0x1C, 0x94, 0x2D, 0x65, 0x7C,
      0x41, 0xD4, 0x36, 0xC7, 0xA1, 0xB6, 0xE2, 0x9F, 0x65, 0xF3, 0xE9, 0x00, 0xDB,
      0xB9, 0xAF, 0xF4, 0x06, 0x4D, 0xC4, 0xAB, 0x2F, 0x84, 0x3A, 0xCD, 0xA8};
  const size_t pool_before = crypto::mbedtls_pool_high_water();
  const uint8_t message[] = {'s', 'a', 'm', 'p', 'l', 'e'};
  uint8_t digest[32], pub[credential::kPublicKeyBytes], signature[credential::kSignatureBytes];
  SeededStream blinding(counting_seed());
  bool ok =
      crypto::sha256(ByteSpan(message), Span<uint8_t>(digest)).ok() &&
      credential::public_key_of(ByteSpan(kPrivate), blinding, MutableByteSpan(pub)).ok() &&
      pub[0] == 0x04 && memcmp(pub + 1, kPublicX, 32) == 0 &&
      credential::sign_digest(ByteSpan(kPrivate), ByteSpan(digest), MutableByteSpan(signature))
          .ok() &&
      memcmp(signature, kSignature, 64) == 0 &&
      credential::verify_digest(ByteSpan(pub), ByteSpan(digest), ByteSpan(signature)).ok();
  digest[0] ^= 1;
  ok = ok &&
       credential::verify_digest(ByteSpan(pub), ByteSpan(digest), ByteSpan(signature)).code() ==
           StatusCode::kPermissionDenied;
  check(ok, "ECDSA P-256: RFC 6979 A.2.5 signature, verify, a flipped digest bit refused");
  printf("  info  mbedTLS pool peak %u bytes before the credential checks, %u after\n",
         static_cast<unsigned>(pool_before),
         static_cast<unsigned>(crypto::mbedtls_pool_high_water()));
}
#endif

void check_shift_sketch() {
  // The same sketches as tests/unit/sketch/shift_sketch_test.cpp SameBytesOnEveryArchitecture:
  // directly, and through a 64-slot pre-aggregation buffer.
  SketchBuffers& buffers = *new (&g_scratch.sketch) SketchBuffers();
  uint8_t(&memory)[sizeof(buffers.memory)] = buffers.memory;
  uint8_t(&report)[sizeof(buffers.report)] = buffers.report;
  static sketch::ShiftSketch s;
  for (uint32_t slots : {0u, 64u}) {
    sketch::ShiftSketchParams p;
    p.rows = 3;
    p.width = 64;
    p.heap_capacity = 16;
    p.k = 64;
    for (int i = 0; i < 32; ++i) p.seed.bytes[i] = static_cast<uint8_t>(7 * 31 + i);
    p.buffer_slots = slots;
    bool ok = s.init(p, MutableByteSpan(memory, sketch::shift_sketch_memory_bytes(p))).ok();
    for (uint32_t i = 0; i < 400 && ok; ++i) {
      ok = s.add((i * 2654435761u) % 1000003u, i % 9 + 1).ok();  // 32-bit wrap, as the unit test
    }
    auto size = s.serialize(MutableByteSpan(report));
    const uint32_t expected =
        slots == 0 ? golden::kShiftSketchReportCrc : golden::kShiftSketchBufferedReportCrc;
    check(ok && size.ok() && crc32(ByteSpan(report, size.value() - 4)) == expected,
          slots == 0
              ? "shift sketch: same report bytes as x86-64/AArch64 (portable weights, "
                "int64 counters)"
              : "shift sketch through a 64-slot buffer: same report bytes as x86-64/AArch64");
  }
  // The weights alone, at 13 values of k (tests/unit/sketch/sampling_weight_test.cpp): software
  // doubles here, SSE2 and AArch64 there, no fused multiply-add anywhere.
  Crc32 crc;
  for (uint32_t k : golden::kWeightTestK) {
    const sketch::SamplingWeight weight(k);
    for (size_t i = 0; i < golden::kWeightTestHashes; ++i) {
      uint8_t bytes[8];
      store_le64(bytes, weight.fixed(golden::weight_test_hash(i)));
      crc.update(ByteSpan(bytes, 8));
    }
  }
  check(crc.value() == golden::kSamplingWeightCrc,
        "sampling weights: the same 13 x 1026 values as x86-64/AArch64");
}

#if !FEDSTAT_SELFTEST_CORE
using math::bits_of;
using math::double_of;

// sdk/base/portable_math.h against newlib's libm (fdlibm's e_exp, e_log, e_sqrt): √ and exp bit
// for bit (the same operations), ln within 1 ulp; then the privacy ledger's conversions that use
// them give the doubles pinned on x86-64.
void check_portable_math() {
  bool sqrt_same = true, exp_same = true, log_close = true;
  for (uint64_t i = 1; i <= 20000; ++i) {
    const uint64_t h = golden::splitmix64_output(7, i);
    const double positive = double_of((h >> 1) % 0x7FF0000000000000ull);  // finite, >= 0
    sqrt_same = sqrt_same && bits_of(math::portable_sqrt(positive)) == bits_of(sqrt(positive));
    if (positive > 0) {
      const uint64_t a = bits_of(math::portable_log(positive)), b = bits_of(log(positive));
      log_close = log_close && (a > b ? a - b : b - a) <= 1;
    }
    // Uniform over [−745, 709]: every scale of result, subnormal ones included.
    const double x = -745.0 + 1454.0 * (static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0));
    exp_same = exp_same && bits_of(math::portable_exp(x)) == bits_of(exp(x));
  }
  // And every branch of exp: |x| < 2^-28, |x| ≤ ½ ln 2 (k = 0), < 1.5 ln 2 (k = ±1), and the
  // edges of overflow, of subnormal results and of underflow, 400 doubles around each.
  const double centres[] = {0.0,   1e-9,   0.3466, -0.3466, 0.5, -0.5, 1.0397, -1.0397, 1.05,
                            -1.05, 709.78, -708.4, -745.13, 1.0, -1.0, 20.0,   -20.0};
  for (double centre : centres) {
    for (uint64_t i = 1; i <= 400; ++i) {
      const double spread = centre == 0.0 ? 1e-8 : 1e-3;
      const uint64_t h = golden::splitmix64_output(11, i);
      const double x =
          centre + spread * (static_cast<double>(h >> 11) * (2.0 / 9007199254740992.0) - 1.0);
      exp_same = exp_same && bits_of(math::portable_exp(x)) == bits_of(exp(x));
    }
  }
  check(sqrt_same, "portable sqrt: the same bits as newlib's on 20000 doubles");
  check(exp_same, "portable exp: the same bits as newlib's on 26800 doubles, every branch");
  check(log_close, "portable log: within 1 ulp of newlib's on 20000 doubles");
  bool pinned = true;
  for (const golden::RdpToDpCase& c : golden::kRdpToDp) {
    const Result<double> eps = privacy::rdp_to_dp(c.alpha, c.rdp, c.delta);
    pinned = pinned && eps.ok() && bits_of(eps.value()) == c.epsilon_bits;
  }
  for (const golden::LaplaceDeltaCase& c : golden::kTruncatedLaplaceDelta) {
    const Result<double> d =
        privacy::truncated_discrete_laplace_delta(c.scale, c.bound, c.sensitivity);
    pinned = pinned && d.ok() && bits_of(d.value()) == c.delta_bits;
  }
  for (const golden::KlSensitivityCase& c : golden::kKlSensitivity) {
    pinned = pinned && bits_of(tasks::kl_answer_sensitivity(c.m1, c.m2).l2) == c.l2_bits;
  }
  check(pinned, "ledger conversions (rdp_to_dp, Laplace delta, KL sensitivity): x86-64's bits");
}

void check_model_update() {
  // 16 unit-norm examples in 3 dimensions, labelled by the sign of the first feature.
  static float features[16 * 3];
  static int8_t labels[16];
  for (int i = 0; i < 16; ++i) {
    const float a = static_cast<float>(i - 8) / 8.0f, b = 0.3f, c = (i % 2) ? 0.2f : -0.2f;
    const float norm = sqrtf(a * a + b * b + c * c) + 0.01f;
    features[3 * i] = a / norm;
    features[3 * i + 1] = b / norm;
    features[3 * i + 2] = c / norm;
    labels[i] = a >= 0 ? 1 : -1;
  }
  const tasks::Examples examples{Span<const float>(features), Span<const int8_t>(labels), 3};
  tasks::ModelUpdateConfig config;
  config.quantise.gamma = 1 << 16;
  config.quantise.clip_norm = 50;
  config.examples_per_client = 16;
  static uint8_t memory[tasks::model_update_memory_bytes(16, 3)];
  static SeededStream stream(counting_seed(), 9);
  static RandomBits bits(stream);
  const double global[3] = {0, 0, 0};
  double local[3];
  bool ok;
  {
    static SeededStream same(counting_seed(), 9);
    static RandomBits same_bits(same);
    Arena arena{MutableByteSpan(memory)};
    ok = tasks::train_logistic(examples, Span<const double>(global), config.trainer, same_bits,
                               arena, Span<double>(local))
             .ok();
  }
  Arena arena{MutableByteSpan(memory)};
  uint32_t report[4];  // D = 4 with rotation
  ok = ok && tasks::model_update_report(examples, Span<const double>(global), config, nullptr, bits,
                                        arena, Span<uint32_t>(report))
                 .ok();
  uint64_t sum[4] = {report[0], report[1], report[2], report[3]};
  double work[4], change[3], model[3] = {0, 0, 0};
  ok = ok && tasks::apply_aggregate(Span<const uint64_t>(sum), 1, config, Span<double>(work),
                                    Span<double>(change), Span<double>(model))
                 .ok();
  for (int k = 0; k < 3; ++k) ok = ok && fabs(model[k] - local[k]) < 1e-3;
  check(ok && local[0] > 0, "model update: train, rotate, round, decode on the device");
}
#endif

#if !FEDSTAT_SELFTEST_CORE
void check_platform() {
  platform::baremetal::Hooks none;
  platform::baremetal::install_hooks(none);
  static Csprng unseeded;
  const Status missing = unseeded.init();
  // Without messages (FEDSTAT_STATUS_MESSAGES=OFF, the cortex-m4 preset) the code is all there is.
  const bool said = FEDSTAT_STATUS_MESSAGES
                        ? strstr(missing.message(), "entropy hook") != nullptr
                        : strcmp(missing.message(), Status::kMessageLeftOut) == 0;
  check(missing.code() == StatusCode::kUnavailable && said,
        "no entropy hook: a clear kUnavailable");

  platform::baremetal::install_hooks(platform::baremetal::semihosting_hooks());
  static Csprng csprng;
  uint8_t a[32], b[32];
  check(csprng.init().ok() && csprng.fill(MutableByteSpan(a)).ok() &&
            csprng.fill(MutableByteSpan(b)).ok() && memcmp(a, b, 32) != 0,
        "CSPRNG: CTR_DRBG seeded through the semihosting entropy hook");

  const uint64_t t0 = platform::monotonic_micros();
  const uint64_t t1 = platform::monotonic_micros();
  check(t1 >= t0, "clock: monotonic through SYS_CLOCK");

  uint8_t payload[100];
  for (size_t i = 0; i < sizeof(payload); ++i) payload[i] = static_cast<uint8_t>(i * 3);
  uint8_t loaded[128];
  auto n = platform::save_blob("cortex_m4_selftest.blob", ByteSpan(payload)).ok()
               ? platform::load_blob("cortex_m4_selftest.blob", MutableByteSpan(loaded))
               : Result<size_t>(internal_error("save failed"));
  check(n.ok() && n.value() == sizeof(payload) && memcmp(loaded, payload, sizeof(payload)) == 0,
        "storage: blob saved and reloaded through semihosting files");
  // Overwrite the stored frame with one corrupted byte through the raw hook.
  uint8_t header_and_garbage[8 + 100 + 4];
  memset(header_and_garbage, 0, sizeof(header_and_garbage));
  auto raw = platform::baremetal::installed_hooks().read_at("cortex_m4_selftest.blob", 0,
                                                            MutableByteSpan(header_and_garbage));
  header_and_garbage[50] ^= 0x01;
  const ByteSpan part(header_and_garbage);
  const bool rewritten = raw.ok() && platform::baremetal::installed_hooks()
                                         .write_atomically("cortex_m4_selftest.blob", &part, 1)
                                         .ok();
  n = platform::load_blob("cortex_m4_selftest.blob", MutableByteSpan(loaded));
  check(rewritten && n.status().code() == StatusCode::kDataLoss,
        "storage: a flipped byte is caught as kDataLoss");
  check(platform::remove_blob("cortex_m4_selftest.blob").ok(), "storage: blob removed");

  // A stored length field of 2^32 − 12 (8 + n + 4 wraps to 0 in 32 bits) is corruption.
  uint8_t forged[16] = {'F', 'S', 'B', '1'};
  store_le32(forged + 4, 0xFFFFFFF4u);
  const ByteSpan forged_part(forged);
  n = platform::baremetal::installed_hooks()
              .write_atomically("cortex_m4_selftest.blob", &forged_part, 1)
              .ok()
          ? platform::load_blob("cortex_m4_selftest.blob", MutableByteSpan(loaded))
          : Result<size_t>(internal_error("write failed"));
  check(n.status().code() == StatusCode::kDataLoss &&
            platform::remove_blob("cortex_m4_selftest.blob").ok(),
        "storage: a length field of 2^32 - 12 is caught as kDataLoss");
  // A storage driver that claims to have read more than it was asked for is refused.
  platform::baremetal::Hooks lying = platform::baremetal::semihosting_hooks();
  lying.size_of = [](const char*) -> Result<size_t> { return size_t{16}; };
  lying.read_at = [](const char*, size_t offset, MutableByteSpan out) -> Result<size_t> {
    if (offset == 0 && out.size() >= 8) {
      memcpy(out.data(), "FSB1\x04\0\0\0", 8);
      return size_t{8};
    }
    return out.size() + 1;
  };
  platform::baremetal::install_hooks(lying);
  n = platform::load_blob("any", MutableByteSpan(loaded));
  platform::baremetal::install_hooks(platform::baremetal::semihosting_hooks());
  check(n.status().code() == StatusCode::kInternal,
        "storage: a driver reading more than asked is refused");

  const auto connection = platform::transport_connect("server:443", 100);
  check(connection.status().code() == StatusCode::kUnavailable,
        "transport: no hook installed gives kUnavailable");
}
#endif

void check_wire() {
  wire::Envelope hello = wire::make_envelope();
  hello.which_body = fedstat_v1_Envelope_client_hello_tag;
  hello.body.client_hello.client_id = 42;
  strcpy(hello.body.client_hello.sdk_version, "0.1.0");
  uint8_t buffer[wire::kMaxFrameBytes];
  auto size = wire::encode_envelope(hello, MutableByteSpan(buffer));
  const uint8_t expected[] = {0x08, 0x06, 0x12, 0x09, 0x08, 0x2a, 0x12,
                              0x05, 0x30, 0x2e, 0x31, 0x2e, 0x30};
  check(size.ok() && size.value() == sizeof(expected) &&
            memcmp(buffer, expected, sizeof(expected)) == 0,
        "nanopb: Envelope encodes to the same bytes as on the host");
  auto frame = wire::encode_frame(hello, MutableByteSpan(buffer));
  wire::Envelope decoded{};
  auto result = frame.ok() ? wire::decode_frame(ByteSpan(buffer, frame.value()), decoded)
                           : Result<wire::FrameResult>(frame.status());
  check(result.ok() && result->complete && decoded.body.client_hello.client_id == 42,
        "nanopb: frame round trip");
}

// The hostile inputs of tests/common/malformed_inputs.h, here with a 32-bit size_t.
#if !FEDSTAT_SELFTEST_CORE
void check_device_reports() {
  // Whole reports as the Client sends them, for four tasks (tests/common/device_reports.h).
  using golden_reports::Kind;
  const struct {
    Kind kind;
    uint32_t crc;
    const char* what;
  } cases[] = {
      {Kind::kDataShift, golden::kDeviceReportCrcDataShift,
       "device report, data_shift (stability histogram + sketch): same bytes as x86-64/AArch64"},
      {Kind::kDataShiftDist, golden::kDeviceReportCrcDataShiftDist,
       "device report, data_shift dist (hashed buckets + Polya shares): same bytes as "
       "x86-64/AArch64"},
      {Kind::kKlAnswers, golden::kDeviceReportCrcKlAnswers,
       "device report, kl (Skellam shares): same bytes as x86-64/AArch64"},
      {Kind::kModelUpdate, golden::kDeviceReportCrcModelUpdate,
       "device report, model_update (trainer, rotation, shares): same bytes as x86-64/AArch64"},
  };
  for (const auto& c : cases) {
    const Result<uint32_t> crc = golden_reports::report_crc(c.kind);
    check(crc.ok() && crc.value() == c.crc, c.what);
  }
  // A DIST data-shift task at the demo's size (issue 41: 2048 buckets of 32-bit words) among the
  // firmware round test's 4 devices: the Client needs 8·B bytes of contribution and the roster,
  // no scratch, within the firmware's 18 KiB arena (examples/cortex_m_firmware/main.cpp,
  // kClientMemoryBytes = 18432).
  static fedstat_v1_Task task;
  static uint64_t unused[8 + 24];
  golden_reports::make_task(Kind::kDataShiftDist, task, unused);
  task.max_clients = 4;
  task.parameters.data_shift.buckets = task.vector_length = 2048;
  const Result<size_t> need = client::Client::memory_bytes(task, 256);
  check(need.ok() && need.value() == 8 * 2048 + 4 * sizeof(secagg::SecAggPeer) &&
            need.value() <= 18432,
        "DIST data shift, 2048 buckets, 4 devices: the Client's memory fits the firmware's 18 KiB");
  printf("        (%lu bytes: 8 x 2048 + 4 x %lu)\n",
         static_cast<unsigned long>(need.ok() ? need.value() : 0),
         static_cast<unsigned long>(sizeof(secagg::SecAggPeer)));
}
#endif

#if !FEDSTAT_SELFTEST_CORE
void check_malformed_inputs() {
  size_t count = 0;
  const malformed::Case* cases = malformed::cases(count);
  for (size_t i = 0; i < count; ++i) check(cases[i].refused(), cases[i].name);
}
#endif

unsigned long distance(const uint32_t* from, const uint32_t* to) {
  return static_cast<unsigned long>(reinterpret_cast<const char*>(to) -
                                    reinterpret_cast<const char*>(from));
}

}  // namespace

int main() {
#if FEDSTAT_SELFTEST_CORE
  printf("fedstat Cortex-M0 core self-test (QEMU microbit, semihosting)\n");
#else
  printf("fedstat Cortex-M4 self-test (QEMU mps2-an386, semihosting)\n");
#endif
  check_status_and_arena();
  check_hash_and_crc();
  check_crypto_and_streams();
  check_noise();
  check_histogram();
#if !FEDSTAT_SELFTEST_CORE
  check_analytics_tasks();
  check_secagg_crypto();
  check_credentials();
#endif
  check_shift_sketch();
#if !FEDSTAT_SELFTEST_CORE
  check_portable_math();
  check_model_update();
  check_platform();
#endif
  check_wire();
#if !FEDSTAT_SELFTEST_CORE
  check_device_reports();
  check_malformed_inputs();
#endif
  printf("image sizes: .text %lu bytes, .data %lu bytes, .bss %lu bytes; stack %lu bytes\n",
         distance(&__text_start__, &__etext), distance(&__data_start__, &__data_end__),
         distance(&__bss_start__, &__bss_end__), distance(&__StackLimit, &__StackTop));
  printf(
      "object sizes: Csprng %u, SeededStream %u, RandomBits %u, SkellamSampler %u, Arena %u, "
      "Envelope %u bytes\n",
      static_cast<unsigned>(sizeof(Csprng)), static_cast<unsigned>(sizeof(SeededStream)),
      static_cast<unsigned>(sizeof(RandomBits)),
      static_cast<unsigned>(sizeof(noise::SkellamSampler)), static_cast<unsigned>(sizeof(Arena)),
      static_cast<unsigned>(sizeof(wire::Envelope)));
  printf("selftest: %u passed, %u failed\n", g_passed, g_failed);
  return static_cast<int>(g_failed);
}
