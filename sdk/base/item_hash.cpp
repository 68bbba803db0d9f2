#include "sdk/base/item_hash.h"

#include "sdk/base/bytes.h"

namespace fedstat {
using item_hash_detail::SipState;

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
  uint64_t hash = 0;
  s.finish(hash);
  return hash;
}

}  // namespace fedstat
