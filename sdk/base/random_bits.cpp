#include "sdk/base/random_bits.h"

#include "sdk/base/bytes.h"

namespace fedstat {

RandomBits::RandomBits(RandomSource& source, MutableByteSpan buffer) : source_(source) {
  const size_t usable = buffer.size() - buffer.size() % 8;
  if (usable >= 8) {
    buffer_ = buffer.data();
    buffer_bytes_ = usable;
    buffer_pos_ = usable;
  }
}

Result<uint64_t> RandomBits::load_buffered_word() {
  if (buffer_pos_ == buffer_bytes_) {
    FEDSTAT_RETURN_IF_ERROR(source_.fill(MutableByteSpan(buffer_, buffer_bytes_)));
    buffer_pos_ = 0;
  }
  const uint64_t w = load_le64(buffer_ + buffer_pos_);
  buffer_pos_ += 8;
  return w;
}

Status RandomBits::refill_word() {
  if (has_next_) {
    word_ = next_;
    has_next_ = false;
  } else {
    FEDSTAT_ASSIGN_OR_RETURN(word_, load_buffered_word());
  }
  bits_left_ = 64;
  return Status();
}

Status RandomBits::load_next() {
  FEDSTAT_ASSIGN_OR_RETURN(next_, load_buffered_word());
  has_next_ = true;
  return Status();
}

Result<uint64_t> RandomBits::bits(unsigned count) {
  if (count > 64) return invalid_argument("RandomBits::bits takes at most 64 bits");
  uint64_t value = 0;
  unsigned have = 0;
  while (have < count) {
    if (bits_left_ == 0) FEDSTAT_RETURN_IF_ERROR(refill_word());
    unsigned take = count - have;
    if (take > bits_left_) take = bits_left_;
    const uint64_t chunk = take == 64 ? word_ : (word_ & ((uint64_t{1} << take) - 1));
    value |= chunk << have;
    word_ = take == 64 ? 0 : (word_ >> take);
    bits_left_ -= take;
    have += take;
  }
  return value;
}

Result<uint64_t> RandomBits::uniform_below(uint64_t bound) {
  if (bound == 0) return invalid_argument("uniform_below: the bound must be at least 1");
  if (bound == 1) return uint64_t{0};
  unsigned width = 0;  // bits needed for bound - 1
  for (uint64_t v = bound - 1; v != 0; v >>= 1) ++width;
  for (;;) {  // each try succeeds with probability > 1/2
    FEDSTAT_ASSIGN_OR_RETURN(const uint64_t candidate, bits(width));
    if (candidate < bound) return candidate;
  }
}

}  // namespace fedstat
