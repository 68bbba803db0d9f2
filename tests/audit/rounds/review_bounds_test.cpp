// The privacy review of issue 39 item 7 (the clear-path word bounds), its findings F1, F5 and F6
// (ported from the reviewer's demonstrations, tests/audit/review_privacy/host_review_test.cpp on
// branch review-privacy):
//   F1  DATA_SHIFT: a row's counters were bounded by the device's total × 2^35, the largest
//       sampling weight there is, while an item of a domain of D ids weighs about 16·k·D at most:
//       one device declaring 100 items planted 40 items scaled up to the bound and moved the
//       fleet's total-variation estimate — a distance in [0, 1] — from 0.032 to 6616. Now the
//       device sketches only its items in [0, domain) (the candidates; the others still count in
//       its total), a row is bounded by total × the largest weight of an id in [0, domain) for
//       the task's seed, and the estimator keeps each item's value and the estimate in range.
//   F5  KL_ANSWERS: each count was checked against the device's total, not their sum; the query
//       points are distinct, so an honest device's counts sum to at most its total.
//   F6  the config's noise_seed was documented as seeding the central noise, but a collector
//       noises every round from the round's stored CSPRNG seed and a TAgg refuses it with the
//       tagg tasks it noises: it did nothing, silently. It is refused now, naming the field.
// Paper: 001 §4.2–4.6 (the sketch, its weights and the TV estimators), 000 §4 (KL counts).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "host_server/server_config.h"
#include "host_server/tasks/report_bounds.h"
#include "host_server/tasks/task_plan.h"
#include "nlohmann/json.hpp"
#include "sdk/base/random_bits.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/client/contribution.h"
#include "sdk/histogram/sparse_histogram.h"
#include "sdk/sketch/shift_sketch.h"
#include "tests/store/temp_dir.h"

