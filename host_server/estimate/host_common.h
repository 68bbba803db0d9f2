// Host helpers shared by the estimators and tools: SDK statuses as exceptions (StatusError,
// carrying the code), the tools' seed convention, and deterministic random bits.
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

// An SDK status as an exception: what() is "<context>: <status message>" (status_text: the
// context once, never repeated) and code() the status
// code, so a caller can tell a refused argument from a failure (the Python module maps the code
// to ValueError, RuntimeError, ...). A std::runtime_error, as check() threw before.
class StatusError : public std::runtime_error {
 public:
  StatusError(StatusCode code, const std::string& what) : std::runtime_error(what), code_(code) {}
  StatusCode code() const { return code_; }

 private:
  StatusCode code_;
};

// "<context>: <message>", or the message alone when it already starts with "<context>:" (the
// SDK's messages name their own subject, "sketch report: CRC mismatch (corrupted)", and a caller
// whose context is that subject gave "sketch report: sketch report: ...").
inline std::string status_text(const std::string& context, const std::string& message) {
  if (message.compare(0, context.size() + 1, context + ":") == 0) return message;
  return context + ": " + message;
}

// Throws StatusError(status_text(context, status message)) when `status` is an error.
inline void check(const Status& status, const std::string& context) {
  if (!status.ok()) throw StatusError(status.code(), status_text(context, status.message()));
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
