// BigUint: an unsigned big integer in caller memory (64-bit limbs, least significant first), with
// just what exact rational comparisons need: multiply by a word, multiply two numbers, shift
// left, subtract a smaller number, compare. Never allocates; an operation that would exceed the
// capacity fails with kResourceExhausted and leaves the number unspecified (callers size buffers by
// formula).
//
// Memory: the caller's limb span (8 bytes a limb). Paper: none (exact fallback of
// tabulated_poisson.h).
#ifndef FEDSTAT_SDK_NOISE_BIG_UINT_H_
#define FEDSTAT_SDK_NOISE_BIG_UINT_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/result.h"
#include "sdk/base/span.h"

namespace fedstat {
namespace noise {

class BigUint {
 public:
  BigUint() = default;
  explicit BigUint(Span<uint64_t> limbs) : limbs_(limbs) {}

  Status assign(uint64_t value);
  Status assign(const BigUint& other);
  Status add_word(uint64_t value);
  Status multiply_word(uint64_t factor);
  Status shift_left(uint64_t bits);
  // this −= other; kInvalidArgument (this unchanged) if other > this.
  Status subtract(const BigUint& other);
  // this = a · b (this must not share memory with a or b).
  Status assign_product(const BigUint& a, const BigUint& b);
  // -1, 0, +1 as this <, =, > other.
  int compare(const BigUint& other) const;

  size_t size() const { return size_; }  // limbs in use (0 for zero)
  size_t capacity() const { return limbs_.size(); }

 private:
  Span<uint64_t> limbs_;
  size_t size_ = 0;
};

}  // namespace noise
}  // namespace fedstat

#endif  // FEDSTAT_SDK_NOISE_BIG_UINT_H_
