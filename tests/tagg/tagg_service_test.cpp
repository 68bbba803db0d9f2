// TaggService: the TAgg's checks (public shape only), its release (the kl plan's tagg model on
// the collector's sums) and its one-aggregate-per-task rule, persisted before it answers.
#include "host_server/tagg/tagg_service.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "host_server/estimate/kl_estimator.h"
#include "host_server/estimate/noise_bits.h"
#include "host_server/store/memory_store.h"
#include "tests/tagg/tagg_fixture.h"

namespace fedstat {
namespace host {
namespace testing {
namespace {

using nlohmann::json;

// The TAgg's plans: the kl task as tagg (id 7) and as trusted (id 8).
std::map<uint32_t, TaskPlan> plans(uint64_t noise_seed) {
  std::map<uint32_t, TaskPlan> out;
  out.emplace(kTaggTask, plan_task(kl_declaration(kTaggTask, "tagg"), "", 0, noise_seed));
  out.emplace(8, plan_task(kl_declaration(8, "trusted"), "", 0, noise_seed));
  return out;
}

StatusCode refusal_code(const std::variant<std::string, Refusal>& answer) {
  EXPECT_TRUE(std::holds_alternative<Refusal>(answer));
  return std::holds_alternative<Refusal>(answer) ? std::get<Refusal>(answer).code : StatusCode::kOk;
}

TEST(TaggService, RefusesByPublicShapeAndStoresNothing) {
  auto store = make_memory_store();
  TaggService tagg(*store, plans(0), {});
  const TaskPlan plan = plan_task(kl_declaration(kTaggTask, "tagg"), "", 0);
  const ExactAggregate good = fleet_aggregate(plan, 6);

  ExactAggregate a = good;
  a.task_id = 99;  // unknown here
  EXPECT_EQ(refusal_code(tagg.submit(a)), StatusCode::kNotFound);
  a = good;
  a.task_id = 8;  // declared, but trusted
  EXPECT_EQ(refusal_code(tagg.submit(a)), StatusCode::kFailedPrecondition);
  a = good;
  a.words.pop_back();
  EXPECT_EQ(refusal_code(tagg.submit(a)), StatusCode::kInvalidArgument);
  a = good;
  a.words.push_back(1);
  EXPECT_EQ(refusal_code(tagg.submit(a)), StatusCode::kInvalidArgument);
  a = good;
  a.contributors = 4;  // below min_clients 5
  EXPECT_EQ(refusal_code(tagg.submit(a)), StatusCode::kOutOfRange);
  a.contributors = 11;  // above max_clients 10
  EXPECT_EQ(refusal_code(tagg.submit(a)), StatusCode::kOutOfRange);
  EXPECT_TRUE(store->events(kTaggTask).empty());
  EXPECT_FALSE(store->result(kTaggTask).has_value());
  // The header alone is refused the same way (the intake's check at the first chunk).
  const TaskFingerprint& print = good.task_fingerprint;
  EXPECT_EQ(tagg.check_header(99, 6, plan.task.vector_length, print)->code, StatusCode::kNotFound);
  EXPECT_EQ(tagg.check_header(kTaggTask, 4, plan.task.vector_length, print)->code,
            StatusCode::kOutOfRange);
  EXPECT_FALSE(tagg.check_header(kTaggTask, 5, plan.task.vector_length, print).has_value());
  EXPECT_TRUE(store->events(kTaggTask).empty());
}

// The devices were charged for the collector's Task: an aggregate of a task this TAgg declares
// with another ε (or seed, or points) is refused, not noised at the TAgg's ε.
TEST(TaggService, RefusesAnAggregateOfATaskDeclaredOtherwise) {
  auto store = make_memory_store();
  TaggService tagg(*store, plans(0), {});
  for (const char* field : {"epsilon", "seed", "rounds"}) {
    nlohmann::json declaration = kl_declaration(kTaggTask, "tagg");
    if (std::string(field) == "epsilon") declaration["epsilon"] = 4.0;
    if (std::string(field) == "seed") declaration["seed"] = std::string(62, '0') + "2c";
    if (std::string(field) == "rounds") declaration["kl"]["rounds"] = 61;
    const TaskPlan collectors = plan_task(declaration, "", 0);
    ExactAggregate a = fleet_aggregate(collectors, 6);
    a.words.resize(plan_task(kl_declaration(kTaggTask, "tagg"), "", 0).task.vector_length, 1);
    const auto answer = tagg.submit(a);
    ASSERT_EQ(refusal_code(answer), StatusCode::kFailedPrecondition) << field;
    EXPECT_NE(std::get<Refusal>(answer).detail.find("declared otherwise"), std::string::npos);
  }
  EXPECT_TRUE(store->events(kTaggTask).empty());
}

// The release is the tagg model's: A and B noised as one 2-value Gaussian mechanism from the
// TAgg's noise stream, (B − A)/T; and nothing but the public fields and the noised values.
TEST(TaggService, ReleasesTheTaggModelsEstimateOfTheSums) {
  auto store = make_memory_store();
  TaggService tagg(*store, plans(/*noise_seed=*/11), {});
  const TaskPlan plan = plan_task(kl_declaration(kTaggTask, "tagg"), "", 0);
  const ExactAggregate aggregate = fleet_aggregate(plan, 6);
  const auto answer = tagg.submit(aggregate);
  ASSERT_TRUE(std::holds_alternative<std::string>(answer)) << std::get<Refusal>(answer).detail;
  const json result = json::parse(std::get<std::string>(answer));

  // The same computation by hand: the plan's points from the task seed, the sums at them.
  Seed256 seed;
  std::memcpy(seed.bytes, plan.task.seed.bytes, 32);
  SeededStream stream(seed, 1);
  RandomBits bits(stream);
  KlPlan kl = plan_kl(read_item_counts(write_reference()), 60, 10, 1.0, bits);
  kl.clients = 6;
  KlSums sums;
  for (uint32_t x : kl.points) {
    const size_t i = std::find(plan.data.begin(), plan.data.end(), x) - plan.data.begin();
    sums.counts.push_back(static_cast<int64_t>(aggregate.words[i]));
    sums.totals.push_back(aggregate.words.back());
  }
  KlOptions options;
  options.model = KlModel::kTagg;
  options.lambda = 0.1;
  options.epsilon = 2.0;
  options.delta = 1e-6;
  NoiseBits noise = NoiseBits::seeded(11);
  const KlEstimate e = estimate_kl(kl, sums, options, noise.stream(0));
  EXPECT_EQ(result["estimate"].get<double>(), e.estimate) << result.dump();
  EXPECT_EQ(result["estimate_sd"].get<double>(), e.estimate_sd);
  EXPECT_NE(e.estimate, e.noiseless);
  EXPECT_EQ(result["model"], "tagg");
  EXPECT_EQ(result["contributors"], 6);
  std::set<std::string> keys;
  for (auto it = result.begin(); it != result.end(); ++it) keys.insert(it.key());
  EXPECT_EQ(keys, (std::set<std::string>{"kind", "model", "contributors", "items", "estimate",
                                         "estimate_sd"}));
  // Persisted before the answer: the aggregate, then the result and the state.
  ASSERT_EQ(store->events(kTaggTask).size(), 1u);
  EXPECT_EQ(store->events(kTaggTask)[0].kind, EventKind::kServerNote);
  EXPECT_EQ(store->events(kTaggTask)[0].payload, aggregate_bytes(aggregate));
  EXPECT_EQ(store->result(kTaggTask), std::get<std::string>(answer));
  EXPECT_EQ(store->tasks().at(0).state, kTaggReleased);
}

// One noising per task: a resend of the same bytes gets the stored draw (a second draw from the
// seeded stream would differ), any other aggregate for the task is refused — also after a
// restart, whose fresh CSPRNG would draw anew.
TEST(TaggService, OneAggregatePerTaskAndTheSameAnswerToAResend) {
  auto store = make_memory_store();
  const TaskPlan plan = plan_task(kl_declaration(kTaggTask, "tagg"), "", 0);
  const ExactAggregate aggregate = fleet_aggregate(plan, 6);
  std::string first;
  {
    TaggService tagg(*store, plans(/*noise_seed=*/5), {});
    first = std::get<std::string>(tagg.submit(aggregate));
    EXPECT_EQ(std::get<std::string>(tagg.submit(aggregate)), first);
    ExactAggregate other = aggregate;
    other.words[0] += 1;
    EXPECT_EQ(refusal_code(tagg.submit(other)), StatusCode::kAlreadyExists);
    other = aggregate;
    other.contributors = 7;
    EXPECT_EQ(refusal_code(tagg.submit(other)), StatusCode::kAlreadyExists);
  }
  TaggService restarted(*store, plans(/*noise_seed=*/0), {});
  EXPECT_EQ(std::get<std::string>(restarted.submit(aggregate)), first);
  ExactAggregate other = aggregate;
  other.words.back() += 1;
  EXPECT_EQ(refusal_code(restarted.submit(other)), StatusCode::kAlreadyExists);
  EXPECT_EQ(store->events(kTaggTask).size(), 1u);
}

// Whether the TAgg answers does not depend on the counts: no count at any point, or one, is
// released like any other aggregate (the clamp at 2, kl_estimator.h).
TEST(TaggService, AnswersEveryValidlyShapedAggregate) {
  const TaskPlan plan = plan_task(kl_declaration(kTaggTask, "tagg"), "", 0);
  for (uint64_t count : {uint64_t{0}, uint64_t{1}, uint64_t{2}, uint64_t{1} << 40}) {
    auto store = make_memory_store();
    TaggService tagg(*store, plans(0), {});
    ExactAggregate a = fleet_aggregate(plan, 5);
    for (size_t i = 0; i + 1 < a.words.size(); ++i) a.words[i] = count;
    const auto answer = tagg.submit(a);
    ASSERT_TRUE(std::holds_alternative<std::string>(answer)) << count;
    EXPECT_TRUE(json::parse(std::get<std::string>(answer))["estimate"].is_number()) << count;
  }
}

}  // namespace
}  // namespace testing
}  // namespace host
}  // namespace fedstat
