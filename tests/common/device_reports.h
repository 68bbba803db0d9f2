// Whole device reports — what client::build_contribution hands the Client to send — for three
// fixed tasks, for the golden CRCs of golden_vectors.h (kDeviceReportCrc*): the same device
// report must be the same bytes on x86-64 (tests/unit, tests/client), AArch64 (the same unit
// tests under qemu-aarch64) and the Cortex-M4 (tests/cross/baremetal_selftest.cpp). The
// firmware round test (tests/cross/firmware_round_test.py) checks the M4 against x86-64 again,
// through a real server.
//   kDataShift    TRUSTED, local ε = 1 (the stability histogram's noise, then a 3 × 64 sketch;
//                 the same words it gave as a DIST task before issue 41 made DIST the hashed
//                 histogram's)
//   kDataShiftDist DIST, the hashed histogram: 200 buckets of 32-bit words, at most 500 events
//                 (the histogram holds 1,200), a Pólya share of T = 5/2 split 3 ways per bucket
//   kKlAnswers    DIST, 24 query points, a Skellam share of λ = 25/2 per word
//   kModelUpdate  DIST, d = 4, 24 examples, 4 epochs, rotation, 16-bit words, λ = 20
// Each from a 40-item histogram or 24 examples that depend on nothing else, and a SeededStream
// (seed bytes i, stream 3) as the noise source. Static buffers only (Cortex-M4: about 3 KiB).
#ifndef FEDSTAT_TESTS_COMMON_DEVICE_REPORTS_H_
#define FEDSTAT_TESTS_COMMON_DEVICE_REPORTS_H_

#include <stdint.h>
#include <string.h>

#include "sdk/base/crc32.h"
#include "sdk/base/random_bits.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/client/client_data.h"
#include "sdk/client/contribution.h"
#include "sdk/histogram/sparse_histogram.h"

namespace fedstat {
namespace golden_reports {

enum class Kind { kDataShift, kKlAnswers, kModelUpdate, kDataShiftDist };

constexpr size_t kMaxWords = 256;
constexpr size_t kScratchBytes = 4096;

class ReportData final : public client::ClientData {
 public:
  ReportData() {
    (void)histogram_.init(Span<histogram::SparseEntry>(table_, 128));
    for (uint32_t i = 0; i < 40; ++i) (void)histogram_.add(i * 7 + 3, (i % 5 + 1) * 10);
    for (size_t i = 0; i < 24; ++i) {
      for (size_t k = 0; k < 4; ++k) {
        // Features in [−1/2, 1/2] (L2 norm ≤ 1), exact in binary; labels from two of them.
        features_[4 * i + k] = static_cast<float>(static_cast<int>((i * 5 + k * 3) % 9) - 4) / 8;
      }
      labels_[i] = features_[4 * i] + features_[4 * i + 1] >= 0 ? 1 : -1;
    }
  }
  const histogram::SparseHistogram* histogram() override { return &histogram_; }
  Result<tasks::Examples> examples() override {
    tasks::Examples e;
    e.features = Span<const float>(features_, 96);
    e.labels = Span<const int8_t>(labels_, 24);
    e.dimension = 4;
    return e;
  }

