/// @file
/// BigUint: an unsigned big integer in caller memory (64-bit limbs, least significant first), with
/// just what exact rational comparisons need: multiply by a word, multiply two numbers, shift
/// left, subtract a smaller number, compare. Never allocates; an operation that would exceed the
/// capacity fails with kResourceExhausted and leaves the number unspecified (callers size buffers
/// by formula).
///
/// @memory the caller's limb span (8 bytes a limb) + 24 bytes.
/// @paper none (exact fallback of tabulated_poisson.h).
#ifndef FEDSTAT_SDK_NOISE_BIG_UINT_H_
#define FEDSTAT_SDK_NOISE_BIG_UINT_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/result.h"
#include "sdk/base/span.h"

namespace fedstat {
namespace noise {

/// An unsigned integer of up to capacity() 64-bit limbs, stored in a caller's span.
class BigUint {
 public:
  /// Zero, with no room (capacity 0): every nonzero result fails.
  BigUint() = default;
  /// Zero, with room for limbs.size() limbs in `limbs` (which must outlive the number).
  explicit BigUint(Span<uint64_t> limbs) : limbs_(limbs) {}

  /// this = value.
  /// @errors kResourceExhausted: value ≠ 0 and the capacity is 0 (the number is then 0).
  Status assign(uint64_t value);
  /// this = other (a copy of its limbs into this number's memory).
  /// @errors kResourceExhausted: other has more limbs in use than this capacity (this unchanged).
  Status assign(const BigUint& other);
  /// this += value.
  /// @errors kResourceExhausted: the sum needs one more limb than the capacity (value unspecified).
  Status add_word(uint64_t value);
  /// this ·= factor.
  /// @errors kResourceExhausted: the product needs one more limb than the capacity (value
  /// unspecified).
  Status multiply_word(uint64_t factor);
  /// this ·= 2^bits.
  /// @errors kResourceExhausted: the result needs more limbs than the capacity (this unchanged).
  Status shift_left(uint64_t bits);
  /// this −= other.
  /// @errors kInvalidArgument: other > this (this unchanged).
  Status subtract(const BigUint& other);
  /// this = a · b (this must not share memory with a or b).
  /// @errors kResourceExhausted: a's and b's limbs in use add up to more than this capacity
  /// (checked before the product, so even when the product itself would fit; this unchanged).
  Status assign_product(const BigUint& a, const BigUint& b);
  /// −1, 0, +1 as this <, =, > other.
  int compare(const BigUint& other) const;

  /// Limbs in use (0 for zero).
  size_t size() const { return size_; }
  /// Limbs of room: the size of the caller's span.
  size_t capacity() const { return limbs_.size(); }

 private:
  Span<uint64_t> limbs_;
  size_t size_ = 0;
};

}  // namespace noise
}  // namespace fedstat

#endif  // FEDSTAT_SDK_NOISE_BIG_UINT_H_
