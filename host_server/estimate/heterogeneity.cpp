#include "host_server/estimate/heterogeneity.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>

#include "host_server/estimate/csv_fields.h"
#include "host_server/estimate/gaussian_noise.h"
#include "host_server/estimate/host_common.h"
#include "host_server/secagg/secagg_simulation.h"
#include "sdk/noise/add_noise.h"
#include "sdk/noise/rational.h"
#include "sdk/privacy/accountants.h"

namespace fedstat {
namespace host {
namespace {

constexpr int kReleases = 4;
// Fixed-point unit of the skellam mechanism: release k is scaled by kFixedPointUnit/Δ2_k, so a
// neighbour moves it by about 1024 integer units and rounding (≤ √k) is a small part of that.
constexpr double kFixedPointUnit = 1024;

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

using Contributions = std::vector<std::vector<double>>;

// Every client's round-1 contribution [x, w·x, w, 1/w] (the SDK's task).
Contributions round1_contributions(const ClientVectors& x,
                                   const tasks::HeterogeneityConfig& config) {
  Contributions out(x.size(), std::vector<double>(tasks::heterogeneity_round1_length(x[0].size())));
  for (size_t i = 0; i < x.size(); ++i) {
    check(tasks::heterogeneity_round1(view(x[i]), config, view(out[i])), "round 1");
  }
  return out;
}

// Every client's round-2 contribution [||x − μ′||_p^p, w·||x − μ̄′||²] (the SDK's task).
Contributions round2_contributions(const ClientVectors& x, const std::vector<double>& mean,
                                   const std::vector<double>& weighted_mean,
                                   const tasks::HeterogeneityConfig& config) {
  Contributions out(x.size(), std::vector<double>(tasks::heterogeneity_round2_length()));
  for (size_t i = 0; i < x.size(); ++i) {
    check(tasks::heterogeneity_round2(view(x[i]), view(mean), view(weighted_mean), config,
                                      view(out[i])),
          "round 2");
  }
  return out;
}

std::vector<double> column_sums(const Contributions& contributions) {
  std::vector<double> sum(contributions[0].size(), 0);
  for (const auto& row : contributions) {
    for (size_t k = 0; k < sum.size(); ++k) sum[k] += row[k];
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

// The releases are sums of n contributions computed in double. Entry magnitudes are bounded
// (release 0: x ≤ 1; 1: w·x, w ≤ W and 1/w ≤ 1/4; 2: ||x − μ′||_p^p ≤ d; 3: w·||x − μ̄′||² ≤ W·d);
// each entry is within (d + 10)·u·M of its exact value (the within-vector variance, a pow or a
// product; libm within an ulp) and summing n of them adds (n − 1)·u·n·M, u = 2^−53. A neighbour's
// computed sums can err the other way, so twice that (over √entries values) joins each Δ2.
void add_rounding_slack(tasks::HeterogeneitySensitivities& s, size_t n, size_t d,
                        const tasks::HeterogeneityConfig& config) {
  const double clients = static_cast<double>(n), dims = static_cast<double>(d);
  const double w = config.max_weight, u = std::ldexp(1.0, -53);
  const double largest[kReleases] = {1, w, dims, w * dims};
  const double entries[kReleases] = {dims, dims + 2, 1, 1};
  for (int k = 0; k < kReleases; ++k) {
    s.l2[k] += 2 * std::sqrt(entries[k]) * (clients + dims + 10) * u * clients * largest[k];
  }
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
    case HeterogeneityMechanism::kSkellam:
      return "skellam";
  }
  return "?";
}

HeterogeneityMechanism parse_heterogeneity_mechanism(const std::string& name) {
  for (auto m : {HeterogeneityMechanism::kNone, HeterogeneityMechanism::kClassical,
                 HeterogeneityMechanism::kAnalytic, HeterogeneityMechanism::kSkellam}) {
    if (name == heterogeneity_mechanism_name(m)) return m;
  }
  throw std::invalid_argument("unknown mechanism '" + name +
                              "': use agm, classical, skellam or none");
}

HeterogeneityExact exact_heterogeneity(const ClientVectors& x,
                                       const tasks::HeterogeneityConfig& config) {
  const size_t d = check_vectors(x, config);
  const double n = static_cast<double>(x.size());
  const std::vector<double> first = column_sums(round1_contributions(x, config));
  HeterogeneityExact exact;
  exact.sum_weights = first[2 * d];
  exact.sum_inverse_weights = first[2 * d + 1];
  for (size_t j = 0; j < d; ++j) {
    exact.mean.push_back(first[j] / n);
    exact.weighted_mean.push_back(first[d + j] / exact.sum_weights);
  }
  const std::vector<double> second =
      column_sums(round2_contributions(x, exact.mean, exact.weighted_mean, config));
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
  const size_t d = check_vectors(x, options.config);
  const size_t count = x.size();
  const double n = static_cast<double>(count);
  HeterogeneityEstimate result;
  // The secure-aggregation sessions' key seed, drawn first from the noise's own bits (clear and
  // secure runs then draw the same shares): never a public constant, or anyone holding the
  // transcript could unmask each client.
  const uint64_t session_seed = value_or_throw(noise_bits.bits(64), "secure aggregation keys");
  const bool noisy = options.mechanism != HeterogeneityMechanism::kNone;
  const bool integer = options.mechanism == HeterogeneityMechanism::kSkellam;
  if (options.secure && !integer) {
    throw std::invalid_argument("secure aggregation applies to the skellam mechanism");
  }
  // Entries of each release: Σx (d), (Σw·x, Σw, Σ1/w) (d + 2), and one each in round 2.
  const size_t entries[kReleases] = {d, d + 2, 1, 1};
  double scale[kReleases] = {1, 1, 1, 1};
  GridGaussian grid[kReleases];  // agm, classical: each release's public grid and noise
  noise::NoiseSampler share;
  if (noisy) {
    if (!(options.epsilon > 0) || !std::isfinite(options.epsilon)) {
      throw std::invalid_argument("epsilon must be positive");
    }
    if (!(options.delta > 0 && options.delta < 1)) {
      throw std::invalid_argument("delta must lie in (0, 1)");
    }
    tasks::HeterogeneitySensitivities s = tasks::heterogeneity_sensitivities(d, options.config);
    add_rounding_slack(s, count, d, options.config);
    for (int k = 0; k < kReleases; ++k) result.sensitivity[k] = s.l2[k];
    if (options.mechanism == HeterogeneityMechanism::kAnalytic) {
      // One (ε, δ) for the four releases; the grids' total-variation term covers every value.
      const size_t values = entries[0] + entries[1] + entries[2] + entries[3];
      const double delta = value_or_throw(
          grid_calibration_delta(options.epsilon, options.delta, values), "gaussian noise");
      const double unit = value_or_throw(
          privacy::gaussian_sigma_analytic(options.epsilon, delta, 1), "calibration");
      for (int k = 0; k < kReleases; ++k) {
        const double sigma = std::sqrt(static_cast<double>(kReleases)) * s.l2[k] * unit;
        grid[k] = value_or_throw(make_grid_gaussian(sigma, s.l2[k], entries[k]), "noise");
        result.sigma[k] = grid[k].sigma;
        result.grid[k] = grid[k].grid;
      }
    } else if (options.mechanism == HeterogeneityMechanism::kClassical) {
      for (int k = 0; k < kReleases; ++k) {
        const double epsilon = options.epsilon / kReleases;
        const double delta =
            value_or_throw(grid_calibration_delta(epsilon, options.delta / kReleases, entries[k]),
                           "gaussian noise");
        const double sigma =
            value_or_throw(privacy::gaussian_sigma_classical(epsilon, delta, s.l2[k]),
                           "classical calibration (each of the 4 releases gets epsilon/4)");
        grid[k] = value_or_throw(make_grid_gaussian(sigma, s.l2[k], entries[k]), "noise");
        result.sigma[k] = grid[k].sigma;
        result.grid[k] = grid[k].grid;
      }
    } else {
      const SkellamCalibration calibration = calibrate_heterogeneity_skellam(
          d, options.config, options.epsilon, options.delta, FixedPointScales::kPerRelease);
      for (int k = 0; k < kReleases; ++k) scale[k] = calibration.scale[k];
      const noise::Rational per_client =
          value_or_throw(noise::rational_at_least(calibration.sum_lambda / n), "skellam share");
      check(share.init(noise::NoiseSpec{noise::NoiseKind::kSkellam, per_client, 1}), "share");
      result.skellam_lambda_per_client = per_client.to_double();
      for (int k = 0; k < kReleases; ++k) {
        result.sigma[k] = std::sqrt(2 * n * result.skellam_lambda_per_client) / scale[k];
      }
    }
  }
  // One release: the sum over clients of contributions[i][offset .. offset + entries[k]), noised
  // centrally (Gaussian) or by every client in fixed point (Skellam shares, summed as integers).
  auto release = [&](const Contributions& contributions, size_t offset, int k) {
    std::vector<double> sum(entries[k], 0);
    std::vector<int64_t> encoded(entries[k]), integer_sum(entries[k], 0);
    std::vector<std::vector<uint64_t>> client_words;  // secure: each client's release mod 2^64
    for (const auto& contribution : contributions) {
      const Span<const double> part(contribution.data() + offset, entries[k]);
      if (!integer) {
        for (size_t j = 0; j < entries[k]; ++j) sum[j] += part[j];
        continue;
      }
      const Span<int64_t> words(encoded.data(), encoded.size());
      check(tasks::encode_fixed_point(part, scale[k], words), "fixed point");
      check(noise::add_noise(Span<const int64_t>(encoded.data(), encoded.size()), words, share,
                             noise_bits),
            "skellam share");
      if (options.secure) {
        client_words.emplace_back(encoded.begin(), encoded.end());  // two's complement
      } else {
        for (size_t j = 0; j < entries[k]; ++j) integer_sum[j] += encoded[j];
      }
    }
    if (integer && options.secure) {
      const std::vector<uint64_t> secure =
          secure_sum(client_words, 64, session_seed ^ static_cast<uint64_t>(k));
      for (size_t j = 0; j < entries[k]; ++j) integer_sum[j] = static_cast<int64_t>(secure[j]);
    }
    if (integer) {
      return decode_fixed_point_sums(std::vector<uint64_t>(integer_sum.begin(), integer_sum.end()),
                                     scale[k]);
    }
    for (size_t j = 0; j < entries[k]; ++j) {
      if (noisy) sum[j] = value_or_throw(release_on_grid(grid[k], sum[j], noise_bits), "noise");
    }
    return sum;
  };

  // Round 1.
  const Contributions first = round1_contributions(x, options.config);
  std::vector<double> released = release(first, 0, 0);
  const std::vector<double> weighted = release(first, d, 1);
  released.insert(released.end(), weighted.begin(), weighted.end());
  const HeterogeneityRound1 round1 = finish_heterogeneity_round1(released, count, options.config);
  // Round 2.
  const Contributions second =
      round2_contributions(x, round1.mean, round1.weighted_mean, options.config);
  const double dispersion_sum = release(second, 0, 2)[0];
  const double q_sum = release(second, 1, 3)[0];
  finish_heterogeneity_round2(dispersion_sum, q_sum, count, count, round1, noisy, result);
  return result;
}

void heterogeneity_fixed_point_scales(size_t d, const tasks::HeterogeneityConfig& config,
                                      FixedPointScales scales, double out[4]) {
  const tasks::HeterogeneitySensitivities s = tasks::heterogeneity_sensitivities(d, config);
  for (int k = 0; k < kReleases; ++k) {
    const double l2 =
        scales == FixedPointScales::kPerRelease ? s.l2[k] : std::hypot(s.l2[k & ~1], s.l2[k | 1]);
    out[k] = kFixedPointUnit / l2;
  }
}

SkellamCalibration calibrate_heterogeneity_skellam(size_t d,
                                                   const tasks::HeterogeneityConfig& config,
                                                   double epsilon, double delta,
                                                   FixedPointScales scales) {
  check(tasks::validate_heterogeneity_config(config), "heterogeneity");
  if (d == 0) throw std::invalid_argument("heterogeneity: the dimension must be >= 1");
  if (!(epsilon > 0) || !std::isfinite(epsilon)) {
    throw std::invalid_argument("epsilon must be positive");
  }
  if (!(delta > 0 && delta < 1)) throw std::invalid_argument("delta must lie in (0, 1)");
  SkellamCalibration c;
  heterogeneity_fixed_point_scales(d, config, scales, c.scale);
  tasks::heterogeneity_encoded_sensitivities(d, config, c.scale, c.encoded);
  c.sum_lambda =
      value_or_throw(privacy::skellam_lambda_composed(
                         epsilon, delta, Span<const privacy::Sensitivity>(c.encoded, kReleases), 1),
                     "skellam calibration");
  return c;
}

std::vector<double> decode_fixed_point_sums(const std::vector<uint64_t>& words, double scale) {
  std::vector<double> out(words.size());
  for (size_t j = 0; j < words.size(); ++j) {
    out[j] = static_cast<double>(static_cast<int64_t>(words[j])) / scale;
  }
  return out;
}

HeterogeneityRound1 finish_heterogeneity_round1(const std::vector<double>& released, size_t n,
                                                const tasks::HeterogeneityConfig& config) {
  check(tasks::validate_heterogeneity_config(config), "heterogeneity");
  if (released.size() < 4 || released.size() % 2 != 0 || n == 0) {
    throw std::invalid_argument("heterogeneity round 1: 2d + 2 released sums over n >= 1 clients");
  }
  const size_t d = (released.size() - 2) / 2;
  const double clients = static_cast<double>(n), w_max = config.max_weight;
  HeterogeneityRound1 r;
  r.max_weight = w_max;
  r.sum_weights = clamp(released[2 * d], 4 * clients, w_max * clients);
  r.sum_inverse_weights = clamp(released[2 * d + 1], clients / w_max, clients / 4);
  r.mean.resize(d);
  r.weighted_mean.resize(d);
  for (size_t j = 0; j < d; ++j) {
    r.mean[j] = clamp(released[j] / clients, 0, 1);
    r.weighted_mean[j] = clamp(released[d + j] / r.sum_weights, 0, 1);
  }
  return r;
}

void finish_heterogeneity_round2(double dispersion_sum, double q_sum, size_t n1, size_t n2,
                                 const HeterogeneityRound1& round1, bool noisy,
                                 HeterogeneityEstimate& result) {
  if (n1 == 0 || n2 == 0) throw std::invalid_argument("heterogeneity: no clients in a round");
  const double first = static_cast<double>(n1), n = static_cast<double>(n2);
  // D and Q are sums of terms in [0, d] and [0, W·d] (x and the means in [0, 1]^d): clamping the
  // noised values to what n2 honest devices reach is post-processing, and bounds what one
  // device's masked words can do to them (the header).
  const double d = static_cast<double>(round1.mean.size());
  result.dispersion.estimate = clamp(dispersion_sum / n, 0, d);
  result.q.estimate = clamp(q_sum, 0, n * round1.max_weight * d);
  result.i2.estimate = i2_of(result.q.estimate, n2);

  const double sum_weights = round1.sum_weights;
  result.xi1_squared = result.sigma[0] * result.sigma[0] / (first * first);
  result.eta1_squared = result.sigma[1] * result.sigma[1] / (sum_weights * sum_weights);
  double hw_d = 0, hw_q = 0, hw_i2 = 0;
  if (noisy) {
    hw_d = dispersion_ci_half_width(result.xi1_squared, n2);
    hw_q = q_ci_half_width(result.eta1_squared, sum_weights, n2);
    hw_i2 = i2_ci_half_width(result.eta1_squared, round1.sum_inverse_weights, n2);
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
}

ClientVectors parse_client_vectors(std::istream& in, const std::string& name) {
  ClientVectors rows;
  std::string text;
  size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    const size_t first = text.find_first_not_of(" \t\r");
    if (first == std::string::npos || text[first] == '#') continue;
    const std::vector<std::string> fields = split_csv_fields(text);  // strict: csv_fields.h
    std::vector<double> row;
    for (size_t k = 0; k < fields.size(); ++k) {
      const CsvPlace place{name, line, k + 1};
      const double value = parse_decimal_field(fields[k], place);
      if (!(value >= 0 && value <= 1)) {
        throw std::runtime_error(csv_error(place, "'" + fields[k] + "' lies outside [0, 1]"));
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
  if (in.bad()) throw std::runtime_error(name + ": read error");
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
