// HETEROGENEITY plans: two chained tasks, D, Q and I² (heterogeneity_plan.h).
#include "host_server/tasks/heterogeneity_plan.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "host_server/estimate/heterogeneity.h"
#include "host_server/estimate/host_common.h"
#include "host_server/tasks/declaration_fields.h"
#include "sdk/noise/rational.h"

namespace fedstat {
namespace host {
namespace {

using nlohmann::json;

constexpr uint32_t kMaxDimension = 4096;
constexpr const char* kWhere = "heterogeneity";

using namespace declaration;  // the field readers every plan shares

// What both stages read from the declaration, checked once.
struct Parameters {
  uint32_t dimension = 0;
  tasks::HeterogeneityConfig config;
  uint32_t stage2_id = 0;
  bool dist = false;
  double scale[4] = {0, 0, 0, 0};  // per release; one per stage (kPerStage)
  double device_lambda = 0;        // dist: each device's Skellam share λ (as declared)
  double share_lambda = 0;         // ... and as the devices sample it (rounded up to a rational)
};

Parameters parameters_of(const json& declaration, const fedstat_v1_Task& task) {
  const json& h = member(declaration, kWhere, "task");
  only_fields(h, {"dimension", "p", "max_weight", "stage2_id"}, kWhere);
  Parameters p;
  switch (task.trust) {
    case fedstat_v1_TrustModel_NONE:
      if (task.epsilon != 0 || task.delta != 0) {
        refuse("epsilon/delta",
               "must be 0 for a heterogeneity task with trust \"none\" (no noise)");
      }
      break;
    case fedstat_v1_TrustModel_DIST:
      p.dist = true;
      break;
    default:
      refuse("trust",
             "of a heterogeneity task must be \"none\" or \"dist\": \"trusted\" would need central "
             "noise on both stages' exact sums, which the server does not add");
  }
  p.dimension = static_cast<uint32_t>(whole_number(h, "dimension", kWhere, 1, kMaxDimension));
  p.config.p = real_number(h, "p", kWhere, 1, 64);
  p.config.max_weight = real_number(h, "max_weight", kWhere, 4, 1e6);
  p.stage2_id = static_cast<uint32_t>(whole_number(h, "stage2_id", kWhere, 1, 1u << 31));
  if (p.stage2_id == task.task_id) refuse("heterogeneity.stage2_id", "must differ from the id");
  if (p.dist) {
    if (!(task.delta > 0)) {
      refuse("epsilon/delta", "of a dist heterogeneity task need δ in (0, 1) (Skellam noise)");
    }
    SkellamCalibration c;
    try {
      c = calibrate_heterogeneity_skellam(p.dimension, p.config, task.epsilon, task.delta,
                                          FixedPointScales::kPerStage);
    } catch (const std::exception& e) {
      refuse("epsilon/delta", std::string("cannot be calibrated: ") + e.what());
    }
    for (int k = 0; k < 4; ++k) p.scale[k] = c.scale[k];
    // ≥ threshold shares in every released sum, or secure aggregation aborts.
    p.device_lambda = c.sum_lambda / task.threshold;
    p.share_lambda =
        value_or_throw(noise::rational_at_least(p.device_lambda), "skellam share").to_double();
  } else {
    heterogeneity_fixed_point_scales(p.dimension, p.config, FixedPointScales::kPerStage, p.scale);
  }
  return p;
}

// The Task's heterogeneity fields for `stage`.
void set_stage(const Parameters& p, uint32_t stage, fedstat_v1_Task& task) {
  task.which_parameters = fedstat_v1_Task_heterogeneity_tag;
  fedstat_v1_HeterogeneityParameters& out = task.parameters.heterogeneity;
  out.dimension = p.dimension;
  out.p = p.config.p;
  out.max_weight = p.config.max_weight;
  out.scale = p.scale[stage == 1 ? 0 : 2];
  out.stage = stage;
  task.bits = 64;
  task.device_noise_lambda = p.device_lambda;
  if (stage == 1) {
    task.vector_length = static_cast<uint32_t>(tasks::heterogeneity_round1_length(p.dimension));
    task.data_words = 0;
  } else {
    task.vector_length = static_cast<uint32_t>(tasks::heterogeneity_round2_length());
    task.data_words = 2 * p.dimension;
  }
}

// Stage 2's own Task fields over `task`, which holds the common fields plan_task gave stage 1:
// its id, its secure-aggregation session (public, like stage 1's, and another one: derived from
// the seed by the PRF's next stream) and the stage's heterogeneity parameters.
void make_stage2_task(const Parameters& p, fedstat_v1_Task& task) {
  task.task_id = p.stage2_id;
  Seed256 seed;
  std::memcpy(seed.bytes, task.seed.bytes, sizeof(seed.bytes));
  SeededStream session_stream(seed, ~uint64_t{0} - 1);
  task.secagg_session = value_or_throw(session_stream.next_u64(), "secure aggregation session id");
  set_stage(p, 2, task);
}

// σ of a stage's releases in real units: √(2·n·λ)/s (0 without noise).
double sigma_of(const Parameters& p, int release, uint32_t contributors) {
  if (!p.dist) return 0;
  return std::sqrt(2 * static_cast<double>(contributors) * p.share_lambda) / p.scale[release];
}

json statistic(const StatisticEstimate& s) {
  return json{{"estimate", s.estimate},
              {"ci", json::array({s.ci.low, s.ci.high})},
              {"noise_sd", s.noise_sd}};
}

json signed_words(const std::vector<uint64_t>& sum) {
  json words = json::array();
  for (uint64_t w : sum) words.push_back(static_cast<int64_t>(w));
  return words;
}

}  // namespace

void plan_heterogeneity(const json& declaration, const std::string& base_dir, uint64_t noise_seed,
                        TaskPlan& plan) {
  const Parameters p = parameters_of(declaration, plan.task);
  set_stage(p, 1, plan.task);
  const size_t words = tasks::heterogeneity_round1_length(p.dimension);
  plan.estimate_with = [p, words](const std::vector<uint64_t>& sum, uint32_t contributors,
                                  RandomBits&) {
    if (sum.size() != words) throw std::invalid_argument("heterogeneity stage 1: sum length");
    const HeterogeneityRound1 r = finish_heterogeneity_round1(
        decode_fixed_point_sums(sum, p.scale[0]), contributors, p.config);
    return json{{"kind", "heterogeneity"},
                {"stage", 1},
                {"model", p.dist ? "dist" : "none"},
                {"contributors", contributors},
                {"estimate", nullptr},
                {"stage2_task", p.stage2_id},
                {"sum", signed_words(sum)},
                {"mean", r.mean},
                {"weighted_mean", r.weighted_mean},
                {"sum_weights", r.sum_weights},
                {"sum_inverse_weights", r.sum_inverse_weights}};
  };
  // The truth the pair estimates (stage 2's "estimate", I²) over every device's vector.
  plan.exact = [p](const std::string& data_dir) {
    return exact_heterogeneity(read_client_vectors(data_dir + "/vectors.csv"), p.config).i2;
  };
  plan.next_task_id = p.stage2_id;
  const bool signed_sessions = plan.signed_sessions;
  plan.next_stage = [declaration, base_dir, noise_seed, signed_sessions](const std::string& result,
                                                                         uint64_t opened) {
    return plan_heterogeneity_stage2(declaration, base_dir, noise_seed, json::parse(result), opened,
                                     signed_sessions);
  };
}

TaskPlan plan_heterogeneity_stage2(const json& declaration, const std::string& base_dir,
                                   uint64_t noise_seed, const json& stage1_result,
                                   uint64_t opened_unix_seconds, bool signed_sessions) {
  // The common fields as stage 1 has them, at stage 2's opening time.
  TaskPlan plan =
      plan_task(declaration, base_dir, opened_unix_seconds, noise_seed, signed_sessions);
  const Parameters p = parameters_of(declaration, plan.task);
  const uint32_t stage1_id = plan.task.task_id;
  const size_t d = p.dimension;

  // Stage 1's release, exactly as published.
  auto bad = [&](const std::string& why) {
    throw std::invalid_argument("task " + std::to_string(stage1_id) +
                                ": not a stage-1 heterogeneity result (" + why + ")");
  };
  if (!stage1_result.is_object() || stage1_result.value("kind", "") != "heterogeneity" ||
      stage1_result.value("stage", 0) != 1) {
    bad("kind or stage");
  }
  const json& words = stage1_result.contains("sum") ? stage1_result["sum"] : json();
  if (!words.is_array() || words.size() != tasks::heterogeneity_round1_length(d)) bad("sum");
  std::vector<uint64_t> sum;
  for (const json& w : words) {
    if (!w.is_number_integer()) bad("sum");
    sum.push_back(static_cast<uint64_t>(w.get<int64_t>()));
  }
  if (stage1_result.value("sum_sha256", "") != sum_digest(sum)) bad("sum_sha256");
  const json& n1_field =
      stage1_result.contains("contributors") ? stage1_result["contributors"] : json();
  if (!n1_field.is_number_unsigned() || n1_field.get<uint64_t>() == 0 ||
      n1_field.get<uint64_t>() > UINT32_MAX) {
    bad("contributors");
  }
  const uint32_t n1 = n1_field.get<uint32_t>();
  const HeterogeneityRound1 round1 =
      finish_heterogeneity_round1(decode_fixed_point_sums(sum, p.scale[0]), n1, p.config);

  fedstat_v1_Task& task = plan.task;
  make_stage2_task(p, task);
  plan.data.clear();
  for (const std::vector<double>* means : {&round1.mean, &round1.weighted_mean}) {
    for (double v : *means) {
      uint64_t bits = 0;
      std::memcpy(&bits, &v, sizeof(bits));
      plan.data.push_back(bits);
    }
  }
  plan.estimate_with = with_sum_digest(
      [p, round1, n1, stage1_id](const std::vector<uint64_t>& sum, uint32_t contributors,
                                 RandomBits&) {
        if (sum.size() != tasks::heterogeneity_round2_length()) {
          throw std::invalid_argument("heterogeneity stage 2: sum length");
        }
        HeterogeneityEstimate e;
        for (int k = 0; k < 4; ++k) e.sigma[k] = sigma_of(p, k, k < 2 ? n1 : contributors);
        const std::vector<double> released = decode_fixed_point_sums(sum, p.scale[2]);
        finish_heterogeneity_round2(released[0], released[1], n1, contributors, round1, p.dist, e);
        return json{{"kind", "heterogeneity"},
                    {"stage", 2},
                    {"model", p.dist ? "dist" : "none"},
                    {"contributors", contributors},
                    {"stage1_task", stage1_id},
                    {"stage1_contributors", n1},
                    {"p", p.config.p},
                    {"estimate", e.i2.estimate},
                    {"i2", statistic(e.i2)},
                    {"dispersion", statistic(e.dispersion)},
                    {"q", statistic(e.q)},
                    {"sigma", json::array({e.sigma[0], e.sigma[1], e.sigma[2], e.sigma[3]})},
                    {"device_lambda", p.share_lambda}};
      },
      task.trust);
  plan.estimate = with_plan_noise(plan.estimate_with, noise_seed);
  plan.next_task_id = 0;
  plan.next_stage = nullptr;
  return plan;
}

fedstat_v1_Task heterogeneity_stage2_task(const json& declaration, const std::string& base_dir,
                                          uint64_t opened_unix_seconds) {
  TaskPlan plan = plan_task(declaration, base_dir, opened_unix_seconds, /*noise_seed=*/1);
  if (plan.task.kind != fedstat_v1_TaskKind_HETEROGENEITY) {
    throw std::invalid_argument("task kind: not a heterogeneity task (no stage 2)");
  }
  make_stage2_task(parameters_of(declaration, plan.task), plan.task);
  return plan.task;
}

}  // namespace host
}  // namespace fedstat
