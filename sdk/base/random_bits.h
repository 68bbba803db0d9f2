/// @file
/// RandomBits: single bits and short bit strings from a RandomSource, read through a buffer.
///
/// The exact samplers (sdk/noise) consume randomness a few bits at a time (an exact Bernoulli
/// trial needs 2 bits on average); asking the source for 8 bytes per trial would waste most of it
/// and pay a virtual call each time. RandomBits refills its buffer at once and hands out bits
/// in a fixed order (bytes in stream order, each byte from its least significant bit), so a
/// seeded stream gives the same samples on every architecture. For a stream source (SeededStream,
/// whose output does not depend on how it is read) the buffer size never changes which bits are
/// handed out, only how many bytes each source call asks for. A CTR_DRBG source (Csprng) updates
/// its state after every call, so larger requests give other (equally random) bits: draws are
/// reproducible only from a SeededStream. The default is
/// kBufferBytes inside the object; a caller buffer (e.g. kLargeBufferBytes) amortises a source's
/// per-call cost — CTR_DRBG (csprng.h) spends about as long on a call's state update as on 64
/// bytes of output, and returns at most 1024 bytes per call. Bits waiting in the buffer are
/// secret (they are future noise): a larger buffer keeps more of them in memory.
///
/// Lookahead (samplers that decide from the shortest prefix of a random number, e.g.
/// tabulated_poisson.h): ensure_lookahead() then peek64() shows the next 64 bits (bit 0 = the
/// next bit) without consuming them; skip(n) consumes the first n of them. Same bits, same order
/// as bit().
///
/// After any error from the source, discard this RandomBits (and whatever the failing draw was
/// writing): bits a sampler had looked at but not consumed may still be waiting, and a draw retried
/// on them would not be exact.
///
/// @memory kBufferBytes + 7 words (120 bytes on 64-bit targets), plus the caller's buffer if one
/// is given.
/// @paper infrastructure for the samplers (002 §2.3, 001 §4.7).
#ifndef FEDSTAT_SDK_BASE_RANDOM_BITS_H_
#define FEDSTAT_SDK_BASE_RANDOM_BITS_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/random_source.h"

namespace fedstat {

/// Bits from a RandomSource, read through a buffer in a fixed, architecture-independent order
/// (bytes in stream order, each from its least significant bit). Not copyable.
class RandomBits {
 public:
  /// Size of the buffer inside the object (bytes asked of the source per refill by default).
  static constexpr size_t kBufferBytes = 64;
  /// CTR_DRBG's largest request (MBEDTLS_CTR_DRBG_MAX_REQUEST): the buffer size that makes the
  /// CSPRNG cheapest per bit (see BM_SourceFill in tests/bench/noise_bench.cpp).
  static constexpr size_t kLargeBufferBytes = 1024;

  /// Reads `source` (which must outlive this object) through the internal kBufferBytes buffer.
  explicit RandomBits(RandomSource& source) : source_(source) {}
  /// Refills `buffer` (caller memory that outlives this object) instead of the internal one; its
  /// size is used rounded down to a multiple of 8, and a buffer of fewer than 8 bytes is ignored.
  RandomBits(RandomSource& source, MutableByteSpan buffer);
  RandomBits(const RandomBits&) = delete;
  RandomBits& operator=(const RandomBits&) = delete;

  /// One uniform bit.
  /// @errors the source's fill() status when a refill fails (kUnavailable, kFailedPrecondition,
  /// kInternal, ...).
  Result<bool> bit() {
    if (bits_left_ == 0) FEDSTAT_RETURN_IF_ERROR(refill_word());
    const bool b = (word_ & 1u) != 0;
    word_ >>= 1;
    --bits_left_;
    return b;
  }
  /// `count` (0..64) uniform bits as an integer; the first bit read is the least significant.
  /// @errors kInvalidArgument: `count` > 64 (nothing is consumed). Otherwise the source's fill()
  /// status when a refill fails (kUnavailable, kFailedPrecondition, kInternal, ...).
  Result<uint64_t> bits(unsigned count);
  /// Uniform on [0, bound) (bound ≥ 1), exactly, by rejection of out-of-range bit strings of
  /// the width of bound − 1 (each try succeeds with probability > 1/2).
  /// @errors kInvalidArgument: `bound` is 0. Otherwise the source's fill() status when a refill
  /// fails (kUnavailable, kFailedPrecondition, kInternal, ...).
  Result<uint64_t> uniform_below(uint64_t bound);

