// Report bounds: the largest word an honest device sends for a task, per kind, from the Task
// message alone — what the server checks a clear-path report (TRUSTED, TAGG, NONE: the words are
// visible) against before summing it (TaskSpec::check_report, rounds/task_round.h). Beyond
// "each word < 2^bits", a device could add any value to its own words: a trusted KL device adding
// 2^40 to one count moved the estimate from 4.41 to 15,954,392 (issue 39 item 7). The bounds are
// what the SDK's builders (sdk/client/contribution.h) can produce, so an honest device is never
// refused:
//   KL_ANSWERS     every count (int64) in [0, total], the total (the last word) in
//                  [0, (2^63 − 1)/max_clients] — a count is one of the device's own items, and the
//                  fleet's totals then sum without wrapping (the estimator reads them as int64).
//   DATA_SHIFT     the total (last word) in [0, (2^63 − 1)/max_clients]; in each of the R rows,
//                  Σ_b |counter| ≤ total × 2^35 (sketch::kMaxFixedWeight: each unit of count adds
//                  ±ω ≤ 2^35 to one counter of each row).
//   MODEL_UPDATE   the words centred into [−2^(b−1), 2^(b−1)) have L2 norm at most
//                  γ·(c + e) + β·√D·(1 + (D + 3)·2^−52) + γ·c·2^−51, slackened by 2^−30 and 1
//                  (quantise.h, Rounding: ‖v*‖ ≤ ‖γ·y‖ + ‖v* − γ·y‖ with ‖y‖ ≤ c + e and the
//                  conditional rounding's β·√D, the fallback's ½·√D ≤ β·√D).
//   HETEROGENEITY  each entry round(s·v) in [0, ⌊s·hi·(1 + 2^−40)⌋ + 1], hi the largest honest
//                  value: stage 1 [x (≤ 1), w·x (≤ W), w (≤ W), 1/w (≤ ¼, since w ≥ 4 for
//                  x ∈ [0, 1]^d)], stage 2 [‖x − μ′‖ₚᵖ (≤ d), w·‖x − μ̄′‖² (≤ W·d)].
// What remains (docs/protocol.md): a device may still send any words inside these bounds — a KL
// device may claim a large total with counts to match, a model a different update of the same
// norm. No range check can tell such a lie from an honest device's data.
//
// Errors: report_check returns null for DIST (the server never sees a device's words) and for a
// kind it does not know; the check itself returns "word i ...: <why>" (i counted from 0) or
// nothing. Memory: none beyond the Task copied into the check. Paper: 000 §4 (counts), 001 §4.2
// (the sketch), 002 §4.1 (quantisation), 004 §3.1 (heterogeneity's vectors).
#ifndef FEDSTAT_HOST_TASKS_REPORT_BOUNDS_H_
#define FEDSTAT_HOST_TASKS_REPORT_BOUNDS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fedstat/v1/envelope.pb.h"

namespace fedstat {
namespace host {

using ReportCheck = std::function<std::optional<std::string>(const std::vector<uint64_t>& report)>;

// The check for `task`'s reports (null: DIST, or a kind without one). A report's length is the
// task's vector_length (TrustedSum checks that first).
ReportCheck report_check(const fedstat_v1_Task& task);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_TASKS_REPORT_BOUNDS_H_
