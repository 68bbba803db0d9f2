#include "sdk/tasks/kl_answer_task.h"

#include "sdk/base/portable_math.h"

namespace fedstat {
namespace tasks {
namespace {

template <typename Histogram>
Status answer_exact(const Histogram& local, Span<const uint32_t> points, Span<int64_t> counts,
                    uint64_t* total) {
  if (total == nullptr) return Status(StatusCode::kInvalidArgument, "kl answer: total is null");
  if (counts.size() != points.size()) {
    return Status(StatusCode::kInvalidArgument,
                  "kl answer: counts must have one entry per requested point");
  }
  for (size_t t = 0; t < points.size(); ++t) counts[t] = local.count(points[t]);
  *total = local.total();
  return Status();
}

template <typename Histogram>
Status answer_noised(const Histogram& local, Span<const uint32_t> points,
                     const noise::NoiseSampler& share, RandomBits& bits, Span<int64_t> counts,
                     uint64_t* total) {
  FEDSTAT_RETURN_IF_ERROR(answer_exact(local, points, counts, total));
  return noise::add_noise(Span<const int64_t>(counts.data(), counts.size()), counts, share, bits);
}

}  // namespace

Status answer_kl_points(const histogram::DenseHistogram& local, Span<const uint32_t> points,
                        Span<int64_t> counts, uint64_t* total) {
  return answer_exact(local, points, counts, total);
}

Status answer_kl_points(const histogram::SparseHistogram& local, Span<const uint32_t> points,
                        Span<int64_t> counts, uint64_t* total) {
  return answer_exact(local, points, counts, total);
}

Status answer_kl_points_noised(const histogram::DenseHistogram& local, Span<const uint32_t> points,
                               const noise::NoiseSampler& share, RandomBits& bits,
                               Span<int64_t> counts, uint64_t* total) {
  return answer_noised(local, points, share, bits, counts, total);
}

Status answer_kl_points_noised(const histogram::SparseHistogram& local, Span<const uint32_t> points,
                               const noise::NoiseSampler& share, RandomBits& bits,
                               Span<int64_t> counts, uint64_t* total) {
  return answer_noised(local, points, share, bits, counts, total);
}

Status answer_kl_points_noised_mod(const histogram::SparseHistogram& local,
                                   Span<const uint32_t> points, const noise::NoiseSampler& share,
                                   RandomBits& bits, unsigned bits_of_modulus, Span<uint32_t> words,
                                   uint64_t* total) {
  if (total == nullptr) return Status(StatusCode::kInvalidArgument, "kl answer: total is null");
  if (words.size() != points.size()) {
    return Status(StatusCode::kInvalidArgument,
                  "kl answer: words must have one entry per requested point");
  }
  for (size_t t = 0; t < points.size(); ++t) words[t] = local.count(points[t]);
  *total = local.total();
  return noise::add_noise_mod(Span<const uint32_t>(words.data(), words.size()), words,
                              bits_of_modulus, share, bits);
}

privacy::Sensitivity kl_answer_sensitivity(uint32_t m1, uint32_t m2) {
  const double moved = static_cast<double>(m1) + static_cast<double>(m2);
  return privacy::Sensitivity{moved, math::portable_sqrt(moved)};  // correctly rounded, as sqrt
}

Result<double> kl_dist_skellam_lambda(double epsilon, double delta,
                                      privacy::Sensitivity sensitivity, uint32_t clients_per_sum) {
  if (clients_per_sum == 0) {
    return Status(StatusCode::kInvalidArgument, "kl dist: at least one client must answer");
  }
  return privacy::skellam_lambda(epsilon, delta, sensitivity, clients_per_sum);
}

}  // namespace tasks
}  // namespace fedstat
