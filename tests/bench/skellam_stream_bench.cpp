// skellam_stream_bench: the exact Skellam sampler as a stream of samples, so that its speed can be
// put next to the performance anchor for Skellam noise, numpy's inexact difference of two Poisson
// draws (/work/refbench/numpy_skellam.py, a program outside the project), as a ratio from one
// run. A plain program, not Google Benchmark; scripts/bench_pair.sh runs it alternately with the
// references and prints the ratios. It pairs with numpy_skellam.py line by line: the same bench
// ("skellam"), the same shapes ("lambda=10", "lambda=10000", "lambda=1e+06", from "lambda=%g"),
// the same n (10^7 samples), unit "sample" and "fp": null (no key stream: each side draws its own
// random numbers), one untimed warm-up and --reps timed repetitions, median.
//
// What is timed, per λ = 10, 10^4, 10^6 and repetition: n exact Skellam(λ, λ) samples from
// noise::TabulatedSkellamSampler (Method::kAuto: at λ = 10 one Poisson(2λ) table draw split by
// fair bits, above kSplitMaxLambda the difference of two Poisson(λ) table draws; params.method
// says which), drawn with sample_many() into a fixed chunk of kChunk = 4096 int64 samples (32 KiB,
// reused). The samples are NOT stored; numpy does store them (rng.poisson − rng.poisson
// materialises both Poisson arrays and their difference, 3·8·n bytes, and its timing includes
// the allocation and the subtraction). Here each chunk is summed, inside the timing, into a sum
// and a sum of squares (a fraction of a nanosecond per sample) that end in a volatile sink, and
// the sanity check below reads the last repetition's, so nothing is optimised away. The bit
// source is the production one: Csprng (CTR_DRBG, AES-256, mbedTLS; seeded from the platform's
// entropy, so no two runs draw the same samples) through RandomBits with a caller buffer of
// RandomBits::kLargeBufferBytes = 1 KiB, as noise_bench's source 2 (BM_ExactSkellamBatch). The
// CSPRNG's own time (including its periodic reseeds) is part of the measurement; numpy's PCG64 is
// not a CSPRNG. The sampler's table and scratch (sizes_for) are built once per λ, untimed.
//
// Exactness: drawing a sample does no floating-point arithmetic, only integer operations on
// random bits and table words. The table is built at init() in double precision with certified
// error margins, and only decides how many bits a comparison needs: every decision compares
// random bits with an exact rational's binary expansion (tabulated_poisson.h), so each output has
// exactly the Skellam(λ, λ) probability and none depends on a rounding. numpy's rng.poisson is a
// floating-point sampler (PTRS at these λ) and is not exact. Floating point appears in this
// program only around the sampler: timing, and the sanity check.
//
// Per λ line, params: "lambda", "shape", "method" (split|difference), "table_bytes" and
// "scratch_bytes" (the caller memory sizes_for asked for), "chunk" (samples per sample_many
// call), "source", and "words_per_sample": bytes the Csprng produced over the timed repetitions
// / 8 / the samples drawn in them (counted by a RandomSource wrapper, one extra indirect call per
// 1 KiB refill, as noise_bench's CountingSource).
//
// Sanity check, outside the timing, on the last repetition's sums: the sample variance (mean
// subtracted, as numpy's np.var) must be within 1% of 2λ, as numpy_skellam.py checks; for a small
// --n the bound widens to 8 standard deviations of the sample variance, 8·√((2 + 1/(2λ))/n)
// relative (at the default n it is below 1%, so the check is numpy's), so that the smoke test's
// short runs do not fail by chance. The mean must be within 8·√(2λ/n) of 0. Otherwise the
// program reports nothing more and exits with code 1.
//
// Options: --n N (10000000, at most 2^32 − 1, so that the sum of squares, about 2λ·n, stays far
// within int64), --reps R (5, 1..1000), --json (stdout holds only the JSON lines of
// ../shared/bench/README.md). Run it from a Release build (build/host-release/tests/bench/).
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sdk/base/csprng.h"
#include "sdk/base/random_bits.h"
#include "sdk/noise/tabulated_poisson.h"
#include "tests/bench/counting_source.h"
#include "tests/bench/stream_bench_line.h"

