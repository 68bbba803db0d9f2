// Report bounds: the largest word an honest device sends for a task, per kind, from the Task
// message alone — what the server checks a clear-path report (TRUSTED, TAGG, NONE: the words are
// visible) against before summing it (TaskSpec::check_report, rounds/task_round.h). Beyond
// "each word < 2^bits", a device could add any value to its own words: a trusted KL device adding
// 2^40 to one count moved the estimate from 4.41 to 15,954,392 (issue 39 item 7). The bounds are
// what the SDK's builders (sdk/client/contribution.h) can produce, so an honest device is never
// refused:
//   KL_ANSWERS     every count (int64) in [0, total] and their sum at most the total, the total
//                  (the last word) in [0, (2^63 − 1)/max_clients] — a count is one of the
//                  device's own items at a query point, the points are distinct (the device
//                  refuses others), and the fleet's totals then sum without wrapping (the
//                  estimator reads them as int64).
//   DATA_SHIFT     the total (last word) in [0, (2^63 − 1)/max_clients]; in each of the R rows,
//                  Σ_b ⌈|counter_b| / M_b⌉ ≤ total, where M_b is the largest weight ω of a
//                  candidate id (in [0, domain)) that the task's seed sketches into counter b
//                  (a counter no candidate reaches must be 0). The device sketches only its items
//                  in [0, domain) (sdk/client/contribution.h) and counts every item in its total,
//                  so an honest counter is Σ ±c_i·ω_i over candidates with ω_i ≤ M_b: it needs at
//                  least ⌈|counter_b| / M_b⌉ of the device's items. This implies Σ_b |counter_b|
//                  ≤ total × max_b M_b, the heaviest candidate's weight (16·k·domain/E for an
//                  exponential E: 7.5 × 16·k·domain in the audit test; at most 2^35), but is far
//                  tighter: the first bound (total × 2^35) let a device of 100 items move a TV
//                  estimate from 0.032 to 6616, a row bound of total × max_b M_b to 1 (clamped),
//                  this one (the strongest lies tried: tests/audit/rounds/
//                  review_bounds_test.cpp) to 0.065. With local_epsilon > 0 the stability
//                  histogram changes the counts the device sketches, and its total is their sum:
//                  the bound is the same. M is computed once, when the check is made (the task's
//                  plan): one SipHash and one weight per candidate, R·w words — for 2^24
//                  candidates (the most) 0.53 s in a release build, 15 s under ASan (R = 5,
//                  w = 1024; this machine, 2026-12).
//   MODEL_UPDATE   the words centred into [−2^(b−1), 2^(b−1)) have L2 norm at most
//                  γ·(c + e) + β·√D·(1 + (D + 3)·2^−52) + γ·c·2^−51, slackened by 2^−30 and 1
//                  (quantise.h, Rounding: ‖v*‖ ≤ ‖γ·y‖ + ‖v* − γ·y‖ with ‖y‖ ≤ c + e and the
//                  conditional rounding's β·√D, the fallback's ½·√D ≤ β·√D).
//   HETEROGENEITY  each entry round(s·v) in [0, ⌊s·hi·(1 + 2^−40)⌋ + 1], hi the largest honest
//                  value: stage 1 [x (≤ 1), w·x (≤ W), w (≤ W), 1/w (≤ ¼, since w ≥ 4 for
//                  x ∈ [0, 1]^d)], stage 2 [‖x − μ′‖ₚᵖ (≤ d), w·‖x − μ̄′‖² (≤ W·d)].
// An honest device is never refused (tests/host/report_bounds_test.cpp drives the SDK's builders
// to their extremes); for data shift while its total is below 2^28 (sketch::kMaxSketchTotal:
// above it the counters may wrap, and the estimator refuses such a sum anyway).
// What remains (docs/protocol.md): a device may still send any words inside these bounds — a KL
// device may claim a large total with counts to match (its share of the fleet then decides the
// estimate), a data-shift device may put its items' weight on light candidates (a counter
// holding one heavy candidate admits that many items of any lighter one there), a model a
// different update of the same norm. No range check can tell such a lie from an honest device's
// data.
//
// DATA_SHIFT in DIST (the hashed histogram, issue 41) has no bound here either: its words are
// masked; what limits a forged sum is the estimator (a D_TV in [0, 1] whatever the words).
// Errors: report_check returns null for DIST (the server never sees a device's words) and for a
// kind it does not know; std::invalid_argument for a DATA_SHIFT task no device would take (sketch
// parameters validate_params refuses, a domain outside [1, 2^24], or a vector_length other than
// rows × width + 1); the check itself returns "word i ...: <why>" (i counted from 0) or nothing.
// Memory: the Task copied into the check; DATA_SHIFT R·w words of M. Paper: 000 §4 (counts),
// 001 §4.2 (the sketch), 002 §4.1 (quantisation), 004 §3.1 (heterogeneity's vectors).
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

// MODEL_UPDATE: the largest L2 norm of one honest device's centred words without its noise (the
// bound above), from the Task alone — also what the DIST estimator's fleet bound is made of
// (model_update_plan.h). The Task must pass client::validate_task.
double model_update_norm_bound(const fedstat_v1_Task& task);
// The L2 norm of `words` centred into [−2^(bits−1), 2^(bits−1)) (as dequantise reads them);
// `largest` (optional) receives the index of the largest magnitude.
long double centred_norm(const std::vector<uint64_t>& words, unsigned bits,
                         size_t* largest = nullptr);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_TASKS_REPORT_BOUNDS_H_
