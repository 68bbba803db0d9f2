// The largest honest word per task kind (report_bounds.h).
#include "host_server/tasks/report_bounds.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "sdk/client/contribution.h"
#include "sdk/quantise/quantise.h"
#include "sdk/sketch/sampling_weight.h"

namespace fedstat {
namespace host {
namespace {

using Why = std::optional<std::string>;
// GCC and Clang: a row of ≤ 2^20 counters of magnitude ≤ 2^63, and total × 2^35, fit below 2^128.
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

// KL_ANSWERS: each count (one of the device's own items) in [0, total].
Why check_kl(const std::vector<uint64_t>& r, const fedstat_v1_Task& task) {
  if (Why bad = check_total(r, task)) return bad;
  const int64_t total = static_cast<int64_t>(r.back());
  for (size_t i = 0; i + 1 < r.size(); ++i) {
    const int64_t count = static_cast<int64_t>(r[i]);
    if (count < 0 || count > total) {
      return word(i) + " (a count at a query point) is not in [0, the device's total (" +
             word(r.size() - 1) + ")]";
    }
  }
  return std::nullopt;
}

// DATA_SHIFT: per row, Σ |counter| ≤ total · 2^35 (128-bit sums: no overflow).
Why check_data_shift(const std::vector<uint64_t>& r, const fedstat_v1_Task& task) {
  if (Why bad = check_total(r, task)) return bad;
  const uint32_t rows = task.parameters.data_shift.rows;
  const uint32_t width = task.parameters.data_shift.width;
  if (uint64_t{rows} * width + 1 != r.size()) return word(0) + ": not a sketch of the task's shape";
  const Wide bound = static_cast<Wide>(static_cast<uint64_t>(r.back())) * sketch::kMaxFixedWeight;
  for (uint32_t row = 0; row < rows; ++row) {
    Wide l1 = 0;
    for (uint32_t b = 0; b < width; ++b) {
      const size_t i = size_t{row} * width + b;
      const int64_t counter = static_cast<int64_t>(r[i]);
      const uint64_t magnitude = counter < 0 ? 0 - static_cast<uint64_t>(counter) : counter;
      l1 += magnitude;
      if (l1 > bound) {
        return word(i) + " (a counter of row " + std::to_string(row) +
               "): the row's counters exceed the device's total (" + word(r.size() - 1) +
               ") x the largest sampling weight 2^35";
      }
    }
  }
  return std::nullopt;
}

// MODEL_UPDATE: the centred words' L2 norm within the quantiser's reach.
ReportCheck model_update_check(const fedstat_v1_Task& task) {
  const tasks::ModelUpdateConfig config = client::model_update_config(task);
  const quantise::QuantiseConfig& q = config.quantise;
  const size_t d = task.parameters.model_update.dimension;
  const double D = static_cast<double>(task.vector_length);
  const double c = q.clip_norm, gamma = q.gamma;
  const double bound = (gamma * (c + quantise::rounding_bound(d, q)) +
                        q.beta * std::sqrt(D) * (1 + (D + 3) * 0x1p-52) + gamma * c * 0x1p-51) *
                           (1 + 0x1p-30) +
                       1;
  const unsigned bits = task.bits;
  return [bound, bits](const std::vector<uint64_t>& r) -> Why {
    long double norm2 = 0;
    size_t largest = 0;
    long double largest_magnitude = -1;
    for (size_t i = 0; i < r.size(); ++i) {
      // Centred into [−2^(b−1), 2^(b−1)), as dequantise reads it.
      const uint64_t w = r[i];
      const bool negative = bits >= 64 ? (w >> 63) != 0 : (w >> (bits - 1)) != 0;
      const long double magnitude =
          negative ? (bits >= 64 ? static_cast<long double>(0 - w)
                                 : static_cast<long double>((uint64_t{1} << bits) - w))
                   : static_cast<long double>(w);
      norm2 += magnitude * magnitude;
      if (magnitude > largest_magnitude) {
        largest_magnitude = magnitude;
        largest = i;
      }
    }
    if (std::sqrt(norm2) > static_cast<long double>(bound)) {
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

ReportCheck report_check(const fedstat_v1_Task& task) {
  if (task.trust == fedstat_v1_TrustModel_DIST) return nullptr;  // the words are masked
  const fedstat_v1_Task t = task;
  switch (task.kind) {
    case fedstat_v1_TaskKind_KL_ANSWERS:
      return [t](const std::vector<uint64_t>& r) { return check_kl(r, t); };
    case fedstat_v1_TaskKind_DATA_SHIFT:
      return [t](const std::vector<uint64_t>& r) { return check_data_shift(r, t); };
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