  /// Bit-serial fast path (exact Bernoulli trials): ensure_bits() makes at least one bit
  /// available; word() holds the available() next bits, least significant first; consume(n)
  /// drops the n (≤ available()) that were used. Same bits, same order as bit().
  /// @errors the source's fill() status when a refill fails (kUnavailable, kFailedPrecondition,
  /// kInternal, ...).
  Status ensure_bits() { return bits_left_ == 0 ? refill_word() : Status(); }
  /// The available() next bits, least significant first (higher bits are zero).
  uint64_t word() const { return word_; }
  /// How many bits word() holds (0..64).
  unsigned available() const { return bits_left_; }
  /// Drops the first `n` bits of word(); `n` must not exceed available().
  void consume(unsigned n) {
    word_ = n >= 64 ? 0 : (word_ >> n);
    bits_left_ -= n;
  }

  // Lookahead: after ensure_lookahead(), peek64() is the next 64 bits (bit 0 first) and skip(n)
  // (n ≤ 64) consumes the first n of them; a failed ensure_lookahead() consumes nothing.

  /// The lookahead state of a RandomBits as a value, for a sampler's inner loop to keep in
  /// registers: take_window(), then ensure_lookahead(window) / window.peek64() / window.skip(n),
  /// then put_window(); nothing else may use the RandomBits in between.
  struct Window {
    uint64_t word = 0;      ///< the next `left` bits, the rest zero
    uint64_t next = 0;      ///< the 64 after them, when has_next
    unsigned left = 0;      ///< how many bits `word` holds (0..64)
    bool has_next = false;  ///< whether `next` holds the following 64 bits
    /// The next 64 bits (bit 0 first); complete only after ensure_lookahead(Window&).
    uint64_t peek64() const { return left == 64 ? word : word | (next << left); }
    /// Consumes the first `n` (≤ 64) bits of peek64(); valid after ensure_lookahead(Window&).
    void skip(unsigned n) {
      if (n < left) {
        word >>= n;
        left -= n;
      } else if (has_next) {  // n − left ≤ 64 bits come from the next word
        const unsigned from_next = n - left;
        word = from_next == 64 ? 0 : (next >> from_next);
        left = 64 - from_next;
        has_next = false;
      } else {  // n == left
        word = 0;
        left = 0;
      }
    }
  };
  /// This object's bit state as a Window (the object must not be used until put_window()).
  Window take_window() const { return Window{word_, next_, bits_left_, has_next_}; }
  /// Makes `w` (from take_window(), then advanced) this object's bit state again.
  void put_window(const Window& w) {
    word_ = w.word;
    next_ = w.next;
    bits_left_ = w.left;
    has_next_ = w.has_next;
  }
  /// Makes `w` hold at least 64 bits, refilling this object's buffer if needed.
  /// @errors the source's fill() status when a refill fails (kUnavailable, kFailedPrecondition,
  /// kInternal, ...). `w` is then unchanged.
  Status ensure_lookahead(Window& w) {
    if (w.left == 64 || w.has_next) return Status();
    FEDSTAT_ASSIGN_OR_RETURN(w.next, load_buffered_word());
    w.has_next = true;
    return Status();
  }
  /// Makes at least 64 bits available to peek64() and skip(), refilling the buffer if needed.
  /// @errors the source's fill() status when a refill fails (kUnavailable, kFailedPrecondition,
  /// kInternal, ...). Nothing is consumed.
  Status ensure_lookahead() { return bits_left_ == 64 || has_next_ ? Status() : load_next(); }
  /// The next 64 bits (bit 0 = the next bit), without consuming them; after ensure_lookahead().
  uint64_t peek64() const { return take_window().peek64(); }
  /// Consumes the first `n` (≤ 64) bits of peek64(); after ensure_lookahead().
  void skip(unsigned n) {
    Window w = take_window();
    w.skip(n);
    put_window(w);
  }

 private:
  Status refill_word();
  Status load_next();
  Result<uint64_t> load_buffered_word();

  RandomSource& source_;
  uint8_t own_buffer_[kBufferBytes] = {};
  uint8_t* buffer_ = own_buffer_;
  size_t buffer_bytes_ = kBufferBytes;
  size_t buffer_pos_ = kBufferBytes;
  uint64_t word_ = 0;
  uint64_t next_ = 0;  // the word after word_, when has_next_ (loaded by ensure_lookahead)
  unsigned bits_left_ = 0;
  bool has_next_ = false;
};

}  // namespace fedstat

#endif  // FEDSTAT_SDK_BASE_RANDOM_BITS_H_