namespace fedstat {
namespace host {
namespace {

using fedstat::testing::TempDir;
using nlohmann::json;

constexpr uint32_t kDomain = 1000;

// The reviewer's task: R = 5, w = 256, H = 32, k = 64, candidates [0, 1000), trust none, a
// reference of 200 Zipf-like items (its file written into `dir`).
json data_shift_declaration(const TempDir& dir) {
  std::ofstream reference(dir.file("reference.txt"));
  for (uint32_t i = 0; i < 200; ++i) reference << i << " " << 6000 / (i + 1) << "\n";
  return json{{"id", 1},
              {"kind", "data_shift"},
              {"trust", "none"},
              {"epsilon", 0.0},
              {"delta", 0.0},
              {"min_clients", 2},
              {"max_clients", 21},
              {"deadline_seconds", 3600},
              {"admission_seconds", 60},
              {"phase_timeout_seconds", 60},
              {"seed", std::string(62, '0') + "3d"},
              {"data_shift",
               {{"rows", 5},
                {"width", 256},
                {"heap_capacity", 32},
                {"k", 64},
                {"domain", kDomain},
                {"local_epsilon", 0.0},
                {"reference", "reference.txt"}}}};
}

// A device's report of `items` (id, count) for `task`, as the SDK's builder makes it.
std::vector<uint64_t> device_report(const fedstat_v1_Task& task,
                                    const std::vector<std::pair<uint32_t, int64_t>>& items) {
  std::vector<histogram::SparseEntry> table(1024);
  histogram::SparseHistogram h;
  EXPECT_TRUE(h.init(Span<histogram::SparseEntry>(table.data(), table.size())).ok());
  for (const auto& [id, count] : items) EXPECT_TRUE(h.add(id, count).ok());
  std::vector<uint8_t> scratch(client::scratch_bytes(task, h.capacity()).value());
  std::vector<uint64_t> out(task.vector_length);
  SeededStream unused(Seed256{}, 0);
  RandomBits noise(unused);
  EXPECT_TRUE(client::build_data_shift(task, h, noise,
                                       MutableByteSpan(scratch.data(), scratch.size()),
                                       Span<uint64_t>(out.data(), out.size()))
                  .ok());
  return out;
}

sketch::ShiftSketchParams params_of(const fedstat_v1_Task& task) {
  sketch::ShiftSketchParams p;
  p.rows = task.parameters.data_shift.rows;
  p.width = task.parameters.data_shift.width;
  p.heap_capacity = task.parameters.data_shift.heap_capacity;
  p.k = task.parameters.data_shift.k;
  std::copy(task.seed.bytes, task.seed.bytes + 32, p.seed.bytes);
  return p;
}

// The largest ω of an id in [0, domain) and that id, one weight at a time (the SDK's own).
std::pair<uint32_t, uint64_t> heaviest_item(const fedstat_v1_Task& task) {
  const sketch::SketchHashes hashes(params_of(task));
  std::pair<uint32_t, uint64_t> best{0, 0};
  for (uint32_t i = 0; i < task.parameters.data_shift.domain; ++i) {
    if (hashes.weight(i) > best.second) best = {i, hashes.weight(i)};
  }
  return best;
}

// The largest Σ|counter| over the rows of `r`.
double widest_row(const fedstat_v1_Task& task, const std::vector<uint64_t>& r) {
  const uint32_t rows = task.parameters.data_shift.rows, width = task.parameters.data_shift.width;
  double widest = 0;
  for (uint32_t row = 0; row < rows; ++row) {
    double l1 = 0;
    for (uint32_t b = 0; b < width; ++b) {
      l1 += std::fabs(static_cast<double>(static_cast<int64_t>(r[size_t{row} * width + b])));
    }
    widest = std::max(widest, l1);
  }
  return widest;
}

// A forgery: the device's honest sketch of `items` with every counter multiplied by `factor`, and
// `total` declared.
std::vector<uint64_t> scaled_report(const fedstat_v1_Task& task,
                                    const std::vector<std::pair<uint32_t, int64_t>>& items,
                                    int64_t total, int64_t factor) {
  std::vector<uint64_t> forged = device_report(task, items);
  for (size_t w = 0; w + 1 < forged.size(); ++w) {
    forged[w] = static_cast<uint64_t>(static_cast<int64_t>(forged[w]) * factor);
  }
  forged.back() = static_cast<uint64_t>(total);
  return forged;
}

// The reviewer's forgery: 40 items planted outside the reference (in the domain), once each.
std::vector<std::pair<uint32_t, int64_t>> planted_items() {
  std::vector<std::pair<uint32_t, int64_t>> planted;
  for (uint32_t i = 0; i < 40; ++i) planted.push_back({600 + 7 * i, 1});
  return planted;
}

// The factor that brings the planted sketch's widest row to `row_bound`.
int64_t factor_for(const fedstat_v1_Task& task, double row_bound) {
  return static_cast<int64_t>(
      std::floor(row_bound / widest_row(task, scaled_report(task, planted_items(), 1, 1))));
}

// The largest factor `check` admits for `items` under `total` (it must admit 1).
int64_t largest_admitted(const fedstat_v1_Task& task,
                         const std::vector<std::pair<uint32_t, int64_t>>& items, int64_t total,
                         const ReportCheck& check) {
  int64_t lo = 1, hi = int64_t{1} << 40;
  EXPECT_FALSE(check(scaled_report(task, items, total, lo)));
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (check(scaled_report(task, items, total, mid)) ? hi : lo) = mid;
  }
  return lo;
}

// The candidate a lie is best put on: the largest min over rows of M_b / ω_j, the weight of the
// heaviest candidate in j's counter over j's own (the SDK's hashes and weights).
uint32_t lightest_in_heavy_company(const fedstat_v1_Task& task) {
  const sketch::SketchHashes hashes(params_of(task));
  const uint32_t rows = task.parameters.data_shift.rows, width = task.parameters.data_shift.width;
  const uint32_t domain = task.parameters.data_shift.domain;
  std::vector<uint64_t> m(size_t{rows} * width, 0);
  for (uint32_t i = 0; i < domain; ++i) {
    for (uint32_t r = 0; r < rows; ++r) {
      uint32_t b = 0;
      int sign = 1;
      hashes.locate(i, r, b, sign);
      m[size_t{r} * width + b] = std::max(m[size_t{r} * width + b], hashes.weight(i));
    }
  }
  std::pair<double, uint32_t> best{0, 0};
  for (uint32_t i = 0; i < domain; ++i) {
    double company = 1e300;
    for (uint32_t r = 0; r < rows; ++r) {
      uint32_t b = 0;
      int sign = 1;
      hashes.locate(i, r, b, sign);
      company = std::min(company, static_cast<double>(m[size_t{r} * width + b]) /
                                      static_cast<double>(hashes.weight(i)));
    }
    best = std::max(best, {company, i});
  }
  return best.second;
}

// 20 honest devices holding the reference between them (the fleet's TV to it is about 0).
std::vector<uint64_t> honest_fleet_sum(const fedstat_v1_Task& task, const ReportCheck& check) {
  std::vector<uint64_t> sum(task.vector_length, 0);
  for (uint32_t c = 0; c < 20; ++c) {
    std::vector<std::pair<uint32_t, int64_t>> items;
    for (uint32_t i = 0; i < 200; ++i) {
      if (const int64_t n = 300 / (i + 1)) items.push_back({i, n});
    }
    const std::vector<uint64_t> r = device_report(task, items);
    EXPECT_FALSE(check(r)) << "an honest device was refused: " << *check(r);
    for (size_t w = 0; w < sum.size(); ++w) sum[w] += r[w];
  }
  return sum;
}

double tv_of(const TaskPlan& plan, const std::vector<uint64_t>& sum, uint32_t devices,
             const char* which) {
  SeededStream stream(Seed256{}, 1);
  RandomBits noise(stream);
  return plan.estimate_with(sum, devices, noise)[which].get<double>();
}

// F1 (b): a row is bounded by the device's total × the largest weight of a candidate id, for
// the task's seed: the honest extreme (every item on the heaviest candidate) passes, one unit more
// and the reviewer's forgery (rows at total × 2^35) are refused.
TEST(AuditPrivacyReview, ADataShiftRowIsBoundedByTheDomainsHeaviestCandidate) {
  TempDir dir;
  const TaskPlan plan = plan_task(data_shift_declaration(dir), dir.file(""), 0);
  const fedstat_v1_Task& task = plan.task;
  const ReportCheck check = report_check(task);
  ASSERT_TRUE(check);
  const auto [heaviest, weight] = heaviest_item(task);
  const int64_t total = 100;
  // The honest extreme: all 100 items on the heaviest candidate.
  const std::vector<uint64_t> extreme = device_report(task, {{heaviest, total}});
  EXPECT_EQ(widest_row(task, extreme), static_cast<double>(total) * static_cast<double>(weight));
  EXPECT_FALSE(check(extreme)) << *check(extreme);
  // One unit beyond it in row 0.
  std::vector<uint64_t> beyond = extreme;
  for (uint32_t b = 0; b < task.parameters.data_shift.width; ++b) {
    if (beyond[b] != 0) {
      const int64_t v = static_cast<int64_t>(beyond[b]);
      beyond[b] = static_cast<uint64_t>(v > 0 ? v + 1 : v - 1);
      break;
    }
  }
  const auto refused = check(beyond);
  ASSERT_TRUE(refused) << "a row of " << total << " x " << weight
                       << " + 1 (the heaviest candidate's weight " << weight << ", id " << heaviest
                       << ") was accepted";
  EXPECT_NE(refused->find("largest sampling weight"), std::string::npos) << *refused;
  // The reviewer's forgery.
  const std::vector<uint64_t> forged =
      scaled_report(task, planted_items(), total, factor_for(task, total * std::ldexp(1.0, 35)));
  EXPECT_TRUE(check(forged)) << "rows at 100 x 2^35 were accepted: the heaviest candidate of the "
                             << "domain weighs " << weight << " = 2^"
                             << std::log2(static_cast<double>(weight));
}

// F1 (a) and (b): whatever is summed, the published TV estimates are distances in [0, 1]; and
// what the check admits from one device of 100 items moves the fleet's estimate by less than 0.1
// (the reviewer's threshold; its 100 items are 0.3 % of the fleet's ~35,000). The forgeries:
// the reviewer's 40 planted items scaled until a row reaches 100 × 2^35 (the first bound; summed
// here without the check) and 100 × the domain's heaviest weight (a row bound over the domain,
// which the check no longer admits either); then the largest multiples the check admits of the
// planted items and of one copy of the candidate a lie is best put on (the one whose counters
// hold the heaviest candidates relative to its own weight). Deterministic: the task's seed, the
// estimator's noise-free path (trust none).
TEST(AuditPrivacyReview, OneForgedDataShiftDeviceCannotPushTheTvEstimateOutOfZeroOne) {
  TempDir dir;
  const TaskPlan plan = plan_task(data_shift_declaration(dir), dir.file(""), 0);
  const fedstat_v1_Task& task = plan.task;
  const ReportCheck check = report_check(task);
  ASSERT_TRUE(check);
  const std::vector<uint64_t> honest = honest_fleet_sum(task, check);
  EXPECT_LT(tv_of(plan, honest, 20, "tv_topk"), 0.1) << "the honest fleet holds the reference";
  const int64_t total = 100;
  const std::vector<std::pair<uint32_t, int64_t>> one = {{lightest_in_heavy_company(task), 1}};
  struct Forgery {
    const char* what;
    std::vector<std::pair<uint32_t, int64_t>> items;
    int64_t factor;
    bool admitted;  // by the check: then it must move the estimate by less than 0.1
  };
  const Forgery forgeries[] = {
      {"rows at 100 x 2^35", planted_items(), factor_for(task, total * std::ldexp(1.0, 35)), false},
      {"rows at 100 x the heaviest weight", planted_items(),
       factor_for(task, total * static_cast<double>(heaviest_item(task).second)), false},
      {"the planted items, the most admitted", planted_items(),
       largest_admitted(task, planted_items(), total, check), true},
      {"one candidate, the most admitted", one, largest_admitted(task, one, total, check), true}};
  for (const Forgery& f : forgeries) {
    const std::vector<uint64_t> forged = scaled_report(task, f.items, total, f.factor);
    EXPECT_EQ(!check(forged), f.admitted) << f.what;
    std::vector<uint64_t> sum = honest;
    for (size_t w = 0; w < sum.size(); ++w) sum[w] += forged[w];
    for (const char* which : {"tv_topk", "tv_hh"}) {
      const double before = tv_of(plan, honest, 20, which);
      const double attacked = tv_of(plan, sum, 21, which);
      std::printf("  %s: 20 honest devices %.4f; + one device of 100 items (%s: x %lld) %.4f\n",
                  which, before, f.what, static_cast<long long>(f.factor), attacked);
      EXPECT_GE(attacked, 0.0) << which << ", " << f.what;
      EXPECT_LE(attacked, 1.0) << which << ", " << f.what << ": " << before << " -> " << attacked;
      if (f.admitted) {
        EXPECT_LT(std::fabs(attacked - before), 0.1)
            << which << ", " << f.what << ": " << before << " -> " << attacked;
      }
    }
  }
}

// F1 (b), the device side: items outside [0, domain) cannot be candidates; the device's sketch
// holds only its items inside the domain, and its total still counts every item (so the
// estimate's shares stay shares of the device's whole histogram).
TEST(AuditPrivacyReview, ADeviceSketchesOnlyItsItemsInsideTheDomain) {
  TempDir dir;
  const TaskPlan plan = plan_task(data_shift_declaration(dir), dir.file(""), 0);
  const fedstat_v1_Task& task = plan.task;
  const std::vector<uint64_t> inside = device_report(task, {{5, 3}, {kDomain - 1, 2}});
  const std::vector<uint64_t> with_outside =
      device_report(task, {{5, 3}, {kDomain - 1, 2}, {kDomain, 4}, {5000, 7}, {UINT32_MAX, 1}});
  ASSERT_EQ(inside.size(), with_outside.size());
  EXPECT_EQ(with_outside.back(), 17u) << "the total counts every item";
  const std::vector<uint64_t> counters_inside(inside.begin(), inside.end() - 1);
  const std::vector<uint64_t> counters(with_outside.begin(), with_outside.end() - 1);
  EXPECT_EQ(counters, counters_inside) << "items at or above the domain were sketched";
  // An honest device whose items spread far beyond the domain is never refused.
  std::vector<std::pair<uint32_t, int64_t>> spread;
  for (uint32_t i = 0; i < 500; ++i) spread.push_back({i * 2654435761u % (1u << 24), 1 + i % 9});
  const std::vector<uint64_t> r = device_report(task, spread);
  const ReportCheck check = report_check(task);
  ASSERT_TRUE(check);
  EXPECT_FALSE(check(r)) << *check(r);
}

// F5: the query points are distinct, so an honest device's counts at them sum to at most its
// total; each count at most the total was the only check.
TEST(AuditPrivacyReview, KlCountsSummingAboveTheTotalAreRefused) {
  fedstat_v1_Task t = fedstat_v1_Task_init_zero;
  t.kind = fedstat_v1_TaskKind_KL_ANSWERS;
  t.trust = fedstat_v1_TrustModel_TRUSTED;
  t.bits = 64;
  t.vector_length = 4;  // three query points, then the total
  t.max_clients = 4;
  const ReportCheck check = report_check(t);
  ASSERT_TRUE(check);
  EXPECT_FALSE(check({3, 2, 2, 7}));  // 7 items, every one at a query point
  EXPECT_FALSE(check({7, 0, 0, 7}));
  const auto every_point = check({7, 7, 7, 7});  // every item at every point: 21 of 7
  ASSERT_TRUE(every_point) << "counts summing to 21 > the total 7 were accepted";
  EXPECT_NE(every_point->find("sum"), std::string::npos) << *every_point;
  EXPECT_TRUE(check({3, 3, 2, 7})) << "counts summing to 8 > the total 7 were accepted";
}

// F6: noise_seed seeded nothing a server releases (a collector noises each round from its stored
// CSPRNG seed; a TAgg noises only tagg tasks and refused it with them): a config naming it is
// refused, on either role, saying why and what to do.
TEST(AuditPrivacyReview, AConfigNamingNoiseSeedIsRefusedOnEveryRole) {
  TempDir dir;
  const std::string secret(64, '1');
  const json collector = {{"listen", "127.0.0.1:0"},
                          {"store", "a.db"},
                          {"fleet_secret", secret},
                          {"noise_seed", 9},
                          {"tasks", json::array()}};
  const json tagg = {{"role", "tagg"},  {"listen", "127.0.0.1:0"},        {"store", "t.db"},
                     {"noise_seed", 9}, {"collectors", {{"c1", secret}}}, {"tasks", json::array()}};
  for (const json& config : {collector, tagg}) {
    const std::string path = dir.file("server.json");
    std::ofstream(path) << config.dump();
    try {
      read_server_config(path);
      ADD_FAILURE() << "a config with noise_seed was read: " << config.dump();
    } catch (const std::invalid_argument& e) {
      const std::string why = e.what();
      EXPECT_NE(why.find("noise_seed"), std::string::npos) << why;
      EXPECT_NE(why.find("CSPRNG"), std::string::npos) << why;
    }
  }
}

}  // namespace
}  // namespace host
}  // namespace fedstat
