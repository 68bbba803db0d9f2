#include "host_server/estimate/tv_estimator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>

#include "host_server/estimate/client_emulation.h"
#include "host_server/estimate/host_common.h"
#include "host_server/estimate/item_counts.h"
#include "host_server/estimate/noise_bits.h"

namespace fedstat {
namespace host {
namespace {

constexpr double kZ = 4.89;  // two-sided p = 1e-6, normal approximation of a mean over seeds

ItemCounts counts_of(const std::string& text) {
  std::istringstream in(text);
  return parse_item_counts(in, "test");
}

// 60 items: P Zipf-like, Q a shifted copy, both with heavy and light items.
std::pair<ItemCounts, ItemCounts> example() {
  std::ostringstream p, q;
  for (int i = 1; i <= 60; ++i) {
    p << i << " " << 6000 / i << "\n";
    q << i + 7 << " " << 4000 / i + 20 << "\n";
  }
  return {counts_of(p.str()), counts_of(q.str())};
}

// An independent oracle (the tests do not trust the library's exact_tv).
double oracle_tv(const ItemCounts& p, const ItemCounts& q) {
  std::map<uint32_t, double> d;
  for (const auto& i : p.items) d[i.id] += double(i.count) / double(p.total);
  for (const auto& i : q.items) d[i.id] -= double(i.count) / double(q.total);
  double l1 = 0;
  for (const auto& [id, v] : d) l1 += std::fabs(v);
  return l1 / 2;
}

sketch::ShiftSketchParams params_for(uint64_t seed, uint32_t width, uint32_t heap, uint32_t k) {
  sketch::ShiftSketchParams params;
  params.rows = 3;
  params.width = width;
  params.heap_capacity = heap;
  params.k = k;
  params.seed = seed_from_u64(seed);
  return params;
}

MergedSketch merged(const ItemCounts& data, uint32_t clients, const sketch::ShiftSketchParams& p,
                    uint64_t seed) {
  SeededBits split(seed, 3);
  const EmulatedClients emulated = split_across_clients(data, clients, split.bits());
  NoiseBits noise = NoiseBits::seeded(seed);  // no local DP here: the noise is not drawn
  const auto reports = sketch_clients(emulated, p, 0, noise);
  return merge_reports(parse_reports(reports));
}

TEST(TvEstimator, MergedClientSketchesEqualTheSketchOfTheUnion) {
  const auto [p, q] = example();
  const auto params = params_for(1, 256, 32, 128);
  const MergedSketch one = merged(p, 1, params, 5);
  const MergedSketch many = merged(p, 7, params, 5);
  EXPECT_EQ(many.counters, one.counters);  // bit for bit
  EXPECT_EQ(many.total, one.total);
  EXPECT_EQ(one.total, static_cast<int64_t>(p.total));
  (void)q;
}

// With a sketch wide enough that every estimate is exact, the estimators' only randomness is the
// weights W_i, i.e. the task seed: over 400 seeds the mean HH and top-k (fixed rank) estimates lie
// within kZ standard errors of the exact D_TV.
TEST(TvEstimator, EstimatorsAreUnbiasedWithExactValues) {
  const auto [p, q] = example();
  const double exact = oracle_tv(p, q);
  TvOptions options;
  options.rank = 40;
  options.window = 1;
  options.tau = 4;
  const int seeds = 400;
  double sum_hh = 0, sq_hh = 0, sum_topk = 0, sq_topk = 0;
  for (int s = 0; s < seeds; ++s) {
    const auto params = params_for(100 + s, 1 << 14, 64, 256);
    const TvEstimate e = estimate_tv(merged(p, 1, params, 1), merged(q, 1, params, 2), options);
    sum_hh += e.hh;
    sq_hh += e.hh * e.hh;
    sum_topk += e.topk;
    sq_topk += e.topk * e.topk;
  }
  auto check_mean = [&](double sum, double squares, const char* name) {
    const double mean = sum / seeds;
    const double sd = std::sqrt((squares - seeds * mean * mean) / (seeds - 1));
    EXPECT_NEAR(mean, exact, kZ * sd / std::sqrt(double(seeds))) << name << " sd " << sd;
    EXPECT_GT(sd, 0) << name;
  };
  check_mean(sum_hh, sq_hh, "hh");
  check_mean(sum_topk, sq_topk, "topk");
}

TEST(TvEstimator, DefaultsAreAccurateAndDomainCandidatesAgree) {
  const auto [p, q] = example();
  const double exact = oracle_tv(p, q);
  const auto params = params_for(9, 512, 64, 256);
  const MergedSketch mp = merged(p, 3, params, 1), mq = merged(q, 3, params, 2);
  const TvEstimate heaps = estimate_tv(mp, mq, TvOptions{});
  EXPECT_NEAR(heaps.topk, exact, 0.05);
  EXPECT_NEAR(heaps.hh, exact, 0.05);
  TvOptions all;
  all.domain = 100;  // every id the data uses lies below 100
  const TvEstimate domain = estimate_tv(mp, mq, all);
  EXPECT_NEAR(domain.topk, exact, 0.05);
}

TEST(TvEstimator, ExactTvMatchesTheOracle) {
  const auto [p, q] = example();
  EXPECT_NEAR(exact_tv(p, q), oracle_tv(p, q), 1e-15);
  EXPECT_EQ(exact_tv(p, p), 0);
}

TEST(TvEstimator, RefusesMismatchedSketches) {
  const auto [p, q] = example();
  const MergedSketch a = merged(p, 1, params_for(1, 128, 16, 64), 1);
  const MergedSketch b = merged(q, 1, params_for(2, 128, 16, 64), 1);
  EXPECT_THROW(estimate_tv(a, b, TvOptions{}), std::invalid_argument);
}

}  // namespace
}  // namespace host
}  // namespace fedstat
