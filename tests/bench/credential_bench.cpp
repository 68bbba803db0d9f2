// Device credentials' cost per call (sdk/credential/device_credential.h), as a ratio against one
// X25519 agreement measured in the same run (BM_X25519Agreement: secure aggregation's per-peer
// key agreement, the device's dominant public-key cost today). Measured: an ECDSA P-256 signature
// (RFC 6979), a signature check, a certificate check (one SHA-256 and one signature check),
// check_public_key alone, and a key pair. Run from a Release build:
// build/host-release/tests/bench/fedstat_credential_bench.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "sdk/base/crypto.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/credential/device_credential.h"
#include "tests/bench/same_run_reporter.h"

namespace fedstat {
namespace credential {
namespace {

Seed256 seed_of(uint8_t value) {
  Seed256 seed;
  seed.bytes[0] = value;
  return seed;
}

// A CA, a device with its certificate, and a signed digest, all from fixed seeds.
struct Fixture {
  Fixture() {
    SeededStream random(seed_of(1));
    ok = generate_key_pair(random, MutableByteSpan(ca_private), MutableByteSpan(ca_public)).ok() &&
         generate_key_pair(random, MutableByteSpan(device_private), MutableByteSpan(device_public))
             .ok() &&
         issue_certificate(ByteSpan(ca_private), 7, ByteSpan(device_public), certificate).ok() &&
         crypto::sha256(ByteSpan(ca_public), MutableByteSpan(digest)).ok() &&
         sign_digest(ByteSpan(device_private), ByteSpan(digest), MutableByteSpan(signature)).ok();
  }
  uint8_t ca_private[kPrivateKeyBytes], ca_public[kPublicKeyBytes];
  uint8_t device_private[kPrivateKeyBytes], device_public[kPublicKeyBytes];
  DeviceCertificate certificate;
  uint8_t digest[kDigestBytes], signature[kSignatureBytes];
  bool ok = false;
};

void BM_X25519Agreement(benchmark::State& state) {
  SeededStream random(seed_of(2));
  uint8_t mine[32], peer_secret[32], peer_public[32], shared[32];
  const bool ok =
      random.fill(MutableByteSpan(mine)).ok() && random.fill(MutableByteSpan(peer_secret)).ok();
  crypto::x25519_clamp(Span<uint8_t>(mine));
  crypto::x25519_clamp(Span<uint8_t>(peer_secret));
  if (!ok || !crypto::x25519_public_key(ByteSpan(peer_secret), Span<uint8_t>(peer_public),
                                        fill_from_random_source, &random)
                  .ok()) {
    state.SkipWithError("x25519 setup");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(crypto::x25519_shared_secret(ByteSpan(mine), ByteSpan(peer_public),
                                                          Span<uint8_t>(shared),
                                                          fill_from_random_source, &random));
  }
}
BENCHMARK(BM_X25519Agreement);

void BM_Sign(benchmark::State& state) {
  Fixture f;
  if (!f.ok) return state.SkipWithError("setup");
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        sign_digest(ByteSpan(f.device_private), ByteSpan(f.digest), MutableByteSpan(f.signature)));
  }
}
BENCHMARK(BM_Sign);

void BM_Verify(benchmark::State& state) {
  Fixture f;
  if (!f.ok) return state.SkipWithError("setup");
  for (auto _ : state) {
    const Status s =
        verify_digest(ByteSpan(f.device_public), ByteSpan(f.digest), ByteSpan(f.signature));
    if (!s.ok()) return state.SkipWithError("verify failed");
  }
}
BENCHMARK(BM_Verify);

void BM_VerifyCertificate(benchmark::State& state) {
  Fixture f;
  if (!f.ok) return state.SkipWithError("setup");
  for (auto _ : state) {
    const Status s = verify_certificate(ByteSpan(f.ca_public), f.certificate);
    if (!s.ok()) return state.SkipWithError("certificate failed");
  }
}
BENCHMARK(BM_VerifyCertificate);

void BM_CheckPublicKey(benchmark::State& state) {
  Fixture f;
  if (!f.ok) return state.SkipWithError("setup");
  for (auto _ : state) benchmark::DoNotOptimize(check_public_key(ByteSpan(f.device_public)));
}
BENCHMARK(BM_CheckPublicKey);

void BM_GenerateKeyPair(benchmark::State& state) {
  SeededStream random(seed_of(3));
  uint8_t private_key[kPrivateKeyBytes], public_key[kPublicKeyBytes];
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        generate_key_pair(random, MutableByteSpan(private_key), MutableByteSpan(public_key)));
  }
}
BENCHMARK(BM_GenerateKeyPair);

class RatioReporter : public bench::SameRunReporter {
 public:
  RatioReporter()
      : SameRunReporter("ratios against one X25519 agreement (BM_X25519Agreement), same run:") {}

 protected:
  std::string describe(const Run& run) override {
    if (run.run_type == Run::RT_Aggregate ? run.aggregate_name != "median" : run.repetitions > 1) {
      return "";
    }
    const double ns = run.GetAdjustedRealTime();  // ns (the default time unit)
    const std::string& function = run.run_name.function_name;
    if (function == "BM_X25519Agreement") baseline_ = ns;
    if (baseline_ <= 0) return "";
    char line[200];
    std::snprintf(line, sizeof(line), "%-24s %8.2f x X25519   %10.1f us/call\n", function.c_str(),
                  ns / baseline_, ns / 1e3);
    return line;
  }

 private:
  double baseline_ = 0;
};

}  // namespace
}  // namespace credential
}  // namespace fedstat

int main(int argc, char** argv) {
  fedstat::credential::RatioReporter reporter;
  return fedstat::bench::run_benchmarks(argc, argv, reporter);
}
