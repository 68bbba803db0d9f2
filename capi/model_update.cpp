// The C ABI's model update (c/tasks.h): one client's Sk-RSGD-AR report in 64-bit words, its
// length, its scratch, and the per-client noise for a target (ε, δ).
#include <string.h>

#include "capi/handle.h"
#include "capi/objects.h"
#include "sdk/base/arena.h"
#include "sdk/noise/add_noise.h"
#include "sdk/noise/rational.h"
#include "sdk/quantise/quantise.h"
#include "sdk/tasks/model_update_task.h"

namespace fedstat {
namespace capi {
namespace {

Status config_of(const fedstat_model_update_config* c, tasks::ModelUpdateConfig& out) {
  if (c == nullptr) return invalid_argument("model update: config is NULL");
  out.trainer.epochs = c->epochs;
  out.trainer.batches = c->batches;
  out.trainer.averaging_interval = c->averaging_interval;
  out.trainer.eta0 = c->eta0;
  out.trainer.mu = c->mu;
  out.quantise.clip_norm = c->clip_norm;
  out.quantise.rotate = c->rotate != 0;
  memcpy(out.quantise.rotation_seed.bytes, c->rotation_seed, sizeof(c->rotation_seed));
  out.quantise.rotation_stream = c->rotation_stream;
  out.quantise.gamma = c->gamma;
  out.quantise.beta = c->beta;
  out.quantise.modulus_bits = c->modulus_bits;
  out.quantise.max_rounding_tries = c->max_rounding_tries;
  out.examples_per_client = c->examples_per_client;
  return Status();
}

// D for a configuration the quantiser accepts.
Result<size_t> encoded_words(const tasks::ModelUpdateConfig& c, size_t d) {
  if (d == 0) return invalid_argument("model update: the dimension must be >= 1");
  FEDSTAT_RETURN_IF_ERROR(quantise::validate_config(d, c.quantise));
  return quantise::encoded_length(d, c.quantise);
}

// Reports of b <= 32 bits are computed in 32-bit words and widened, as the Client does.
bool narrow(const tasks::ModelUpdateConfig& c) {
  return c.quantise.modulus_bits <= 32;
}

size_t scratch_needed(const tasks::ModelUpdateConfig& c, size_t n, size_t d, size_t length) {
  const size_t base = tasks::model_update_memory_bytes(n, d);
  return narrow(c) ? size_add(base, Arena::bytes_needed<uint32_t>(length)) : base;
}

}  // namespace
}  // namespace capi
}  // namespace fedstat

using namespace fedstat;        // NOLINT: the C entry points below are thin wrappers
using namespace fedstat::capi;  // NOLINT

extern "C" {

fedstat_status fedstat_model_update_report_length(const fedstat_model_update_config* config,
                                                  size_t d, size_t* words) {
  tasks::ModelUpdateConfig c;
  if (words == nullptr || !config_of(config, c).ok()) return FEDSTAT_INVALID_ARGUMENT;
  const Result<size_t> length = encoded_words(c, d);
  if (!length.ok()) return code_of(length.status());
  *words = length.value();
  return FEDSTAT_OK;
}

fedstat_status fedstat_model_update_scratch_size(const fedstat_model_update_config* config,
                                                 size_t n, size_t d, size_t* bytes) {
  tasks::ModelUpdateConfig c;
  if (!config_of(config, c).ok()) return FEDSTAT_INVALID_ARGUMENT;
  const Result<size_t> length = encoded_words(c, d);
  if (!length.ok()) return code_of(length.status());
  return size_status(scratch_needed(c, n, d, length.value()), bytes);
}

fedstat_status fedstat_model_update_report(const fedstat_model_update_config* config,
                                           const float* features, const int8_t* labels, size_t n,
                                           size_t d, const double* global_model, double lambda,
                                           fedstat_random* noise, void* scratch,
                                           size_t scratch_bytes, uint64_t* report,
                                           size_t report_length, const char** message) {
  tasks::ModelUpdateConfig c;
  FEDSTAT_RETURN_IF_ERROR_C(config_of(config, c), message);
  const Result<size_t> length = encoded_words(c, d);
  FEDSTAT_RETURN_IF_ERROR_C(length.status(), message);
  const size_t features_count = size_mul(n, d);
  if (features_count == kSizeOverflow) {
    return finish_free(invalid_argument("model update: n x d overflows"), message);
  }
  if ((n != 0 && (features == nullptr || labels == nullptr)) || global_model == nullptr ||
      scratch == nullptr || report == nullptr) {
    return finish_free(
        invalid_argument("model update: features, labels, model, scratch or report is NULL"),
        message);
  }
  if (!valid(noise, kRandomMagic)) {
    return finish_free(invalid_argument("model update: noise is not a random source"), message);
  }
  if (report_length != length.value()) {
    return finish_free(invalid_argument("model update: report_length must be D"), message);
  }
  if (!(lambda >= 0)) {
    return finish_free(invalid_argument("model update: lambda must be >= 0 (0: no noise)"),
                       message);
  }
  noise::NoiseSampler share;
  const noise::NoiseSampler* share_ptr = nullptr;
  if (lambda > 0) {
    const Result<noise::Rational> rational = noise::rational_at_least(lambda);
    FEDSTAT_RETURN_IF_ERROR_C(rational.status(), message);
    FEDSTAT_RETURN_IF_ERROR_C(
        share.init(noise::NoiseSpec{noise::NoiseKind::kSkellam, rational.value(), 1}), message);
    share_ptr = &share;
  }
  const tasks::Examples examples{Span<const float>(features, features_count),
                                 Span<const int8_t>(labels, n), d};
  const Span<const double> model(global_model, d);
  Arena arena(MutableByteSpan(static_cast<uint8_t*>(scratch), scratch_bytes));
  RandomBits& bits = *noise->bits;
  if (!narrow(c)) {
    return finish_free(tasks::model_update_report(examples, model, c, share_ptr, bits, arena,
                                                  Span<uint64_t>(report, report_length)),
                       message);
  }
  const Result<Span<uint32_t>> words = arena.allocate_array<uint32_t>(report_length);
  if (!words.ok()) {
    return finish_free(
        resource_exhausted(
            "model update: scratch is smaller than fedstat_model_update_scratch_size"),
        message);
  }
  FEDSTAT_RETURN_IF_ERROR_C(
      tasks::model_update_report(examples, model, c, share_ptr, bits, arena, words.value()),
      message);
  for (size_t i = 0; i < report_length; ++i) report[i] = words.value()[i];
  return FEDSTAT_OK;
}

fedstat_status fedstat_model_update_lambda(const fedstat_model_update_config* config, size_t d,
                                           uint32_t clients, double epsilon, double delta,
                                           double* lambda, const char** message) {
  tasks::ModelUpdateConfig c;
  FEDSTAT_RETURN_IF_ERROR_C(config_of(config, c), message);
  if (lambda == nullptr) return finish_free(invalid_argument("lambda is NULL"), message);
  const Result<double> l = tasks::model_update_lambda(c, d, clients, epsilon, delta);
  if (l.ok()) *lambda = l.value();
  return finish_free(l.status(), message);
}

}  // extern "C"
