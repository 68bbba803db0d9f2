#include "host_server/estimate/gaussian_noise.h"

#include <cmath>

#include "sdk/noise/discrete_gaussian.h"
#include "sdk/privacy/accountants.h"

namespace fedstat {
namespace host {
namespace {

bool positive_finite(double x) {
  return x > 0 && std::isfinite(x);
}

constexpr double kLargestGridMultiple = 0x1p60;  // |q| ≤ 2^60: q + Y never overflows int64
// s < 2^28: the sampler's |Y|·t − s² must fit 64 bits, which holds for |Y| < 2^36 ≥ 256·s (a
// discrete Laplace of scale t ≈ s goes beyond with probability e^−256).
constexpr double kLargestS = 0x1p28;

}  // namespace

Result<double> grid_calibration_delta(double epsilon, double delta, size_t coordinates) {
  if (!positive_finite(epsilon)) {
    return invalid_argument("gaussian noise: epsilon must be positive and finite");
  }
  if (!(delta > 0 && delta < 1))
    return invalid_argument("gaussian noise: delta must lie in (0, 1)");
  if (coordinates == 0) return invalid_argument("gaussian noise: nothing to release");
  const double slack =
      (1 + std::exp(epsilon)) * static_cast<double>(coordinates) * kGridTvPerCoordinate;
  if (!(slack <= delta / 2)) {
    return out_of_range(
        "gaussian noise: the discrete noise's distance from a rounded Gaussian, (1 + e^epsilon) x "
        "values x 2^-55, would use more than half of delta: raise delta, lower epsilon or release "
        "fewer values");
  }
  return delta - slack;
}

Result<double> gaussian_sigma(GaussianCalibration calibration, double epsilon, double delta,
                              double sensitivity) {
  return calibration == GaussianCalibration::kAnalytic
             ? privacy::gaussian_sigma_analytic(epsilon, delta, sensitivity)
             : privacy::gaussian_sigma_classical(epsilon, delta, sensitivity);
}

Result<GridGaussian> make_grid_gaussian(double sigma, double sensitivity, size_t coordinates) {
  if (!positive_finite(sigma) || !positive_finite(sensitivity)) {
    return invalid_argument("gaussian noise: sigma and sensitivity must be positive and finite");
  }
  if (coordinates == 0) return invalid_argument("gaussian noise: nothing to release");
  GridGaussian noise;
  noise.grid = std::ldexp(1.0, std::ilogb(sigma) - kGridStepsPerSigmaLog2);
  noise.sensitivity = sensitivity;
  noise.coordinates = coordinates;
  // s = σ/g + √D·σ/Δ keeps K/s = Δ/σ for K = Δ/g + √D; the factor 1 + 2^−40 covers the
  // rounding of this double arithmetic, so s² below is never under the exact value.
  const double s =
      (sigma / noise.grid + std::sqrt(static_cast<double>(coordinates)) * sigma / sensitivity) *
      (1 + 0x1p-40);
  if (!(s < kLargestS)) {
    return out_of_range(
        "gaussian noise: the grid's rounding term sqrt(values) x sigma / sensitivity is too "
        "large for exact sampling: release fewer values at once");
  }
  noise.variance = noise::Rational{static_cast<uint64_t>(std::ceil(s * s)), 1};
  noise.sigma = std::sqrt(static_cast<double>(noise.variance.num)) * noise.grid;
  return noise;
}

Result<double> release_on_grid(const GridGaussian& noise, double value, RandomBits& bits) {
  if (!(noise.grid > 0) || noise.variance.num == 0) {
    return failed_precondition("gaussian noise: use make_grid_gaussian first");
  }
  if (!std::isfinite(value)) {
    return internal_error("gaussian noise: the statistic is not finite (a bug)");
  }
  double scaled = value / noise.grid;  // exact: g is a power of two
  if (scaled > kLargestGridMultiple) scaled = kLargestGridMultiple;
  if (scaled < -kLargestGridMultiple) scaled = -kLargestGridMultiple;
  const int64_t q = static_cast<int64_t>(std::nearbyint(scaled));
  FEDSTAT_ASSIGN_OR_RETURN(const int64_t y, noise::discrete_gaussian(bits, noise.variance));
  int64_t released = 0;
  if (__builtin_add_overflow(q, y, &released)) {
    return internal_error("gaussian noise: a noise draw beyond 2^62 grid steps");
  }
  return static_cast<double>(released) * noise.grid;
}

double grid_tv_bound(double s) {
  if (!(s >= 16)) return INFINITY;
  return 1 / (32 * s * s);
}

}  // namespace host
}  // namespace fedstat
