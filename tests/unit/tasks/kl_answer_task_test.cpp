#include "sdk/tasks/kl_answer_task.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/unit/noise/sampler_test_util.h"

namespace fedstat {
namespace tasks {
namespace {

using noise::testing_util::SeededBits;

struct Local {
  std::vector<uint32_t> dense_counts = std::vector<uint32_t>(16);
  std::vector<histogram::SparseEntry> table = std::vector<histogram::SparseEntry>(16);
  histogram::DenseHistogram dense;
  histogram::SparseHistogram sparse;
  Local() {
    EXPECT_TRUE(dense.init(Span<uint32_t>(dense_counts.data(), dense_counts.size())).ok());
    EXPECT_TRUE(sparse.init(Span<histogram::SparseEntry>(table.data(), table.size())).ok());
    for (uint32_t item : {3u, 3u, 3u, 7u, 9u, 9u}) {
      EXPECT_TRUE(dense.add(item).ok());
      EXPECT_TRUE(sparse.add(item).ok());
    }
  }
};

const uint32_t kPoints[] = {9, 3, 4, 3, 15};
const int64_t kExact[] = {2, 3, 0, 3, 0};

TEST(KlAnswerTask, AnswersCountsAndTotalFromEitherHistogram) {
  Local local;
  int64_t counts[5] = {-1, -1, -1, -1, -1};
  uint64_t total = 0;
  ASSERT_TRUE(answer_kl_points(local.dense, Span<const uint32_t>(kPoints, 5),
                               Span<int64_t>(counts, 5), &total)
                  .ok());
  EXPECT_EQ(total, 6u);
  for (int t = 0; t < 5; ++t) EXPECT_EQ(counts[t], kExact[t]) << t;
  total = 0;
  ASSERT_TRUE(answer_kl_points(local.sparse, Span<const uint32_t>(kPoints, 5),
                               Span<int64_t>(counts, 5), &total)
                  .ok());
  EXPECT_EQ(total, 6u);
  for (int t = 0; t < 5; ++t) EXPECT_EQ(counts[t], kExact[t]) << t;
}

TEST(KlAnswerTask, RefusesMismatchedSpansAndNullTotal) {
  Local local;
  int64_t counts[4];
  uint64_t total = 0;
  EXPECT_EQ(answer_kl_points(local.sparse, Span<const uint32_t>(kPoints, 5),
                             Span<int64_t>(counts, 4), &total)
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(answer_kl_points(local.dense, Span<const uint32_t>(kPoints, 4),
                             Span<int64_t>(counts, 4), nullptr)
                .code(),
            StatusCode::kInvalidArgument);
}

TEST(KlAnswerTask, NoisedAnswerIsCountPlusTheSamplersOwnDraws) {
  Local local;
  noise::NoiseSampler share;
  ASSERT_TRUE(share.init({noise::NoiseKind::kSkellam, {7, 2}, 1}).ok());
  int64_t counts[5];
  uint64_t total = 0;
  SeededBits device(41);
  ASSERT_TRUE(answer_kl_points_noised(local.sparse, Span<const uint32_t>(kPoints, 5), share,
                                      device.bits, Span<int64_t>(counts, 5), &total)
                  .ok());
  EXPECT_EQ(total, 6u);
  SeededBits replay(41);  // the same stream: the same noise, in point order
  bool any_noise = false;
  for (int t = 0; t < 5; ++t) {
    const int64_t draw = share.sample(replay.bits).value();
    EXPECT_EQ(counts[t], kExact[t] + draw) << t;
    any_noise = any_noise || draw != 0;
  }
  EXPECT_TRUE(any_noise);

  uint32_t words[5];
  SeededBits device_mod(42), replay_mod(42);
  ASSERT_TRUE(answer_kl_points_noised_mod(local.sparse, Span<const uint32_t>(kPoints, 5), share,
                                          device_mod.bits, 16, Span<uint32_t>(words, 5), &total)
                  .ok());
  for (int t = 0; t < 5; ++t) {
    const int64_t draw = share.sample(replay_mod.bits).value();
    EXPECT_EQ(words[t], static_cast<uint32_t>(kExact[t] + draw) & 0xFFFFu) << t;
  }
}

TEST(KlAnswerTask, SensitivityCountsEveryRoundThatAsksAMovedPoint) {
  const privacy::Sensitivity once = kl_answer_sensitivity(1, 1);
  EXPECT_DOUBLE_EQ(once.l1, 2);
  EXPECT_DOUBLE_EQ(once.l2, std::sqrt(2.0));
  const privacy::Sensitivity repeated = kl_answer_sensitivity(3, 2);
  EXPECT_DOUBLE_EQ(repeated.l1, 5);
  EXPECT_DOUBLE_EQ(repeated.l2, std::sqrt(5.0));
}

TEST(KlAnswerTask, DistLambdaIsTheAccountantsAndMeetsTheTarget) {
  const privacy::Sensitivity s = kl_answer_sensitivity(1, 1);
  const double lambda = kl_dist_skellam_lambda(2, 1e-6, s, 50).value();
  EXPECT_EQ(lambda, privacy::skellam_lambda(2, 1e-6, s, 50).value());
  EXPECT_LE(privacy::skellam_epsilon(lambda, 50, s, 1e-6).value().epsilon, 2 * (1 + 1e-9));
  // A little less noise than calibrated no longer meets the target.
  EXPECT_GT(privacy::skellam_epsilon(lambda * 0.99, 50, s, 1e-6).value().epsilon, 2);
  EXPECT_EQ(kl_dist_skellam_lambda(2, 1e-6, s, 0).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tasks
}  // namespace fedstat
