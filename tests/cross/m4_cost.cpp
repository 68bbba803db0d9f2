// The device-side cost on the Cortex-M4 (issue 14 item 5): instructions per sketch update and per
// noise sample, counted under QEMU with -icount shift=0 (one instruction = one nanosecond of
// virtual time) by the board's CMSDK APB timer 0, which runs at the 25 MHz peripheral clock: each
// timer tick is 40 instructions. QEMU has no DWT cycle counter, so these are emulated instruction
// counts, not cycles: a real M4 takes about 1 cycle per instruction plus flash wait states,
// multiply-accumulate and division latencies, and branch refills.
//
// Prints one "cost: <what> <instructions per operation> (<operations>)" line per measurement and
// "cost: done"; returns 0 when every measured operation succeeded.
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "platform/baremetal/hooks.h"
#include "sdk/base/crypto.h"
#include "sdk/base/csprng.h"
#include "sdk/base/random_bits.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/credential/device_credential.h"
#include "sdk/noise/add_noise.h"
#include "sdk/noise/discrete_laplace.h"
#include "sdk/noise/tabulated_poisson.h"
#include "sdk/sketch/shift_sketch.h"
#include "sdk/sketch/sketch_budget.h"

using namespace fedstat;  // NOLINT: a measurement program

namespace {

// CMSDK APB timer 0: a 32-bit down-counter at the 25 MHz peripheral clock.
struct CmsdkTimer {
  volatile uint32_t control;  // bit 0: enable
  volatile uint32_t value;
  volatile uint32_t reload;
  volatile uint32_t interrupts;
};
CmsdkTimer& timer0() {
  return *reinterpret_cast<CmsdkTimer*>(0x40000000u);
}
constexpr uint32_t kInstructionsPerTick = 40;  // 40 ns per tick at -icount shift=0

void start_timer() {
  timer0().control = 0;
  timer0().reload = 0xFFFFFFFFu;
  timer0().value = 0xFFFFFFFFu;
  timer0().control = 1;
}
uint32_t ticks_since_start() {
  return 0xFFFFFFFFu - timer0().value;
}

bool g_ok = true;

Status blinding(void* context, MutableByteSpan out) {
  return static_cast<Csprng*>(context)->fill(out);
}

void report(const char* what, uint32_t ticks, uint32_t operations) {
  // Integer arithmetic: newlib-nano's printf has no floating point.
  const uint64_t per = (uint64_t{ticks} * kInstructionsPerTick + operations / 2) / operations;
  printf("cost: %s %lu (%lu)\n", what, static_cast<unsigned long>(per),
         static_cast<unsigned long>(operations));
}

// A skewed key stream (Zipf-like, s = 1.2, over 2^20 ids, scattered by a multiplicative hash),
// drawn before timing: the updates, not the generator, are measured.
constexpr uint32_t kKeys = 2048;
uint32_t g_keys[kKeys];

void make_keys(RandomBits& bits) {
  for (uint32_t& key : g_keys) {
    const Result<uint64_t> r = bits.uniform_below(uint64_t{1} << 32);
    const double u = (static_cast<double>(r.ok() ? r.value() : 0) + 1.0) / 4294967297.0;
    const double rank = floor(pow(u, -1.0 / 0.2));  // Pareto(0.2) tail ~ Zipf(1.2)
    const uint32_t id = rank > 1048575.0 ? 1048575u : static_cast<uint32_t>(rank);
    key = id * 2654435761u;
  }
}

void measure_sketch(size_t budget_bytes, uint32_t buffer_slots) {
  alignas(8) static uint8_t memory[20480];
  static sketch::ShiftSketch s;
  Result<sketch::ShiftSketchParams> p = sketch::params_for_budget(budget_bytes, Seed256{});
  if (!p.ok()) {
    g_ok = false;
    return;
  }
  p.value().buffer_slots = buffer_slots;
  const size_t bytes = sketch::shift_sketch_memory_bytes(p.value());
  if (bytes > sizeof(memory) || !s.init(p.value(), MutableByteSpan(memory, bytes)).ok()) {
    g_ok = false;
    return;
  }
  constexpr uint32_t kRepeats = 8;
  start_timer();
  for (uint32_t r = 0; r < kRepeats; ++r) {
    for (uint32_t key : g_keys) g_ok &= s.add(key, 1).ok();
  }
  const uint32_t ticks = ticks_since_start();
  char what[96];
  snprintf(what, sizeof(what), "sketch_update budget=%u rows=%lu width=%lu heap=%lu buffer=%lu",
           static_cast<unsigned>(budget_bytes), static_cast<unsigned long>(p.value().rows),
           static_cast<unsigned long>(p.value().width),
           static_cast<unsigned long>(p.value().heap_capacity),
           static_cast<unsigned long>(buffer_slots));
  report(what, ticks, kRepeats * kKeys);
}

void measure_noise(const char* what, const noise::NoiseSpec& spec, RandomBits& bits,
                   uint32_t samples) {
  static noise::NoiseSampler sampler;
  if (!sampler.init(spec).ok()) {
    g_ok = false;
    return;
  }
  start_timer();
  for (uint32_t i = 0; i < samples; ++i) g_ok &= sampler.sample(bits).ok();
  report(what, ticks_since_start(), samples);
}

}  // namespace

