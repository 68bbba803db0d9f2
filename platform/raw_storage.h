// Internal to platform/: the raw file-like operations each backend provides, on which
// blob_store.cpp builds the integrity-checked blobs of platform.h. Not for SDK code.
#ifndef FEDSTAT_PLATFORM_RAW_STORAGE_H_
#define FEDSTAT_PLATFORM_RAW_STORAGE_H_

#include <stddef.h>

#include "sdk/base/result.h"
#include "sdk/base/span.h"

namespace fedstat {
namespace platform {
namespace raw {

// Replaces the object `name` with the concatenation of `parts`, atomically (old or new, never a
// mix, after a crash).
Status write_atomically(const char* name, const ByteSpan* parts, size_t part_count);
// Reads up to out.size() bytes at `offset`; returns the count (0 at the end, never more than
// out.size(): load_blob refuses a backend that does). kNotFound if absent.
Result<size_t> read_at(const char* name, size_t offset, MutableByteSpan out);
// The object's size in bytes (kSizeOverflow, sdk/base/checked_size.h, when it does not fit in
// size_t: never a wrapped value); kNotFound if absent.
Result<size_t> size_of(const char* name);
Status remove(const char* name);

// Note: load_blob opens the object once per read_at; a save of the same name from another thread
// in between is caught by the CRC (kDataLoss), never returned as mixed data. The SDK itself is
// single-threaded per client.

}  // namespace raw
}  // namespace platform
}  // namespace fedstat

#endif  // FEDSTAT_PLATFORM_RAW_STORAGE_H_
