// fedstat-noise: writes samples of fedstat's exact integer noise, one per line, so anyone can
// check the samplers with their own statistics tools.
//
//   fedstat-noise DIST --n COUNT --seed S [params]
//     poisson  --lambda L     Poisson(L)
//     skellam  --lambda L     Poisson(L) − Poisson(L)
//     dlaplace --t T          P(k) ∝ exp(−|k|/T)
//     dgauss   --sigma2 V     P(k) ∝ exp(−k²/(2V))
//     polya    --t T --clients N   one client's share; N shares sum to dlaplace --t T
// --json prints one JSON object instead: {"distribution", "seed", "method", "samples": [...]}.
// Numbers are decimals ("0.25") or exact fractions ("1/3"). The seed S (an unsigned 64-bit
// integer) keys the SeededStream: seed bytes 0..7 = S little-endian, 8..31 = 0, stream 0.
// poisson and skellam take --method tabulated (default: TabulatedPoissonSampler, fast) or
// integer (PoissonSampler, small memory); both are exact, and they draw different streams.
//
// Allowed values, checked before anything is drawn (a refused value exits non-zero with a
// message saying what is allowed, and prints no sample): --n a whole number from 1 to 10^8;
// --seed a whole number from 0 to 2^64 − 1; --clients from 1 to 2^32 − 1; --lambda, --t and
// --sigma2 positive (0 adds no noise) within each sampler's limits: p and q below 2^32 in lowest
// terms, λ ≤ 2^31, and a Pólya scale T ≤ 10^4 (sdk/noise/add_noise.h).
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "host_server/tools/cli_conventions.h"
#include "host_server/tools/cli_numbers.h"
#include "host_server/tools/progress.h"
#include "sdk/base/random_bits.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/noise/add_noise.h"
#include "sdk/noise/discrete_laplace.h"
#include "sdk/noise/poisson.h"
#include "sdk/noise/tabulated_poisson.h"

using fedstat::noise::NoiseKind;
using fedstat::noise::Rational;

