#include "sdk/sketch/sketch_budget.h"

namespace fedstat {
namespace sketch {

namespace {

// P(H): the power of two ≥ 2H, the index the rule was measured with.
uint64_t measured_index_slots(uint32_t heap) {
  uint64_t slots = 2;  // 64-bit: 2·H ≤ 2^33 for any 32-bit H
  while (slots < 2 * uint64_t{heap}) slots *= 2;
  return slots;
}

// The heap's bytes as measured, 8·H + 4·P(H), in 64 bits (no overflow for any H ≤ 2^30).
uint64_t heap_bytes(uint32_t heap) {
  return 8 * uint64_t{heap} + 4 * measured_index_slots(heap);
}

}  // namespace

Result<ShiftSketchParams> params_for_budget(size_t bytes, const Seed256& seed,
                                            const BudgetRule& rule) {
  if (bytes < kMinBudgetBytes) return invalid_argument("sketch budget: at least 1 KiB");
  if (bytes > kMaxBudgetBytes) {
    return out_of_range(
        "sketch budget: at most kMaxBudgetBytes = 2^31 bytes (2 GiB); ask for a smaller sketch");
  }
  if (!(rule.heap_fraction > 0 && rule.heap_fraction < 1) || rule.k_per_heap == 0) {
    return invalid_argument("sketch budget: heap fraction in (0, 1), k_per_heap >= 1");
  }
  // H = the largest heap whose bytes fit heap_fraction·B: heap_bytes is non-decreasing in H, so
  // a binary search over [1, 2^30] (validate_params' limit; 2^31 bytes never reach it) finds it
  // in 30 steps without a counter that could wrap.
  const double heap_bytes_limit = rule.heap_fraction * static_cast<double>(bytes);
  uint32_t low = 1, high = uint32_t{1} << 30;  // heap_bytes(low) fits, or low = 1
  while (low < high) {
    const uint32_t middle = low + (high - low + 1) / 2;
    if (static_cast<double>(heap_bytes(middle)) <= heap_bytes_limit) {
      low = middle;
    } else {
      high = middle - 1;
    }
  }
  ShiftSketchParams p;
  p.seed = seed;
  p.heap_capacity = low;
  p.rows = bytes < kFiveRowsBelow ? 5 : 3;
  // C: the largest power of two from kMinBufferSlots whose slots fit those the index saves.
  const uint64_t index_slots = heap_index_slots(low);
  const uint64_t saved_slots = measured_index_slots(low) - index_slots;  // S(H) ≤ P(H), H ≥ 1
  uint32_t slots = 0;
  if (rule.buffer) {
    for (uint64_t c = kMinBufferSlots; c <= kMaxBufferSlots && c <= saved_slots; c *= 2) {
      slots = static_cast<uint32_t>(c);
    }
  }
  p.buffer_slots = slots;
  // 8·H + 4·S(H) + 4·C ≤ 8·H + 4·P(H) = heap_bytes(H) ≤ max(heap_fraction·B, 16) < B: no
  // underflow, and w is at least the width as measured.
  const uint64_t taken = 8 * uint64_t{low} + 4 * index_slots + 4 * uint64_t{slots};
  p.width = static_cast<uint32_t>((uint64_t{bytes} - taken) / (8 * uint64_t{p.rows}));
  if (uint64_t{rule.k_per_heap} * low > UINT32_MAX) {
    return out_of_range("sketch budget: k = k_per_heap x H exceeds 2^32 - 1; lower k_per_heap");
  }
  p.k = rule.k_per_heap * low;
  FEDSTAT_RETURN_IF_ERROR(validate_params(p));
  return p;
}

}  // namespace sketch
}  // namespace fedstat
