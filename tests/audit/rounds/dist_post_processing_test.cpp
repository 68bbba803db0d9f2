// The second privacy review of issue 39's fixes, finding C1 (branch review2,
// tests/review2/estimate_review_test.cpp): under DIST no report bound applies (the words are
// masked; tasks/report_bounds.h), and issue 39's fix clamped the TV estimators but not the KL
// estimator: its DIST branch clamped p = A_t/N_t below at τ and never above, so one device adding
// 2^40 to one count — issue 39 item 7's own attack, on the DIST path — moved the published
// estimate from 0.244 to 13,743,894. What an honest fleet's released sum keeps in a known range
// is now enforced on it, as post-processing of the noised release (no privacy cost):
//   kl             p clamped to [τ, 1]: the estimate lies in the range the clamped terms allow,
//                  whatever one device adds (its effect is bounded, not removed: no range proof);
//   model_update   the summed update's L2 norm must be within contributors × the per-device bound
//                  plus a bound on the fleet's noise; above it the round publishes no model
//                  ("refused"), because only a forged update reaches it;
//   heterogeneity  stage 2's D and Q clamped to [0, d] and [0, n₂·W·d] (stage 1's means and
//                  weight sums already were).
// Through the server's own task plans (host_server/tasks) on honest sums built by the SDK's
// builders (host_server/sim expected_contribution), and the reviewer's in-process KL check.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "host_server/estimate/client_emulation.h"
#include "host_server/estimate/hashed_tv.h"
#include "host_server/estimate/heterogeneity.h"
#include "host_server/estimate/host_common.h"
#include "host_server/estimate/item_counts.h"
#include "host_server/estimate/kl_estimator.h"
#include "host_server/estimate/labelled_examples.h"
#include "host_server/estimate/noise_bits.h"
#include "host_server/sim/emulated_device.h"
#include "host_server/tasks/task_plan.h"
#include "nlohmann/json.hpp"
#include "tests/audit/rounds/planned_tasks.h"
#include "tests/store/temp_dir.h"

