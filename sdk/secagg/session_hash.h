// The secure-aggregation session hash: SHA-256 over the session header and the roster U1, which
// binds every later message (share encryption's associated data, mask keys) to one session.
//
//   header (20 bytes):  LE64 session ‖ LE32 threshold ‖ LE32 vector length ‖ LE32 bits
//   entry (100 bytes):  LE32 client id ‖ 32-byte encryption key ‖ 32-byte masking key ‖
//                       32-byte commitment to the self-mask seed (secagg_client.h)
// in roster order. A server that shows two devices different rosters — another key or another
// commitment for one member — gives them different session hashes, and then neither can open
// the other's shares (the hash is their associated data) nor cancel the other's masks. The client
// hashes the entries as they arrive; the server hashes the roster it announces — both through these
// encoders, so they cannot drift apart. Memory: none. Paper: Bonawitz et al. 2017 §4 (the session
// id of the implementation notes).
#ifndef FEDSTAT_SDK_SECAGG_SESSION_HASH_H_
#define FEDSTAT_SDK_SECAGG_SESSION_HASH_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sdk/base/bytes.h"

namespace fedstat {
namespace secagg {

constexpr size_t kSessionHeaderBytes = 20;
constexpr size_t kRosterEntryBytes = 100;

inline void encode_session_header(uint64_t session, uint32_t threshold, uint32_t length,
                                  uint32_t bits, uint8_t out[kSessionHeaderBytes]) {
  store_le64(out, session);
  store_le32(out + 8, threshold);
  store_le32(out + 12, length);
  store_le32(out + 16, bits);
}

inline void encode_roster_entry(uint32_t id, const uint8_t encryption_key[32],
                                const uint8_t masking_key[32], const uint8_t commitment[32],
                                uint8_t out[kRosterEntryBytes]) {
  store_le32(out, id);
  memcpy(out + 4, encryption_key, 32);
  memcpy(out + 36, masking_key, 32);
  memcpy(out + 68, commitment, 32);
}

}  // namespace secagg
}  // namespace fedstat

#endif  // FEDSTAT_SDK_SECAGG_SESSION_HASH_H_
