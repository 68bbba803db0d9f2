#include "sdk/client/contribution.h"

#include <math.h>
#include <string.h>

#include <type_traits>

#include "sdk/base/arena.h"
#include "sdk/base/checked_size.h"
#include "sdk/noise/add_noise.h"
#include "sdk/noise/rational.h"
#include "sdk/privacy/accountants.h"
#include "sdk/sketch/shift_sketch.h"
#include "sdk/sketch/stability_histogram.h"
#include "sdk/tasks/heterogeneity_task.h"
#include "sdk/tasks/kl_answer_task.h"
#include "sdk/tasks/model_update_task.h"

namespace fedstat {
namespace client {
namespace {

constexpr size_t round_up8(size_t bytes) {
  return size_add(bytes, 7) == kSizeOverflow ? kSizeOverflow : size_add(bytes, 7) / 8 * 8;
}

Seed256 seed_of(const fedstat_v1_Task& task) {
  Seed256 seed;
  memcpy(seed.bytes, task.seed.bytes, sizeof(seed.bytes));
  return seed;
}

sketch::ShiftSketchParams sketch_params_of(const fedstat_v1_Task& task) {
  sketch::ShiftSketchParams p;
  p.rows = task.parameters.data_shift.rows;
  p.width = task.parameters.data_shift.width;
  p.heap_capacity = task.parameters.data_shift.heap_capacity;
  p.k = task.parameters.data_shift.k;
  p.seed = seed_of(task);
  p.buffer_slots = 0;
  return p;
}

}  // namespace

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

namespace {

bool finite_at_least_zero(double x) {
  return isfinite(x) && x >= 0;
}

// The checks every kind shares: privacy fields, seed, bits, the DIST roster.
Status validate_common(const fedstat_v1_Task& task) {
  const int64_t trust = wire_enum_value(task.trust);
  if (trust < fedstat_v1_TrustModel_TRUSTED || trust > fedstat_v1_TrustModel_NONE) {
    return unimplemented("Task.trust: unknown trust model");
  }
  if (!finite_at_least_zero(task.epsilon)) {
    return invalid_argument("Task.epsilon must be finite and >= 0");
  }
  if (!(task.delta >= 0 && task.delta < 1)) return invalid_argument("Task.delta must be in [0, 1)");
  if (task.trust == fedstat_v1_TrustModel_NONE) {
    if (task.epsilon != 0 || task.delta != 0) {
      return invalid_argument("Task.epsilon and Task.delta must be 0 for trust model NONE");
    }
  } else if (task.epsilon == 0) {
    return invalid_argument("Task.epsilon must be > 0 for a private task");
  }
  if (!finite_at_least_zero(task.device_noise_lambda)) {
    return invalid_argument("Task.device_noise_lambda must be finite and >= 0");
  }
  const bool device_noise =
      task.trust == fedstat_v1_TrustModel_DIST && (task.kind == fedstat_v1_TaskKind_KL_ANSWERS ||
                                                   task.kind == fedstat_v1_TaskKind_MODEL_UPDATE ||
                                                   task.kind == fedstat_v1_TaskKind_HETEROGENEITY);
  if (device_noise && task.device_noise_lambda == 0) {
    return invalid_argument("Task.device_noise_lambda must be > 0 for this kind in DIST");
  }
  // The share's sampler must take λ: refused here, before anything is charged, not at the build.
  if (device_noise && !noise::rational_at_least(task.device_noise_lambda).ok()) {
    return invalid_argument("Task.device_noise_lambda is beyond what the Skellam sampler takes");
  }
  if (!device_noise && task.device_noise_lambda != 0) {
    return invalid_argument(
        "Task.device_noise_lambda must be 0: this kind and trust model add no Skellam share");
  }
  if (task.seed.size != 32) return invalid_argument("Task.seed must be 32 bytes");
  if (task.bits < 1 || task.bits > 64) return invalid_argument("Task.bits must be in 1..64");
  if (task.vector_length == 0) return invalid_argument("Task.vector_length must be >= 1");
  if (task.trust == fedstat_v1_TrustModel_DIST &&
      !(task.threshold >= 2 && task.threshold <= task.max_clients &&
        task.max_clients <= kMaxTaskClients)) {
    return invalid_argument(
        "Task.threshold and Task.max_clients must satisfy 2 <= threshold <= max_clients <= 1024");
  }
  return Status();
}

Status validate_data_shift(const fedstat_v1_Task& task) {
  if (task.which_parameters != fedstat_v1_Task_data_shift_tag) {
    return invalid_argument("Task.parameters: DATA_SHIFT needs data_shift parameters");
  }
  const sketch::ShiftSketchParams p = sketch_params_of(task);
  if (!sketch::validate_params(p).ok()) {
    return invalid_argument("Task.data_shift: rows/width/heap_capacity/k refused by ShiftSketch");
  }
  if (sketch::shift_sketch_memory_bytes(p) == kSizeOverflow) {
    return invalid_argument("Task.data_shift: the sketch does not fit this device's address space");
  }
  const double local_epsilon = task.parameters.data_shift.local_epsilon;
  if (!finite_at_least_zero(local_epsilon)) {
    return invalid_argument("Task.data_shift.local_epsilon must be finite and >= 0");
  }
  if (local_epsilon > 0 && !sketch::stability_params(local_epsilon, kStabilityDelta).ok()) {
    return invalid_argument("Task.data_shift.local_epsilon is outside [0.001, 20]");
  }
  if (task.trust == fedstat_v1_TrustModel_DIST && local_epsilon == 0) {
    // The device adds no other noise to a sketch: the summed counters would be exact.
    return invalid_argument("Task.data_shift.local_epsilon must be > 0 in DIST (no other noise)");
  }
  if (task.bits != 64) return invalid_argument("Task.bits must be 64 for DATA_SHIFT");
  if (task.data_words != 0) return invalid_argument("Task.data_words must be 0 for DATA_SHIFT");
  if (uint64_t{p.rows} * p.width + 1 != task.vector_length) {
    return invalid_argument("Task.vector_length must be rows x width + 1 for DATA_SHIFT");
  }
  return Status();
}

Status validate_kl(const fedstat_v1_Task& task) {
  if (task.which_parameters != fedstat_v1_Task_kl_tag) {
    return invalid_argument("Task.parameters: KL_ANSWERS needs kl parameters");
  }
  const uint32_t points = task.parameters.kl.points;
  if (points == 0) return invalid_argument("Task.kl.points must be >= 1");
  if (task.data_words != points) {
    return invalid_argument("Task.data_words must equal Task.kl.points for KL_ANSWERS");
  }
  if (task.bits != 64) return invalid_argument("Task.bits must be 64 for KL_ANSWERS");
  if (uint64_t{points} + 1 != task.vector_length) {
    return invalid_argument("Task.vector_length must be points + 1 for KL_ANSWERS");
  }
  return Status();
}

Status validate_model_update(const fedstat_v1_Task& task) {
  if (task.which_parameters != fedstat_v1_Task_model_update_tag) {
    return invalid_argument("Task.parameters: MODEL_UPDATE needs model_update parameters");
  }
  const fedstat_v1_ModelUpdateParameters& m = task.parameters.model_update;
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

tasks::HeterogeneityConfig heterogeneity_config_of(const fedstat_v1_Task& task) {
  tasks::HeterogeneityConfig c;
  c.p = task.parameters.heterogeneity.p;
  c.max_weight = task.parameters.heterogeneity.max_weight;
  return c;
}

Status validate_heterogeneity(const fedstat_v1_Task& task) {
  if (task.which_parameters != fedstat_v1_Task_heterogeneity_tag) {
    return invalid_argument("Task.parameters: HETEROGENEITY needs heterogeneity parameters");
  }
  const fedstat_v1_HeterogeneityParameters& h = task.parameters.heterogeneity;
  if (h.dimension == 0) return invalid_argument("Task.heterogeneity.dimension must be >= 1");
  if (!isfinite(h.p) || !isfinite(h.max_weight) ||
      !tasks::validate_heterogeneity_config(heterogeneity_config_of(task)).ok()) {
    return invalid_argument("Task.heterogeneity: p must be finite >= 1, max_weight finite >= 4");
  }
  if (!(isfinite(h.scale) && h.scale > 0)) {
    return invalid_argument("Task.heterogeneity.scale must be finite and > 0");
  }
  // The largest value encoded is max(W, 1)·d (w·||x − μ̄||² ≤ W·d): it must fit 2^62.
  const double largest = h.scale * (h.max_weight > 1 ? h.max_weight : 1) * h.dimension;
  if (!(largest < 4.6e18)) {
    return invalid_argument(
        "Task.heterogeneity.scale x max_weight x dimension must stay below 2^62");
  }
  if (task.bits != 64) return invalid_argument("Task.bits must be 64 for HETEROGENEITY");
  uint64_t length = 0, data_words = 0;
  if (h.stage == 1) {
    length = 2 * uint64_t{h.dimension} + 2;
  } else if (h.stage == 2) {
    length = tasks::heterogeneity_round2_length();
    data_words = 2 * uint64_t{h.dimension};
  } else {
    return invalid_argument("Task.heterogeneity.stage must be 1 or 2");
  }
  if (task.data_words != data_words) {
    return invalid_argument("Task.data_words must be 0 (stage 1) or 2 x dimension (stage 2)");
  }
  if (task.vector_length != length) {
    return invalid_argument("Task.vector_length must be 2d + 2 (stage 1) or 2 (stage 2)");
  }
  return Status();
}

// A Skellam share of λ = device_noise_lambda (rounded up to a rational, as the host tools do).
Status init_share(const fedstat_v1_Task& task, noise::NoiseSampler& share) {
  Result<noise::Rational> lambda = noise::rational_at_least(task.device_noise_lambda);
  if (!lambda.ok()) return invalid_argument("Task.device_noise_lambda is not a usable rational");
  return share.init(noise::NoiseSpec{noise::NoiseKind::kSkellam, lambda.value(), 1});
}

// KL query points: distinct, ascending, each below 2^32 (docs/protocol.md).
Status check_kl_points(Span<const uint64_t> points) {
  for (size_t t = 0; t < points.size(); ++t) {
    if (points[t] > UINT32_MAX || (t > 0 && points[t] <= points[t - 1])) {
      return invalid_argument("TaskData: KL points must be distinct ascending ids below 2^32");
    }
  }
  return Status();
}

// TaskData words holding IEEE-754 doubles' bits (a model, means): every one finite. Written to
// `out` (out.size() == bits.size()) when it is not empty.
Status decode_doubles(Span<const uint64_t> bits, Span<double> out, const char* refusal) {
  for (size_t j = 0; j < bits.size(); ++j) {
    double v = 0;
    memcpy(&v, &bits[j], sizeof(v));
    if (!isfinite(v)) return invalid_argument(refusal);
    if (!out.empty()) out[j] = v;
  }
  return Status();
}

}  // namespace

Status validate_task(const fedstat_v1_Task& task) {
  const int64_t kind = wire_enum_value(task.kind);
  if (kind < fedstat_v1_TaskKind_DATA_SHIFT || kind > fedstat_v1_TaskKind_MODEL_UPDATE) {
    return unimplemented("Task.kind: unknown task kind");
  }
  FEDSTAT_RETURN_IF_ERROR(validate_common(task));
  switch (task.kind) {
    case fedstat_v1_TaskKind_DATA_SHIFT:
      return validate_data_shift(task);
    case fedstat_v1_TaskKind_KL_ANSWERS:
      return validate_kl(task);
    case fedstat_v1_TaskKind_MODEL_UPDATE:
      return validate_model_update(task);
    case fedstat_v1_TaskKind_HETEROGENEITY:
      return validate_heterogeneity(task);
    default:
      return unimplemented("Task.kind: unknown task kind");
  }
}

Status validate_task_data(const fedstat_v1_Task& task, Span<const uint64_t> data) {
  FEDSTAT_RETURN_IF_ERROR(validate_task(task));
  if (data.size() != task.data_words) return invalid_argument("TaskData: not data_words words");
  if (task.kind == fedstat_v1_TaskKind_KL_ANSWERS) return check_kl_points(data);
  // MODEL_UPDATE, HETEROGENEITY: doubles' bits.
  return decode_doubles(data, Span<double>(), "TaskData: a model or mean holds a NaN or infinity");
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

Status validate_unit_vector(const fedstat_v1_Task& task, Span<const double> x) {
  if (x.size() != task.parameters.heterogeneity.dimension) {
    return invalid_argument("the app's vector has another dimension than the task");
  }
  return tasks::validate_unit_vector(x);
}

Result<size_t> contribution_length(const fedstat_v1_Task& task) {
  FEDSTAT_RETURN_IF_ERROR(validate_task(task));
  return static_cast<size_t>(task.vector_length);
}

Result<size_t> scratch_bytes(const fedstat_v1_Task& task, size_t local_size) {
  FEDSTAT_RETURN_IF_ERROR(validate_task(task));
  size_t bytes = 0;
  switch (task.kind) {
    case fedstat_v1_TaskKind_DATA_SHIFT:
      bytes = round_up8(sketch::shift_sketch_memory_bytes(sketch_params_of(task)));
      if (task.parameters.data_shift.local_epsilon > 0) {
        bytes = size_add(bytes, size_mul(sizeof(histogram::SparseEntry), local_size));
      }
      break;
    case fedstat_v1_TaskKind_KL_ANSWERS:
      bytes = round_up8(size_mul(4, task.parameters.kl.points));
      break;
    case fedstat_v1_TaskKind_HETEROGENEITY:
      bytes = size_add(size_mul(8, task.vector_length), size_mul(8, task.data_words));
      break;
    default: {  // MODEL_UPDATE (validate_task refused the others)
      const size_t d = task.parameters.model_update.dimension;
      bytes =
          size_add(size_mul(8, d), size_add(tasks::model_update_memory_bytes(local_size, d), 8));
      if (task.bits <= 32) bytes = size_add(bytes, round_up8(size_mul(4, task.vector_length)));
      break;
    }
  }
  if (bytes == kSizeOverflow) {
    return resource_exhausted("the task's scratch does not fit this device's address space");
  }
  return bytes;
}

Status build_data_shift(const fedstat_v1_Task& task, const histogram::SparseHistogram& local,
                        RandomBits& noise, MutableByteSpan scratch, Span<uint64_t> out) {
  FEDSTAT_RETURN_IF_ERROR(validate_task(task));
  if (task.kind != fedstat_v1_TaskKind_DATA_SHIFT) return invalid_argument("not a DATA_SHIFT task");
  if (out.size() != task.vector_length)
    return invalid_argument("out must hold vector_length words");
  const sketch::ShiftSketchParams p = sketch_params_of(task);
  const size_t sketch_bytes = sketch::shift_sketch_memory_bytes(p);
  Arena arena(scratch);
  Result<Span<uint64_t>> sketch_words = arena.allocate_array<uint64_t>(round_up8(sketch_bytes) / 8);
  if (!sketch_words.ok()) return resource_exhausted("scratch is smaller than scratch_bytes(task)");
  sketch::ShiftSketch sketch;
  FEDSTAT_RETURN_IF_ERROR(sketch.init(
      p, MutableByteSpan(reinterpret_cast<uint8_t*>(sketch_words.value().data()), sketch_bytes)));

  const histogram::SparseHistogram* source = &local;
  histogram::SparseHistogram noisy;
  if (task.parameters.data_shift.local_epsilon > 0) {
    Result<Span<histogram::SparseEntry>> table =
        arena.allocate_array<histogram::SparseEntry>(local.capacity());
    if (!table.ok()) return resource_exhausted("scratch is smaller than scratch_bytes(task)");
    FEDSTAT_RETURN_IF_ERROR(noisy.init(table.value()));
    Result<sketch::StabilityParams> stability =
        sketch::stability_params(task.parameters.data_shift.local_epsilon, kStabilityDelta);
    FEDSTAT_RETURN_IF_ERROR(stability.status());
    FEDSTAT_RETURN_IF_ERROR(sketch::stability_histogram(local, stability.value(), noise, noisy));
    source = &noisy;
  }
  const Span<const histogram::SparseEntry> slots = source->slots();
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].count > 0) FEDSTAT_RETURN_IF_ERROR(sketch.add(slots[i].id, slots[i].count));
  }
  size_t next = 0;
  for (uint32_t r = 0; r < p.rows; ++r) {
    for (uint32_t b = 0; b < p.width; ++b)
      out[next++] = static_cast<uint64_t>(sketch.counter(r, b));
  }
  out[next] = static_cast<uint64_t>(sketch.total());
  return Status();
}

Status build_kl_answers(const fedstat_v1_Task& task, const histogram::SparseHistogram& local,
                        Span<const uint64_t> points, RandomBits& noise, MutableByteSpan scratch,
                        Span<uint64_t> out) {
  FEDSTAT_RETURN_IF_ERROR(validate_task(task));
  if (task.kind != fedstat_v1_TaskKind_KL_ANSWERS) return invalid_argument("not a KL task");
  const size_t n = task.parameters.kl.points;
  if (out.size() != task.vector_length)
    return invalid_argument("out must hold vector_length words");
  if (points.size() != n) return invalid_argument("TaskData: KL needs one word per query point");
  Arena arena(scratch);
  Result<Span<uint32_t>> ids = arena.allocate_array<uint32_t>(n);
  if (!ids.ok()) return resource_exhausted("scratch is smaller than scratch_bytes(task)");
  FEDSTAT_RETURN_IF_ERROR(check_kl_points(points));
  for (size_t t = 0; t < n; ++t) ids.value()[t] = static_cast<uint32_t>(points[t]);
  // The counts, int64 in two's complement, in the contribution's own words.
  const Span<int64_t> counts(reinterpret_cast<int64_t*>(out.data()), n);
  uint64_t total = 0;
  if (is_dist(task)) {
    noise::NoiseSampler share;
    FEDSTAT_RETURN_IF_ERROR(init_share(task, share));
    FEDSTAT_RETURN_IF_ERROR(
        tasks::answer_kl_points_noised(local, ids.value(), share, noise, counts, &total));
  } else {
    FEDSTAT_RETURN_IF_ERROR(tasks::answer_kl_points(local, ids.value(), counts, &total));
  }
  out[n] = total;
  return Status();
}

Status build_model_update(const fedstat_v1_Task& task, const tasks::Examples& examples,
                          Span<const uint64_t> model_bits, RandomBits& noise,
                          MutableByteSpan scratch, Span<uint64_t> out) {
  FEDSTAT_RETURN_IF_ERROR(validate_task(task));
  if (task.kind != fedstat_v1_TaskKind_MODEL_UPDATE) return invalid_argument("not MODEL_UPDATE");
  const size_t d = task.parameters.model_update.dimension;
  if (out.size() != task.vector_length)
    return invalid_argument("out must hold vector_length words");
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

Status build_heterogeneity(const fedstat_v1_Task& task, Span<const double> x,
                           Span<const uint64_t> means, RandomBits& noise, MutableByteSpan scratch,
                           Span<uint64_t> out) {
  FEDSTAT_RETURN_IF_ERROR(validate_task(task));
  if (task.kind != fedstat_v1_TaskKind_HETEROGENEITY) return invalid_argument("not HETEROGENEITY");
  const fedstat_v1_HeterogeneityParameters& h = task.parameters.heterogeneity;
  const size_t d = h.dimension;
  if (out.size() != task.vector_length)
    return invalid_argument("out must hold vector_length words");
  if (means.size() != task.data_words) return invalid_argument("TaskData: 2d words in stage 2");
  if (x.size() != d)
    return invalid_argument("the app's vector has another dimension than the task");
  FEDSTAT_RETURN_IF_ERROR(tasks::validate_unit_vector(x));
  Arena arena(scratch);
  Result<Span<double>> values = arena.allocate_array<double>(out.size());
  Result<Span<double>> host_means = arena.allocate_array<double>(means.size());
  if (!values.ok() || !host_means.ok()) {
    return resource_exhausted("scratch is smaller than scratch_bytes(task)");
  }
  const tasks::HeterogeneityConfig config = heterogeneity_config_of(task);
  if (h.stage == 1) {
    FEDSTAT_RETURN_IF_ERROR(tasks::heterogeneity_round1(x, config, values.value()));
  } else {
    FEDSTAT_RETURN_IF_ERROR(
        decode_doubles(means, host_means.value(), "TaskData: the means hold a NaN or infinity"));
    const Span<const double> all = host_means.value();
    FEDSTAT_RETURN_IF_ERROR(
        tasks::heterogeneity_round2(x, all.first(d), all.subspan(d, d), config, values.value()));
  }
  const Span<int64_t> words(reinterpret_cast<int64_t*>(out.data()), out.size());
  FEDSTAT_RETURN_IF_ERROR(tasks::encode_fixed_point(values.value(), h.scale, words));
  if (is_dist(task)) {
    noise::NoiseSampler share;
    FEDSTAT_RETURN_IF_ERROR(init_share(task, share));
    FEDSTAT_RETURN_IF_ERROR(noise::add_noise(Span<const int64_t>(words), words, share, noise));
  }
  return Status();
}

Result<DeviceSpend> device_spend(const fedstat_v1_Task& task) {
  FEDSTAT_RETURN_IF_ERROR(validate_task(task));
  DeviceSpend spend;
  if (task.trust == fedstat_v1_TrustModel_NONE) return spend;
  spend.epsilon = task.epsilon;
  spend.delta = task.delta;
  if (task.kind == fedstat_v1_TaskKind_DATA_SHIFT && task.parameters.data_shift.local_epsilon > 0) {
    spend.epsilon = fmax(spend.epsilon, task.parameters.data_shift.local_epsilon);
    spend.delta = fmax(spend.delta, kStabilityDelta);
  }
  if (is_dist(task) && (task.kind == fedstat_v1_TaskKind_KL_ANSWERS ||
                        task.kind == fedstat_v1_TaskKind_MODEL_UPDATE)) {
    // The ε of the least noise a released sum carries: Sk(λ) from each of threshold shares.
    Result<privacy::DpFromRdp> noise = privacy::DpFromRdp();
    if (task.kind == fedstat_v1_TaskKind_KL_ANSWERS) {
      const privacy::Sensitivity sensitivity =
          tasks::kl_answer_sensitivity(1, task.parameters.kl.points > 1 ? 1 : 0);
      noise = privacy::skellam_epsilon(task.device_noise_lambda, task.threshold, sensitivity,
                                       task.delta);
    } else {  // the sensitivities model_update_lambda calibrates with
      noise = tasks::model_update_epsilon(model_update_config(task),
                                          task.parameters.model_update.dimension, task.threshold,
                                          task.device_noise_lambda, task.delta);
    }
    if (!noise.ok()) {
      return invalid_argument(
          "Task.device_noise_lambda/threshold/delta: the Skellam accountant refuses them");
    }
    if (!(isfinite(noise.value().epsilon) && noise.value().epsilon >= 0)) {
      return invalid_argument("Task.device_noise_lambda: the Skellam accountant gives no finite ε");
    }
    spend.epsilon = fmax(spend.epsilon, noise.value().epsilon);
  }
  if (task.kind == fedstat_v1_TaskKind_HETEROGENEITY && is_dist(task)) {
    const fedstat_v1_HeterogeneityParameters& h = task.parameters.heterogeneity;
    const double scales[4] = {h.scale, h.scale, h.scale, h.scale};
    privacy::Sensitivity encoded[4];
    tasks::heterogeneity_encoded_sensitivities(h.dimension, heterogeneity_config_of(task), scales,
                                               encoded);
    const int first = h.stage == 1 ? 0 : 2;  // this stage's two releases
    const double mu = task.device_noise_lambda * task.threshold;
    spend.epsilon = 0;
    spend.delta = 0;
    spend.has_rdp = true;
    for (size_t i = 0; i < privacy::kLedgerOrderCount; ++i) {
      double total = 0;
      for (int k = first; k < first + 2; ++k) {
        Result<double> rdp = privacy::skellam_rdp(privacy::kLedgerOrders[i], encoded[k], mu);
        if (!rdp.ok() || !(isfinite(rdp.value()) && rdp.value() >= 0)) {
          return invalid_argument(
              "Task.device_noise_lambda/threshold/scale: the Skellam accountant gives no finite "
              "RDP");
        }
        total += rdp.value();
      }
      spend.rdp[i] = total;
    }
  }
  return spend;
}

Status build_contribution(const fedstat_v1_Task& task, ClientData& data,
                          Span<const uint64_t> task_data, RandomBits& noise,
                          MutableByteSpan scratch, Span<uint64_t> out) {
  switch (task.kind) {
    case fedstat_v1_TaskKind_DATA_SHIFT:
    case fedstat_v1_TaskKind_KL_ANSWERS: {
      const histogram::SparseHistogram* histogram = data.histogram();
      if (histogram == nullptr) return not_found("the app holds no histogram");
      return task.kind == fedstat_v1_TaskKind_DATA_SHIFT
                 ? build_data_shift(task, *histogram, noise, scratch, out)
                 : build_kl_answers(task, *histogram, task_data, noise, scratch, out);
    }
    case fedstat_v1_TaskKind_MODEL_UPDATE: {
      Result<tasks::Examples> examples = data.examples();
      FEDSTAT_RETURN_IF_ERROR(examples.status());
      return build_model_update(task, examples.value(), task_data, noise, scratch, out);
    }
    case fedstat_v1_TaskKind_HETEROGENEITY: {
      Result<Span<const double>> x = data.unit_vector();
      FEDSTAT_RETURN_IF_ERROR(x.status());
      return build_heterogeneity(task, x.value(), task_data, noise, scratch, out);
    }
    default:
      return unimplemented("Task.kind: not computed on the device");
  }
}

}  // namespace client
}  // namespace fedstat
