#include "sdk/tasks/model_update_task.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sdk/privacy/accountants.h"
#include "tests/unit/noise/sampler_test_util.h"

namespace fedstat {
namespace tasks {
namespace {

using noise::testing_util::SeededBits;

struct ClientData {
  std::vector<float> features;
  std::vector<int8_t> labels;
  Examples view(size_t d) const {
    return Examples{Span<const float>(features.data(), features.size()),
                    Span<const int8_t>(labels.data(), labels.size()), d};
  }
};

ClientData make_client(size_t n, size_t d, uint64_t salt) {
  SeededBits s(salt);
  ClientData c;
  for (size_t i = 0; i < n; ++i) {
    std::vector<float> x(d);
    double norm2 = 0, score = 0;
    for (size_t k = 0; k < d; ++k) {
      x[k] = static_cast<float>(static_cast<double>(s.bits.uniform_below(201).value()) - 100);
      norm2 += static_cast<double>(x[k]) * x[k];
    }
    for (size_t k = 0; k < d; ++k) {
      x[k] = static_cast<float>(x[k] / std::sqrt(norm2 + 1));
      score += (k == 0 ? 1.0 : -0.3) * x[k];
    }
    c.features.insert(c.features.end(), x.begin(), x.end());
    c.labels.push_back(static_cast<int8_t>(score >= 0 ? 1 : -1));
  }
  return c;
}

TEST(ModelUpdateTaskTest, WithoutNoiseTheAggregateIsTheAverageOfClientModels) {
  constexpr size_t kD = 5, kN = 60;
  constexpr uint32_t kClients = 3;
  ModelUpdateConfig config;
  config.quantise.gamma = 1 << 16;
  config.quantise.clip_norm = 50;
  config.examples_per_client = kN;
  const size_t length = quantise::encoded_length(kD, config.quantise);
  std::vector<double> global(kD, 0.1), expected(kD, 0), sum_models(kD, 0);
  std::vector<uint64_t> sum(length, 0);
  std::vector<uint8_t> memory(model_update_memory_bytes(kN, kD));
  for (uint32_t c = 0; c < kClients; ++c) {
    const ClientData data = make_client(kN, kD, 200 + c);
    // Reference: the same trainer with the same bits, in the clear.
    std::vector<double> model(kD);
    {
      Arena arena{MutableByteSpan(memory.data(), memory.size())};
      SeededBits bits(300 + c);
      ASSERT_TRUE(train_logistic(data.view(kD), Span<const double>(global.data(), kD),
                                 config.trainer, bits.bits, arena, Span<double>(model.data(), kD))
                      .ok());
    }
    for (size_t k = 0; k < kD; ++k) sum_models[k] += model[k];
    Arena arena{MutableByteSpan(memory.data(), memory.size())};
    SeededBits bits(300 + c);
    std::vector<uint32_t> report(length);
    ASSERT_TRUE(model_update_report(data.view(kD), Span<const double>(global.data(), kD), config,
                                    nullptr, bits.bits, arena,
                                    Span<uint32_t>(report.data(), length))
                    .ok());
    std::vector<uint64_t> words(report.begin(), report.end());
    ASSERT_TRUE(quantise::add_mod(Span<uint64_t>(sum.data(), length),
                                  Span<const uint64_t>(words.data(), length), 32)
                    .ok());
  }
  std::vector<double> work(length), change(kD), model = global;
  ASSERT_TRUE(apply_aggregate(Span<const uint64_t>(sum.data(), length), kClients, config,
                              Span<double>(work.data(), length), Span<double>(change.data(), kD),
                              Span<double>(model.data(), kD))
                  .ok());
  // Rounding error per client ≤ β·√D/γ in L2, so each coordinate of the average is within it.
  const double tolerance =
      config.quantise.beta * std::sqrt(static_cast<double>(length)) / config.quantise.gamma + 1e-6;
  for (size_t k = 0; k < kD; ++k) EXPECT_NEAR(model[k], sum_models[k] / kClients, tolerance) << k;
}

TEST(ModelUpdateTaskTest, LambdaMeetsTheTargetAndGrowsForSmallerEpsilon) {
  ModelUpdateConfig config;
  config.examples_per_client = 100;
  const auto loose = model_update_lambda(config, 31, 10, 2.0, 1e-8);
  const auto tight = model_update_lambda(config, 31, 10, 0.5, 1e-8);
  ASSERT_TRUE(loose.ok() && tight.ok());
  EXPECT_GT(tight.value(), loose.value());
  config.examples_per_client = 2;
  EXPECT_EQ(model_update_lambda(config, 31, 10, 1, 1e-8).status().code(),
            StatusCode::kInvalidArgument);  // fewer examples than batches
}

// The calibration assumed batches of ⌊n/m⌋: a client with fewer examples (smaller batches, so a
// larger sensitivity) must not report; one with more may (its batches only dilute a record more).
TEST(ModelUpdateTaskTest, ClientWithFewerExamplesThanCalibratedRefuses) {
  constexpr size_t kD = 3;
  ModelUpdateConfig config;
  config.examples_per_client = 40;
  const size_t length = quantise::encoded_length(kD, config.quantise);
  const std::vector<double> global(kD, 0);
  std::vector<uint32_t> report(length);
  for (size_t n : {size_t{39}, size_t{36}, size_t{40}, size_t{57}}) {
    const ClientData data = make_client(n, kD, 500 + n);
    std::vector<uint8_t> memory(model_update_memory_bytes(n, kD));
    Arena arena{MutableByteSpan(memory.data(), memory.size())};
    SeededBits bits(600);
    const Status status =
        model_update_report(data.view(kD), Span<const double>(global.data(), kD), config, nullptr,
                            bits.bits, arena, Span<uint32_t>(report.data(), length));
    // m = 4: 39 examples make batches of 9 < 10.
    EXPECT_EQ(status.code(), n / 4 < 10 ? StatusCode::kFailedPrecondition : StatusCode::kOk) << n;
  }
}

}  // namespace
}  // namespace tasks
}  // namespace fedstat