namespace fedstat {
namespace noise {
namespace {

constexpr size_t kChunk = 4096;  // samples per sample_many() call
constexpr uint64_t kLambdas[] = {10, 10000, 1000000};

// ---- Timing and the JSON line ------------------------------------------------------------------
using bench::Clock;
using bench::parse_u64;
using bench::seconds_since;

struct Options : bench::CommonOptions {};

struct Measurement {
  std::string shape, params;  // params: the JSON object
  uint64_t ops = 0;
  std::vector<double> seconds;  // the timed repetitions
  double words_per_sample = 0;
  const char* method = "";
};

void report(const Options& o, const Measurement& m) {
  if (o.json) {
    bench::print_json_line("fedstat", "skellam", m.params, m.ops, "sample", m.seconds, "null");
    return;
  }
  const bench::RepetitionTimes t(m.seconds);
  const double ops = static_cast<double>(m.ops);
  std::printf(
      "fedstat skellam %-14s %6.2f M samples/s median (best %.2f, worst %.2f), %.1f ns/sample, "
      "%.3f words/sample, %s, %.4g s median of %zu\n",
      m.shape.c_str(), ops / t.median / 1e6, ops / t.min / 1e6, ops / t.max / 1e6,
      1e9 * t.median / ops, m.words_per_sample, m.method, t.median, m.seconds.size());
  std::fflush(stdout);
}

[[noreturn]] void fail(const char* what, const Status& status = Status()) {
  if (status.ok()) {
    std::fprintf(stderr, "skellam_stream_bench: %s\n", what);
  } else {
    std::fprintf(stderr, "skellam_stream_bench: %s: %s (%s)\n", what,
                 status_code_name(status.code()), status.message());
  }
  std::exit(1);
}

// ---- The bit source: Csprng through a 1 KiB RandomBits buffer, its output counted ------------
using bench::CountingSource;  // counts the bytes the source hands out

struct Source {
  Source() : counting(csprng), bits(counting, MutableByteSpan(buffer, sizeof(buffer))) {}
  Csprng csprng;
  CountingSource counting;
  uint8_t buffer[RandomBits::kLargeBufferBytes];
  RandomBits bits;
};

// ---- The exact sampler at λ --------------------------------------------------------------------
volatile uint64_t g_sink = 0;  // every repetition's sums end here, so none is optimised away

Measurement bench_skellam(const Options& o, uint64_t lambda_int) {
  const Rational lambda{lambda_int, 1};
  const auto sizes = TabulatedSkellamSampler::sizes_for(lambda);
  if (!sizes.ok()) fail("TabulatedSkellamSampler::sizes_for refused", sizes.status());
  std::vector<PoissonThreshold> table(sizes->table_entries);
  std::vector<uint64_t> scratch(sizes->scratch_limbs);
  TabulatedSkellamSampler sampler;
  const Status init = sampler.init(lambda, Span<PoissonThreshold>(table.data(), table.size()),
                                   Span<uint64_t>(scratch.data(), scratch.size()));
  if (!init.ok()) fail("TabulatedSkellamSampler::init refused", init);
  Source source;
  const Status seeded = source.csprng.init();
  if (!seeded.ok()) fail("Csprng::init failed", seeded);

  Measurement m;
  char shape[32];
  std::snprintf(shape, sizeof(shape), "lambda=%g", static_cast<double>(lambda_int));
  m.shape = shape;
  m.ops = o.n;
  m.method = sampler.splits() ? "split" : "difference";

  int64_t chunk[kChunk];
  int64_t sum = 0, sum_squares = 0;  // of the last repetition; |sum_squares| ≈ 2λ·n < 2^63
  uint64_t bytes_before_timed = 0;
  for (int rep = -1; rep < o.reps; ++rep) {  // rep -1: the warm-up
    if (rep == 0) bytes_before_timed = source.counting.bytes();
    sum = 0;
    sum_squares = 0;
    const Clock::time_point start = Clock::now();
    for (uint64_t done = 0; done < o.n;) {
      const size_t count = static_cast<size_t>(std::min<uint64_t>(kChunk, o.n - done));
      const Status drawn = sampler.sample_many(source.bits, Span<int64_t>(chunk, count));
      if (!drawn.ok()) fail("TabulatedSkellamSampler::sample_many failed", drawn);
      for (size_t i = 0; i < count; ++i) {
        sum += chunk[i];
        sum_squares += chunk[i] * chunk[i];
      }
      done += count;
    }
    const double t = seconds_since(start);
    g_sink = g_sink + static_cast<uint64_t>(sum) + static_cast<uint64_t>(sum_squares);
    if (rep >= 0) m.seconds.push_back(t);
  }
  const double drawn_timed = static_cast<double>(o.n) * o.reps;
  m.words_per_sample =
      static_cast<double>(source.counting.bytes() - bytes_before_timed) / 8 / drawn_timed;

  // The sanity check, outside the timing (see the header).
  const double n = static_cast<double>(o.n);
  const double two_lambda = 2.0 * static_cast<double>(lambda_int);
  const double mean = static_cast<double>(sum) / n;
  const double variance = static_cast<double>(sum_squares) / n - mean * mean;
  const double variance_tolerance =
      std::max(0.01, 8 * std::sqrt((2 + 1 / two_lambda) / n));  // relative
  const double mean_tolerance = 8 * std::sqrt(two_lambda / n);
  if (!(std::fabs(variance / two_lambda - 1) <= variance_tolerance) ||
      !(std::fabs(mean) <= mean_tolerance)) {
    std::fprintf(stderr,
                 "skellam_stream_bench: %s: sanity check failed: mean %.6g (allowed |mean| <= "
                 "%.3g), variance %.6g against 2*lambda = %.6g (allowed relative error %.3g); "
                 "nothing more reported\n",
                 m.shape.c_str(), mean, mean_tolerance, variance, two_lambda, variance_tolerance);
    std::exit(1);
  }

  char params[400];
  std::snprintf(params, sizeof(params),
                "{\"lambda\":%" PRIu64
                ",\"shape\":\"%s\",\"method\":\"%s\",\"table_bytes\":%zu,"
                "\"scratch_bytes\":%zu,\"chunk\":%zu,\"words_per_sample\":%.6g,"
                "\"source\":\"Csprng (CTR_DRBG) via 1 KiB RandomBits buffer\","
                "\"mean\":%.6g,\"variance\":%.8g}",
                lambda_int, m.shape.c_str(), m.method, table.size() * sizeof(PoissonThreshold),
                scratch.size() * sizeof(uint64_t), kChunk, m.words_per_sample, mean, variance);
  m.params = params;
  return m;
}

// ---- Command line ------------------------------------------------------------------------------
const char kUsage[] =
    "usage: fedstat_skellam_stream_bench [--n N] [--reps R] [--json]\n"
    "  Exact Skellam(lambda, lambda) samples (TabulatedSkellamSampler, Csprng through a 1 KiB\n"
    "  RandomBits buffer) at lambda = 10, 1e4, 1e6, the counterpart of numpy_skellam.py.\n"
    "  --n samples per repetition (default 10000000, at most 2^32 - 1), --reps timed\n"
    "  repetitions after one warm-up (default 5, 1..1000), --json one line per lambda in the\n"
    "  format of ../shared/bench/README.md.\n";

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc;) {
    const int used = bench::parse_common_option(argc, argv, i, kUsage, o);
    if (used == 0) bench::refuse_argument("skellam_stream_bench", argv[i], kUsage);
    i += used;
  }
  return o;
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  FILE* info = o.json ? stderr : stdout;  // --json: stdout holds only the JSON lines
  std::fprintf(info,
               "exact Skellam: n = %" PRIu64
               " samples per repetition, %d repetitions after one warm-up, chunks of %zu, "
               "Csprng through a %zu-byte RandomBits buffer\n",
               o.n, o.reps, kChunk, RandomBits::kLargeBufferBytes);
  std::fflush(info);
  for (const uint64_t lambda : kLambdas) report(o, bench_skellam(o, lambda));
  return 0;
}

}  // namespace
}  // namespace noise
}  // namespace fedstat

int main(int argc, char** argv) {
  return fedstat::noise::run(argc, argv);
}
