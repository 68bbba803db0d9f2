// RandomBits: single bits and short bit strings from a RandomSource, read through a small buffer.
//
// The exact samplers (sdk/noise) consume randomness a few bits at a time (an exact Bernoulli
// trial needs 2 bits on average); asking the source for 8 bytes per trial would waste most of it
// and pay a virtual call each time. RandomBits refills kBufferBytes at once and hands out bits
// in a fixed order (bytes in stream order, each byte from its least significant bit), so a
// seeded stream gives the same samples on every architecture.
//
// Memory: kBufferBytes + 3 words. Paper: infrastructure for the samplers (002 §2.3, 001 §4.7).
#ifndef FEDSTAT_SDK_BASE_RANDOM_BITS_H_
#define FEDSTAT_SDK_BASE_RANDOM_BITS_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/random_source.h"

namespace fedstat {

class RandomBits {
 public:
  static constexpr size_t kBufferBytes = 64;

  explicit RandomBits(RandomSource& source) : source_(source) {}
  RandomBits(const RandomBits&) = delete;
  RandomBits& operator=(const RandomBits&) = delete;

  // One uniform bit.
  Result<bool> bit() {
    if (bits_left_ == 0) FEDSTAT_RETURN_IF_ERROR(refill_word());
    const bool b = (word_ & 1u) != 0;
    word_ >>= 1;
    --bits_left_;
    return b;
  }
  // `count` (0..64) uniform bits as an integer; the first bit read is the least significant.
  Result<uint64_t> bits(unsigned count);
  // Uniform on [0, bound) (bound ≥ 1), exactly, by rejection of out-of-range bit strings.
  Result<uint64_t> uniform_below(uint64_t bound);

  // Bit-serial fast path (exact Bernoulli trials): ensure_bits() makes at least one bit
  // available; word() holds the available() next bits, least significant first; consume(n)
  // drops the n (≤ available()) that were used. Same bits, same order as bit().
  Status ensure_bits() { return bits_left_ == 0 ? refill_word() : Status(); }
  uint64_t word() const { return word_; }
  unsigned available() const { return bits_left_; }
  void consume(unsigned n) {
    word_ = n >= 64 ? 0 : (word_ >> n);
    bits_left_ -= n;
  }

 private:
  Status refill_word();

  RandomSource& source_;
  uint8_t buffer_[kBufferBytes] = {};
  size_t buffer_pos_ = kBufferBytes;
  uint64_t word_ = 0;
  unsigned bits_left_ = 0;
};

}  // namespace fedstat

#endif  // FEDSTAT_SDK_BASE_RANDOM_BITS_H_
