#include "sdk/sketch/sketch_budget.h"

namespace fedstat {
namespace sketch {

Result<ShiftSketchParams> params_for_budget(size_t bytes, const Seed256& seed,
                                            const BudgetRule& rule) {
  if (bytes < 1024) return invalid_argument("sketch budget: at least 1 KiB");
  if (!(rule.heap_fraction > 0 && rule.heap_fraction < 1) || rule.k_per_heap == 0) {
    return invalid_argument("sketch budget: heap fraction in (0, 1), k_per_heap >= 1");
  }
  const double heap_bytes_limit = rule.heap_fraction * static_cast<double>(bytes);
  uint32_t heap = 1;
  while (8.0 * (heap + 1) + 4.0 * static_cast<double>(heap_index_slots(heap + 1)) <=
         heap_bytes_limit) {
    ++heap;
  }
  ShiftSketchParams p;
  p.seed = seed;
  p.heap_capacity = heap;
  p.rows = bytes < kFiveRowsBelow ? 5 : 3;
  const size_t heap_bytes = 8 * size_t{heap} + 4 * heap_index_slots(heap);
  p.width = static_cast<uint32_t>((bytes - heap_bytes) / (8 * size_t{p.rows}));
  p.k = rule.k_per_heap * heap;
  FEDSTAT_RETURN_IF_ERROR(validate_params(p));
  return p;
}

}  // namespace sketch
}  // namespace fedstat
