// The C ABI's KL answers (c/histogram.h) and their Dist calibration (c/tasks.h): the counts a
// histogram holds at the host's query points, exact or with a Skellam share each.
#include "capi/handle.h"
#include "capi/objects.h"
#include "sdk/noise/add_noise.h"
#include "sdk/noise/rational.h"
#include "sdk/tasks/kl_answer_task.h"

namespace fedstat {
namespace capi {
namespace {

// The argument checks both answers share (the handle's own check is the caller's).
Status check_answer_args(const uint32_t* points, size_t n, const int64_t* counts,
                         const uint64_t* total) {
  if ((n != 0 && (points == nullptr || counts == nullptr)) || total == nullptr) {
    return invalid_argument("kl_answer: points, counts or total is NULL");
  }
  return Status();
}

}  // namespace
}  // namespace capi
}  // namespace fedstat

using namespace fedstat;        // NOLINT: the C entry points below are thin wrappers
using namespace fedstat::capi;  // NOLINT

extern "C" {

fedstat_status fedstat_histogram_kl_answer(fedstat_histogram* histogram, const uint32_t* points,
                                           size_t n, int64_t* counts, uint64_t* total) {
  if (!valid(histogram, kHistogramMagic)) return FEDSTAT_INVALID_ARGUMENT;
  const Status args = check_answer_args(points, n, counts, total);
  if (!args.ok()) return finish(histogram, args);
  const Span<const uint32_t> at(points, n);
  const Span<int64_t> out(counts, n);
  return finish(histogram, histogram->kind == FEDSTAT_HISTOGRAM_DENSE
                               ? tasks::answer_kl_points(histogram->dense, at, out, total)
                               : tasks::answer_kl_points(histogram->sparse, at, out, total));
}

fedstat_status fedstat_histogram_kl_answer_noised(fedstat_histogram* histogram,
                                                  const uint32_t* points, size_t n, double lambda,
                                                  struct fedstat_random* noise, int64_t* counts,
                                                  uint64_t* total) {
  if (!valid(histogram, kHistogramMagic)) return FEDSTAT_INVALID_ARGUMENT;
  const Status args = check_answer_args(points, n, counts, total);
  if (!args.ok()) return finish(histogram, args);
  if (!valid(noise, kRandomMagic)) {
    return finish(histogram, invalid_argument("kl_answer_noised: noise is not a random source"));
  }
  if (!(lambda > 0)) {
    return finish(histogram, invalid_argument("kl_answer_noised: lambda must be > 0"));
  }
  const Result<noise::Rational> rational = noise::rational_at_least(lambda);
  if (!rational.ok()) return finish(histogram, rational.status());
  noise::NoiseSampler share;
  const Status ready =
      share.init(noise::NoiseSpec{noise::NoiseKind::kSkellam, rational.value(), 1});
  if (!ready.ok()) return finish(histogram, ready);
  const Span<const uint32_t> at(points, n);
  const Span<int64_t> out(counts, n);
  RandomBits& bits = *noise->bits;
  return finish(
      histogram,
      histogram->kind == FEDSTAT_HISTOGRAM_DENSE
          ? tasks::answer_kl_points_noised(histogram->dense, at, share, bits, out, total)
          : tasks::answer_kl_points_noised(histogram->sparse, at, share, bits, out, total));
}

fedstat_status fedstat_kl_dist_skellam_lambda(double epsilon, double delta, uint32_t m1,
                                              uint32_t m2, uint32_t clients_per_sum, double* lambda,
                                              const char** message) {
  if (lambda == nullptr) return finish_free(invalid_argument("lambda is NULL"), message);
  if (m1 == 0 || m2 > m1) {
    return finish_free(invalid_argument("kl lambda: needs m1 >= 1 and m2 <= m1"), message);
  }
  const Result<double> l = tasks::kl_dist_skellam_lambda(
      epsilon, delta, tasks::kl_answer_sensitivity(m1, m2), clients_per_sum);
  if (l.ok()) *lambda = l.value();
  return finish_free(l.status(), message);
}

}  // extern "C"
