// ShiftSketch (shift_sketch.h): the heap of the H items of largest estimated magnitude, and
// its open-addressing index from item to heap position (001 §4.6).
#include "sdk/sketch/shift_sketch.h"

#include "sdk/sketch/shift_sketch_internal.h"

namespace fedstat {
namespace sketch {

size_t ShiftSketch::next_slot(size_t slot) const {
  return slot + 1 == index_slots_ ? 0 : slot + 1;
}

size_t ShiftSketch::find(uint32_t item) const {
  size_t slot = index_home(item);
  const uint32_t tag = index_tag(item);
  while (index_[slot] != 0) {
    // The tag rejects most other items without reading their heap entry.
    if ((index_[slot] & ~position_mask_) == tag && heap_[position_of(slot)].item == item) {
      return slot;
    }
    slot = next_slot(slot);
  }
  return kNotFound;
}

size_t ShiftSketch::slot_at(uint32_t item, size_t position) const {
  // The entry is exactly the item's tag and position + 1; no other entry equals it (outside a sift
  // each position is claimed once; within one, see move_entry), so no heap entry is read. An empty
  // slot first would mean the index is already broken (the caller's memory overwritten): then
  // kNotFound, and no write out of bounds (set_position and index_erase ignore it).
  const uint32_t entry = index_tag(item) | static_cast<uint32_t>(position + 1);
  size_t slot = index_home(item);
  while (index_[slot] != entry) {
    if (index_[slot] == 0) return kNotFound;
    slot = next_slot(slot);
  }
  return slot;
}

size_t ShiftSketch::index_insert(uint32_t item, size_t position) {
  size_t slot = index_home(item);
  while (index_[slot] != 0) slot = next_slot(slot);
  index_[slot] = index_tag(item) | static_cast<uint32_t>(position + 1);
  return slot;
}

void ShiftSketch::index_erase(size_t hole) {
  if (hole == kNotFound) return;
  index_[hole] = 0;
  // Backward-shift deletion keeps every remaining key reachable from its home slot.
  const size_t n = index_slots_;
  auto distance = [n](size_t from, size_t to) { return to >= from ? to - from : to + n - from; };
  // An entry moves back into the hole unless its home lies cyclically in (hole, next]. Written
  // with masks, not a branch (the compiler turned selects back into one): whether an entry moves
  // is data and a branch on it mispredicts. The hole is empty, so writing 0 to it when nothing
  // moves changes nothing.
  size_t next = next_slot(hole);
  for (uint32_t entry = index_[next]; entry != 0; entry = index_[next]) {
    const bool moves = distance(home_of_entry(next), next) >= distance(hole, next);
    const uint32_t moved = 0u - static_cast<uint32_t>(moves);  // all ones when it moves
    index_[hole] = entry & moved;
    index_[next] = entry & ~moved;
    hole += (next - hole) & (0 - static_cast<size_t>(moves));
    next = next_slot(next);
  }
}

// The sifts move the entry at `position` (index slot `slot`, or kNotFound: looked up when needed)
// to its place with one index update per entry passed: the same heap as swapping it step by step,
// with half the index look-ups. The entry passed is found by its exact index entry (slot_at): until
// the sift ends, only the sift's start position is claimed twice (by the moving entry's stale
// entry and the entry moved into it), and `from`, a position further along, is not.
void ShiftSketch::move_entry(size_t from, size_t to) {
  const size_t slot = slot_at(heap_[from].item, from);
  heap_[to] = heap_[from];
  set_position(slot, to);
}

void ShiftSketch::sift_up(size_t position, size_t slot) {
  const HeapEntry moving = heap_[position];
  const size_t start = position;
  bool moved = false;
  while (position > 0) {
    const size_t parent = (position - 1) / kHeapArity;
    if (!(moving.magnitude < heap_[parent].magnitude)) break;
    if (slot == kNotFound) slot = slot_at(moving.item, start);
    move_entry(parent, position);
    moved = true;
    position = parent;
  }
  if (!moved) return;
  heap_[position] = moving;
  set_position(slot, position);
}

void ShiftSketch::sift_down(size_t position, size_t slot) {
  const HeapEntry moving = heap_[position];
  const size_t start = position;
  bool moved = false;
  while (true) {
    // The first child with the smallest magnitude, if it is below the moving entry's.
    // (No overflow: 8·H + 4·S(H) bytes fit size_t, so kHeapArity·position + 1 does.)
    const size_t first = kHeapArity * position + 1;
    if (first >= heap_size_) break;
    const size_t end = heap_size_ - first > kHeapArity ? first + kHeapArity : heap_size_;
    size_t smallest = position;
    float least = moving.magnitude;
    for (size_t child = first; child < end; ++child) {
      const bool below = heap_[child].magnitude < least;
      smallest = below ? child : smallest;
      least = below ? heap_[child].magnitude : least;
    }
    if (smallest == position) break;
    if (slot == kNotFound) slot = slot_at(moving.item, start);
    move_entry(smallest, position);
    moved = true;
    position = smallest;
  }
  if (!moved) return;
  heap_[position] = moving;
  set_position(slot, position);
}

void ShiftSketch::offer(uint32_t item) {
  place(item, magnitude_of(estimate(item)));
}

void ShiftSketch::place(uint32_t item, float magnitude) {
  // At or below a full heap's minimum nothing changes, not even for an item the heap holds (its
  // magnitude stays as it was: see the header). This skips the index for most updates.
  if (heap_size_ == params_.heap_capacity && !(magnitude > heap_[0].magnitude)) return;
  const size_t slot = find(item);
  if (slot != kNotFound) {
    const size_t position = position_of(slot);
    const float old = heap_[position].magnitude;
    heap_[position].magnitude = magnitude;
    if (magnitude < old) {
      sift_up(position, slot);
    } else {
      sift_down(position, slot);
    }
    return;
  }
  if (heap_size_ < params_.heap_capacity) {
    heap_[heap_size_] = HeapEntry{item, magnitude};
    const size_t at = index_insert(item, heap_size_);
    ++heap_size_;
    sift_up(heap_size_ - 1, at);
    return;
  }
  // Here magnitude > the minimum (checked above): the new item replaces the root.
  index_erase(slot_at(heap_[0].item, 0));
  heap_[0] = HeapEntry{item, magnitude};
  sift_down(0, index_insert(item, 0));
}

}  // namespace sketch
}  // namespace fedstat