namespace {

constexpr uint64_t kMaxSamples = 100000000;  // 10^8 lines, about 1 GB of output at most

Rational parse_or_exit(const std::string& name, const std::string& text) {
  auto r = fedstat::noise::parse_rational(text.c_str());
  if (!r.ok()) {
    std::fprintf(stderr, "fedstat-noise: --%s %s: %s\n", name.c_str(), text.c_str(),
                 r.status().message());
    std::exit(2);
  }
  if (r->is_zero()) {
    std::fprintf(stderr, "fedstat-noise: --%s %s: must be > 0 (0 adds no noise)\n", name.c_str(),
                 text.c_str());
    std::exit(2);
  }
  return r.value();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fedstat-noise: samples of fedstat's exact integer noise, one per line"};
  fedstat::tools::apply_conventions(
      app, "fedstat-noise",
      {"fedstat-noise skellam --lambda 10000 --n 5 --seed 1",
       "fedstat-noise dlaplace --t 1/3 --n 1000 --seed 7 > samples.txt",
       "fedstat-noise polya --t 2 --clients 100 --n 10 --seed 3 --json"});
  std::string dist;
  uint64_t count = 0;
  uint64_t seed = 0;
  std::string lambda, t, sigma2;
  uint32_t clients = 0;
  std::string method = "tabulated";
  app.add_option("--method", method, "poisson/skellam sampler: tabulated or integer")
      ->check(CLI::IsMember({"tabulated", "integer"}))
      ->capture_default_str();
  app.add_option("DIST", dist, "poisson | skellam | dlaplace | dgauss | polya")
      ->required()
      ->check(CLI::IsMember({"poisson", "skellam", "dlaplace", "dgauss", "polya"}));
  app.add_option("--n", count, "number of samples (1 to 10^8)")
      ->required()
      ->check(fedstat::tools::whole_number(1, kMaxSamples));
  app.add_option("--seed", seed, "unsigned 64-bit seed of the deterministic stream")
      ->required()
      ->check(fedstat::tools::whole_number(0, UINT64_MAX));
  app.add_option("--lambda", lambda, "Poisson mean (poisson, skellam), > 0, at most 2^31");
  app.add_option("--t", t, "scale T (dlaplace, polya), > 0; polya at most 10^4");
  app.add_option("--sigma2", sigma2, "variance sigma^2 (dgauss), > 0");
  app.add_option("--clients", clients,
                 "number of clients whose shares sum to dlaplace (polya), 1 to 2^32 - 1")
      ->check(fedstat::tools::whole_number(1, UINT32_MAX));
  bool json = false;
  app.add_flag(
      "--json", json,
      "print one JSON object: {\"distribution\", \"seed\", \"method\", \"samples\": [...]}");
  if (auto code = fedstat::tools::parse_command_line(app, argc, argv)) return *code;

  auto need = [&](const std::string& value, const char* option) {
    if (value.empty()) {
      std::fprintf(stderr, "fedstat-noise: %s needs --%s\n", dist.c_str(), option);
      std::exit(2);
    }
    return parse_or_exit(option, value);
  };
  fedstat::noise::NoiseSpec spec;
  bool poisson = false;
  if (dist == "poisson" || dist == "skellam") {
    spec = {NoiseKind::kSkellam, need(lambda, "lambda"), 1};
    poisson = dist == "poisson";
  } else if (dist == "dlaplace") {
    spec = {NoiseKind::kDiscreteLaplace, need(t, "t"), 1};
  } else if (dist == "dgauss") {
    spec = {NoiseKind::kDiscreteGaussian, need(sigma2, "sigma2"), 1};
  } else {
    if (clients == 0) {
      std::fprintf(stderr, "fedstat-noise: polya needs --clients N (N >= 1)\n");
      return 2;
    }
    spec = {NoiseKind::kPolyaShare, need(t, "t"), clients};
  }

  fedstat::Seed256 key;
  for (int i = 0; i < 8; ++i) key.bytes[i] = static_cast<uint8_t>(seed >> (8 * i));
  fedstat::SeededStream stream(key, 0);
  fedstat::RandomBits bits(stream);
  fedstat::noise::NoiseSampler sampler;
  fedstat::noise::PoissonSampler poisson_sampler;
  fedstat::noise::TabulatedPoissonSampler tabulated;
  std::vector<fedstat::noise::PoissonThreshold> table;
  std::vector<uint64_t> scratch;
  const bool use_table = spec.kind == NoiseKind::kSkellam && method == "tabulated";
  fedstat::Status init;
  if (use_table) {
    auto sizes = fedstat::noise::TabulatedPoissonSampler::sizes_for(spec.parameter);
    init = sizes.status();
    if (sizes.ok()) {
      table.resize(sizes->table_entries);
      scratch.resize(sizes->scratch_limbs);
      init = tabulated.init(
          spec.parameter,
          fedstat::Span<fedstat::noise::PoissonThreshold>(table.data(), table.size()),
          fedstat::Span<uint64_t>(scratch.data(), scratch.size()));
    }
  } else {
    init = poisson ? poisson_sampler.init(spec.parameter) : sampler.init(spec);
  }
  if (!init.ok()) {
    std::fprintf(stderr, "fedstat-noise: %s\n", init.message());
    return 2;
  }
  auto draw_poisson = [&]() {
    return use_table ? tabulated.sample(bits) : poisson_sampler.sample(bits);
  };
  std::string out;
  out.reserve(1 << 16);
  if (json) {
    // The samples are whole numbers and the names are fixed words: no escaping needed.
    out = "{\"distribution\": \"" + dist + "\", \"seed\": " + std::to_string(seed) +
          ", \"method\": \"" + (spec.kind == NoiseKind::kSkellam ? method : "exact") +
          "\", \"samples\": [";
  }
  fedstat::tools::Progress progress("fedstat-noise", "sample", count);
  for (uint64_t i = 0; i < count; ++i) {
    if ((i & 0xFFFF) == 0) progress.update(i);
    long long value;
    if (poisson || use_table) {
      auto r = draw_poisson();
      if (!r.ok()) return std::fprintf(stderr, "fedstat-noise: %s\n", r.status().message()), 1;
      value = static_cast<long long>(r.value());
      if (!poisson) {  // skellam: the difference of two draws
        auto r2 = draw_poisson();
        if (!r2.ok()) return std::fprintf(stderr, "fedstat-noise: %s\n", r2.status().message()), 1;
        value -= static_cast<long long>(r2.value());
      }
    } else {
      auto r = sampler.sample(bits);
      if (!r.ok()) return std::fprintf(stderr, "fedstat-noise: %s\n", r.status().message()), 1;
      value = static_cast<long long>(r.value());
    }
    if (json && i > 0) out += ", ";
    out += std::to_string(value);
    if (!json) out += '\n';
    if (out.size() > (1 << 16) - 32) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  }
  if (json) out += "]}\n";
  progress.finish();
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}
