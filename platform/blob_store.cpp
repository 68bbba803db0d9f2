// save_blob / load_blob / remove_blob for every backend: names, framing and integrity checks here,
// raw atomic writes and reads in the backend (raw_storage.h).
#include <string.h>

#include "platform/blob_format.h"
#include "platform/platform.h"
#include "platform/raw_storage.h"
#include "sdk/base/bytes.h"
#include "sdk/base/crc32.h"

namespace fedstat {
namespace platform {
namespace {

Status check_name(const char* name) {
  if (name == nullptr || name[0] == '\0') return invalid_argument("blob name must not be empty");
  if (name[0] == '.') return invalid_argument("blob name must not start with '.'");
  size_t length = 0;
  for (const char* c = name; *c != '\0'; ++c, ++length) {
    const bool allowed = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                         (*c >= '0' && *c <= '9') || *c == '_' || *c == '-' || *c == '.';
    if (!allowed) return invalid_argument("blob name may hold only A-Z a-z 0-9 _ - .");
    if (length >= kMaxBlobNameLength) {
      return invalid_argument("blob name is longer than platform::kMaxBlobNameLength");
    }
  }
  return Status();
}

}  // namespace

Status save_blob(const char* name, ByteSpan payload) {
  FEDSTAT_RETURN_IF_ERROR(check_name(name));
  if (payload.size() > kMaxBlobPayloadBytes) {
    return invalid_argument("blob payload is larger than platform::kMaxBlobPayloadBytes");
  }
  uint8_t header[kBlobHeaderBytes];
  memcpy(header, kBlobMagic, sizeof(kBlobMagic));
  store_le32(header + 4, static_cast<uint32_t>(payload.size()));
  Crc32 crc;
  crc.update(ByteSpan(header));
  crc.update(payload);
  uint8_t trailer[kBlobTrailerBytes];
  store_le32(trailer, crc.value());
  const ByteSpan parts[3] = {ByteSpan(header), payload, ByteSpan(trailer)};
  return raw::write_atomically(name, parts, 3);
}

// Reads exactly out.size() bytes at offset, or reports the object as truncated.
static Status read_exactly(const char* name, size_t offset, MutableByteSpan out) {
  size_t done = 0;
  while (done < out.size()) {
    FEDSTAT_ASSIGN_OR_RETURN(const size_t got,
                             raw::read_at(name, offset + done, out.subspan(done)));
    if (got == 0) return data_loss("stored blob is truncated: it ends before its declared length");
    if (got > out.size() - done) {
      return internal_error("the storage backend's read_at returned more bytes than asked for");
    }
    done += got;
  }
  return Status();
}

Result<size_t> load_blob(const char* name, MutableByteSpan out) {
  FEDSTAT_RETURN_IF_ERROR(check_name(name));
  FEDSTAT_ASSIGN_OR_RETURN(const size_t stored_size, raw::size_of(name));
  if (stored_size < kBlobOverheadBytes) {
    return data_loss("stored blob is truncated: shorter than its 12-byte frame");
  }
  uint8_t header[kBlobHeaderBytes];
  FEDSTAT_RETURN_IF_ERROR(read_exactly(name, 0, MutableByteSpan(header)));
  if (memcmp(header, kBlobMagic, sizeof(kBlobMagic)) != 0) {
    return data_loss("stored blob has a wrong magic number: not a fedstat blob, or corrupted");
  }
  const size_t payload_size = load_le32(header + 4);
  if (payload_size > kMaxBlobPayloadBytes || stored_size != payload_size + kBlobOverheadBytes) {
    return data_loss("stored blob's length field disagrees with its size: truncated or corrupted");
  }
  if (payload_size > out.size()) {
    return resource_exhausted("the buffer given to load_blob is smaller than the stored payload");
  }
  MutableByteSpan payload = out.first(payload_size);
  FEDSTAT_RETURN_IF_ERROR(read_exactly(name, kBlobHeaderBytes, payload));
  uint8_t trailer[kBlobTrailerBytes];
  FEDSTAT_RETURN_IF_ERROR(
      read_exactly(name, kBlobHeaderBytes + payload_size, MutableByteSpan(trailer)));
  Crc32 crc;
  crc.update(ByteSpan(header));
  crc.update(payload);
  if (crc.value() != load_le32(trailer)) {
    return data_loss("stored blob failed its CRC-32 check: the contents are corrupted");
  }
  return payload_size;
}

Status remove_blob(const char* name) {
  FEDSTAT_RETURN_IF_ERROR(check_name(name));
  return raw::remove(name);
}

}  // namespace platform
}  // namespace fedstat