 private:
  histogram::SparseEntry table_[128];
  histogram::SparseHistogram histogram_;
  float features_[96];
  int8_t labels_[24];
};

// The task and its TaskData (query points or the global model's doubles' bits).
inline size_t make_task(Kind kind, fedstat_v1_Task& task, uint64_t* data) {
  task = fedstat_v1_Task_init_zero;
  task.task_id = 9;
  task.trust = fedstat_v1_TrustModel_DIST;
  task.epsilon = 1.0;
  task.delta = 1e-6;
  task.seed.size = 32;
  for (uint8_t i = 0; i < 32; ++i) task.seed.bytes[i] = static_cast<uint8_t>(3 * i + 1);
  task.min_clients = 3;
  task.max_clients = 4;
  task.threshold = 3;
  task.bits = 64;
  size_t data_words = 0;
  if (kind == Kind::kDataShift) {
    task.trust = fedstat_v1_TrustModel_TRUSTED;  // a sketch: DIST is the hashed histogram's
    task.kind = fedstat_v1_TaskKind_DATA_SHIFT;
    task.which_parameters = fedstat_v1_Task_data_shift_tag;
    task.parameters.data_shift.rows = 3;
    task.parameters.data_shift.width = 64;
    task.parameters.data_shift.heap_capacity = 16;
    task.parameters.data_shift.k = 64;
    task.parameters.data_shift.domain = 300;
    task.parameters.data_shift.local_epsilon = 1.0;
  } else if (kind == Kind::kDataShiftDist) {
    task.kind = fedstat_v1_TaskKind_DATA_SHIFT;
    task.which_parameters = fedstat_v1_Task_data_shift_tag;
    task.bits = 32;
    task.delta = 0;
    task.parameters.data_shift.buckets = 200;
    task.parameters.data_shift.noise_scale = 2.5;
    task.parameters.data_shift.noise_shares = 3;
    task.parameters.data_shift.max_events = 500;
  } else if (kind == Kind::kKlAnswers) {
    task.kind = fedstat_v1_TaskKind_KL_ANSWERS;
    task.which_parameters = fedstat_v1_Task_kl_tag;
    task.device_noise_lambda = 12.5;
    data_words = 24;
    task.parameters.kl.points = 24;
    for (size_t i = 0; i < data_words; ++i) data[i] = i * 11 + 3;  // distinct, ascending
  } else {
    task.kind = fedstat_v1_TaskKind_MODEL_UPDATE;
    task.which_parameters = fedstat_v1_Task_model_update_tag;
    task.device_noise_lambda = 20;
    task.bits = 16;
    fedstat_v1_ModelUpdateParameters& m = task.parameters.model_update;
    m.dimension = 4;
    m.epochs = 4;
    m.batches = 2;
    m.averaging_interval = 4;
    m.eta0 = 1.0;
    m.mu = 0.001;
    m.clip_norm = 4.0;
    m.rotate = true;
    m.gamma = 64.0;
    m.beta = 0.6065306597;
    m.examples_per_client = 24;
    data_words = 4;
    const double model[4] = {0.25, -0.5, 0.0, 0.125};
    memcpy(data, model, sizeof(model));
  }
  task.data_words = static_cast<uint32_t>(data_words);
  // The kinds' lengths (contribution.h): R·w counters + the total; the buckets; the points +
  // the total; d rounded up to a power of two (the rotation's).
  task.vector_length = kind == Kind::kDataShift       ? 3 * 64 + 1
                       : kind == Kind::kDataShiftDist ? 200
                       : kind == Kind::kKlAnswers     ? 25
                                                      : 4;
  return data_words;
}

// CRC-32 of the report's words (little-endian), or the error.
inline Result<uint32_t> report_crc(Kind kind) {
  static fedstat_v1_Task task;
  static uint64_t data[8 + 24];
  static uint64_t words[kMaxWords];
  alignas(8) static uint8_t scratch[kScratchBytes];
  static ReportData app;
  const size_t data_words = make_task(kind, task, data);
  FEDSTAT_RETURN_IF_ERROR(client::validate_task(task));
  if (task.vector_length > kMaxWords) return resource_exhausted("report longer than kMaxWords");
  const Result<size_t> need = client::scratch_bytes(task, kind == Kind::kModelUpdate ? 24 : 128);
  if (!need.ok()) return need.status();
  if (need.value() > kScratchBytes) return resource_exhausted("scratch larger than kScratchBytes");
  Seed256 seed;
  for (uint8_t i = 0; i < 32; ++i) seed.bytes[i] = i;
  SeededStream stream(seed, 3);
  RandomBits bits(stream);
  FEDSTAT_RETURN_IF_ERROR(client::build_contribution(
      task, app, Span<const uint64_t>(data, data_words), bits,
      MutableByteSpan(scratch, need.value()), Span<uint64_t>(words, task.vector_length)));
  static uint8_t le[8 * kMaxWords];
  for (size_t i = 0; i < task.vector_length; ++i) {
    for (int b = 0; b < 8; ++b) le[8 * i + b] = static_cast<uint8_t>(words[i] >> (8 * b));
  }
  return crc32(ByteSpan(le, 8 * task.vector_length));
}

}  // namespace golden_reports
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_COMMON_DEVICE_REPORTS_H_
