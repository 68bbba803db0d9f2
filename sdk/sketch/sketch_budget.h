/// @file
/// Choosing the data-shift sketch's parameters from a byte budget (the device memory the sketch
/// occupies, shift_sketch_memory_bytes), by the rule measured for fedstat (see the tables of
/// docs/benchmarks.md; the reference findings: ~30–40% of the bytes to the heap, more
/// rows at small budgets, k decoupled from H).
///
///   H  = the largest heap whose 8·H + 4·P(H) bytes fit heap_fraction·B, P(H) = the power of two
///        ≥ 2H (the heap index this rule was measured with; kept so that H, k and the estimates
///        stay as measured)
///   C  = the largest power of two ≥ kMinBufferSlots whose 4·C bytes fit 4·(P(H) − S(H)), the
///        bytes the denser index of shift_sketch.h (S(H) = H + ⌊H/4⌋ + 1 ≤ P(H) slots) leaves free:
///        the pre-aggregation buffer; 0 if none fits or with BudgetRule::buffer false
///   R  = 5 below 256 KiB, else 3;  w = ⌊(B − 8·H − 4·S(H) − 4·C)/(8·R)⌋ (never below the
///        width of the rule as measured, ⌊(B − 8·H − 4·P(H))/(8·R)⌋)
/// Measured (5 seeds, 5 pairs, top-k): at 160 KiB R = 5 gave a mean error of 0.0039 and R = 3
/// 0.0086 (a 10^8-draw Zipf pair at 0.029: 3 rows let tail noise through the median); at 400 KiB
/// R = 3 gave ≤ 0.0023 on every pair. Heap fractions 0.25–0.45 were tried; 0.35 was best overall.
///   k  = k_per_heap·H;  top-k rank r0 = H/2 (window r0/4);  HH τ = 2k/H
/// H is found by a 30-step binary search, so every budget up to SIZE_MAX answers at once.
///
/// @memory none (the parameters are returned by value; the sketch they describe needs
/// shift_sketch_memory_bytes(params) ≤ the budget).
/// @paper 001 §5.1 (parameter choice), Table 2.
#ifndef FEDSTAT_SDK_SKETCH_SKETCH_BUDGET_H_
#define FEDSTAT_SDK_SKETCH_SKETCH_BUDGET_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/sketch/shift_sketch.h"

namespace fedstat {
namespace sketch {

/// Budgets below this (256 KiB) get R = 5 rows, budgets at or above it R = 3.
constexpr size_t kFiveRowsBelow = 256 * 1024;
/// The smallest budget params_for_budget accepts (1 KiB).
constexpr size_t kMinBudgetBytes = 1024;
/// The largest budget params_for_budget accepts (2^31 bytes = 2 GiB).
constexpr size_t kMaxBudgetBytes = size_t{1} << 31;

/// The tunable parts of the budget rule; the defaults are the measured best.
struct BudgetRule {
  /// The share of the budget for the heap and its index, in (0, 1) (0.35 measured best).
  double heap_fraction = 0.35;
  /// k = k_per_heap·H (≥ 1).
  uint32_t k_per_heap = 4;
  /// The pre-aggregation buffer in the bytes the index leaves free (docs/benchmarks.md: it makes
  /// a stream of single updates several times faster); false: those bytes go to the counters.
  bool buffer = true;
};

/// The sketch parameters (R, w, H, k, C, with `seed`) for a budget of `bytes` of device memory,
/// by the rule in the file description; shift_sketch_memory_bytes of the result is ≤ `bytes`.
/// @errors kInvalidArgument: `bytes` < kMinBudgetBytes (1 KiB), `rule.heap_fraction` outside
/// (0, 1) (NaN included) or `rule.k_per_heap` = 0. kOutOfRange: `bytes` > kMaxBudgetBytes
/// (2^31 bytes = 2 GiB: a sketch that size is addressable on a 32-bit device and its parameters
/// stay within validate_params), or k = k_per_heap·H exceeds 2^32 − 1.
Result<ShiftSketchParams> params_for_budget(size_t bytes, const Seed256& seed,
                                            const BudgetRule& rule = BudgetRule());

}  // namespace sketch
}  // namespace fedstat

#endif  // FEDSTAT_SDK_SKETCH_SKETCH_BUDGET_H_
