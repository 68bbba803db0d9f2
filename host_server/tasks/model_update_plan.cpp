// The model_update task plan (model_update_plan.h).
#include "host_server/tasks/model_update_plan.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "host_server/estimate/host_common.h"
#include "host_server/estimate/labelled_examples.h"
#include "host_server/tasks/declaration_fields.h"
#include "host_server/tasks/report_bounds.h"
#include "sdk/client/contribution.h"
#include "sdk/noise/rational.h"
#include "sdk/quantise/quantise.h"
#include "sdk/tasks/logistic_trainer.h"
#include "sdk/tasks/model_update_task.h"

namespace fedstat {
namespace host {
namespace {

using nlohmann::json;
using namespace declaration;  // NOLINT: the field readers every plan shares

// The starting model: d finite numbers within the trainer's kMaxStartValue, or zeros.
std::vector<double> initial_model(const json& p, size_t d, const std::string& where) {
  if (!p.contains("initial_model")) return std::vector<double>(d, 0.0);
  const json& value = p["initial_model"];
  const std::string field = where + ".initial_model";
  if (!value.is_array() || value.size() != d) {
    refuse(field, "must be an array of dimension (" + std::to_string(d) + ") numbers");
  }
  std::vector<double> model;
  for (size_t k = 0; k < d; ++k) {
    const std::string at = field + "[" + std::to_string(k) + "]";
    if (!value[k].is_number()) refuse(at, "must be a number (got " + value[k].dump() + ")");
    const double x = value[k].get<double>();
    if (!std::isfinite(x) || std::fabs(x) > tasks::kMaxStartValue) {
      refuse(at, "must be finite and within +-1e12, not " + value[k].dump());
    }
    model.push_back(x);
  }
  return model;
}

// The fleet's modular sum must not wrap: every device's integer vector has norm at most
// γ·(c + e) + β·√D (quantise.h: ‖y‖ ≤ c + e, the conditional rounding moves it by ≤ β·√D), so
// each word of the sum of max_clients reports is at most max_clients times that (+1 for the
// rounding of this bound), plus the fleet's Skellam noise, bounded here by 40 standard deviations
// of Sk(max_clients·λ) + 64 (a wrap past that is not a practical event).
void check_sum_fits(const tasks::ModelUpdateConfig& config, size_t d, uint32_t max_clients,
                    double lambda) {
  const quantise::QuantiseConfig& q = config.quantise;
  const double length = static_cast<double>(quantise::encoded_length(d, q));
  const double one =
      q.gamma * (q.clip_norm + quantise::rounding_bound(d, q)) + q.beta * std::sqrt(length) + 1;
  double bound = max_clients * one;
  if (lambda > 0) bound += 40 * std::sqrt(2.0 * max_clients * lambda) + 64;
  const double limit = std::ldexp(1.0, static_cast<int>(q.modulus_bits) - 1);
  if (!(bound < limit)) {
    refuse("model_update.bits",
           "is too small: max_clients x gamma x clip_norm plus the noise (about " +
               std::to_string(bound) + ") must stay below 2^(bits-1) = " + std::to_string(limit) +
               " or the sum wraps (raise bits, lower gamma or clip_norm)");
  }
}

// A bound on ‖z‖ for z ∈ Z^D of i.i.d. Skellam coordinates of variance s2 (the fleet's noise in
// a released sum), exceeded with probability below 1e-15. Every |z_i| ≤ B = 40·√s2 + 64 except
// with probability ≤ 2·e^−50 each (Bernstein for a difference of Poissons, unit jumps: as
// check_sum_fits assumes; D ≤ 2^20 coordinates). On that event Σz_i² = Σw_i, w_i = min(z_i², B²)
// ∈ [0, B²], E w_i ≤ s2, Var w_i ≤ E z⁴ = 3·s2² + s2 (Skellam's fourth moment), so Bernstein's
// inequality gives Σw_i ≤ D·s2 + t except with probability e^−L, L = 40, t = a + √(a² + 2·L·D·v),
// a = L·B²/3. Also ‖z‖ ≤ √D·B on the event; the smaller of the two is returned.
double skellam_norm_bound(double D, double s2) {
  if (!(s2 > 0)) return 0;
  const double B = 40 * std::sqrt(s2) + 64, L = 40;
  const double v = 3 * s2 * s2 + s2, a = L * B * B / 3;
  const double t = a + std::sqrt(a * a + 2 * L * D * v);
  return std::min(std::sqrt(D) * B, std::sqrt(D * s2 + t));
}

}  // namespace

void plan_model_update(const json& declaration, const std::string& base_dir, TaskPlan& plan) {
  const std::string where = "model_update";
  const json& p = member(declaration, where, "task");
  only_fields(
      p,
      {"dimension", "epochs", "batches", "averaging_interval", "eta0", "mu", "clip_norm", "rotate",
       "gamma", "beta", "bits", "examples_per_client", "initial_model", "evaluation"},
      where);
  fedstat_v1_Task& task = plan.task;
  switch (task.trust) {
    case fedstat_v1_TrustModel_NONE:
      if (task.epsilon != 0 || task.delta != 0) {
        refuse("epsilon/delta", "must be 0 for a model_update task with trust \"none\"");
      }
      break;
    case fedstat_v1_TrustModel_DIST:
      break;
    case fedstat_v1_TrustModel_TRUSTED:
      refuse("trust",
             "\"trusted\" is not served for model_update: the host's central noise on the exact "
             "sum is not built; declare \"dist\" (each device adds a Skellam share) or \"none\"");
    default:
      refuse("trust", "of a model_update task must be none or dist");
  }
  fedstat_v1_ModelUpdateParameters& m = task.parameters.model_update;
  task.which_parameters = fedstat_v1_Task_model_update_tag;
  m.dimension = static_cast<uint32_t>(whole_number(p, "dimension", where, 1, 1u << 20));
  m.epochs = static_cast<uint32_t>(whole_number(p, "epochs", where, 1, tasks::kMaxEpochs));
  m.batches = static_cast<uint32_t>(whole_number(p, "batches", where, 1, 256));
  m.averaging_interval =
      static_cast<uint32_t>(whole_number(p, "averaging_interval", where, 1, tasks::kMaxEpochs));
  m.eta0 = real_number(p, "eta0", where, 0, 1e6);
  if (m.eta0 == 0) refuse(where + ".eta0", "must be > 0");
  m.mu = real_number(p, "mu", where, 0, 1e6);
  m.clip_norm = real_number(p, "clip_norm", where, 0, 1e12);
  if (m.clip_norm == 0) refuse(where + ".clip_norm", "must be > 0");
  m.rotate = flag(p, "rotate", where);
  m.gamma = real_number(p, "gamma", where, 0, 1e12);
  if (m.gamma == 0) refuse(where + ".gamma", "must be > 0");
  m.beta = real_number(p, "beta", where, 0.5, 1);
  task.bits = static_cast<uint32_t>(whole_number(p, "bits", where, 1, 32));
  m.examples_per_client =
      static_cast<uint32_t>(whole_number(p, "examples_per_client", where, 1, 1u << 24));
  if (m.examples_per_client < m.batches) {
    refuse(where + ".examples_per_client", "must be >= batches (each batch needs an example)");
  }
  const size_t d = m.dimension;

  // The configuration the devices derive from this Task, to the bit.
  const tasks::ModelUpdateConfig config = client::model_update_config(task);
  const Status trainer = tasks::validate_trainer_config(config.trainer);
  if (!trainer.ok()) {
    refuse(where + ".eta0/mu", std::string("are refused by the trainer: ") + trainer.message());
  }
  const Status quantiser = quantise::validate_config(d, config.quantise);
  if (!quantiser.ok()) {
    refuse(where + ".clip_norm/gamma/beta/bits",
           std::string("are refused by the quantiser: ") + quantiser.message());
  }
  task.vector_length = static_cast<uint32_t>(quantise::encoded_length(d, config.quantise));
  task.data_words = m.dimension;
  task.device_noise_lambda = 0;
  if (task.trust == fedstat_v1_TrustModel_DIST) {
    // Calibrated for threshold shares: secure aggregation releases no sum of fewer.
    const Result<double> lambda =
        tasks::model_update_lambda(config, d, task.threshold, task.epsilon, task.delta);
    if (!lambda.ok()) {
      refuse("epsilon/delta", std::string("of this dist model_update task are refused by the "
                                          "Skellam accountant: ") +
                                  lambda.status().message());
    }
    task.device_noise_lambda = lambda.value();
  }
  check_sum_fits(config, d, task.max_clients, task.device_noise_lambda);
  const Status device_check = client::validate_task(task);
  if (!device_check.ok()) {
    refuse("task", std::string("would be refused by the devices: ") + device_check.message());
  }

  const auto start = std::make_shared<const std::vector<double>>(initial_model(p, d, where));
  plan.data.resize(d);
  std::memcpy(plan.data.data(), start->data(), 8 * d);
  std::shared_ptr<const LabelledExamples> evaluation;
  if (p.contains("evaluation")) {
    evaluation = std::make_shared<const LabelledExamples>(
        read_labelled_examples(resolve(base_dir, text(p, "evaluation", where)), d));
  }
  const size_t length = task.vector_length;
  const bool dist = task.trust == fedstat_v1_TrustModel_DIST;
  const double lambda = task.device_noise_lambda;
  // What an honest fleet's sum reaches (docs/protocol.md, "One malicious device"): each device's
  // words within model_update_norm_bound (report_bounds.h), plus Sk(λ′) per word, λ′ the share
  // as the devices sample it (rounded up to a rational).
  const double per_device = model_update_norm_bound(task);
  const double share_lambda =
      dist ? value_or_throw(noise::rational_at_least(lambda), "skellam share").to_double() : 0;
  const unsigned bits = task.bits;
  plan.estimate_with = [config, start, evaluation, d, length, dist, lambda, per_device,
                        share_lambda, bits](const std::vector<uint64_t>& sum, uint32_t contributors,
                                            RandomBits&) {
    if (sum.size() != length) throw std::invalid_argument("model_update: sum length");
    // A sum no fleet of `contributors` honest devices reaches is refused, not clamped: only a
    // forged update crosses the bound (an honest fleet with probability below 1e-15), a model
    // scaled back into the ball would still point where the forger chose, and the round's loss
    // is what one DIST device can already cause (a false commitment aborts it).
    const double n = static_cast<double>(contributors);
    const double reach =
        (n * per_device + skellam_norm_bound(static_cast<double>(length), 2 * n * share_lambda)) *
            (1 + 0x1p-30) +
        1;
    const long double norm = centred_norm(sum, bits);
    if (norm > static_cast<long double>(reach)) {
      json refused{
          {"kind", "model_update"},
          {"contributors", contributors},
          {"model", nullptr},
          {"estimate", nullptr},
          {"refused", "the summed update's L2 norm (" + std::to_string(static_cast<double>(norm)) +
                          ") is above the most " + std::to_string(contributors) +
                          " honest devices and their noise reach (" + std::to_string(reach) +
                          "): a device sent an update no honest device sends; no model "
                          "is published from this sum"}};
      if (dist) refused["device_noise_lambda"] = lambda;
      return refused;
    }
    std::vector<double> model(*start), work(length), change(d);
    check(tasks::apply_aggregate(Span<const uint64_t>(sum.data(), length), contributors, config,
                                 Span<double>(work.data(), length), Span<double>(change.data(), d),
                                 Span<double>(model.data(), d)),
          "model_update: the aggregate");
    json result{{"kind", "model_update"}, {"contributors", contributors}, {"model", model}};
    if (dist) result["device_noise_lambda"] = lambda;
    if (evaluation) {
      const tasks::Examples held_out = evaluation->view();
      const Span<const double> w(model.data(), d);
      const double accuracy = tasks::accuracy(held_out, w);
      result["evaluation_examples"] = evaluation->count();
      result["loss"] = tasks::logistic_loss(held_out, w, config.trainer.mu);
      result["accuracy"] = accuracy;
      result["estimate"] = accuracy;
    }
    return result;
  };
}

}  // namespace host
}  // namespace fedstat
