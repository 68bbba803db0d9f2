#include "sdk/tasks/logistic_trainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/unit/noise/sampler_test_util.h"

namespace fedstat {
namespace tasks {
namespace {

using noise::testing_util::SeededBits;

// n examples in d dimensions with unit-norm features, labelled by a fixed separator, and a
// fraction `flip` of labels flipped (so the best accuracy is about 1 − flip).
struct Synthetic {
  Synthetic(size_t n, size_t d, double flip, uint64_t salt) : dimension(d) {
    SeededBits s(salt);
    std::vector<double> truth(d);
    for (size_t k = 0; k < d; ++k) truth[k] = (k % 2 == 0 ? 1.0 : -0.5) / std::sqrt(d);
    for (size_t i = 0; i < n; ++i) {
      double norm2 = 0, score = 0;
      std::vector<float> x(d);
      for (size_t k = 0; k < d; ++k) {
        x[k] = static_cast<float>(static_cast<double>(s.bits.uniform_below(2001).value()) - 1000);
        norm2 += static_cast<double>(x[k]) * x[k];
      }
      for (size_t k = 0; k < d; ++k) {
        x[k] = static_cast<float>(x[k] / std::sqrt(norm2));
        score += x[k] * truth[k];
      }
      const bool flipped = s.bits.uniform_below(1000).value() < flip * 1000;
      labels.push_back(static_cast<int8_t>((score >= 0) != flipped ? 1 : -1));
      features.insert(features.end(), x.begin(), x.end());
    }
  }
  Examples view() const {
    return Examples{Span<const float>(features.data(), features.size()),
                    Span<const int8_t>(labels.data(), labels.size()), dimension};
  }
  size_t dimension;
  std::vector<float> features;
  std::vector<int8_t> labels;
};

std::vector<double> train(const Synthetic& data, const TrainerConfig& config, uint64_t salt) {
  std::vector<uint8_t> memory(trainer_memory_bytes(data.labels.size(), data.dimension));
  Arena arena{MutableByteSpan(memory.data(), memory.size())};
  std::vector<double> start(data.dimension, 0), out(data.dimension);
  SeededBits s(salt);
  const Status st = train_logistic(data.view(), Span<const double>(start.data(), start.size()),
                                   config, s.bits, arena, Span<double>(out.data(), out.size()));
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(arena.used(), 0u);  // scratch released
  return out;
}

TEST(LogisticTrainerTest, LearnsASeparatorAndLowersTheLoss) {
  const Synthetic data(800, 6, 0.05, 100);
  TrainerConfig config;
  config.epochs = 30;
  config.batches = 8;
  config.averaging_interval = 30;
  config.eta0 = 4;
  const std::vector<double> w = train(data, config, 1);
  const std::vector<double> zero(6, 0);
  const Span<const double> w_span(w.data(), w.size());
  EXPECT_LT(logistic_loss(data.view(), w_span, config.mu),
            logistic_loss(data.view(), Span<const double>(zero.data(), 6), config.mu) - 0.05);
  // 5% flipped labels: a good separator scores about 95%; demand at least 88%.
  EXPECT_GT(accuracy(data.view(), w_span), 0.88);
}

TEST(LogisticTrainerTest, DeterministicGivenTheBits) {
  const Synthetic data(200, 4, 0.1, 101);
  TrainerConfig config;
  EXPECT_EQ(train(data, config, 7), train(data, config, 7));
  EXPECT_NE(train(data, config, 7), train(data, config, 8));
}

TEST(LogisticTrainerTest, RefusesBadInputs) {
  Synthetic data(10, 2, 0, 102);
  data.features[0] = 3;  // norm above 1
  std::vector<uint8_t> memory(4096);
  Arena arena{MutableByteSpan(memory.data(), memory.size())};
  std::vector<double> start(2, 0), out(2);
  SeededBits s(9);
  EXPECT_EQ(train_logistic(data.view(), Span<const double>(start.data(), 2), TrainerConfig(),
                           s.bits, arena, Span<double>(out.data(), 2))
                .code(),
            StatusCode::kInvalidArgument);
  Synthetic few(3, 2, 0, 103);
  TrainerConfig many_batches;
  many_batches.batches = 5;
  EXPECT_EQ(train_logistic(few.view(), Span<const double>(start.data(), 2), many_batches, s.bits,
                           arena, Span<double>(out.data(), 2))
                .code(),
            StatusCode::kInvalidArgument);
  uint8_t tiny[8];
  Arena small{MutableByteSpan(tiny)};
  Synthetic ok(10, 2, 0, 104);
  EXPECT_EQ(train_logistic(ok.view(), Span<const double>(start.data(), 2), TrainerConfig(), s.bits,
                           small, Span<double>(out.data(), 2))
                .code(),
            StatusCode::kResourceExhausted);
}

// A NaN or an infinity is named as such (it once read "L2 norm above 1"), and a count × dimension
// that wraps cannot pass for a short feature array.
TEST(LogisticTrainerTest, NonFiniteFeaturesAndWrappingShapesAreNamed) {
  std::vector<uint8_t> memory(4096);
  Arena arena{MutableByteSpan(memory.data(), memory.size())};
  std::vector<double> start(2, 0), out(2);
  SeededBits s(11);
  for (float bad : {NAN, INFINITY, -INFINITY}) {
    Synthetic data(10, 2, 0, 105);
    data.features[5] = bad;
    const Status st = train_logistic(data.view(), Span<const double>(start.data(), 2),
                                     TrainerConfig(), s.bits, arena, Span<double>(out.data(), 2));
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(st.message()).find("NaN or an infinity"), std::string::npos)
        << st.message();
  }
  // 2^63 labels (a view only: never read) of dimension 2 claim 2^64 ≡ 0 features.
  if (sizeof(size_t) == 8) {
    const int8_t label = 1;
    const Examples wrapped{Span<const float>(), Span<const int8_t>(&label, size_t{1} << 63), 2};
    const Status st = train_logistic(wrapped, Span<const double>(start.data(), 2), TrainerConfig(),
                                     s.bits, arena, Span<double>(out.data(), 2));
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(st.message()).find("count x dimension"), std::string::npos);
  }
}

}  // namespace
}  // namespace tasks
}  // namespace fedstat
