// The C ABI tests' reference (cabi_reference.h): the C++ API called directly.
#include "tests/cabi/cabi_reference.h"

#include <string.h>

#include <vector>

#include "platform/posix/posix_platform.h"
#include "sdk/base/arena.h"
#include "sdk/base/crc32.h"
#include "sdk/base/random_bits.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/histogram/dense_histogram.h"
#include "sdk/histogram/sparse_histogram.h"
#include "sdk/noise/add_noise.h"
#include "sdk/noise/rational.h"
#include "sdk/privacy/budget_ledger.h"
#include "sdk/sketch/shift_sketch.h"
#include "sdk/tasks/heterogeneity_task.h"
#include "sdk/tasks/kl_answer_task.h"
#include "sdk/tasks/model_update_task.h"
#include "tests/common/golden_vectors.h"

namespace fedstat {
namespace {

int code(const Status& s) {
  return static_cast<int>(s.code());
}

Seed256 seed_of(const uint8_t* bytes) {
  Seed256 s;
  memcpy(s.bytes, bytes, 32);
  return s;
}

sketch::ShiftSketchParams sketch_params(const fedstat_sketch_params& c) {
  sketch::ShiftSketchParams p;
  p.rows = c.rows;
  p.width = c.width;
  p.heap_capacity = c.heap_capacity;
  p.k = c.k;
  p.buffer_slots = c.buffer_slots;
  p.seed = seed_of(c.seed);
  return p;
}

// A histogram of either kind, owning its memory.
struct Histogram {
  std::vector<uint32_t> dense_counts;
  std::vector<histogram::SparseEntry> table;
  histogram::DenseHistogram dense;
  histogram::SparseHistogram sparse;
  bool is_dense = true;

  Status build(int32_t kind, size_t slots, const uint32_t* ids, const uint32_t* counts, size_t n) {
    is_dense = kind == FEDSTAT_HISTOGRAM_DENSE;
    if (is_dense) {
      dense_counts.resize(slots);
      FEDSTAT_RETURN_IF_ERROR(dense.init(Span<uint32_t>(dense_counts.data(), slots)));
    } else {
      table.resize(slots);
      FEDSTAT_RETURN_IF_ERROR(sparse.init(Span<histogram::SparseEntry>(table.data(), slots)));
    }
    for (size_t i = 0; i < n; ++i) {
      FEDSTAT_RETURN_IF_ERROR(is_dense ? dense.add(ids[i], counts[i])
                                       : sparse.add(ids[i], counts[i]));
    }
    return Status();
  }
};

class Sketch {
 public:
  Status init(const fedstat_sketch_params& c) {
    const sketch::ShiftSketchParams p = sketch_params(c);
    memory_.resize((sketch::shift_sketch_memory_bytes(p) + 7) / 8);
    return sketch_.init(p, MutableByteSpan(reinterpret_cast<uint8_t*>(memory_.data()),
                                           sketch::shift_sketch_memory_bytes(p)));
  }
  sketch::ShiftSketch& get() { return sketch_; }
  int serialize(uint8_t* out, size_t capacity, size_t* written) {
    const Result<size_t> size = sketch_.serialize(MutableByteSpan(out, capacity));
    if (!size.ok()) return code(size.status());
    *written = size.value();
    return 0;
  }

 private:
  std::vector<uint64_t> memory_;
  sketch::ShiftSketch sketch_;
};

Status skellam(double lambda, noise::NoiseSampler& share) {
  FEDSTAT_ASSIGN_OR_RETURN(const noise::Rational r, noise::rational_at_least(lambda));
  return share.init(noise::NoiseSpec{noise::NoiseKind::kSkellam, r, 1});
}

}  // namespace
}  // namespace fedstat

using namespace fedstat;  // NOLINT: test helper

