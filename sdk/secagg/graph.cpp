#include "sdk/secagg/graph.h"

#include <string.h>

#include "sdk/base/bytes.h"
#include "sdk/base/crypto.h"
#include "sdk/secagg/session_hash.h"

namespace fedstat {
namespace secagg {
namespace {

constexpr char kCommitmentTag[] = "fedstat secagg graph commitment v1";
constexpr char kPositionTag[] = "fedstat secagg ring position v1";

// SHA-256(tag without its terminator ‖ LE64 session ‖ the 32-byte seed ‖ tail) into `out`.
template <size_t N>
Status seed_hash(const char (&tag)[N], uint64_t session, ByteSpan seed, ByteSpan tail,
                 MutableByteSpan out) {
  uint8_t input[sizeof(kCommitmentTag) + 8 + kGraphSeedBytes + 4];
  static_assert(N <= sizeof(kCommitmentTag), "the longest tag sizes the buffer");
  if (tail.size() > 4) return invalid_argument("secagg: a seed hash's tail is at most 4 bytes");
  memcpy(input, tag, N - 1);
  store_le64(input + N - 1, session);
  memcpy(input + N - 1 + 8, seed.data(), kGraphSeedBytes);
  if (!tail.empty()) memcpy(input + N - 1 + 8 + kGraphSeedBytes, tail.data(), tail.size());
  return crypto::sha256(ByteSpan(input, N - 1 + 8 + kGraphSeedBytes + tail.size()), out);
}

}  // namespace

Status graph_commitment(uint64_t session, ByteSpan seed, MutableByteSpan out) {
  if (seed.size() != kGraphSeedBytes || out.size() != kGraphSeedBytes) {
    return invalid_argument("secagg: a ring seed and its commitment are 32 bytes each");
  }
  return seed_hash(kCommitmentTag, session, seed, ByteSpan(), out);
}

Result<uint64_t> ring_position(uint64_t session, ByteSpan seed, uint32_t id) {
  if (seed.size() != kGraphSeedBytes) return invalid_argument("secagg: a ring seed is 32 bytes");
  uint8_t id_bytes[4], digest[crypto::kSha256DigestBytes];
  store_le32(id_bytes, id);
  FEDSTAT_RETURN_IF_ERROR(seed_hash(kPositionTag, session, seed, ByteSpan(id_bytes, 4),
                                    MutableByteSpan(digest, sizeof(digest))));
  return load_le64(digest);
}

Status sparse_session_hash(uint64_t session, uint32_t threshold, uint32_t length, uint32_t bits,
                           uint32_t degree, uint32_t max_clients, ByteSpan seed, uint32_t ring_size,
                           MutableByteSpan out) {
  if (seed.size() != kGraphSeedBytes || out.size() != crypto::kSha256DigestBytes) {
    return invalid_argument("secagg: a ring seed and a session hash are 32 bytes each");
  }
  uint8_t input[kSessionHeaderBytes + 8 + kGraphSeedBytes + 4];
  encode_session_header(session, threshold, length, bits, input);
  store_le32(input + kSessionHeaderBytes, degree);
  store_le32(input + kSessionHeaderBytes + 4, max_clients);
  memcpy(input + kSessionHeaderBytes + 8, seed.data(), kGraphSeedBytes);
  store_le32(input + kSessionHeaderBytes + 8 + kGraphSeedBytes, ring_size);
  return crypto::sha256(ByteSpan(input, sizeof(input)), out);
}

void RingOrderCheck::add(uint64_t position, uint32_t id) {
  if (entries_ == 0) {
    first_position_ = position;
    first_id_ = id;
  } else if (!ring_before(last_position_, last_id_, position, id)) {
    ++descents_;
  }
  last_position_ = position;
  last_id_ = id;
  ++entries_;
}

Status RingOrderCheck::finish(size_t count, uint32_t degree, size_t self_index) const {
  // One turn of the ring: ascending but for one step down, counting the step from the last entry
  // back to the first (a single entry is trivially one turn).
  uint32_t descents = descents_;
  if (entries_ > 1 && !ring_before(last_position_, last_id_, first_position_, first_id_)) {
    ++descents;
  }
  if (entries_ != count || (entries_ > 1 && descents != 1)) {
    return invalid_argument(
        "secagg: the roster is not one turn of the ring (its entries' ring positions are out of "
        "order): not the neighbourhood the committed seed gives");
  }
  if (degree != 0 && count == size_t{degree} + 1 && self_index != degree / 2) {
    return invalid_argument(
        "secagg: this client is not in the middle of its neighbourhood (index degree / 2)");
  }
  return Status();
}

}  // namespace secagg
}  // namespace fedstat
