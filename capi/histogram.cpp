// The C ABI's histograms (c/histogram.h): one handle type over DenseHistogram or
// SparseHistogram, placed in the caller's memory with its counters or table after it.
#include <new>

#include "capi/handle.h"
#include "capi/objects.h"

namespace fedstat {
namespace capi {
namespace {

using histogram::DenseHistogram;
using histogram::SparseEntry;
using histogram::SparseHistogram;

constexpr size_t kHandle = handle_bytes<fedstat_histogram>();

// DenseHistogram::init's rule: 1..2^32 − 1 items (the blob stores the domain in 32 bits). A
// function of a uint64_t: on 32-bit targets the upper test is trivially true.
constexpr bool fits_u32(uint64_t n) {
  return n <= UINT32_MAX;
}
bool valid_domain(size_t domain) {
  return domain >= 1 && fits_u32(domain);
}
bool valid_capacity(size_t capacity) {
  return capacity >= 2 && (capacity & (capacity - 1)) == 0;
}
size_t dense_bytes(size_t domain) {
  return size_add(kHandle, size_mul(sizeof(uint32_t), domain));
}
size_t sparse_bytes(size_t capacity) {
  return size_add(kHandle, size_mul(sizeof(SparseEntry), capacity));
}

bool live(const fedstat_histogram* h) {
  return valid(h, kHistogramMagic);
}

}  // namespace
}  // namespace capi
}  // namespace fedstat

using namespace fedstat;        // NOLINT: the C entry points below are thin wrappers
using namespace fedstat::capi;  // NOLINT

