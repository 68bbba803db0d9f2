// The largest honest word per task kind (report_bounds.h).
#include "host_server/tasks/report_bounds.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <stdexcept>

#include "sdk/client/contribution.h"
#include "sdk/quantise/quantise.h"
#include "sdk/sketch/shift_sketch.h"

namespace fedstat {
namespace host {
namespace {

using Why = std::optional<std::string>;
// GCC and Clang: sums of ≤ 2^20 counts or item numbers, each below 2^64, fit below 2^128.
__extension__ typedef unsigned __int128 Wide;

std::string word(size_t i) {
  return "word " + std::to_string(i);
}

// The largest total one device may declare: max_clients of them sum below 2^63.
int64_t largest_total(const fedstat_v1_Task& task) {
  return std::numeric_limits<int64_t>::max() / std::max<uint32_t>(1, task.max_clients);
}

Why check_total(const std::vector<uint64_t>& r, const fedstat_v1_Task& task) {
  const size_t last = r.size() - 1;
  const int64_t total = static_cast<int64_t>(r[last]);
  if (total < 0 || total > largest_total(task)) {
    return word(last) + " (the device's total) is not in [0, (2^63 - 1)/max_clients = " +
           std::to_string(largest_total(task)) + "]";
  }
  return std::nullopt;
}

// KL_ANSWERS: each count (one of the device's own items) in [0, total], and their sum too: the
// query points are distinct (the device refuses others), so no item is counted twice.
Why check_kl(const std::vector<uint64_t>& r, const fedstat_v1_Task& task) {
  if (Why bad = check_total(r, task)) return bad;
  const int64_t total = static_cast<int64_t>(r.back());
  Wide sum = 0;
  for (size_t i = 0; i + 1 < r.size(); ++i) {
    const int64_t count = static_cast<int64_t>(r[i]);
    if (count < 0 || count > total) {
      return word(i) + " (a count at a query point) is not in [0, the device's total (" +
             word(r.size() - 1) + ")]";
    }
    sum += static_cast<uint64_t>(count);
    if (sum > static_cast<uint64_t>(total)) {
      return word(i) + " (a count at a query point): the counts up to it sum above the " +
             "device's total (" + word(r.size() - 1) + "), though the query points are distinct";
    }
  }
  return std::nullopt;
}

// DATA_SHIFT: the weight of the heaviest candidate id in each counter, M[r·w + b] = max{ω_i :
// i < domain, h_r(i) = b} (0: no candidate falls there), from the task's seed through the SDK's
// own hashes and weights (SketchHashes: item_hashes, weights_of_hashes, locate_hash).
std::vector<uint64_t> heaviest_candidates(const fedstat_v1_Task& task) {
  const fedstat_v1_DataShiftParameters& d = task.parameters.data_shift;
  sketch::ShiftSketchParams p;
  p.rows = d.rows;
  p.width = d.width;
  p.heap_capacity = d.heap_capacity;
  p.k = d.k;
  std::copy(task.seed.bytes, task.seed.bytes + sizeof(p.seed.bytes), p.seed.bytes);
  p.buffer_slots = 0;
  if (!sketch::validate_params(p).ok() || d.domain == 0 || d.domain > client::kMaxDataShiftDomain ||
      uint64_t{d.rows} * d.width + 1 != task.vector_length) {
    throw std::invalid_argument("task " + std::to_string(task.task_id) +
                                ": data_shift parameters no device takes (rows, width, heap, k, "
                                "domain in [1, 2^24], vector_length rows x width + 1)");
  }
  const sketch::SketchHashes hashes(p);
  std::vector<uint64_t> heaviest(size_t{d.rows} * d.width, 0);
  constexpr uint32_t kBatch = 1024;
  uint32_t ids[kBatch];
  uint64_t hash[kBatch], weight[kBatch];
  for (uint32_t first = 0; first < d.domain;) {
    const uint32_t n = std::min(kBatch, d.domain - first);
    for (uint32_t j = 0; j < n; ++j) ids[j] = first + j;
    hashes.item_hashes(ids, hash, n);
    hashes.weights_of_hashes(hash, weight, n);
    for (uint32_t j = 0; j < n; ++j) {
      for (uint32_t r = 0; r < d.rows; ++r) {
        uint32_t bucket = 0;
        int sign = 1;
        hashes.locate_hash(hash[j], r, bucket, sign);
        uint64_t& m = heaviest[size_t{r} * d.width + bucket];
        m = std::max(m, weight[j]);
      }
    }
    first += n;
  }
  return heaviest;
}

// DATA_SHIFT: in each row, Σ_b ⌈|counter_b| / M_b⌉ ≤ total (M_b = 0: the counter is 0) — 128-bit
// sums, no overflow. An honest counter is Σ ±c_i·ω_i over its candidates, so it needs at least
// ⌈|counter_b| / M_b⌉ of the device's items; a row's items are at most its total.
ReportCheck data_shift_check(const fedstat_v1_Task& task) {
  const auto heaviest = std::make_shared<const std::vector<uint64_t>>(heaviest_candidates(task));
  const uint32_t rows = task.parameters.data_shift.rows;
  const uint32_t width = task.parameters.data_shift.width;
  const fedstat_v1_Task t = task;
  return [heaviest, rows, width, t](const std::vector<uint64_t>& r) -> Why {
    if (Why bad = check_total(r, t)) return bad;
    if (uint64_t{rows} * width + 1 != r.size())
      return word(0) + ": not a sketch of the task's shape";
    const Wide total = static_cast<uint64_t>(r.back());
    for (uint32_t row = 0; row < rows; ++row) {
      Wide items = 0;  // the fewest items that make the row's counters so far
      for (uint32_t b = 0; b < width; ++b) {
        const size_t i = size_t{row} * width + b;
        const int64_t counter = static_cast<int64_t>(r[i]);
        const uint64_t magnitude = counter < 0 ? 0 - static_cast<uint64_t>(counter) : counter;
        if (magnitude == 0) continue;
        const uint64_t m = (*heaviest)[i];
        if (m == 0) {
          return word(i) + " (a counter of row " + std::to_string(row) +
                 ") is not 0, but no candidate id in [0, domain) is sketched there";
        }
        items += magnitude / m + (magnitude % m != 0);
        if (items > total) {
          return word(i) + " (a counter of row " + std::to_string(row) +
                 "): the row's counters need more items than the device's total (" +
                 word(r.size() - 1) + "), each counter at least |counter| / the largest " +
                 "sampling weight of a candidate id sketched there";
        }
      }
    }
    return std::nullopt;
  };
}

// MODEL_UPDATE: the centred words' L2 norm within the quantiser's reach.
ReportCheck model_update_check(const fedstat_v1_Task& task) {
  const double bound = model_update_norm_bound(task);
  const unsigned bits = task.bits;
  return [bound, bits](const std::vector<uint64_t>& r) -> Why {
    size_t largest = 0;
    const long double norm = centred_norm(r, bits, &largest);
    if (norm > static_cast<long double>(bound)) {
      return word(largest) + " (the largest of the update): the report's L2 norm is above the " +
             "largest a clipped, quantised update reaches (" + std::to_string(bound) + ")";
    }
    return std::nullopt;
  };
}

// HETEROGENEITY: each entry round(scale · v) with v in [0, hi].
ReportCheck heterogeneity_check(const fedstat_v1_Task& task) {
  const fedstat_v1_HeterogeneityParameters& h = task.parameters.heterogeneity;
  const double d = h.dimension, W = h.max_weight, s = h.scale;
  std::vector<double> hi;  // the largest honest value of each entry, in real units
  if (h.stage == 1) {
    hi.assign(h.dimension, 1.0);          // x
    hi.insert(hi.end(), h.dimension, W);  // w·x
    hi.push_back(W);                      // w
    hi.push_back(std::max(0.25, 1 / W));  // 1/w: w ≥ min(4, W)
  } else {
    hi = {d, W * d};  // ‖x − μ′‖ₚᵖ, w·‖x − μ̄′‖²
  }
  std::vector<int64_t> limit;
  for (double v : hi) limit.push_back(static_cast<int64_t>(std::floor(s * v * (1 + 0x1p-40))) + 1);
  return [limit](const std::vector<uint64_t>& r) -> Why {
    if (r.size() != limit.size()) return word(0) + ": not the stage's entries";
    for (size_t i = 0; i < r.size(); ++i) {
      const int64_t entry = static_cast<int64_t>(r[i]);
      if (entry < 0 || entry > limit[i]) {
        return word(i) + " is not in [0, " + std::to_string(limit[i]) +
               "], the fixed-point range of an honest vector in [0, 1]^d";
      }
    }
    return std::nullopt;
  };
}

}  // namespace

double model_update_norm_bound(const fedstat_v1_Task& task) {
  const tasks::ModelUpdateConfig config = client::model_update_config(task);
  const quantise::QuantiseConfig& q = config.quantise;
  const size_t d = task.parameters.model_update.dimension;
  const double D = static_cast<double>(task.vector_length);
  const double c = q.clip_norm, gamma = q.gamma;
  return (gamma * (c + quantise::rounding_bound(d, q)) +
          q.beta * std::sqrt(D) * (1 + (D + 3) * 0x1p-52) + gamma * c * 0x1p-51) *
             (1 + 0x1p-30) +
         1;
}

long double centred_norm(const std::vector<uint64_t>& words, unsigned bits, size_t* largest) {
  long double norm2 = 0, largest_magnitude = -1;
  for (size_t i = 0; i < words.size(); ++i) {
    // Centred into [−2^(b−1), 2^(b−1)), as dequantise reads it.
    const uint64_t w = words[i];
    const bool negative = bits >= 64 ? (w >> 63) != 0 : (w >> (bits - 1)) != 0;
    const long double magnitude =
        negative ? (bits >= 64 ? static_cast<long double>(0 - w)
                               : static_cast<long double>((uint64_t{1} << bits) - w))
                 : static_cast<long double>(w);
    norm2 += magnitude * magnitude;
    if (magnitude > largest_magnitude) {
      largest_magnitude = magnitude;
      if (largest != nullptr) *largest = i;
    }
  }
  return std::sqrt(norm2);
}

ReportCheck report_check(const fedstat_v1_Task& task) {
  if (task.trust == fedstat_v1_TrustModel_DIST) return nullptr;  // the words are masked
  const fedstat_v1_Task t = task;
  switch (task.kind) {
    case fedstat_v1_TaskKind_KL_ANSWERS:
      return [t](const std::vector<uint64_t>& r) { return check_kl(r, t); };
    case fedstat_v1_TaskKind_DATA_SHIFT:
      return data_shift_check(task);
    case fedstat_v1_TaskKind_MODEL_UPDATE:
      return model_update_check(task);
    case fedstat_v1_TaskKind_HETEROGENEITY:
      return heterogeneity_check(task);
    default:
      return nullptr;
  }
}

}  // namespace host
}  // namespace fedstat
