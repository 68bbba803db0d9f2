#include "host_server/estimate/kl_estimator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

#include "host_server/estimate/gaussian_noise.h"
#include "host_server/estimate/host_common.h"
#include "sdk/tasks/kl_answer_task.h"

namespace fedstat {
namespace host {
namespace {

constexpr double kLog2 = 0.69314718055994530942;

// Exact Bernoulli(rate) from 53 uniform bits.
bool draw_member(RandomBits& bits, double rate) {
  if (rate >= 1) return true;
  const uint64_t threshold = static_cast<uint64_t>(std::ldexp(rate, 53));
  return value_or_throw(bits.bits(53), "client sampling") < threshold;
}

double gaussian_sigma(const KlOptions& options, double sensitivity) {
  auto sigma = options.calibration == GaussianCalibration::kAnalytic
                   ? privacy::gaussian_sigma_analytic(options.epsilon, options.delta, sensitivity)
                   : privacy::gaussian_sigma_classical(options.epsilon, options.delta, sensitivity);
  return value_or_throw(sigma, "gaussian calibration");
}

}  // namespace

const char* kl_model_name(KlModel model) {
  switch (model) {
    case KlModel::kNone:
      return "none";
    case KlModel::kTrusted:
      return "trusted";
    case KlModel::kTagg:
      return "tagg";
    case KlModel::kDist:
      return "dist";
  }
  return "?";
}

KlModel parse_kl_model(const std::string& name) {
  for (KlModel m : {KlModel::kNone, KlModel::kTrusted, KlModel::kTagg, KlModel::kDist}) {
    if (name == kl_model_name(m)) return m;
  }
  throw std::invalid_argument("unknown model '" + name + "': use none, trusted, tagg or dist");
}

void validate_kl_options(const KlOptions& options) {
  if (!std::isfinite(options.lambda)) throw std::invalid_argument("lambda must be finite");
  if (options.model == KlModel::kDist && !(options.tau > 0 && options.tau < 1)) {
    throw std::invalid_argument("tau must lie in (0, 1): it is the floor of P'(x) in dist");
  }
  if (options.model != KlModel::kNone) {
    if (!(options.epsilon > 0) || !std::isfinite(options.epsilon)) {
      throw std::invalid_argument("epsilon must be positive");
    }
    if (!(options.delta > 0 && options.delta < 1)) {
      throw std::invalid_argument("delta must lie in (0, 1)");
    }
  }
}

KlPlan plan_kl(const ItemCounts& reference, uint32_t rounds, uint32_t clients, double rate,
               RandomBits& bits) {
  if (rounds == 0) throw std::invalid_argument("T (the number of sampled points) must be >= 1");
  if (clients == 0) throw std::invalid_argument("there must be at least one client");
  if (!(rate > 0 && rate <= 1)) throw std::invalid_argument("the client rate must lie in (0, 1]");
  if (reference.items.empty()) throw std::invalid_argument("the reference has no items");
  std::vector<uint64_t> cumulative(reference.items.size());
  uint64_t running = 0;
  for (size_t i = 0; i < reference.items.size(); ++i) {
    running += reference.items[i].count;
    cumulative[i] = running;
  }
  KlPlan plan;
  plan.clients = clients;
  plan.every_client_every_round = rate >= 1;
  std::map<uint32_t, uint32_t> asked;
  for (uint32_t t = 0; t < rounds; ++t) {
    const uint64_t u = value_or_throw(bits.uniform_below(running), "sampling from the reference");
    const size_t index = static_cast<size_t>(
        std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin());
    const ItemCount& item = reference.items[index];
    plan.points.push_back(item.id);
    plan.reference.push_back(static_cast<double>(item.count) / static_cast<double>(running));
    ++asked[item.id];
    if (!plan.every_client_every_round) {
      std::vector<uint32_t> members;
      while (members.empty()) {
        for (uint32_t c = 0; c < clients; ++c) {
          if (draw_member(bits, rate)) members.push_back(c);
        }
      }
      plan.round_clients.push_back(std::move(members));
    }
  }
  for (const auto& [id, times] : asked) {
    (void)id;
    if (times > plan.most_asked[0]) {
      plan.most_asked[1] = plan.most_asked[0];
      plan.most_asked[0] = times;
    } else if (times > plan.most_asked[1]) {
      plan.most_asked[1] = times;
    }
  }
  return plan;
}

KlDistNoise kl_dist_noise(const KlPlan& plan, const KlOptions& options) {
  KlDistNoise noise;
  // Answered once per distinct point when every client answers every round; else per round.
  noise.sensitivity = plan.every_client_every_round
                          ? tasks::kl_answer_sensitivity(1, plan.most_asked[1] > 0 ? 1 : 0)
                          : tasks::kl_answer_sensitivity(plan.most_asked[0], plan.most_asked[1]);
  noise.sum_lambda = value_or_throw(
      tasks::kl_dist_skellam_lambda(options.epsilon, options.delta, noise.sensitivity, 1),
      "skellam calibration");
  return noise;
}

std::string kl_zero_mass_error(uint32_t point) {
  return "P has no mass at sampled point " + std::to_string(point) +
         " of the reference's support: D_KL(reference || P) is infinite";
}

KlEstimate estimate_kl(const KlPlan& plan, const KlSums& sums, const KlOptions& options,
                       RandomBits& noise_bits) {
  validate_kl_options(options);
  const size_t rounds = plan.points.size();
  if (sums.counts.size() != rounds || sums.totals.size() != rounds) {
    throw std::invalid_argument("the sums must have one count and one total per sampled point");
  }
  KlEstimate result;
  const bool needs_two = options.model == KlModel::kTrusted || options.model == KlModel::kTagg;
  double sum_log = 0, sum_linear = 0;
  double min_total = std::numeric_limits<double>::infinity();
  double min_reference = 1;
  if (options.model == KlModel::kDist) result.dist_lambda = kl_dist_noise(plan, options).sum_lambda;
  for (size_t t = 0; t < rounds; ++t) {
    if (sums.totals[t] == 0) {
      throw std::runtime_error("the clients asked about point " + std::to_string(plan.points[t]) +
                               " hold no items at all");
    }
    const double total = static_cast<double>(sums.totals[t]);
    min_total = std::min(min_total, total);
    min_reference = std::min(min_reference, plan.reference[t]);
    double p = static_cast<double>(sums.counts[t]) / total;
    if (options.model == KlModel::kDist) {
      if (p < options.tau) {
        p = options.tau;
        ++result.clamped;
      }
    } else {
      if (sums.counts[t] <= 0) throw std::runtime_error(kl_zero_mass_error(plan.points[t]));
      if (needs_two && sums.counts[t] < 2) {
        throw std::runtime_error(
            "point " + std::to_string(plan.points[t]) +
            " is held only once by the clients asked: "
            "the trusted/tagg sensitivity (000 Theorems 4.9-4.10) needs every sampled count >= 2;"
            " use --model dist, more clients or a higher client rate");
      }
    }
    const double r = p / plan.reference[t];
    sum_log += std::log(r);
    sum_linear += options.lambda * (r - 1);
  }
  const double T = static_cast<double>(rounds);
  result.noiseless = (sum_linear - sum_log) / T;
  result.estimate = result.noiseless;
  const double linear_step = std::fabs(options.lambda) / (min_total * min_reference);
  if (options.model == KlModel::kTrusted) {
    result.sensitivity = kLog2 + linear_step;
    result.sigma = gaussian_sigma(options, result.sensitivity);
    result.estimate_sd = result.sigma;
    result.estimate += value_or_throw(sample_gaussian(noise_bits, result.sigma), "noise");
  } else if (options.model == KlModel::kTagg) {
    result.sensitivity = T * std::hypot(kLog2, linear_step);
    result.sigma = gaussian_sigma(options, result.sensitivity);
    const double a = sum_log + value_or_throw(sample_gaussian(noise_bits, result.sigma), "noise");
    const double b =
        sum_linear + value_or_throw(sample_gaussian(noise_bits, result.sigma), "noise");
    result.estimate = (b - a) / T;
    result.estimate_sd = std::sqrt(2.0) * result.sigma / T;
  }
  return result;
}

KlExact exact_kl(const ItemCounts& reference, const ItemCounts& p) {
  KlExact exact;
  double divergence = 0;
  uint64_t in_support = 0;
  const double pi_total = static_cast<double>(reference.total);
  const double p_total = static_cast<double>(p.total);
  for (const ItemCount& item : reference.items) {
    const uint64_t q = p.count(item.id);
    in_support += q;
    const double pi = static_cast<double>(item.count) / pi_total;
    if (q == 0) {
      exact.covered = false;
      continue;
    }
    divergence += pi * std::log(pi / (static_cast<double>(q) / p_total));
  }
  exact.divergence = exact.covered ? divergence : std::numeric_limits<double>::infinity();
  exact.support_mass = static_cast<double>(in_support) / p_total;
  return exact;
}

}  // namespace host
}  // namespace fedstat
