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

// log(3/2): the largest change of log max(c, 2) when c moves by 1.
constexpr double kLogThreeHalves = 0.40546510810816438198;
// Trusted and TAgg clamp every sampled count at this value (see the header).
constexpr int64_t kSmallestCentralCount = 2;

// Exact Bernoulli(rate) from 53 uniform bits.
bool draw_member(RandomBits& bits, double rate) {
  if (rate >= 1) return true;
  const uint64_t threshold = static_cast<uint64_t>(std::ldexp(rate, 53));
  return value_or_throw(bits.bits(53), "client sampling") < threshold;
}

// The central Gaussian mechanism on `values` (one release of L2 sensitivity Δ): each value
// rounded to the public grid and noised there (gaussian_noise.h).
GridGaussian central_noise(const KlOptions& options, double sensitivity, size_t values) {
  const double delta =
      value_or_throw(grid_calibration_delta(options.epsilon, options.delta, values), "noise");
  const double sigma = value_or_throw(
      gaussian_sigma(options.calibration, options.epsilon, delta, sensitivity), "calibration");
  return value_or_throw(make_grid_gaussian(sigma, sensitivity, values), "noise");
}

// The two largest of `values` (0 where there are fewer).
std::pair<double, double> top_two(const std::vector<double>& values) {
  double first = 0, second = 0;
  for (double v : values) {
    if (v > first) {
      second = first;
      first = v;
    } else if (v > second) {
      second = v;
    }
  }
  return {first, second};
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
  // |λ| ≤ 1000 keeps every λ(r − 1) and their sum finite for any counts (r ≤ 1/Π(x) < 2^63):
  // an overflow to infinity would be a refusal that depends on the data.
  if (!(std::fabs(options.lambda) <= 1000)) {
    throw std::invalid_argument("lambda must be a number from -1000 to 1000");
  }
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
  if (rate * clients < 1) {  // else a round would redraw its empty sample for a very long time
    throw std::invalid_argument("rate x clients must be at least 1 (a client per round)");
  }
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

KlCentralSensitivity kl_central_sensitivity(const KlPlan& plan, const KlSums& sums, double lambda) {
  if (sums.totals.size() != plan.points.size()) {
    throw std::invalid_argument("the sums must have one total per sampled point");
  }
  std::map<uint32_t, std::pair<double, double>> per_point;  // x → (M_x, L_x)
  double log_terms = 0, linear_terms = 0;  // Σ_t of the largest |log r_t| and |λ(r_t − 1)|
  for (size_t t = 0; t < plan.points.size(); ++t) {
    const double n_pi = static_cast<double>(sums.totals[t]) * plan.reference[t];
    auto& [rounds, linear] = per_point[plan.points[t]];
    rounds += 1;
    linear += std::fabs(lambda) / n_pi;
    // r_t lies in [2/(N_t·Π(x_t)), 1/Π(x_t)] for every count the clamp lets through.
    log_terms +=
        std::max(std::fabs(std::log(2 / n_pi)), std::fabs(std::log(1 / plan.reference[t])));
    linear_terms += std::fabs(lambda) * (1 / plan.reference[t] + 1);
  }
  std::vector<double> m, l, s;
  for (const auto& [x, entry] : per_point) {
    (void)x;
    m.push_back(entry.first);
    l.push_back(entry.second);
    s.push_back(entry.first * kLogThreeHalves + entry.second);
  }
  const auto [m1, m2] = top_two(m);
  const auto [l1, l2] = top_two(l);
  const auto [s1, s2] = top_two(s);
  // The sums are computed in double: each term within 4 roundings (two divisions, log within an
  // ulp, the product), and recursive summation of T terms adds (T − 1)·u·Σ|terms|, u = 2^−53. A
  // neighbour's computed value can be off in the other direction, so 2 × the error joins Δ.
  const double rounds = static_cast<double>(plan.points.size());
  const double u = std::ldexp(1.0, -53);
  const double error_log = (rounds + 4) * u * log_terms;
  const double error_linear = (rounds + 4) * u * linear_terms;
  const double error_trusted = (rounds + 6) * u * (log_terms + linear_terms) / rounds;
  KlCentralSensitivity result;
  result.trusted = (s1 + s2) / rounds + 2 * error_trusted;
  result.log_sum = (m1 + m2) * kLogThreeHalves + 2 * error_log;
  result.linear_sum = l1 + l2 + 2 * error_linear;
  result.tagg = std::hypot(result.log_sum, result.linear_sum);
  return result;
}

KlCentralSums kl_central_sums(const KlPlan& plan, const KlSums& sums, double lambda) {
  KlCentralSums result;
  for (size_t t = 0; t < plan.points.size(); ++t) {
    const double count = static_cast<double>(std::max(sums.counts[t], kSmallestCentralCount));
    const double r = count / static_cast<double>(sums.totals[t]) / plan.reference[t];
    result.log_sum += std::log(r);
    result.linear_sum += lambda * (r - 1);
  }
  return result;
}

KlEstimate estimate_kl(const KlPlan& plan, const KlSums& sums, const KlOptions& options,
                       RandomBits& noise_bits) {
  validate_kl_options(options);
  const size_t rounds = plan.points.size();
  if (sums.counts.size() != rounds || sums.totals.size() != rounds) {
    throw std::invalid_argument("the sums must have one count and one total per sampled point");
  }
  for (size_t t = 0; t < rounds; ++t) {
    if (sums.totals[t] == 0) {  // N_t is public under substitution: this refusal reveals nothing
      throw std::runtime_error("the clients asked about point " + std::to_string(plan.points[t]) +
                               " hold no items at all");
    }
  }
  const double T = static_cast<double>(rounds);
  KlEstimate result;
  if (options.model == KlModel::kTrusted || options.model == KlModel::kTagg) {
    const KlCentralSums central = kl_central_sums(plan, sums, options.lambda);
    const KlCentralSensitivity sensitivity = kl_central_sensitivity(plan, sums, options.lambda);
    result.noiseless = (central.linear_sum - central.log_sum) / T;
    const bool trusted = options.model == KlModel::kTrusted;
    result.sensitivity = trusted ? sensitivity.trusted : sensitivity.tagg;
    const GridGaussian noise = central_noise(options, result.sensitivity, trusted ? 1 : 2);
    result.sigma = noise.sigma;
    result.grid = noise.grid;
    if (trusted) {
      result.estimate =
          value_or_throw(release_on_grid(noise, result.noiseless, noise_bits), "noise");
      result.estimate_sd = noise.sigma;
    } else {
      const double a = value_or_throw(release_on_grid(noise, central.log_sum, noise_bits), "noise");
      const double b =
          value_or_throw(release_on_grid(noise, central.linear_sum, noise_bits), "noise");
      result.estimate = (b - a) / T;
      result.estimate_sd = std::sqrt(2.0) * noise.sigma / T;
    }
    return result;
  }
  // none and dist: the sums as received (dist: already noised by the clients).
  const bool dist = options.model == KlModel::kDist;
  if (dist) result.dist_lambda = kl_dist_noise(plan, options).sum_lambda;
  double sum_log = 0, sum_linear = 0;
  for (size_t t = 0; t < rounds; ++t) {
    double p = static_cast<double>(sums.counts[t]) / static_cast<double>(sums.totals[t]);
    if (dist && p < options.tau) {
      p = options.tau;
      ++result.clamped;
    } else if (dist && p > 1) {
      // An honest sum's count is at most its total (p ≤ 1 up to the noise): one device adding
      // any value to its masked count moves this round's term only within [τ, 1] (the header).
      p = 1;
      ++result.clamped_above;
    } else if (!dist && sums.counts[t] <= 0) {
      throw std::runtime_error(kl_zero_mass_error(plan.points[t]));
    }
    const double r = p / plan.reference[t];
    sum_log += std::log(r);
    sum_linear += options.lambda * (r - 1);
  }
  result.noiseless = (sum_linear - sum_log) / T;
  result.estimate = result.noiseless;
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
