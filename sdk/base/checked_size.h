/// @file
/// Overflow-checked arithmetic for sizes and counts, the same on 32- and 64-bit targets.
///
/// Every size formula that can see a peer's or storage's numbers (report lengths, memory
/// formulas, entry counts) is built from these, because on a Cortex-M4 `size_t` is 32 bits and
/// 8·R·w, 4·n or a + b wrap silently.
///
/// The rule for size formulas: a formula whose true value does not fit in `size_t` returns
/// kSizeOverflow (= SIZE_MAX) instead of a wrapped value. No real buffer is SIZE_MAX bytes, so a
/// caller that compares a buffer against the formula (`blob.size() != expected`,
/// `out.size() < needed`) fails closed; a caller that allocates, or that reports why, must test
/// `== kSizeOverflow` first. size_mul/size_add keep the sentinel: any operand equal to
/// kSizeOverflow gives kSizeOverflow, so a whole formula saturates once any step overflows.
/// checked_mul/checked_add are the plain "did it fit?" form for any unsigned type.
///
/// @memory none.
/// @paper none (infrastructure for every stage).
#ifndef FEDSTAT_SDK_BASE_CHECKED_SIZE_H_
#define FEDSTAT_SDK_BASE_CHECKED_SIZE_H_

#include <stddef.h>
#include <stdint.h>

#include <limits>
#include <type_traits>

namespace fedstat {

/// The value of a size formula whose true value does not fit in size_t (SIZE_MAX).
constexpr size_t kSizeOverflow = SIZE_MAX;

/// out = a·b and true, or false (out untouched) when the product does not fit in T (unsigned).
template <typename T>
constexpr bool checked_mul(T a, T b, T& out) {
  static_assert(std::is_unsigned<T>::value, "checked_mul: unsigned types only");
  if (a != 0 && b > std::numeric_limits<T>::max() / a) return false;
  out = static_cast<T>(a * b);
  return true;
}

/// out = a + b and true, or false (out untouched) when the sum does not fit in T (unsigned).
template <typename T>
constexpr bool checked_add(T a, T b, T& out) {
  static_assert(std::is_unsigned<T>::value, "checked_add: unsigned types only");
  if (b > std::numeric_limits<T>::max() - a) return false;
  out = static_cast<T>(a + b);
  return true;
}

/// a·b, or kSizeOverflow when it does not fit or either operand is kSizeOverflow.
constexpr size_t size_mul(size_t a, size_t b) {
  size_t out = 0;
  if (a == kSizeOverflow || b == kSizeOverflow || !checked_mul(a, b, out)) return kSizeOverflow;
  return out;
}

/// a + b, or kSizeOverflow when it does not fit or either operand is kSizeOverflow.
constexpr size_t size_add(size_t a, size_t b) {
  size_t out = 0;
  if (a == kSizeOverflow || b == kSizeOverflow || !checked_add(a, b, out)) return kSizeOverflow;
  return out;
}

/// A 64-bit count as a size: itself when it fits below kSizeOverflow, else kSizeOverflow.
constexpr size_t size_from_u64(uint64_t v) {
  return v >= static_cast<uint64_t>(kSizeOverflow) ? kSizeOverflow : static_cast<size_t>(v);
}

}  // namespace fedstat

#endif  // FEDSTAT_SDK_BASE_CHECKED_SIZE_H_
