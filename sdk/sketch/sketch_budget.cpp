#include "sdk/sketch/sketch_budget.h"

namespace fedstat {
namespace sketch {

namespace {

// The heap's bytes, 8·H + 4·S(H), in 64 bits (no overflow for any H ≤ kMaxHeapCapacity).
uint64_t heap_bytes(uint32_t heap) {
  return 8 * uint64_t{heap} + 4 * uint64_t{heap_index_slots(heap)};
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
  const uint64_t heap = heap_bytes(low);  // ≤ max(heap_fraction·B, 16) < B: no underflow
  p.width = static_cast<uint32_t>((uint64_t{bytes} - heap) / (8 * uint64_t{p.rows}));
  if (uint64_t{rule.k_per_heap} * low > UINT32_MAX) {
    return out_of_range("sketch budget: k = k_per_heap x H exceeds 2^32 - 1; lower k_per_heap");
  }
  p.k = rule.k_per_heap * low;
  FEDSTAT_RETURN_IF_ERROR(validate_params(p));
  return p;
}

}  // namespace sketch
}  // namespace fedstat
