#include "host_server/estimate/gaussian_noise.h"

#include <cmath>

#include "sdk/noise/discrete_gaussian.h"

namespace fedstat {
namespace host {

Result<double> sample_gaussian(RandomBits& bits, double sigma) {
  if (!(sigma > 0) || !std::isfinite(sigma)) {
    return Status(StatusCode::kInvalidArgument, "gaussian noise: sigma must be positive");
  }
  const int grid_exponent = std::ilogb(sigma) - 20;
  const double grid = std::ldexp(1.0, grid_exponent);
  const double scaled = sigma / grid;  // in [2^20, 2^21)
  const noise::Rational variance{static_cast<uint64_t>(std::ceil(scaled * scaled)), 1};
  FEDSTAT_ASSIGN_OR_RETURN(const int64_t y, noise::discrete_gaussian(bits, variance));
  return static_cast<double>(y) * grid;
}

}  // namespace host
}  // namespace fedstat
