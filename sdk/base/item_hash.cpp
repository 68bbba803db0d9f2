#include "sdk/base/item_hash.h"

#include "sdk/base/bytes.h"

namespace fedstat {
namespace {

constexpr uint64_t rotl(uint64_t x, int b) {
  return (x << b) | (x >> (64 - b));
}

struct SipState {
  uint64_t v0, v1, v2, v3;

  SipState(uint64_t k0, uint64_t k1)
      : v0(k0 ^ 0x736f6d6570736575ULL),
        v1(k1 ^ 0x646f72616e646f6dULL),
        v2(k0 ^ 0x6c7967656e657261ULL),
        v3(k1 ^ 0x7465646279746573ULL) {}

  void round() {
    v0 += v1;
    v1 = rotl(v1, 13);
    v1 ^= v0;
    v0 = rotl(v0, 32);
    v2 += v3;
    v3 = rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl(v1, 17);
    v1 ^= v2;
    v2 = rotl(v2, 32);
  }

  void absorb(uint64_t m) {  // two compression rounds
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }

  uint64_t finish() {  // four finalisation rounds
    v2 ^= 0xff;
    round();
    round();
    round();
    round();
    return v0 ^ v1 ^ v2 ^ v3;
  }
};

}  // namespace

ItemHasher ItemHasher::from_key_bytes(const uint8_t key[16]) {
  return ItemHasher(load_le64(key), load_le64(key + 8));
}

uint64_t ItemHasher::hash_bytes(ByteSpan data) const {
  SipState s(k0_, k1_);
  const size_t full_words = data.size() / 8;
  for (size_t i = 0; i < full_words; ++i) s.absorb(load_le64(data.data() + 8 * i));
  // Last word: the remaining 0..7 bytes, little-endian, with the length (mod 256) in the top byte.
  uint64_t last = static_cast<uint64_t>(data.size() & 0xff) << 56;
  const uint8_t* tail = data.data() + 8 * full_words;
  for (size_t i = 0; i < data.size() % 8; ++i) last |= static_cast<uint64_t>(tail[i]) << (8 * i);
  s.absorb(last);
  return s.finish();
}

uint64_t ItemHasher::hash_id(uint64_t item) const {
  SipState s(k0_, k1_);
  s.absorb(item);        // the 8 bytes LE64(item) form exactly one word
  s.absorb(8ULL << 56);  // empty tail, length 8
  return s.finish();
}

}  // namespace fedstat
