#include "sdk/tasks/heterogeneity_task.h"

#include <math.h>

#include "sdk/base/portable_math.h"

namespace fedstat {
namespace tasks {
namespace {

double clamp_unit(double v) {
  return v < 0 ? 0 : (v > 1 ? 1 : v);
}

}  // namespace

Status validate_heterogeneity_config(const HeterogeneityConfig& config) {
  if (!(config.p >= 1) || !isfinite(config.p)) {
    return Status(StatusCode::kInvalidArgument, "heterogeneity: the exponent p must be >= 1");
  }
  if (!(config.max_weight >= 4) || !isfinite(config.max_weight)) {
    return Status(StatusCode::kInvalidArgument,
                  "heterogeneity: max_weight must be finite and >= 4 (every weight is >= 4)");
  }
  return Status();
}

HeterogeneitySensitivities heterogeneity_sensitivities(size_t d,
                                                       const HeterogeneityConfig& config) {
  const double dims = static_cast<double>(d);
  const double w = config.max_weight;
  const double inverse_range = 0.25 - 1 / w;
  HeterogeneitySensitivities s;
  s.l2[0] = sqrt(dims);
  s.l2[1] = sqrt(w * w * dims + (w - 4) * (w - 4) + inverse_range * inverse_range);
  s.l2[2] = dims;
  s.l2[3] = w * dims;
  return s;
}

Status validate_unit_vector(Span<const double> x) {
  if (x.size() == 0) return Status(StatusCode::kInvalidArgument, "heterogeneity: empty vector");
  for (size_t j = 0; j < x.size(); ++j) {
    if (!(x[j] >= 0 && x[j] <= 1)) {
      return Status(StatusCode::kInvalidArgument,
                    "heterogeneity: every coordinate must be a number in [0, 1]");
    }
  }
  return Status();
}

Result<double> within_vector_variance(Span<const double> x) {
  FEDSTAT_RETURN_IF_ERROR(validate_unit_vector(x));
  const double d = static_cast<double>(x.size());
  double mean = 0;
  for (size_t j = 0; j < x.size(); ++j) mean += x[j];
  mean /= d;
  double sum_squares = 0;
  for (size_t j = 0; j < x.size(); ++j) sum_squares += (x[j] - mean) * (x[j] - mean);
  return sum_squares / d;
}

double clipped_weight(double variance, double max_weight) {
  if (variance <= 0 || 1 / variance > max_weight) return max_weight;
  return 1 / variance;
}

// gap^p for a gap in [0, 1] and p ≥ 1, from the SDK's portable ln and exp (portable_math.h):
// the same bits on the host and on a microcontroller, and no libm pow in the device's image
// (3.3 KiB of flash on the Cortex-M4). p = 2 (the default) is one multiplication.
namespace {
double power(double gap, double p) {
  if (p == 2) return gap * gap;
  if (gap == 0) return 0;
  return math::portable_exp(p * math::portable_log(gap));
}
}  // namespace

double distance_power(Span<const double> a, Span<const double> b, double p) {
  double sum = 0;
  for (size_t j = 0; j < a.size(); ++j) sum += power(fabs(a[j] - b[j]), p);
  return sum;
}

Status heterogeneity_round1(Span<const double> x, const HeterogeneityConfig& config,
                            Span<double> out) {
  FEDSTAT_RETURN_IF_ERROR(validate_heterogeneity_config(config));
  FEDSTAT_ASSIGN_OR_RETURN(const double variance, within_vector_variance(x));
  const size_t d = x.size();
  if (out.size() != heterogeneity_round1_length(d)) {
    return Status(StatusCode::kInvalidArgument,
                  "heterogeneity round 1: the output must have 2d + 2 entries");
  }
  const double w = clipped_weight(variance, config.max_weight);
  for (size_t j = 0; j < d; ++j) {
    out[j] = x[j];
    out[d + j] = w * x[j];
  }
  out[2 * d] = w;
  out[2 * d + 1] = 1 / w;
  return Status();
}

Status heterogeneity_round2(Span<const double> x, Span<const double> mean,
                            Span<const double> weighted_mean, const HeterogeneityConfig& config,
                            Span<double> out) {
  FEDSTAT_RETURN_IF_ERROR(validate_heterogeneity_config(config));
  FEDSTAT_ASSIGN_OR_RETURN(const double variance, within_vector_variance(x));
  const size_t d = x.size();
  if (mean.size() != d || weighted_mean.size() != d ||
      out.size() != heterogeneity_round2_length()) {
    return Status(StatusCode::kInvalidArgument,
                  "heterogeneity round 2: the means must have d entries and the output 2");
  }
  const double w = clipped_weight(variance, config.max_weight);
  double dispersion = 0;
  double q_term = 0;
  for (size_t j = 0; j < d; ++j) {
    if (isnan(mean[j]) || isnan(weighted_mean[j])) {
      return Status(StatusCode::kInvalidArgument, "heterogeneity round 2: a mean is NaN");
    }
    const double gap = fabs(x[j] - clamp_unit(mean[j]));
    dispersion += power(gap, config.p);
    const double weighted_gap = x[j] - clamp_unit(weighted_mean[j]);
    q_term += weighted_gap * weighted_gap;
  }
  out[0] = dispersion;
  out[1] = w * q_term;
  return Status();
}

Status encode_fixed_point(Span<const double> values, double scale, Span<int64_t> out) {
  if (out.size() != values.size() || !(scale > 0) || !isfinite(scale)) {
    return Status(StatusCode::kInvalidArgument,
                  "fixed point: the scale must be positive and the output as long as the input");
  }
  // Every value is checked before any is written: a refusal leaves `out` as it was.
  for (size_t j = 0; j < values.size(); ++j) {
    if (!(fabs(nearbyint(scale * values[j])) < 4611686018427387904.0)) {  // 2^62, and not NaN
      return Status(StatusCode::kOutOfRange, "fixed point: a scaled value does not fit 2^62");
    }
  }
  for (size_t j = 0; j < values.size(); ++j) {
    out[j] = static_cast<int64_t>(nearbyint(scale * values[j]));
  }
  return Status();
}

privacy::Sensitivity fixed_point_sensitivity(double l2, double scale, size_t entries) {
  const double root = sqrt(static_cast<double>(entries));
  const double encoded_l2 = scale * l2 + root;
  return privacy::Sensitivity{root * encoded_l2, encoded_l2};
}

size_t heterogeneity_release_entries(size_t d, int release) {
  return release == 0 ? d : (release == 1 ? d + 2 : 1);
}

void heterogeneity_encoded_sensitivities(size_t d, const HeterogeneityConfig& config,
                                         const double scales[4], privacy::Sensitivity out[4]) {
  const HeterogeneitySensitivities s = heterogeneity_sensitivities(d, config);
  const double dims = static_cast<double>(d);
  const double w = config.max_weight;
  const double largest[4] = {1, w, dims, w * dims};
  const double u = ldexp(1.0, -53);
  for (int k = 0; k < 4; ++k) {
    const size_t entries = heterogeneity_release_entries(d, k);
    const double slack = 2 * sqrt(static_cast<double>(entries)) * (dims + 10) * u * largest[k];
    out[k] = fixed_point_sensitivity(s.l2[k] + slack, scales[k], entries);
  }
}

}  // namespace tasks
}  // namespace fedstat