namespace fedstat {
namespace host {
namespace testing {
namespace {

constexpr uint32_t kDevices = 4;

ItemCounts counts_of(const std::string& text) {
  std::istringstream in(text);
  return parse_item_counts(in, "review");
}

// The reviewer's test (review2 1d93d28), as it was.
TEST(AuditDistPostProcessing, Property_OneDistKlDeviceCannotMoveThePublishedEstimateFar) {
  const ItemCounts reference = counts_of("1 40\n2 30\n3 15\n4 10\n5 5\n");
  const ItemCounts data = counts_of("1 200\n2 300\n3 250\n4 150\n5 100\n");
  SeededBits split(1, 0), plan_bits(2, 0), estimate_bits(3, 0), forged_bits(3, 0);
  const EmulatedClients clients = split_across_clients(data, 4, split.bits());
  const KlPlan plan = plan_kl(reference, 20, 4, 1, plan_bits.bits());
  KlOptions options;
  options.model = KlModel::kDist;
  NoiseBits noise = NoiseBits::seeded(4);
  const KlSums honest_sums = collect_kl_sums(plan, clients, options, noise, /*secure=*/true);
  const double honest = estimate_kl(plan, honest_sums, options, estimate_bits.bits()).estimate;
  // One of the four devices adds 2^40 to its count at the first sampled point: the masked sum
  // carries it (mod 2^64), no bound sees it.
  KlSums forged_sums = honest_sums;
  forged_sums.counts[0] += int64_t{1} << 40;
  const double forged = estimate_kl(plan, forged_sums, options, forged_bits.bits()).estimate;
  // With p clamped to at most 1, one point's term is at most λ(1/Π − 1) − log(1/Π) ≤ 1.9 here
  // (Π ≥ 0.05), i.e. the estimate moves by at most ≈ 0.1 over T = 20 points.
  EXPECT_LT(std::fabs(forged - honest), 1.0)
      << "honest estimate " << honest << ", with one forged DIST device " << forged;
}

// The fleet's sum mod 2^bits of what each device's Client sends (the SDK's builders).
std::vector<uint64_t> honest_sum(const TaskPlan& plan, EmulatedClients& fleet) {
  const fedstat_v1_Task& task = plan.task;
  const uint64_t mask = task.bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << task.bits) - 1;
  std::vector<uint64_t> sum(task.vector_length, 0);
  for (uint32_t i = 0; i < fleet.size(); ++i) {
    const std::vector<uint64_t> words =
        expected_contribution(task, plan.data, *fleet[i], 5, 11 + i);
    for (size_t k = 0; k < sum.size(); ++k) sum[k] = (sum[k] + words[k]) & mask;
  }
  return sum;
}

// f(p) = λ(p/Π − 1) − log(p/Π): one round's term of the DIST estimate at P′ = p.
double kl_term(double p, double pi, double lambda) {
  return lambda * (p / pi - 1) - std::log(p / pi);
}

// The served KL DIST estimate, whatever one device adds to its counts or its total (mod 2^64),
// lies between the smallest and largest term any p in [τ, 1] gives at the task's points.
TEST(AuditDistPostProcessing, AServedDistKlEstimateStaysInTheRangeOfTheClampedTerms) {
  TempDir dir;
  const json declaration = kl_declaration(dir, 1, "dist", 3, kDevices);
  const TaskPlan plan = plan_task(declaration, dir.file(""), kT0, /*noise_seed=*/7);
  const double lambda = 0.1, tau = 1e-6;  // kl_declaration's λ, the default τ
  const ItemCounts reference = read_item_counts(dir.file("reference.txt"));
  double low = INFINITY, high = -INFINITY;
  for (uint64_t x : plan.data) {  // the distinct points every round asks
    const double pi = static_cast<double>(reference.count(static_cast<uint32_t>(x))) /
                      static_cast<double>(reference.total);
    ASSERT_GT(pi, 0);
    const double best = std::min(1.0, std::max(tau, pi / lambda));  // f is convex, least there
    low = std::min(
        {low, kl_term(tau, pi, lambda), kl_term(1, pi, lambda), kl_term(best, pi, lambda)});
    high = std::max({high, kl_term(tau, pi, lambda), kl_term(1, pi, lambda)});
  }
  write_item_counts(dir.file("items.txt"), 80, 40000, 5);
  SeededBits split(3, 7);
  EmulatedClients fleet =
      split_across_clients(read_item_counts(dir.file("items.txt")), kDevices, split.bits());
  const std::vector<uint64_t> honest = honest_sum(plan, fleet);
  const json clean = plan.estimate(honest, kDevices);
  ASSERT_TRUE(clean.contains("estimate") && clean.at("estimate").is_number()) << clean.dump();
  const double slack = 1e-9 * std::max(std::fabs(low), std::fabs(high));
  struct Forgery {
    const char* what;
    size_t word;  // the last word is the total
    uint64_t added;
  };
  const size_t total = honest.size() - 1;
  const Forgery forgeries[] = {
      {"+2^40 to the first count", 0, uint64_t{1} << 40},
      {"-2^40 to the first count", 0, 0 - (uint64_t{1} << 40)},
      {"+2^62 to the last count", total - 1, uint64_t{1} << 62},
      {"+2^40 to the total", total, uint64_t{1} << 40},
  };
  for (const Forgery& f : forgeries) {
    std::vector<uint64_t> forged = honest;
    forged[f.word] += f.added;
    const json result = plan.estimate(forged, kDevices);
    ASSERT_TRUE(result.contains("estimate") && result.at("estimate").is_number())
        << f.what << ": " << result.dump();
    const double e = result.at("estimate").get<double>();
    EXPECT_GE(e, low - slack) << f.what << " (honest " << clean.at("estimate") << ")";
    EXPECT_LE(e, high + slack) << f.what << " (honest " << clean.at("estimate") << ")";
  }
  // Every count +2^40: every p clamped at 1, the estimate the mean of f(1) over the rounds.
  std::vector<uint64_t> all_up = honest;
  for (size_t k = 0; k < total; ++k) all_up[k] += uint64_t{1} << 40;
  const json up = plan.estimate(all_up, kDevices);
  ASSERT_TRUE(up.contains("estimate") && up.at("estimate").is_number()) << up.dump();
  EXPECT_LE(up.at("estimate").get<double>(), high + slack) << up.dump();
  EXPECT_EQ(up.value("clamped_above_rounds", -1), 40)
      << "every round's p clamped at 1: " << up.dump();
}

json model_update_declaration() {
  json d = declared(1, "model_update", "dist", 3, kDevices);
  d["model_update"] = {{"dimension", 4},           {"epochs", 10},   {"batches", 2},
                       {"averaging_interval", 10}, {"eta0", 2.0},    {"mu", 0.001},
                       {"clip_norm", 10.0},        {"rotate", true}, {"gamma", 4096.0},
                       {"beta", 0.6065306597},     {"bits", 32},     {"examples_per_client", 40}};
  return d;
}

// A DIST model update: the honest fleet's sum publishes a model; a sum no honest fleet reaches —
// one device's word pushed by 2^30 (mod 2^32), or every word of it near 2^31 — publishes none.
TEST(AuditDistPostProcessing, ADistModelUpdateSumBeyondEveryHonestFleetIsRefused) {
  TempDir dir;
  const TaskPlan plan = plan_task(model_update_declaration(), dir.file(""), kT0, 7);
  write_examples(dir.file("examples.csv"), 40 * kDevices, 3);
  EmulatedClients fleet =
      split_examples(read_labelled_examples(dir.file("examples.csv"), 4), kDevices, 40);
  const std::vector<uint64_t> honest = honest_sum(plan, fleet);
  const json clean = plan.estimate(honest, kDevices);
  ASSERT_TRUE(clean.contains("model") && clean.at("model").is_array()) << clean.dump();
  EXPECT_FALSE(clean.contains("refused")) << clean.dump();
  double honest_move = 0;
  for (size_t j = 0; j < 4; ++j) honest_move += std::pow(clean.at("model").at(j).get<double>(), 2);

  std::vector<uint64_t> pushed = honest;
  pushed[0] = (pushed[0] + (uint64_t{1} << 30)) & 0xffffffffu;
  std::vector<uint64_t> everywhere = honest;
  for (uint64_t& w : everywhere) w = (w + 0x7ff00000u) & 0xffffffffu;
  for (const auto& [what, forged] :
       {std::make_pair("word 0 + 2^30", pushed), std::make_pair("every word + 2^31", everywhere)}) {
    const json result = plan.estimate(forged, kDevices);
    EXPECT_TRUE(result.contains("refused"))
        << what << ": published " << result.dump() << " (the honest model moved by "
        << std::sqrt(honest_move) << ")";
    EXPECT_TRUE(result.contains("model") && result.at("model").is_null())
        << what << ": " << result.dump();
    EXPECT_EQ(result.value("contributors", 0u), kDevices) << result.dump();
  }
}

// Heterogeneity stage 2: D is a mean of ‖x − μ′‖ₚᵖ ≤ d, Q a sum of w·‖x − μ̄′‖² ≤ W·d per device;
// a forged released sum (one device adding 2^40 in fixed point) is clamped to those ranges.
TEST(AuditDistPostProcessing, HeterogeneityStage2StatisticsStayInTheirHonestRange) {
  tasks::HeterogeneityConfig config;
  config.p = 2;
  config.max_weight = 8;
  const size_t d = 3, n = kDevices;
  // Stage 1's released sums of four honest devices, [Σx, Σw·x, Σw, Σ1/w] (w = 8 each).
  const std::vector<double> released = {1.6, 1.8, 2.0, 12.8, 14.4, 16.0, 32, 0.5};
  const HeterogeneityRound1 round1 = finish_heterogeneity_round1(released, n, config);
  HeterogeneityEstimate e;
  for (double& s : e.sigma) s = 0.01;
  const double forged = std::ldexp(1.0, 40) / 1024;  // 2^40 words at a scale of 1024
  finish_heterogeneity_round2(forged, forged, n, n, round1, /*noisy=*/true, e);
  EXPECT_LE(e.dispersion.estimate, static_cast<double>(d))
      << "D moved to " << e.dispersion.estimate;
  EXPECT_LE(e.q.estimate, static_cast<double>(n) * config.max_weight * d)
      << "Q moved to " << e.q.estimate;
  // An honest value inside the range is published as it is.
  HeterogeneityEstimate honest;
  for (double& s : honest.sigma) s = 0.01;
  finish_heterogeneity_round2(0.9, 3.5, n, n, round1, true, honest);
  EXPECT_DOUBLE_EQ(honest.dispersion.estimate, 0.9 / n);
  EXPECT_DOUBLE_EQ(honest.q.estimate, 3.5);
}

// Issue 41's DIST data shift (the hashed histogram, estimate/hashed_tv.h) has no honest range per
// bucket to enforce (an honest device's bucket may reach ⌊(2^31 − 1)/max_clients⌋ at item level),
// so the TV clamp to [0, 1] is its only bound and one device's masked words set the estimate
// (docs/protocol.md, "One malicious device"). What this pins, so that a fleet bound added later
// (e.g. user level: the signed total within contributors × max_events plus the noise) shows here:
// an honest fleet of 20 devices far from the reference (bucketed TV > 0.9), one forger adding
// the reference's shape at 2^30 events makes it < 0.01 (a shift hidden); 2^30 in one bucket the
// reference does not hold makes a fleet equal to the reference read > 0.99; −2^30 everywhere
// leaves no positive bucket (no estimate). The noise does not matter to the forger and is left
// out (each honest vector is its exact buckets, as summed mod 2^32).
TEST(AuditDistPostProcessing, OneDeviceSetsTheHashedHistogramEstimate) {
  const sketch::BucketMap map(Seed256{}, 4096);
  ItemCounts reference, drifted;
  for (uint32_t id = 0; id < 400; ++id) {
    reference.items.push_back({id, 1 + id % 9});
    reference.total += 1 + id % 9;
    drifted.items.push_back({id + 1000, 1 + id % 5});
    drifted.total += 1 + id % 5;
  }
  const std::vector<int64_t> q = bucket_counts(reference, map);
  auto honest_sum = [&](const ItemCounts& per_device) {
    std::vector<uint64_t> sum(map.buckets(), 0);
    const std::vector<int64_t> b = bucket_counts(per_device, map);
    for (int device = 0; device < 20; ++device) {
      for (size_t i = 0; i < sum.size(); ++i) {
        sum[i] = (sum[i] + static_cast<uint64_t>(b[i])) & 0xffffffffu;
      }
    }
    return sum;
  };
  auto with_forger = [](std::vector<uint64_t> sum, const std::vector<int64_t>& forged) {
    for (size_t i = 0; i < sum.size(); ++i) {
      sum[i] = (sum[i] + static_cast<uint64_t>(forged[i])) & 0xffffffffu;
    }
    return sum;
  };
  const std::vector<uint64_t> far = honest_sum(drifted);
  ASSERT_GT(estimate_hashed_tv(signed_sum(far, 32), q).tv, 0.9);
  // The reference's shape at ~2^30 events (within one honest device's clamp at max_clients 1).
  int64_t largest = 1;
  for (int64_t v : q) largest = std::max(largest, v);
  std::vector<int64_t> shape(q.size());
  for (size_t i = 0; i < q.size(); ++i) shape[i] = q[i] * ((int64_t{1} << 30) / largest / 16);
  EXPECT_LT(estimate_hashed_tv(signed_sum(with_forger(far, shape), 32), q).tv, 0.01);
  // A fleet equal to the reference, and 2^30 in a bucket the reference does not hold.
  const std::vector<uint64_t> same = honest_sum(reference);
  ASSERT_LT(estimate_hashed_tv(signed_sum(same, 32), q).tv, 1e-12);
  std::vector<int64_t> spike(q.size(), 0);
  size_t empty = 0;
  while (q[empty] != 0) ++empty;
  spike[empty] = int64_t{1} << 30;
  EXPECT_GT(estimate_hashed_tv(signed_sum(with_forger(same, spike), 32), q).tv, 0.99);
  // −2^30 in every bucket: nothing positive left, no estimate.
  const std::vector<int64_t> sink(q.size(), -(int64_t{1} << 30));
  EXPECT_THROW(estimate_hashed_tv(signed_sum(with_forger(same, sink), 32), q),
               std::invalid_argument);
}

}  // namespace
}  // namespace testing
}  // namespace host
}  // namespace fedstat
