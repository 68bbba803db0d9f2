#include "host_server/estimate/heterogeneity.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "host_server/estimate/gaussian_noise.h"
#include "host_server/estimate/host_common.h"
#include "sdk/privacy/accountants.h"

namespace fedstat {
namespace host {
namespace {

constexpr int kReleases = 4;

Span<const double> view(const std::vector<double>& v) {
  return Span<const double>(v.data(), v.size());
}
Span<double> view(std::vector<double>& v) {
  return Span<double>(v.data(), v.size());
}

size_t check_vectors(const ClientVectors& x, const tasks::HeterogeneityConfig& config) {
  check(tasks::validate_heterogeneity_config(config), "heterogeneity");
  if (x.size() < 2) throw std::invalid_argument("heterogeneity needs at least 2 client vectors");
  const size_t d = x[0].size();
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].size() != d || d == 0) {
      throw std::invalid_argument("client vector " + std::to_string(i + 1) + " has " +
                                  std::to_string(x[i].size()) + " values; the first has " +
                                  std::to_string(d));
    }
    check(tasks::validate_unit_vector(view(x[i])), "client vector " + std::to_string(i + 1));
  }
  return d;
}

// Σ over clients of their round-1 contributions [x, w·x, w, 1/w].
std::vector<double> round1_sum(const ClientVectors& x, const tasks::HeterogeneityConfig& config) {
  const size_t d = x[0].size();
  std::vector<double> sum(tasks::heterogeneity_round1_length(d), 0), part(sum.size());
  for (const auto& row : x) {
    check(tasks::heterogeneity_round1(view(row), config, view(part)), "round 1");
    for (size_t k = 0; k < sum.size(); ++k) sum[k] += part[k];
  }
  return sum;
}

std::vector<double> round2_sum(const ClientVectors& x, const std::vector<double>& mean,
                               const std::vector<double>& weighted_mean,
                               const tasks::HeterogeneityConfig& config) {
  std::vector<double> sum(tasks::heterogeneity_round2_length(), 0), part(sum.size());
  for (const auto& row : x) {
    check(
        tasks::heterogeneity_round2(view(row), view(mean), view(weighted_mean), config, view(part)),
        "round 2");
    for (size_t k = 0; k < sum.size(); ++k) sum[k] += part[k];
  }
  return sum;
}

double clamp(double v, double low, double high) {
  return std::min(std::max(v, low), high);
}

double i2_of(double q, size_t n) {
  if (!(q > 0)) return 0;
  return std::max(0.0, 1 - static_cast<double>(n - 1) / q);
}

uint32_t count_clipped(const ClientVectors& x, const tasks::HeterogeneityConfig& config) {
  uint32_t clipped = 0;
  for (const auto& row : x) {
    const double s2 = value_or_throw(tasks::within_vector_variance(view(row)), "variance");
    if (s2 <= 0 || 1 / s2 > config.max_weight) ++clipped;
  }
  return clipped;
}

}  // namespace

const char* heterogeneity_mechanism_name(HeterogeneityMechanism mechanism) {
  switch (mechanism) {
    case HeterogeneityMechanism::kNone:
      return "none";
    case HeterogeneityMechanism::kClassical:
      return "classical";
    case HeterogeneityMechanism::kAnalytic:
      return "agm";
  }
  return "?";
}

HeterogeneityMechanism parse_heterogeneity_mechanism(const std::string& name) {
  for (auto m : {HeterogeneityMechanism::kNone, HeterogeneityMechanism::kClassical,
                 HeterogeneityMechanism::kAnalytic}) {
    if (name == heterogeneity_mechanism_name(m)) return m;
  }
  throw std::invalid_argument("unknown mechanism '" + name + "': use agm, classical or none");
}

HeterogeneityExact exact_heterogeneity(const ClientVectors& x,
                                       const tasks::HeterogeneityConfig& config) {
  const size_t d = check_vectors(x, config);
  const double n = static_cast<double>(x.size());
  const std::vector<double> first = round1_sum(x, config);
  HeterogeneityExact exact;
  exact.sum_weights = first[2 * d];
  exact.sum_inverse_weights = first[2 * d + 1];
  for (size_t j = 0; j < d; ++j) {
    exact.mean.push_back(first[j] / n);
    exact.weighted_mean.push_back(first[d + j] / exact.sum_weights);
  }
  const std::vector<double> second = round2_sum(x, exact.mean, exact.weighted_mean, config);
  exact.dispersion = second[0] / n;
  exact.q = second[1];
  exact.i2 = i2_of(exact.q, x.size());
  exact.clipped = count_clipped(x, config);
  return exact;
}

double dispersion_ci_half_width(double xi1_squared, size_t n) {
  return 7.84 * std::sqrt(6.0) * xi1_squared * xi1_squared / std::sqrt(static_cast<double>(n));
}

double q_ci_half_width(double eta1_squared, double sum_weights, size_t n) {
  return 7.84 * std::sqrt(6.0) * eta1_squared * eta1_squared * sum_weights /
         std::sqrt(static_cast<double>(n));
}

double i2_ci_half_width(double eta1_squared, double sum_inverse_weights, size_t n) {
  const double nn = static_cast<double>(n);
  return 7.84 * std::sqrt(2.0) * (nn - 1) * sum_inverse_weights /
         (3 * std::sqrt(35 * nn) * eta1_squared * eta1_squared);
}