int main() {
  platform::baremetal::install_hooks(platform::baremetal::semihosting_hooks());
  static Csprng csprng;  // the production bit source, seeded from the host's /dev/urandom
  if (!csprng.init().ok()) {
    printf("cost: no entropy\n");
    return 1;
  }
  static uint8_t buffer[RandomBits::kLargeBufferBytes];
  static RandomBits bits(csprng, MutableByteSpan(buffer, sizeof(buffer)));
  make_keys(bits);

  // Calibration: a loop of exactly two instructions per iteration (subs, bne) must count as 2;
  // otherwise the timer is not counting instructions (no -icount shift=0) and nothing here holds.
  constexpr uint32_t kLoops = 100000;
  start_timer();
  uint32_t n = kLoops;
  __asm__ volatile("1: subs %0, %0, #1\n bne 1b" : "+r"(n) : : "cc");
  const uint32_t loop_ticks = ticks_since_start();
  report("calibration_2_instruction_loop", loop_ticks, kLoops);
  const uint64_t per_hundred = uint64_t{loop_ticks} * kInstructionsPerTick * 100 / kLoops;
  if (per_hundred < 190 || per_hundred > 210) {
    printf(
        "cost: the timer does not count instructions (%lu/100 per loop): run with -icount "
        "shift=0\n",
        static_cast<unsigned long>(per_hundred));
    return 1;
  }

  measure_sketch(4096, 0);
  measure_sketch(16384, 0);
  measure_sketch(16384, 256);

  // The bit source alone: 64 random bits at a time.
  start_timer();
  for (uint32_t i = 0; i < 4096; ++i) g_ok &= bits.uniform_below(uint64_t{1} << 63).ok();
  report("csprng_64_bits", ticks_since_start(), 4096);

  measure_noise("skellam lambda=10", {noise::NoiseKind::kSkellam, {10, 1}, 1}, bits, 2048);
  measure_noise("skellam lambda=10^4", {noise::NoiseKind::kSkellam, {10000, 1}, 1}, bits, 2048);
  measure_noise("discrete_laplace scale=10", {noise::NoiseKind::kDiscreteLaplace, {10, 1}, 1}, bits,
                2048);
  // One X25519 scalar multiplication (mbedTLS's generic bignum, the static pool): what a TLS
  // handshake's ECDHE and secure aggregation's key agreement cost per key.
  uint8_t private_key[crypto::kX25519KeyBytes], public_key[crypto::kX25519KeyBytes];
  g_ok &= csprng.fill(MutableByteSpan(private_key, sizeof(private_key))).ok();
  crypto::x25519_clamp(Span<uint8_t>(private_key, sizeof(private_key)));
  start_timer();
  g_ok &=
      crypto::x25519_public_key(ByteSpan(private_key, sizeof(private_key)),
                                Span<uint8_t>(public_key, sizeof(public_key)), blinding, &csprng)
          .ok();
  report("x25519_scalar_multiplication", ticks_since_start(), 1);
  crypto::wipe(private_key, sizeof(private_key));

  // Device credentials (issue 42): one ECDSA P-256 signature (RFC 6979), one signature check and
  // one certificate check (SHA-256 + a signature check), and the pool's peak after them.
  {
    using namespace fedstat::credential;  // NOLINT: a measurement program
    static SeededStream keys(Seed256{}, 42);
    uint8_t ca_private[kPrivateKeyBytes], ca_public[kPublicKeyBytes];
    uint8_t device_private[kPrivateKeyBytes], device_public[kPublicKeyBytes];
    uint8_t digest[kDigestBytes] = {1, 2, 3}, signature[kSignatureBytes];
    static DeviceCertificate certificate;
    g_ok &= generate_key_pair(keys, MutableByteSpan(ca_private), MutableByteSpan(ca_public)).ok();
    g_ok &= generate_key_pair(keys, MutableByteSpan(device_private), MutableByteSpan(device_public))
                .ok();
    g_ok &= issue_certificate(ByteSpan(ca_private), 7, ByteSpan(device_public), certificate).ok();
    start_timer();
    g_ok &=
        sign_digest(ByteSpan(device_private), ByteSpan(digest), MutableByteSpan(signature)).ok();
    report("ecdsa_p256_sign", ticks_since_start(), 1);
    start_timer();
    g_ok &= verify_digest(ByteSpan(device_public), ByteSpan(digest), ByteSpan(signature)).ok();
    report("ecdsa_p256_verify", ticks_since_start(), 1);
    start_timer();
    g_ok &= verify_certificate(ByteSpan(ca_public), certificate).ok();
    report("device_certificate_verify", ticks_since_start(), 1);
    printf("cost: mbedtls_pool_high_water %lu\n",
           static_cast<unsigned long>(crypto::mbedtls_pool_high_water()));
  }
  printf("cost: done\n");
  return g_ok ? 0 : 1;
}
