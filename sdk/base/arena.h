/// @file
/// Arena: a bump allocator that carves typed arrays out of one buffer the caller owns.
///
/// The SDK never touches the heap; a feature that needs working memory takes an Arena (or a plain
/// buffer) sized by the memory formula in its header. Allocation is O(1): align the cursor, check
/// the space, advance. There is no per-object free: rewind to a Mark, or reset() everything.
/// When a request does not fit, the arena returns kResourceExhausted and stays exactly as it was.
/// Objects are value-initialised (zeroed for arithmetic types); destructors are never run, so only
/// trivially destructible types may be placed here.
///
/// @memory exactly the caller's buffer. A request of n objects of T costs n·sizeof(T) plus at
/// most alignof(T)−1 bytes of padding; bytes_needed() computes that bound for sizing buffers.
/// The Arena object itself is 4 words (the buffer's span, used, high-water mark).
/// @paper none (infrastructure for every stage).
#ifndef FEDSTAT_SDK_BASE_ARENA_H_
#define FEDSTAT_SDK_BASE_ARENA_H_

#include <stddef.h>
#include <stdint.h>

#include <new>
#include <type_traits>

#include "sdk/base/checked_size.h"
#include "sdk/base/result.h"
#include "sdk/base/span.h"

namespace fedstat {

/// A bump allocator over one caller-owned buffer: O(1) aligned allocation, release by rewinding
/// to a Mark or by reset(); never touches the heap and never runs destructors.
class Arena {
 public:
  /// A position to rewind to (everything allocated after it is released); taken by mark().
  struct Mark {
    size_t offset = 0;  ///< bytes of the buffer in use when the mark was taken
  };

  /// An empty arena over `memory`, which must outlive the arena and everything allocated from it.
  explicit Arena(MutableByteSpan memory) : memory_(memory) {}
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  /// `count` value-initialised objects of T, suitably aligned (count 0 gives an empty span).
  /// T must be trivially destructible (checked at compile time).
  /// @errors kResourceExhausted: count·sizeof(T) overflows size_t, or the remaining space
  /// (after alignment padding) is too small; the arena is left untouched.
  template <typename T>
  Result<Span<T>> allocate_array(size_t count) {
    static_assert(std::is_trivially_destructible<T>::value,
                  "the arena never runs destructors: store trivially destructible types only");
    if (count > SIZE_MAX / sizeof(T)) {
      return resource_exhausted("arena: requested element count overflows the address space");
    }
    Result<void*> raw = allocate_bytes(count * sizeof(T), alignof(T));
    if (!raw.ok()) return raw.status();
    T* first = static_cast<T*>(raw.value());
    for (size_t i = 0; i < count; ++i) new (first + i) T();
    return Span<T>(first, count);
  }

  /// One value-initialised T (allocate_array<T>(1)).
  /// @errors kResourceExhausted: the remaining space is too small; the arena is left untouched.
  template <typename T>
  Result<T*> allocate() {
    Result<Span<T>> one = allocate_array<T>(1);
    if (!one.ok()) return one.status();
    return one.value().data();
  }

  /// `size` raw, uninitialised bytes at an address that is a multiple of `alignment`.
  /// @errors kInvalidArgument: `alignment` is 0 or not a power of two. kResourceExhausted: the
  /// padding plus `size` do not fit in the remaining space; the arena is left untouched.
  Result<void*> allocate_bytes(size_t size, size_t alignment);

  /// The current position, for a later rewind().
  Mark mark() const { return Mark{used_}; }
  /// Releases everything allocated since `mark` (their memory may be handed out again).
  /// @errors kInvalidArgument: `mark` lies past the current position (a mark from the future,
  /// e.g. taken before a rewind to an earlier one); nothing changes.
  Status rewind(Mark mark);
  /// Releases everything; high_water() is kept.
  void reset() { used_ = 0; }

  /// Size of the caller's buffer in bytes.
  size_t capacity() const { return memory_.size(); }
  /// Bytes in use now, alignment padding included.
  size_t used() const { return used_; }
  /// Bytes not yet in use (a request may also need up to alignof(T)−1 of them for padding).
  size_t remaining() const { return memory_.size() - used_; }
  /// The most that was ever in use at once: size buffers from a real run's high-water mark.
  size_t high_water() const { return high_water_; }

  /// Upper bound on the arena bytes `count` objects of T take, alignment padding included;
  /// kSizeOverflow (sdk/base/checked_size.h) when that does not fit in size_t.
  template <typename T>
  static constexpr size_t bytes_needed(size_t count) {
    return size_add(size_mul(count, sizeof(T)), alignof(T) - 1);
  }

 private:
  MutableByteSpan memory_;
  size_t used_ = 0;
  size_t high_water_ = 0;
};

}  // namespace fedstat

#endif  // FEDSTAT_SDK_BASE_ARENA_H_
