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

}  // namespace

Status graph_commitment(uint64_t session, ByteSpan seed, MutableByteSpan out) {
  if (seed.size() != kGraphSeedBytes || out.size() != kGraphSeedBytes) {
    return invalid_argument("secagg: a ring seed and its commitment are 32 bytes each");
  }
  constexpr size_t kTag = sizeof(kCommitmentTag) - 1;
  uint8_t input[kTag + 8 + kGraphSeedBytes];
  memcpy(input, kCommitmentTag, kTag);
  store_le64(input + kTag, session);
  memcpy(input + kTag + 8, seed.data(), kGraphSeedBytes);
  return crypto::sha256(ByteSpan(input, sizeof(input)), out);
}

Result<uint64_t> ring_position(uint64_t session, ByteSpan seed, uint32_t id) {
  if (seed.size() != kGraphSeedBytes) return invalid_argument("secagg: a ring seed is 32 bytes");
  constexpr size_t kTag = sizeof(kPositionTag) - 1;
  uint8_t input[kTag + 8 + kGraphSeedBytes + 4];
  memcpy(input, kPositionTag, kTag);
  store_le64(input + kTag, session);
  memcpy(input + kTag + 8, seed.data(), kGraphSeedBytes);
  store_le32(input + kTag + 8 + kGraphSeedBytes, id);
  uint8_t digest[crypto::kSha256DigestBytes];
  FEDSTAT_RETURN_IF_ERROR(
      crypto::sha256(ByteSpan(input, sizeof(input)), MutableByteSpan(digest, sizeof(digest))));
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