HeterogeneityEstimate estimate_heterogeneity(const ClientVectors& x,
                                             const HeterogeneityOptions& options,
                                             RandomBits& noise_bits) {
  const HeterogeneityExact exact = exact_heterogeneity(x, options.config);
  const size_t d = x[0].size();
  const size_t count = x.size();
  const double n = static_cast<double>(count);
  const double w_max = options.config.max_weight;
  HeterogeneityEstimate result;
  result.clipped = exact.clipped;
  result.dispersion.exact = exact.dispersion;
  result.q.exact = exact.q;
  result.i2.exact = exact.i2;
  const bool noisy = options.mechanism != HeterogeneityMechanism::kNone;
  if (noisy) {
    if (!(options.epsilon > 0) || !std::isfinite(options.epsilon)) {
      throw std::invalid_argument("epsilon must be positive");
    }
    if (!(options.delta > 0 && options.delta < 1)) {
      throw std::invalid_argument("delta must lie in (0, 1)");
    }
    const tasks::HeterogeneitySensitivities s =
        tasks::heterogeneity_sensitivities(d, options.config);
    const double unit =
        options.mechanism == HeterogeneityMechanism::kAnalytic
            ? value_or_throw(privacy::gaussian_sigma_analytic(options.epsilon, options.delta, 1),
                             "analytic calibration")
            : 0;
    for (int k = 0; k < kReleases; ++k) {
      result.sensitivity[k] = s.l2[k];
      result.sigma[k] =
          options.mechanism == HeterogeneityMechanism::kAnalytic
              ? std::sqrt(static_cast<double>(kReleases)) * s.l2[k] * unit
              : value_or_throw(privacy::gaussian_sigma_classical(
                                   options.epsilon / kReleases, options.delta / kReleases, s.l2[k]),
                               "classical calibration (each of the 4 releases gets epsilon/4)");
    }
  }
  auto noise = [&](int release) {
    return noisy ? value_or_throw(sample_gaussian(noise_bits, result.sigma[release]), "noise")
                 : 0.0;
  };

  // Round 1.
  std::vector<double> first = round1_sum(x, options.config);
  for (size_t j = 0; j < d; ++j) first[j] += noise(0);
  for (size_t k = d; k < 2 * d + 2; ++k) first[k] += noise(1);
  const double sum_weights = clamp(first[2 * d], 4 * n, w_max * n);
  const double sum_inverse = clamp(first[2 * d + 1], n / w_max, n / 4);
  std::vector<double> mean(d), weighted_mean(d);
  for (size_t j = 0; j < d; ++j) {
    mean[j] = clamp(first[j] / n, 0, 1);
    weighted_mean[j] = clamp(first[d + j] / sum_weights, 0, 1);
  }
  // Round 2.
  std::vector<double> second = round2_sum(x, mean, weighted_mean, options.config);
  second[0] += noise(2);
  second[1] += noise(3);
  result.dispersion.estimate = second[0] / n;
  result.q.estimate = second[1];
  result.i2.estimate = i2_of(result.q.estimate, count);

  result.xi1_squared = result.sigma[0] * result.sigma[0] / (n * n);
  result.eta1_squared = result.sigma[1] * result.sigma[1] / (sum_weights * sum_weights);
  double hw_d = 0, hw_q = 0, hw_i2 = 0;
  if (noisy) {
    hw_d = dispersion_ci_half_width(result.xi1_squared, count);
    hw_q = q_ci_half_width(result.eta1_squared, sum_weights, count);
    hw_i2 = i2_ci_half_width(result.eta1_squared, sum_inverse, count);
  }
  result.dispersion.noise_sd = result.sigma[2] / n;
  result.q.noise_sd = result.sigma[3];
  result.i2.noise_sd = result.q.estimate > n - 1
                           ? (n - 1) * result.sigma[3] / (result.q.estimate * result.q.estimate)
                           : 0;
  result.dispersion.ci = {std::max(0.0, result.dispersion.estimate - hw_d),
                          result.dispersion.estimate + hw_d};
  result.q.ci = {std::max(0.0, result.q.estimate - hw_q), result.q.estimate + hw_q};
  result.i2.ci = {clamp(result.i2.estimate - hw_i2, 0, 1), clamp(result.i2.estimate + hw_i2, 0, 1)};
  return result;
}

ClientVectors parse_client_vectors(std::istream& in, const std::string& name) {
  ClientVectors rows;
  std::string text;
  size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    const size_t first = text.find_first_not_of(" \t");
    if (first == std::string::npos || text[first] == '#') continue;
    std::vector<double> row;
    std::stringstream fields(text);
    std::string field;
    while (std::getline(fields, field, ',')) {
      size_t used = 0;
      double value = 0;
      try {
        value = std::stod(field, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || field.find_first_not_of(" \t", used) != std::string::npos) {
        throw std::runtime_error(name + ":" + std::to_string(line) + ": '" + field +
                                 "' is not a number");
      }
      if (!(value >= 0 && value <= 1)) {
        throw std::runtime_error(name + ":" + std::to_string(line) + ": " + field +
                                 " lies outside [0, 1]");
      }
      row.push_back(value);
    }
    if (!rows.empty() && row.size() != rows[0].size()) {
      throw std::runtime_error(name + ":" + std::to_string(line) + ": " +
                               std::to_string(row.size()) + " values; the first row has " +
                               std::to_string(rows[0].size()));
    }
    rows.push_back(std::move(row));
  }
  if (rows.size() < 2) throw std::runtime_error(name + ": needs at least 2 client rows");
  return rows;
}

ClientVectors read_client_vectors(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open the file");
  return parse_client_vectors(in, path);
}

}  // namespace host
}  // namespace fedstat
