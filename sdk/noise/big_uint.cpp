#include "sdk/noise/big_uint.h"

#include "sdk/noise/uint128.h"

namespace fedstat {
namespace noise {
namespace {
Status too_small() {
  return resource_exhausted("big integer scratch is smaller than the sampler's formula requires");
}
}  // namespace

Status BigUint::assign(uint64_t value) {
  size_ = 0;
  if (value == 0) return Status();
  if (limbs_.empty()) return too_small();
  limbs_[0] = value;
  size_ = 1;
  return Status();
}

Status BigUint::assign(const BigUint& other) {
  if (other.size_ > limbs_.size()) return too_small();
  for (size_t i = 0; i < other.size_; ++i) limbs_[i] = other.limbs_[i];
  size_ = other.size_;
  return Status();
}

Status BigUint::add_word(uint64_t value) {
  for (size_t i = 0; value != 0; ++i) {
    if (i == size_) {
      if (size_ == limbs_.size()) return too_small();
      limbs_[size_++] = value;
      return Status();
    }
    const uint64_t sum = limbs_[i] + value;
    value = sum < value ? 1 : 0;
    limbs_[i] = sum;
  }
  return Status();
}

Status BigUint::multiply_word(uint64_t factor) {
  if (factor == 0 || size_ == 0) {
    size_ = 0;
    return Status();
  }
  uint64_t carry = 0;
  for (size_t i = 0; i < size_; ++i) {
    const UInt128 product = multiply(limbs_[i], factor) + UInt128(carry);
    limbs_[i] = product.lo;
    carry = product.hi;
  }
  if (carry != 0) {
    if (size_ == limbs_.size()) return too_small();
    limbs_[size_++] = carry;
  }
  return Status();
}

Status BigUint::shift_left(uint64_t bits) {
  if (size_ == 0 || bits == 0) return Status();
  const size_t words = static_cast<size_t>(bits / 64);
  const unsigned rest = static_cast<unsigned>(bits % 64);
  const uint64_t top = rest == 0 ? 0 : limbs_[size_ - 1] >> (64 - rest);
  const size_t new_size = size_ + words + (top != 0 ? 1 : 0);
  if (new_size > limbs_.size()) return too_small();
  if (top != 0) limbs_[size_ + words] = top;
  for (size_t i = size_; i-- > 0;) {
    const uint64_t lower = (rest != 0 && i > 0) ? limbs_[i - 1] >> (64 - rest) : 0;
    limbs_[i + words] = (rest == 0 ? limbs_[i] : (limbs_[i] << rest)) | lower;
  }
  for (size_t i = 0; i < words; ++i) limbs_[i] = 0;
  size_ = new_size;
  return Status();
}

Status BigUint::subtract(const BigUint& other) {
  if (compare(other) < 0)
    return invalid_argument("BigUint::subtract: the result would be negative");
  uint64_t borrow = 0;
  for (size_t i = 0; i < size_; ++i) {
    const uint64_t b = i < other.size_ ? other.limbs_[i] : 0;
    const uint64_t d = limbs_[i] - b;
    const uint64_t next_borrow = (limbs_[i] < b || d < borrow) ? 1 : 0;
    limbs_[i] = d - borrow;
    borrow = next_borrow;
    if (borrow == 0 && i >= other.size_) break;
  }
  while (size_ > 0 && limbs_[size_ - 1] == 0) --size_;
  return Status();
}

Status BigUint::assign_product(const BigUint& a, const BigUint& b) {
  if (a.size_ == 0 || b.size_ == 0) {
    size_ = 0;
    return Status();
  }
  const size_t n = a.size_ + b.size_;
  if (n > limbs_.size()) return too_small();
  for (size_t i = 0; i < n; ++i) limbs_[i] = 0;
  for (size_t i = 0; i < a.size_; ++i) {
    uint64_t carry = 0;
    for (size_t j = 0; j < b.size_; ++j) {
      // a·b + t + carry < 2^128: (2^64−1)² + 2·(2^64−1) = 2^128 − 1.
      const UInt128 acc =
          multiply(a.limbs_[i], b.limbs_[j]) + UInt128(limbs_[i + j]) + UInt128(carry);
      limbs_[i + j] = acc.lo;
      carry = acc.hi;
    }
    limbs_[i + b.size_] = carry;
  }
  size_ = n;
  while (size_ > 0 && limbs_[size_ - 1] == 0) --size_;
  return Status();
}

int BigUint::compare(const BigUint& other) const {
  if (size_ != other.size_) return size_ < other.size_ ? -1 : 1;
  for (size_t i = size_; i-- > 0;) {
    if (limbs_[i] != other.limbs_[i]) return limbs_[i] < other.limbs_[i] ? -1 : 1;
  }
  return 0;
}

}  // namespace noise
}  // namespace fedstat
