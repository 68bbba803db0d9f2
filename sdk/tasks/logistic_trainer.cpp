#include "sdk/tasks/logistic_trainer.h"

#include <math.h>

#include "sdk/base/checked_size.h"

namespace fedstat {
namespace tasks {
namespace {

double dot(const float* x, const double* w, size_t d) {
  double s = 0;
  for (size_t k = 0; k < d; ++k) s += static_cast<double>(x[k]) * w[k];
  return s;
}

// σ(−t) = 1/(1 + e^t), stable for large |t|.
double sigmoid_of_minus(double t) {
  if (t >= 0) {
    const double e = exp(-t);
    return e / (1 + e);
  }
  return 1 / (1 + exp(t));
}

}  // namespace

Status check_examples(const Examples& e, size_t d) {
  if (d == 0 || e.dimension != d) return invalid_argument("examples and model differ in dimension");
  size_t cells = 0;  // count·d, which must not wrap onto a short feature array
  if (!checked_mul(e.count(), d, cells) || e.features.size() != cells) {
    return invalid_argument("feature array is not count x dimension");
  }
  for (size_t i = 0; i < e.count(); ++i) {
    if (e.labels[i] != 1 && e.labels[i] != -1) return invalid_argument("labels must be -1 or +1");
    double norm2 = 0;
    for (size_t k = 0; k < d; ++k) {
      const double x = e.features[i * d + k];
      if (!isfinite(x)) {
        return invalid_argument(
            "an example's features hold a NaN or an infinity: check the data and its scaling");
      }
      norm2 += x * x;
    }
    if (!(norm2 <= 1 + 1e-6)) {
      return invalid_argument("an example's features have L2 norm above 1: normalise them");
    }
  }
  return Status();
}

Status validate_trainer_config(const TrainerConfig& config) {
  if (config.epochs == 0 || config.epochs > kMaxEpochs || config.batches == 0 ||
      config.averaging_interval == 0) {
    return invalid_argument(
        "trainer needs 1..10000 epochs and at least one batch and one epoch per average");
  }
  if (!(config.eta0 > 0) || !isfinite(config.eta0) || !(config.mu >= 0) || !isfinite(config.mu)) {
    return invalid_argument("trainer needs a finite eta0 > 0 and a finite mu >= 0");
  }
  if (!(config.eta0 * trainer_smoothness(config) <= 2)) {
    return invalid_argument(
        "eta0 x (1/4 + mu) must be at most 2: larger steps expand instead of contracting, and the "
        "model could grow without bound");
  }
  return Status();
}

Status shuffle_order(RandomBits& bits, Span<uint32_t> order) {
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  for (size_t i = order.size(); i > 1; --i) {
    FEDSTAT_ASSIGN_OR_RETURN(const uint64_t j, bits.uniform_below(i));
    const size_t other = static_cast<size_t>(j);  // < i, so it fits size_t
    const uint32_t t = order[i - 1];
    order[i - 1] = order[other];
    order[other] = t;
  }
  return Status();
}

Status train_logistic(const Examples& examples, Span<const double> start,
                      const TrainerConfig& config, RandomBits& shuffle_bits, Arena& scratch,
                      Span<double> out) {
  const size_t d = start.size();
  if (out.size() != d) return invalid_argument("output model has the wrong dimension");
  FEDSTAT_RETURN_IF_ERROR(check_examples(examples, d));
  FEDSTAT_RETURN_IF_ERROR(validate_trainer_config(config));
  for (double v : start) {
    if (!(fabs(v) <= kMaxStartValue)) {
      return invalid_argument("the starting model holds a NaN, an infinity or a value beyond 1e12");
    }
  }
  const size_t n = examples.count();
  const size_t batch_size = n / config.batches;
  if (batch_size == 0) return invalid_argument("fewer examples than batches");
  const Arena::Mark mark = scratch.mark();
  auto order = scratch.allocate_array<uint32_t>(n);
  auto gradient = scratch.allocate_array<double>(d);
  auto iterate_sum = scratch.allocate_array<double>(d);
  auto w = scratch.allocate_array<double>(d);
  if (!order.ok() || !gradient.ok() || !iterate_sum.ok() || !w.ok()) {
    (void)scratch.rewind(mark);
    return resource_exhausted("trainer scratch is smaller than trainer_memory_bytes(n, d)");
  }
  const Status shuffled = shuffle_order(shuffle_bits, order.value());
  if (!shuffled.ok()) {
    (void)scratch.rewind(mark);
    return shuffled;
  }
  double* model = w.value().data();
  for (size_t k = 0; k < d; ++k) model[k] = start[k];
  uint64_t steps_since_average = 0;
  uint32_t h = 0;
  for (uint32_t s = 1; s <= config.epochs; ++s) {
    ++h;
    const double eta = config.eta0 / h;
    for (uint32_t j = 0; j < config.batches; ++j) {
      for (size_t k = 0; k < d; ++k) gradient.value()[k] = 0;
      for (size_t b = 0; b < batch_size; ++b) {
        const size_t row = order.value()[j * batch_size + b];
        const float* x = examples.features.data() + row * d;
        const double y = examples.labels[row];
        const double coefficient = -y * sigmoid_of_minus(y * dot(x, model, d));
        for (size_t k = 0; k < d; ++k) gradient.value()[k] += coefficient * x[k];
      }
      for (size_t k = 0; k < d; ++k) {
        const double g =
            gradient.value()[k] / static_cast<double>(batch_size) + config.mu * model[k];
        model[k] -= eta * g;
        iterate_sum.value()[k] += model[k];
      }
      ++steps_since_average;
    }
    if (s % config.averaging_interval == 0) {
      for (size_t k = 0; k < d; ++k) {
        model[k] = iterate_sum.value()[k] / static_cast<double>(steps_since_average);
        iterate_sum.value()[k] = 0;
      }
      steps_since_average = 0;
      h = 0;
    }
  }
  for (size_t k = 0; k < d; ++k) out[k] = model[k];
  (void)scratch.rewind(mark);
  return Status();
}

double logistic_loss(const Examples& examples, Span<const double> w, double mu) {
  const size_t d = w.size();
  double total = 0;
  for (size_t i = 0; i < examples.count(); ++i) {
    const double margin = examples.labels[i] * dot(examples.features.data() + i * d, w.data(), d);
    total += margin > 0 ? log1p(exp(-margin)) : -margin + log1p(exp(margin));
  }
  double norm2 = 0;
  for (double v : w) norm2 += v * v;
  return total / static_cast<double>(examples.count()) + mu / 2 * norm2;
}

double accuracy(const Examples& examples, Span<const double> w) {
  const size_t d = w.size();
  size_t correct = 0;
  for (size_t i = 0; i < examples.count(); ++i) {
    const double score = dot(examples.features.data() + i * d, w.data(), d);
    correct += (score >= 0 ? 1 : -1) == examples.labels[i];
  }
  return examples.count() == 0
             ? 0
             : static_cast<double>(correct) / static_cast<double>(examples.count());
}

}  // namespace tasks
}  // namespace fedstat
