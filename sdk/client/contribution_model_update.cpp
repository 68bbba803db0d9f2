// MODEL_UPDATE (contribution.h): tasks::model_update_report of the app's examples from the
// global model in the TaskData; in DIST with a Skellam share inside quantise.
#include <string.h>

#include "sdk/base/arena.h"
#include "sdk/base/checked_size.h"
#include "sdk/client/contribution.h"
#include "sdk/client/contribution_helpers.h"
#include "sdk/client/task_kinds.h"
#include "sdk/tasks/model_update_task.h"

namespace fedstat {
namespace client {
namespace {

Status validate_model_update(const fedstat_v1_Task& task) {
  if (task.which_parameters != fedstat_v1_Task_model_update_tag) {
    return invalid_argument("Task.parameters: MODEL_UPDATE needs model_update parameters");
  }
  const fedstat_v1_ModelUpdateParameters& m = task.parameters.model_update;
  // No honest server noises a model update centrally (host_server/tasks/model_update_plan.cpp
  // refuses "trusted"; a TAgg noises KL aggregates only): a TRUSTED or TAGG task would collect
  // this device's exact update. Only NONE (the app's opt-in) and DIST (its own Skellam share).
  if (task.trust != fedstat_v1_TrustModel_NONE && task.trust != fedstat_v1_TrustModel_DIST) {
    return invalid_argument(
        "Task.trust must be NONE or DIST for MODEL_UPDATE: no server adds central noise to a "
        "model update, so TRUSTED or TAGG would collect exact words");
  }
  if (m.dimension == 0) return invalid_argument("Task.model_update.dimension must be >= 1");
  if (task.data_words != m.dimension) {
    return invalid_argument("Task.data_words must equal Task.model_update.dimension");
  }
  if (m.examples_per_client == 0) {
    return invalid_argument("Task.model_update.examples_per_client must be >= 1");
  }
  const tasks::ModelUpdateConfig c = model_update_config(task);
  if (!tasks::validate_trainer_config(c.trainer).ok()) {
    return invalid_argument(
        "Task.model_update: epochs/batches/averaging_interval/eta0/mu refused by the trainer");
  }
  if (m.examples_per_client / m.batches == 0) {  // batches ≥ 1: the trainer's check above
    return invalid_argument("Task.model_update.examples_per_client must be >= batches");
  }
  if (!quantise::validate_config(m.dimension, c.quantise).ok()) {
    return invalid_argument(
        "Task.model_update: clip_norm/gamma/beta/bits refused by quantise for this dimension");
  }
  if (quantise::encoded_length(m.dimension, c.quantise) != task.vector_length) {
    return invalid_argument(
        "Task.vector_length must be quantise::encoded_length(dimension) for MODEL_UPDATE");
  }
  return Status();
}

AppData examples_data(const fedstat_v1_Task& task, ClientData& data) {
  AppData held;
  Result<tasks::Examples> examples = data.examples();
  held.held = examples.ok();
  if (!held.held) return held;
  held.usable = validate_examples(task, examples.value());
  held.local_size = examples.value().count();
  return held;
}

size_t model_update_scratch(const fedstat_v1_Task& task, size_t local_size) {
  const size_t d = task.parameters.model_update.dimension;
  size_t bytes =
      size_add(size_mul(8, d), size_add(tasks::model_update_memory_bytes(local_size, d), 8));
  if (task.bits <= 32) bytes = size_add(bytes, round_up8(size_mul(4, task.vector_length)));
  return bytes;
}

// In DIST: at least the ε of Sk(λ·honest_shares) for the sensitivities model_update_lambda
// calibrates with.
Status model_update_spend(const fedstat_v1_Task& task, uint32_t honest_shares, DeviceSpend& spend) {
  if (!is_dist(task)) return Status();
  const Result<privacy::DpFromRdp> noise =
      tasks::model_update_epsilon(model_update_config(task), task.parameters.model_update.dimension,
                                  honest_shares, task.device_noise_lambda, task.delta);
  return raise_to_skellam_epsilon(noise, spend);
}

Status build_from_examples(const fedstat_v1_Task& task, ClientData& data,
                           Span<const uint64_t> model_bits, RandomBits& noise,
                           MutableByteSpan scratch, Span<uint64_t> out) {
  Result<tasks::Examples> examples = data.examples();
  FEDSTAT_RETURN_IF_ERROR(examples.status());
  return build_model_update(task, examples.value(), model_bits, noise, scratch, out);
}

}  // namespace

const TaskKindSupport kModelUpdateKind = {fedstat_v1_TaskKind_MODEL_UPDATE,
                                          /*dist_share=*/true,
                                          validate_model_update,
                                          examples_data,
                                          check_doubles_data,
                                          model_update_scratch,
                                          model_update_spend,
                                          build_from_examples};

tasks::ModelUpdateConfig model_update_config(const fedstat_v1_Task& task) {
  const fedstat_v1_ModelUpdateParameters& m = task.parameters.model_update;
  tasks::ModelUpdateConfig c;
  c.trainer.epochs = m.epochs;
  c.trainer.batches = m.batches;
  c.trainer.averaging_interval = m.averaging_interval;
  c.trainer.eta0 = m.eta0;
  c.trainer.mu = m.mu;
  c.quantise.clip_norm = m.clip_norm;
  c.quantise.rotate = m.rotate;
  c.quantise.rotation_seed = seed_of(task);
  c.quantise.rotation_stream = 0;
  c.quantise.gamma = m.gamma;
  c.quantise.beta = m.beta;
  c.quantise.modulus_bits = task.bits;
  c.examples_per_client = m.examples_per_client;
  return c;
}

Status validate_examples(const fedstat_v1_Task& task, const tasks::Examples& examples) {
  const fedstat_v1_ModelUpdateParameters& m = task.parameters.model_update;
  if (m.batches == 0) {  // validate_task refuses it too; this function is public on its own
    return invalid_argument("the task's model update has no batches: validate the task first");
  }
  if (examples.dimension != m.dimension) {
    return invalid_argument("the app's examples have another dimension than the task's model");
  }
  // Labels ±1, finite features of norm ≤ 1, count·d without wrapping: the trainer's own check,
  // before anything is charged.
  FEDSTAT_RETURN_IF_ERROR(tasks::check_examples(examples, m.dimension));
  if (examples.count() / m.batches < m.examples_per_client / m.batches) {
    return failed_precondition(
        "the app holds fewer examples than the task was calibrated for (examples_per_client)");
  }
  return Status();
}

Status build_model_update(const fedstat_v1_Task& task, const tasks::Examples& examples,
                          Span<const uint64_t> model_bits, RandomBits& noise,
                          MutableByteSpan scratch, Span<uint64_t> out) {
  FEDSTAT_RETURN_IF_ERROR(
      check_builder_task(task, kModelUpdateKind, out.size(), "not MODEL_UPDATE"));
  const size_t d = task.parameters.model_update.dimension;
  if (model_bits.size() != d) return invalid_argument("TaskData: the model needs d words");
  if (examples.dimension != d) {
    return invalid_argument("the app's examples have another dimension than the task's model");
  }
  Arena arena(scratch);
  Result<Span<double>> model = arena.allocate_array<double>(d);
  if (!model.ok()) return resource_exhausted("scratch is smaller than scratch_bytes(task)");
  FEDSTAT_RETURN_IF_ERROR(decode_doubles(model_bits, model.value(),
                                         "TaskData: the global model holds a NaN or infinity"));
  const tasks::ModelUpdateConfig config = model_update_config(task);
  noise::NoiseSampler share;
  const noise::NoiseSampler* share_ptr = nullptr;
  if (is_dist(task)) {
    FEDSTAT_RETURN_IF_ERROR(init_share(task, share));
    share_ptr = &share;
  }
  if (task.bits > 32) {
    return tasks::model_update_report(examples, model.value(), config, share_ptr, noise, arena,
                                      out);
  }
  Result<Span<uint32_t>> narrow = arena.allocate_array<uint32_t>(out.size());
  if (!narrow.ok()) return resource_exhausted("scratch is smaller than scratch_bytes(task)");
  FEDSTAT_RETURN_IF_ERROR(tasks::model_update_report(examples, model.value(), config, share_ptr,
                                                     noise, arena, narrow.value()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = narrow.value()[i];
  return Status();
}

}  // namespace client
}  // namespace fedstat