extern "C" {

uint32_t cabi_ref_golden_sketch_report_crc(void) {
  return golden::kShiftSketchReportCrc;
}
uint32_t cabi_ref_golden_buffered_sketch_report_crc(void) {
  return golden::kShiftSketchBufferedReportCrc;
}
uint32_t cabi_ref_golden_sparse_blob_crc(void) {
  return golden::kSparseHistogramBlobCrc;
}
void cabi_ref_golden_seeded_stream0(uint8_t out[32]) {
  memcpy(out, golden::kSeededStream0, 32);
}
uint32_t cabi_ref_crc32(const uint8_t* bytes, size_t size) {
  return crc32(ByteSpan(bytes, size));
}

int cabi_ref_sketch_from_updates(const fedstat_sketch_params* params, const uint32_t* items,
                                 const int64_t* counts, size_t n, uint8_t* out, size_t capacity,
                                 size_t* written) {
  Sketch s;
  Status status = s.init(*params);
  for (size_t i = 0; i < n && status.ok(); ++i) status = s.get().add(items[i], counts[i]);
  return status.ok() ? s.serialize(out, capacity, written) : code(status);
}

int cabi_ref_histogram_blob(int32_t kind, size_t slots, const uint32_t* ids, const uint32_t* counts,
                            size_t n, uint8_t* out, size_t capacity, size_t* written) {
  Histogram h;
  const Status built = h.build(kind, slots, ids, counts, n);
  if (!built.ok()) return code(built);
  const MutableByteSpan buffer(out, capacity);
  const Result<size_t> size = h.is_dense ? h.dense.serialize(buffer) : h.sparse.serialize(buffer);
  if (!size.ok()) return code(size.status());
  *written = size.value();
  return 0;
}

int cabi_ref_sketch_from_histogram(const fedstat_sketch_params* params, int32_t kind, size_t slots,
                                   const uint32_t* ids, const uint32_t* counts, size_t n,
                                   uint8_t* out, size_t capacity, size_t* written) {
  Histogram h;
  Status status = h.build(kind, slots, ids, counts, n);
  if (!status.ok()) return code(status);
  Sketch s;
  status = s.init(*params);
  if (h.is_dense) {
    for (size_t item = 0; item < slots && status.ok(); ++item) {
      const uint32_t c = h.dense.count(static_cast<uint32_t>(item));
      if (c > 0) status = s.get().add(static_cast<uint32_t>(item), c);
    }
  } else {
    for (const histogram::SparseEntry& e : h.sparse.slots()) {
      if (e.count > 0 && status.ok()) status = s.get().add(e.id, e.count);
    }
  }
  return status.ok() ? s.serialize(out, capacity, written) : code(status);
}

int cabi_ref_kl_answer(int32_t kind, size_t slots, const uint32_t* ids, const uint32_t* counts,
                       size_t n, const uint32_t* points, size_t n_points, double lambda,
                       const uint8_t seed[32], uint64_t stream, int64_t* answers, uint64_t* total) {
  Histogram h;
  const Status built = h.build(kind, slots, ids, counts, n);
  if (!built.ok()) return code(built);
  const Span<const uint32_t> at(points, n_points);
  const Span<int64_t> out(answers, n_points);
  if (lambda == 0) {
    return code(h.is_dense ? tasks::answer_kl_points(h.dense, at, out, total)
                           : tasks::answer_kl_points(h.sparse, at, out, total));
  }
  noise::NoiseSampler share;
  const Status ready = skellam(lambda, share);
  if (!ready.ok()) return code(ready);
  SeededStream source(seed_of(seed), stream);
  RandomBits bits(source);
  return code(h.is_dense ? tasks::answer_kl_points_noised(h.dense, at, share, bits, out, total)
                         : tasks::answer_kl_points_noised(h.sparse, at, share, bits, out, total));
}

int cabi_ref_heterogeneity(const fedstat_heterogeneity_config* config, int stage, const double* x,
                           size_t d, const double* mean, const double* weighted_mean, double scale,
                           double lambda, const uint8_t seed[32], uint64_t stream, int64_t* out,
                           size_t out_length) {
  tasks::HeterogeneityConfig c;
  c.p = config->p;
  c.max_weight = config->max_weight;
  std::vector<double> values(out_length);
  const Status round =
      stage == 1
          ? tasks::heterogeneity_round1(Span<const double>(x, d), c,
                                        Span<double>(values.data(), values.size()))
          : tasks::heterogeneity_round2(Span<const double>(x, d), Span<const double>(mean, d),
                                        Span<const double>(weighted_mean, d), c,
                                        Span<double>(values.data(), values.size()));
  if (!round.ok()) return code(round);
  const Span<int64_t> words(out, out_length);
  const Status encoded =
      tasks::encode_fixed_point(Span<const double>(values.data(), values.size()), scale, words);
  if (!encoded.ok() || lambda == 0) return code(encoded);
  noise::NoiseSampler share;
  const Status ready = skellam(lambda, share);
  if (!ready.ok()) return code(ready);
  SeededStream source(seed_of(seed), stream);
  RandomBits bits(source);
  return code(noise::add_noise(Span<const int64_t>(words), words, share, bits));
}

int cabi_ref_model_update(const fedstat_model_update_config* config, const float* features,
                          const int8_t* labels, size_t n, size_t d, const double* model,
                          double lambda, const uint8_t seed[32], uint64_t stream, uint64_t* out,
                          size_t out_length) {
  tasks::ModelUpdateConfig c;
  c.trainer = tasks::TrainerConfig{config->epochs, config->batches, config->averaging_interval,
                                   config->eta0, config->mu};
  c.quantise.clip_norm = config->clip_norm;
  c.quantise.rotate = config->rotate != 0;
  c.quantise.rotation_seed = seed_of(config->rotation_seed);
  c.quantise.rotation_stream = config->rotation_stream;
  c.quantise.gamma = config->gamma;
  c.quantise.beta = config->beta;
  c.quantise.modulus_bits = config->modulus_bits;
  c.quantise.max_rounding_tries = config->max_rounding_tries;
  c.examples_per_client = config->examples_per_client;
  const tasks::Examples examples{Span<const float>(features, n * d), Span<const int8_t>(labels, n),
                                 d};
  std::vector<uint8_t> scratch(tasks::model_update_memory_bytes(n, d));
  Arena arena(MutableByteSpan(scratch.data(), scratch.size()));
  noise::NoiseSampler share;
  const noise::NoiseSampler* share_ptr = nullptr;
  if (lambda > 0) {
    const Status ready = skellam(lambda, share);
    if (!ready.ok()) return code(ready);
    share_ptr = &share;
  }
  SeededStream source(seed_of(seed), stream);
  RandomBits bits(source);
  const Span<const double> global(model, d);
  if (c.quantise.modulus_bits > 32) {
    return code(tasks::model_update_report(examples, global, c, share_ptr, bits, arena,
                                           Span<uint64_t>(out, out_length)));
  }
  std::vector<uint32_t> words(out_length);
  const Status status = tasks::model_update_report(examples, global, c, share_ptr, bits, arena,
                                                   Span<uint32_t>(words.data(), words.size()));
  for (size_t i = 0; i < out_length; ++i) out[i] = words[i];
  return code(status);
}

int cabi_ref_ledger(const char* directory, const fedstat_ledger_config* config, size_t capacity,
                    const fedstat_privacy_spend* spends, const uint64_t* now, size_t n,
                    int32_t* statuses) {
  const Status dir = platform::posix::set_storage_directory(directory);
  if (!dir.ok()) return code(dir);
  privacy::LedgerConfig c;
  c.epsilon_budget = config->epsilon_budget;
  c.delta_budget = config->delta_budget;
  c.window_seconds = config->window_seconds;
  c.blob_name = config->blob_name;
  std::vector<privacy::PrivacySpend> entries(capacity);
  std::vector<uint8_t> scratch(privacy::BudgetLedger::blob_bytes(capacity));
  privacy::BudgetLedger ledger;
  Status status = ledger.init(c, Span<privacy::PrivacySpend>(entries.data(), entries.size()),
                              MutableByteSpan(scratch.data(), scratch.size()));
  if (status.ok()) status = ledger.load();
  if (!status.ok()) return code(status);
  for (size_t i = 0; i < n; ++i) {
    privacy::PrivacySpend s;
    s.task_id = spends[i].task_id;
    s.epsilon = spends[i].epsilon;
    s.delta = spends[i].delta;
    s.has_rdp = spends[i].has_rdp != 0;
    for (size_t k = 0; k < privacy::kLedgerOrderCount; ++k) s.rdp[k] = spends[i].rdp[k];
    statuses[i] = code(ledger.charge(s, now[i]));
  }
  return 0;
}

}  // extern "C"
