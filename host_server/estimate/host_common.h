// Host helpers shared by the estimators and tools: SDK statuses as exceptions, the tools'
// seed convention, and deterministic random bits.
//
// seed_from_u64: seed bytes 0..7 = S little-endian, bytes 8..31 = 0 (the convention of every
// fedstat command-line tool). Host code (full standard library): errors are exceptions.
#ifndef FEDSTAT_HOST_ESTIMATE_HOST_COMMON_H_
#define FEDSTAT_HOST_ESTIMATE_HOST_COMMON_H_

#include <stdexcept>
#include <string>

#include "sdk/base/random_bits.h"
#include "sdk/base/seeded_stream.h"

namespace fedstat {
namespace host {

// Throws std::runtime_error("<context>: <status message>") when `status` is an error.
inline void check(const Status& status, const std::string& context) {
  if (!status.ok()) throw std::runtime_error(context + ": " + status.message());
}

template <typename T>
T value_or_throw(Result<T> result, const std::string& context) {
  check(result.status(), context);
  return result.value();
}

inline Seed256 seed_from_u64(uint64_t seed) {
  Seed256 key;
  for (int i = 0; i < 8; ++i) key.bytes[i] = static_cast<uint8_t>(seed >> (8 * i));
  return key;
}

// A seeded stream and the bit reader over it, kept together (RandomBits holds a reference).
class SeededBits {
 public:
  SeededBits(uint64_t seed, uint64_t stream_id)
      : stream_(seed_from_u64(seed), stream_id), bits_(stream_) {}
  RandomBits& bits() { return bits_; }

 private:
  SeededStream stream_;
  RandomBits bits_;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_ESTIMATE_HOST_COMMON_H_
