#include "sdk/tasks/model_update_task.h"

#include <math.h>

namespace fedstat {
namespace tasks {

namespace {

constexpr size_t kMaxBatches = 256;

// (Δ1*[j], Δ2*[j]) for j = 1..m: the discretised sensitivities of the report when the differing
// record is in batch j (header: Calibration), written to storage[0, m) and returned as that span.
Result<Span<const privacy::Sensitivity>> batch_sensitivities(
    const ModelUpdateConfig& config, size_t dimension,
    privacy::Sensitivity (&storage)[kMaxBatches]) {
  const uint32_t m = config.trainer.batches;
  if (m == 0 || m > kMaxBatches) return invalid_argument("1..256 batches supported");
  const size_t batch_size = config.examples_per_client / m;
  if (batch_size == 0) return invalid_argument("fewer examples per client than batches");
  FEDSTAT_RETURN_IF_ERROR(validate_trainer_config(config.trainer));
  FEDSTAT_RETURN_IF_ERROR(quantise::validate_config(dimension, config.quantise));
  double delta_by_batch[kMaxBatches];
  const double mu = config.trainer.mu;
  FEDSTAT_RETURN_IF_ERROR(privacy::rsgd_ar_schedule_sensitivities(
      mu, trainer_smoothness(config.trainer), config.trainer.epochs,
      config.trainer.averaging_interval, config.trainer.eta0, static_cast<double>(batch_size),
      /*gradient_bound=*/sqrt(kMaxFeatureNorm2), Span<double>(delta_by_batch, m)));
  const double root_length =
      sqrt(static_cast<double>(quantise::encoded_length(dimension, config.quantise)));
  for (uint32_t j = 0; j < m; ++j) {
    // Clipping to c (a projection) can only shrink the change: min(Δ, 2c), plus every rounding
    // of the float pipeline (quantise.h, Rounding). v* − v*′ is an integer vector: L1 ≤ L2².
    const double l2 =
        quantise::discretised_l2_sensitivity(delta_by_batch[j], dimension, config.quantise);
    storage[j] = privacy::Sensitivity{fmin(root_length * l2, l2 * l2), l2};
  }
  return Span<const privacy::Sensitivity>(storage, m);
}

}  // namespace

Result<double> model_update_lambda(const ModelUpdateConfig& config, size_t dimension,
                                   uint32_t clients, double epsilon, double delta) {
  privacy::Sensitivity storage[kMaxBatches];
  const Result<Span<const privacy::Sensitivity>> by_batch =
      batch_sensitivities(config, dimension, storage);
  FEDSTAT_RETURN_IF_ERROR(by_batch.status());
  return privacy::skellam_lambda_mixture(epsilon, delta, by_batch.value(), clients);
}

Result<privacy::DpFromRdp> model_update_epsilon(const ModelUpdateConfig& config, size_t dimension,
                                                uint32_t clients, double lambda_per_client,
                                                double delta) {
  privacy::Sensitivity storage[kMaxBatches];
  const Result<Span<const privacy::Sensitivity>> by_batch =
      batch_sensitivities(config, dimension, storage);
  FEDSTAT_RETURN_IF_ERROR(by_batch.status());
  return privacy::skellam_epsilon_mixture(lambda_per_client, clients, by_batch.value(), delta);
}

namespace {
template <typename Word>
Status report_impl(const Examples& examples, Span<const double> global_model,
                   const ModelUpdateConfig& config, const noise::NoiseSampler* noise,
                   RandomBits& private_bits, Arena& scratch, Span<Word> report) {
  const size_t d = global_model.size();
  const size_t length = quantise::encoded_length(d, config.quantise);
  if (report.size() != length) return invalid_argument("report must hold encoded_length(d) words");
  const uint32_t m = config.trainer.batches;
  if (m == 0 || config.examples_per_client / m == 0 ||
      examples.count() / m < config.examples_per_client / m) {
    // A smaller batch than calibrated would move the model more than the noise covers. The
    // number of examples is public under substitution, so this refusal reveals no record.
    return failed_precondition(
        "this client holds fewer examples than the task was calibrated for "
        "(examples_per_client): it must not report");
  }
  const Arena::Mark mark = scratch.mark();
  auto local = scratch.allocate_array<double>(d);
  auto update = scratch.allocate_array<float>(length);
  if (!local.ok() || !update.ok()) {
    (void)scratch.rewind(mark);
    return resource_exhausted("scratch is smaller than model_update_memory_bytes(n, d)");
  }
  Status status =
      train_logistic(examples, global_model, config.trainer, private_bits, scratch, local.value());
  if (status.ok()) {
    // The change, clipped in double before the cast to float (quantise.h, Rounding).
    for (size_t k = 0; k < d; ++k) local.value()[k] -= global_model[k];
    status = quantise::clip_to_float(local.value(), config.quantise.clip_norm, update.value());
  }
  if (status.ok()) {
    status = quantise::quantise(update.value(), d, config.quantise, noise, private_bits, report);
  }
  (void)scratch.rewind(mark);
  return status;
}
}  // namespace

Status model_update_report(const Examples& examples, Span<const double> global_model,
                           const ModelUpdateConfig& config, const noise::NoiseSampler* noise,
                           RandomBits& private_bits, Arena& scratch, Span<uint32_t> report) {
  return report_impl<uint32_t>(examples, global_model, config, noise, private_bits, scratch,
                               report);
}
Status model_update_report(const Examples& examples, Span<const double> global_model,
                           const ModelUpdateConfig& config, const noise::NoiseSampler* noise,
                           RandomBits& private_bits, Arena& scratch, Span<uint64_t> report) {
  return report_impl<uint64_t>(examples, global_model, config, noise, private_bits, scratch,
                               report);
}

Status apply_aggregate(Span<const uint64_t> sum, uint32_t clients, const ModelUpdateConfig& config,
                       Span<double> work, Span<double> delta, Span<double> global_model) {
  if (clients == 0) return invalid_argument("no clients to average over");
  if (delta.size() != global_model.size()) return invalid_argument("delta must hold d values");
  FEDSTAT_RETURN_IF_ERROR(
      quantise::dequantise(sum, global_model.size(), config.quantise, work, delta));
  for (size_t k = 0; k < global_model.size(); ++k) global_model[k] += delta[k] / clients;
  return Status();
}

}  // namespace tasks
}  // namespace fedstat
