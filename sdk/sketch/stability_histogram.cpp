#include "sdk/sketch/stability_histogram.h"

#include "sdk/noise/discrete_laplace.h"
#include "sdk/privacy/accountants.h"

namespace fedstat {
namespace sketch {

namespace {

// δ of (T, B) for sensitivity 1; non-increasing in B (also in floating point: the tail term
// q^B only shrinks and the normaliser only grows).
Result<double> delta_of(double scale, uint64_t bound) {
  return privacy::truncated_discrete_laplace_delta(scale, bound, 1);
}

// 1/20 ≤ num/den ≤ 1000, exactly.
bool scale_in_range(noise::Rational scale) {
  if (!scale.valid() || scale.is_zero()) return false;
  const uint64_t min_num = scale.den / 20 + (scale.den % 20 != 0 ? 1 : 0);  // ⌈den/20⌉
  const uint64_t min_den = scale.num / 1000 + (scale.num % 1000 != 0 ? 1 : 0);
  return scale.num >= min_num && scale.den >= min_den;
}

}  // namespace

Result<StabilityParams> stability_params(double epsilon, double delta) {
  if (!(epsilon >= kMinStabilityEpsilon && epsilon <= kMaxStabilityEpsilon)) {
    return invalid_argument(
        "stability histogram: epsilon must be finite and in [0.001, 20] (local DP; above 20 the "
        "noise is almost always 0)");
  }
  if (!(delta > 0 && delta < 1)) {
    return invalid_argument("stability histogram: delta must lie strictly between 0 and 1");
  }
  StabilityParams p;
  FEDSTAT_ASSIGN_OR_RETURN(p.scale, noise::rational_at_least(1 / epsilon));
  const double scale = p.scale.to_double();
  // The smallest B with δ(B) ≤ delta: double until it is met, then bisect (lo fails, hi meets).
  uint64_t lo = 0, hi = 1;
  for (;;) {
    FEDSTAT_ASSIGN_OR_RETURN(const double d, delta_of(scale, hi));
    if (d <= delta) break;
    if (hi == kMaxStabilityBound) {
      return out_of_range(
          "stability histogram: no bound up to 99999 reaches that delta: raise epsilon or delta");
    }
    lo = hi;
    hi = 2 * hi < kMaxStabilityBound ? 2 * hi : kMaxStabilityBound;
  }
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    FEDSTAT_ASSIGN_OR_RETURN(const double d, delta_of(scale, mid));
    (d <= delta ? hi : lo) = mid;
  }
  p.bound = hi;
  FEDSTAT_ASSIGN_OR_RETURN(p.delta, delta_of(scale, hi));
  return p;
}

namespace {

Status check_params(const StabilityParams& params) {
  // In lowest terms with both terms below 2^32 (as stability_params builds it): a huge numerator
  // could overflow the sampler's 64-bit arithmetic at random — a refusal whose chance grows with
  // the number of items held.
  const noise::Rational r = noise::reduced(params.scale);
  if (!params.scale.valid() || r.num != params.scale.num || r.den != params.scale.den ||
      params.scale.num > 0xFFFFFFFFull || params.scale.den > 0xFFFFFFFFull) {
    return invalid_argument(
        "stability histogram: params.scale must be a fraction in lowest terms with both terms "
        "below 2^32: build params with stability_params");
  }
  if (!scale_in_range(params.scale)) {
    return invalid_argument(
        "stability histogram: params.scale must be a rational in [1/20, 1000] (epsilon in "
        "[0.001, 20]): build params with stability_params");
  }
  if (params.bound < 1 || params.bound > kMaxStabilityBound) {
    return invalid_argument(
        "stability histogram: params.bound must be in [1, 99999]: build params with "
        "stability_params");
  }
  if (!(params.delta > 0 && params.delta < 1)) {
    return invalid_argument(
        "stability histogram: params.delta must lie in (0, 1): build params with "
        "stability_params");
  }
  FEDSTAT_ASSIGN_OR_RETURN(const double d, delta_of(params.scale.to_double(), params.bound));
  if (!(d <= params.delta)) {
    return invalid_argument(
        "stability histogram: params.bound is too small for params.delta at this scale: build "
        "params with stability_params");
  }
  return Status();
}

}  // namespace

Status stability_histogram(const histogram::SparseHistogram& in, const StabilityParams& params,
                           RandomBits& bits, histogram::SparseHistogram& out) {
  if (&in == &out) return invalid_argument("stability histogram: in and out must differ");
  FEDSTAT_RETURN_IF_ERROR(check_params(params));
  // How many items survive the noise depends on the data: `out` must hold every item `in` can
  // hold, so it never fills (a refusal then would be an output that depends on the data).
  if (out.capacity() < in.capacity()) {
    return invalid_argument("stability histogram: out needs at least in's capacity");
  }
  out.clear();
  // One draw per slot of `in`, held or not: the work (and the random bits used) depend only on
  // in's capacity, not on how many items the device holds. The output's layout depends only on
  // the set of released ids (SparseHistogram is history-independent), not on the items dropped.
  const Span<const histogram::SparseEntry> slots = in.slots();
  for (size_t i = 0; i < slots.size(); ++i) {
    const Result<int64_t> z_or =
        noise::truncated_discrete_laplace(bits, params.scale, params.bound);
    if (!z_or.ok()) {
      out.clear();  // never a partial histogram
      return z_or.status();
    }
    if (slots[i].count == 0) continue;
    const int64_t noisy = static_cast<int64_t>(slots[i].count) + z_or.value();
    if (noisy <= static_cast<int64_t>(params.bound)) continue;
    const uint64_t kept =
        static_cast<uint64_t>(noisy) > 0xFFFFFFFFull ? 0xFFFFFFFFull : static_cast<uint64_t>(noisy);
    const Status added = out.add(slots[i].id, static_cast<uint32_t>(kept));
    if (!added.ok()) {  // cannot happen: out holds at least in's capacity
      out.clear();
      return added;
    }
  }
  return Status();
}

}  // namespace sketch
}  // namespace fedstat
