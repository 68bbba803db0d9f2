#include "sdk/histogram/histogram_blob.h"

#include <string.h>

#include "sdk/base/bytes.h"
#include "sdk/base/crc32.h"

namespace fedstat {
namespace histogram {
namespace {
constexpr uint8_t kMagic[4] = {'F', 'H', 'G', '1'};
}  // namespace

void write_blob_header(const BlobHeader& h, MutableByteSpan out) {
  uint8_t* p = out.data();
  memcpy(p, kMagic, 4);
  p[4] = static_cast<uint8_t>(h.kind);
  p[5] = kBlobVersion;
  p[6] = 0;
  p[7] = 0;
  store_le32(p + 8, h.n);
  store_le64(p + 12, h.total);
  store_le64(p + 20, h.dropped);
}

void seal_blob(MutableByteSpan blob) {
  const size_t body = blob.size() - kBlobCrcBytes;
  store_le32(blob.data() + body, crc32(ByteSpan(blob.data(), body)));
}

Result<BlobHeader> read_blob_header(ByteSpan blob, BlobKind kind, size_t payload_bytes_per_n) {
  if (blob.size() < kBlobHeaderBytes + kBlobCrcBytes) {
    return data_loss("histogram blob is truncated: shorter than its header");
  }
  const uint8_t* p = blob.data();
  if (memcmp(p, kMagic, 4) != 0) return data_loss("not a fedstat histogram blob (wrong magic)");
  if (p[5] != kBlobVersion) {
    return data_loss("histogram blob has an unknown version: written by a newer fedstat?");
  }
  const size_t body = blob.size() - kBlobCrcBytes;
  if (crc32(ByteSpan(p, body)) != load_le32(p + body)) {
    return data_loss("histogram blob failed its CRC-32 check: corrupted");
  }
  if (p[4] != static_cast<uint8_t>(kind)) {
    return invalid_argument("histogram blob holds the other kind (dense vs sparse)");
  }
  BlobHeader h;
  h.kind = kind;
  h.n = load_le32(p + 8);
  h.total = load_le64(p + 12);
  h.dropped = load_le64(p + 20);
  uint64_t payload = 0;
  if (!checked_mul(uint64_t{h.n}, uint64_t{payload_bytes_per_n}, payload) ||
      uint64_t{body - kBlobHeaderBytes} != payload) {
    return data_loss("histogram blob's length disagrees with its entry count");
  }
  return h;
}

}  // namespace histogram
}  // namespace fedstat
