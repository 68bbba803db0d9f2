// The trainer against the accountant: on adversarial neighbouring datasets the SDK's own RSGD-AR
// trainer moves the model by no more than rsgd_ar_schedule_sensitivities says, for every
// schedule (T epochs, averaging every τ, m batches, step η0) — including the step-size resets and
// window averages that 002's Algorithm 4 as printed leaves out.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "sdk/privacy/accountants.h"
#include "sdk/tasks/logistic_trainer.h"
#include "sdk/tasks/model_update_task.h"
#include "tests/unit/noise/sampler_test_util.h"

namespace fedstat {
namespace tasks {
namespace {

using noise::testing_util::SeededBits;

constexpr size_t kN = 400, kD = 4;

// n unit-norm examples, labelled by a separator; record 0 is (e1, +1) in D and (−e1, +1) in D′
// (the review's neighbours: the gradient of the differing record flips direction).
struct Neighbours {
  std::vector<float> features[2];
  std::vector<int8_t> labels;
  Neighbours() {
    SeededBits s(7);
    for (size_t i = 0; i < kN; ++i) {
      std::vector<float> x(kD);
      double norm2 = 0;
      for (float& v : x) {
        v = static_cast<float>(static_cast<double>(s.bits.uniform_below(2001).value()) - 1000);
        norm2 += static_cast<double>(v) * v;
      }
      for (float& v : x) v = static_cast<float>(v / std::sqrt(norm2));
      if (i == 0) x = {1, 0, 0, 0};
      labels.push_back(static_cast<int8_t>(i == 0 || x[0] - 0.5 * x[1] >= 0 ? 1 : -1));
      features[0].insert(features[0].end(), x.begin(), x.end());
    }
    features[1] = features[0];
    features[1][0] = -1;
  }
  Examples view(int which) const {
    return Examples{Span<const float>(features[which].data(), features[which].size()),
                    Span<const int8_t>(labels.data(), labels.size()), kD};
  }
};

std::vector<double> train(const Examples& examples, const TrainerConfig& config, uint64_t salt) {
  std::vector<uint8_t> memory(trainer_memory_bytes(kN, kD));
  Arena arena{MutableByteSpan(memory.data(), memory.size())};
  const std::vector<double> start(kD, 0.05);
  std::vector<double> out(kD);
  SeededBits s(salt);
  EXPECT_TRUE(train_logistic(examples, Span<const double>(start.data(), kD), config, s.bits, arena,
                             Span<double>(out.data(), kD))
                  .ok());
  return out;
}

// The batch record 0 lands in under the trainer's shuffle with these bits (m: unused).
uint32_t batch_of_record_zero(uint64_t salt, uint32_t batches) {
  std::vector<uint32_t> order(kN);
  SeededBits s(salt);
  EXPECT_TRUE(shuffle_order(s.bits, Span<uint32_t>(order.data(), kN)).ok());
  const size_t batch_size = kN / batches;
  for (size_t p = 0; p < kN; ++p) {
    if (order[p] == 0)
      return p < batch_size * batches ? static_cast<uint32_t>(p / batch_size) : batches;
  }
  return batches;
}

double distance(const std::vector<double>& a, const std::vector<double>& b) {
  double d2 = 0;
  for (size_t k = 0; k < a.size(); ++k) d2 += (a[k] - b[k]) * (a[k] - b[k]);
  return std::sqrt(d2);
}

TEST(TrainerSensitivityTest, MeasuredDeviationStaysBelowTheScheduleBound) {
  const Neighbours data;
  double worst_ratio = 0, worst_printed_ratio = 0;
  for (uint32_t epochs : {1u, 2u, 5u, 20u}) {
    for (uint32_t interval : {1u, 2u, 3u, 5u, 20u, 21u}) {
      for (uint32_t batches : {1u, 4u}) {
        for (double eta0 : {0.5, 1.0, 4.0}) {
          TrainerConfig config;
          config.epochs = epochs;
          config.averaging_interval = interval;
          config.batches = batches;
          config.eta0 = eta0;
          config.mu = 0.01;
          std::vector<double> bound(batches), printed(batches);
          const double batch_size = static_cast<double>(kN / batches);
          ASSERT_TRUE(privacy::rsgd_ar_schedule_sensitivities(config.mu, 0.25 + config.mu, epochs,
                                                              interval, eta0, batch_size, 1,
                                                              Span<double>(bound.data(), batches))
                          .ok());
          ASSERT_TRUE(privacy::rsgd_ar_sensitivities(config.mu, 0.25 + config.mu, epochs, eta0,
                                                     batch_size, 1,
                                                     Span<double>(printed.data(), batches))
                          .ok());
          for (uint64_t salt : {11u, 12u, 13u}) {
            const uint32_t j = batch_of_record_zero(salt, batches);
            const double moved =
                distance(train(data.view(0), config, salt), train(data.view(1), config, salt));
            if (j == batches) {  // record 0 unused: the models agree
              EXPECT_EQ(moved, 0);
              continue;
            }
            EXPECT_LE(moved, bound[j] * (1 + 1e-9))
                << "T " << epochs << " tau " << interval << " m " << batches << " eta0 " << eta0;
            worst_ratio = std::max(worst_ratio, moved / bound[j]);
            if (interval < epochs) {
              worst_printed_ratio = std::max(worst_printed_ratio, moved / printed[j]);
            }
          }
        }
      }
    }
  }
  // The bound is not vacuous, and Algorithm 4 as printed (η0/s over all steps) is exceeded as
  // soon as the step size resets: the defect the schedule-aware bound fixes.
  std::printf("worst measured/bound %.3f, measured/Algorithm-4-as-printed %.3f\n", worst_ratio,
              worst_printed_ratio);
  EXPECT_GT(worst_ratio, 0.2);
  EXPECT_GT(worst_printed_ratio, 1.5);
}

// The per-client λ follows the schedule: averaging every epoch (large steps again after every
// reset) needs more noise than averaging once at the end.
TEST(TrainerSensitivityTest, ModelUpdateLambdaDependsOnTheAveragingInterval) {
  ModelUpdateConfig config;
  config.trainer.epochs = 20;
  config.trainer.batches = 4;
  config.quantise.clip_norm = 10;
  config.examples_per_client = 400;
  config.trainer.averaging_interval = 20;
  const double once = model_update_lambda(config, 8, 10, 1, 1e-6).value();
  config.trainer.averaging_interval = 1;
  const double every_epoch = model_update_lambda(config, 8, 10, 1, 1e-6).value();
  EXPECT_GT(every_epoch, 1.5 * once);
}

}  // namespace
}  // namespace tasks
}  // namespace fedstat
