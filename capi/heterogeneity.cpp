// The C ABI's heterogeneity contribution (c/tasks.h): the two rounds' values and the fixed point
// a contribution is sent in.
#include "capi/handle.h"
#include "sdk/tasks/heterogeneity_task.h"

namespace fedstat {
namespace capi {
namespace {

Status config_of(const fedstat_heterogeneity_config* c, tasks::HeterogeneityConfig& out) {
  if (c == nullptr) return invalid_argument("heterogeneity: config is NULL");
  out.p = c->p;
  out.max_weight = c->max_weight;
  return tasks::validate_heterogeneity_config(out);
}

}  // namespace
}  // namespace capi
}  // namespace fedstat

using namespace fedstat;        // NOLINT: the C entry points below are thin wrappers
using namespace fedstat::capi;  // NOLINT

extern "C" {

fedstat_status fedstat_heterogeneity_round1(const fedstat_heterogeneity_config* config,
                                            const double* x, size_t d, double* out,
                                            size_t out_length, const char** message) {
  tasks::HeterogeneityConfig c;
  const Status valid_config = config_of(config, c);
  if (!valid_config.ok()) return finish_free(valid_config, message);
  if (x == nullptr || out == nullptr) {
    return finish_free(invalid_argument("heterogeneity: x or out is NULL"), message);
  }
  return finish_free(
      tasks::heterogeneity_round1(Span<const double>(x, d), c, Span<double>(out, out_length)),
      message);
}

fedstat_status fedstat_heterogeneity_round2(const fedstat_heterogeneity_config* config,
                                            const double* x, const double* mean,
                                            const double* weighted_mean, size_t d, double* out,
                                            size_t out_length, const char** message) {
  tasks::HeterogeneityConfig c;
  const Status valid_config = config_of(config, c);
  if (!valid_config.ok()) return finish_free(valid_config, message);
  if (x == nullptr || mean == nullptr || weighted_mean == nullptr || out == nullptr) {
    return finish_free(invalid_argument("heterogeneity: x, a mean or out is NULL"), message);
  }
  return finish_free(tasks::heterogeneity_round2(
                         Span<const double>(x, d), Span<const double>(mean, d),
                         Span<const double>(weighted_mean, d), c, Span<double>(out, out_length)),
                     message);
}

fedstat_status fedstat_encode_fixed_point(const double* values, size_t n, double scale,
                                          int64_t* out, const char** message) {
  if (n != 0 && (values == nullptr || out == nullptr)) {
    return finish_free(invalid_argument("encode_fixed_point: values or out is NULL"), message);
  }
  return finish_free(
      tasks::encode_fixed_point(Span<const double>(values, n), scale, Span<int64_t>(out, n)),
      message);
}

}  // extern "C"