extern "C" {

fedstat_status fedstat_histogram_dense_size(size_t domain, size_t* bytes) {
  if (!valid_domain(domain)) return FEDSTAT_INVALID_ARGUMENT;
  return size_status(dense_bytes(domain), bytes);
}

fedstat_status fedstat_histogram_sparse_size(size_t capacity, size_t* bytes) {
  if (!valid_capacity(capacity)) return FEDSTAT_INVALID_ARGUMENT;
  return size_status(sparse_bytes(capacity), bytes);
}

fedstat_status fedstat_histogram_create_dense(void* memory, size_t memory_bytes, size_t domain,
                                              fedstat_histogram** out) {
  if (!valid_domain(domain)) return FEDSTAT_INVALID_ARGUMENT;
  const fedstat_status checked = check_memory(memory, memory_bytes, dense_bytes(domain), out);
  if (checked != FEDSTAT_OK) return checked;
  fedstat_histogram* h = new (handle_address<fedstat_histogram>(memory)) fedstat_histogram();
  h->kind = FEDSTAT_HISTOGRAM_DENSE;
  uint32_t* counts = reinterpret_cast<uint32_t*>(after_handle<fedstat_histogram>(memory));
  const Status status = h->dense.init(Span<uint32_t>(counts, domain));
  if (!status.ok()) {  // unreachable: the domain was checked above
    h->magic = 0;
    return code_of(status);
  }
  *out = h;
  return FEDSTAT_OK;
}

fedstat_status fedstat_histogram_create_sparse(void* memory, size_t memory_bytes, size_t capacity,
                                               fedstat_histogram** out) {
  if (!valid_capacity(capacity)) return FEDSTAT_INVALID_ARGUMENT;
  const fedstat_status checked = check_memory(memory, memory_bytes, sparse_bytes(capacity), out);
  if (checked != FEDSTAT_OK) return checked;
  fedstat_histogram* h = new (handle_address<fedstat_histogram>(memory)) fedstat_histogram();
  h->kind = FEDSTAT_HISTOGRAM_SPARSE;
  SparseEntry* table = reinterpret_cast<SparseEntry*>(after_handle<fedstat_histogram>(memory));
  const Status status = h->sparse.init(Span<SparseEntry>(table, capacity));
  if (!status.ok()) {  // unreachable: the capacity was checked above
    h->magic = 0;
    return code_of(status);
  }
  *out = h;
  return FEDSTAT_OK;
}

fedstat_status fedstat_histogram_add(fedstat_histogram* histogram, uint32_t item, uint32_t count) {
  if (!live(histogram)) return FEDSTAT_INVALID_ARGUMENT;
  return finish(histogram, histogram->kind == FEDSTAT_HISTOGRAM_DENSE
                               ? histogram->dense.add(item, count)
                               : histogram->sparse.add(item, count));
}

fedstat_status fedstat_histogram_clear(fedstat_histogram* histogram) {
  if (!live(histogram)) return FEDSTAT_INVALID_ARGUMENT;
  if (histogram->kind == FEDSTAT_HISTOGRAM_DENSE) {
    histogram->dense.clear();
  } else {
    histogram->sparse.clear();
  }
  return FEDSTAT_OK;
}

fedstat_status fedstat_histogram_count(const fedstat_histogram* histogram, uint32_t item,
                                       uint32_t* count) {
  if (!live(histogram) || count == nullptr) return FEDSTAT_INVALID_ARGUMENT;
  *count = histogram->kind == FEDSTAT_HISTOGRAM_DENSE ? histogram->dense.count(item)
                                                      : histogram->sparse.count(item);
  return FEDSTAT_OK;
}

fedstat_status fedstat_histogram_get_info(const fedstat_histogram* histogram,
                                          fedstat_histogram_info* info) {
  if (!live(histogram) || info == nullptr) return FEDSTAT_INVALID_ARGUMENT;
  fedstat_histogram_info i = {};
  i.kind = histogram->kind;
  if (histogram->kind == FEDSTAT_HISTOGRAM_DENSE) {
    const DenseHistogram& d = histogram->dense;
    i.slots = d.domain();
    for (uint32_t c : d.counts()) i.items += c > 0 ? 1 : 0;
    i.total = d.total();
    i.dropped = d.dropped();
  } else {
    const SparseHistogram& s = histogram->sparse;
    i.slots = s.capacity();
    i.items = s.size();
    i.total = s.total();
    i.dropped = s.dropped();
  }
  *info = i;
  return FEDSTAT_OK;
}

fedstat_status fedstat_histogram_serialized_size(const fedstat_histogram* histogram,
                                                 size_t* bytes) {
  if (!live(histogram)) return FEDSTAT_INVALID_ARGUMENT;
  return size_status(histogram->kind == FEDSTAT_HISTOGRAM_DENSE
                         ? DenseHistogram::serialized_bytes(histogram->dense.domain())
                         : SparseHistogram::serialized_bytes(histogram->sparse.size()),
                     bytes);
}

fedstat_status fedstat_histogram_serialize(fedstat_histogram* histogram, uint8_t* out,
                                           size_t capacity, size_t* written) {
  if (!live(histogram)) return FEDSTAT_INVALID_ARGUMENT;
  if ((out == nullptr && capacity != 0) || written == nullptr) {
    return finish(histogram, invalid_argument("serialize: out or written is NULL"));
  }
  const MutableByteSpan buffer(out, capacity);
  const Result<size_t> size = histogram->kind == FEDSTAT_HISTOGRAM_DENSE
                                  ? histogram->dense.serialize(buffer)
                                  : histogram->sparse.serialize(buffer);
  if (size.ok()) *written = size.value();
  return finish(histogram, size.status());
}

fedstat_status fedstat_histogram_deserialize(fedstat_histogram* histogram, const uint8_t* blob,
                                             size_t blob_bytes) {
  if (!live(histogram)) return FEDSTAT_INVALID_ARGUMENT;
  if (blob == nullptr && blob_bytes != 0) {
    return finish(histogram, invalid_argument("deserialize: blob is NULL"));
  }
  const ByteSpan bytes(blob, blob_bytes);
  return finish(histogram, histogram->kind == FEDSTAT_HISTOGRAM_DENSE
                               ? histogram->dense.deserialize(bytes)
                               : histogram->sparse.deserialize(bytes));
}

fedstat_status fedstat_histogram_save(fedstat_histogram* histogram, const char* name,
                                      uint8_t* scratch, size_t scratch_bytes) {
  if (!live(histogram)) return FEDSTAT_INVALID_ARGUMENT;
  if (name == nullptr || (scratch == nullptr && scratch_bytes != 0)) {
    return finish(histogram, invalid_argument("save: name or scratch is NULL"));
  }
  const MutableByteSpan buffer(scratch, scratch_bytes);
  return finish(histogram, histogram->kind == FEDSTAT_HISTOGRAM_DENSE
                               ? histogram->dense.save(name, buffer)
                               : histogram->sparse.save(name, buffer));
}

fedstat_status fedstat_histogram_load(fedstat_histogram* histogram, const char* name,
                                      uint8_t* scratch, size_t scratch_bytes) {
  if (!live(histogram)) return FEDSTAT_INVALID_ARGUMENT;
  if (name == nullptr || (scratch == nullptr && scratch_bytes != 0)) {
    return finish(histogram, invalid_argument("load: name or scratch is NULL"));
  }
  const MutableByteSpan buffer(scratch, scratch_bytes);
  return finish(histogram, histogram->kind == FEDSTAT_HISTOGRAM_DENSE
                               ? histogram->dense.load(name, buffer)
                               : histogram->sparse.load(name, buffer));
}

const char* fedstat_histogram_last_error(const fedstat_histogram* histogram) {
  return live(histogram) ? histogram->last_error : kNotAHandle;
}

}  // extern "C"
