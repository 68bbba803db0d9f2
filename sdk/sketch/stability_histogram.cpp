#include "sdk/sketch/stability_histogram.h"

#include "sdk/noise/discrete_laplace.h"
#include "sdk/privacy/accountants.h"

namespace fedstat {
namespace sketch {

Result<StabilityParams> stability_params(double epsilon, double delta) {
  if (!(epsilon > 0) || !(delta > 0 && delta < 1)) {
    return invalid_argument("stability histogram: epsilon > 0 and delta in (0, 1)");
  }
  StabilityParams p;
  FEDSTAT_ASSIGN_OR_RETURN(p.scale, noise::rational_at_least(1 / epsilon));
  for (uint64_t bound = 1; bound < 100000; ++bound) {
    FEDSTAT_ASSIGN_OR_RETURN(
        const double d, privacy::truncated_discrete_laplace_delta(p.scale.to_double(), bound, 1));
    if (d <= delta) {
      p.bound = bound;
      p.delta = d;
      return p;
    }
  }
  return out_of_range("stability histogram: no bound up to 10^5 reaches that delta");
}

Status stability_histogram(const histogram::SparseHistogram& in, const StabilityParams& params,
                           RandomBits& bits, histogram::SparseHistogram& out) {
  if (&in == &out) return invalid_argument("stability histogram: in and out must differ");
  if (params.bound == 0) return invalid_argument("stability histogram: use stability_params");
  out.clear();
  const Span<const histogram::SparseEntry> slots = in.slots();
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].count == 0) continue;
    FEDSTAT_ASSIGN_OR_RETURN(const int64_t z,
                             noise::truncated_discrete_laplace(bits, params.scale, params.bound));
    const int64_t noisy = static_cast<int64_t>(slots[i].count) + z;
    if (noisy <= static_cast<int64_t>(params.bound)) continue;
    const uint64_t kept =
        static_cast<uint64_t>(noisy) > 0xFFFFFFFFull ? 0xFFFFFFFFull : static_cast<uint64_t>(noisy);
    const Status added = out.add(slots[i].id, static_cast<uint32_t>(kept));
    if (!added.ok()) {
      out.clear();
      return added;
    }
  }
  return Status();
}

}  // namespace sketch
}  // namespace fedstat
