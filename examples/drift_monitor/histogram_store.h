// The drift monitor's persisted histogram: a SparseHistogram of kHistogramCapacity items in
// memory, kept between runs as the platform blob kHistogramBlob (platform::save_blob, i.e. the
// file <state dir>/drift-histogram on POSIX; the blob is the SDK's CRC-checked histogram format,
// sdk/histogram/histogram_blob.h, inside the platform's own integrity frame).
//
// load(): no blob yet starts an empty histogram; a corrupt or truncated blob, or one holding
// more items than the capacity, is an error (never a silent reset: the counts it held would be
// lost). save() replaces the blob atomically.
// Memory: 8·kHistogramCapacity bytes for the table (32 KiB) and as much again, plus 32 bytes,
// for the serialisation scratch — both inside the object (allocate it statically or on the heap).
#ifndef FEDSTAT_EXAMPLES_DRIFT_MONITOR_HISTOGRAM_STORE_H_
#define FEDSTAT_EXAMPLES_DRIFT_MONITOR_HISTOGRAM_STORE_H_

#include <cstdint>
#include <string>

#include "sdk/histogram/sparse_histogram.h"

namespace drift_monitor {

constexpr size_t kHistogramCapacity = 4096;  // distinct item ids (a power of two)
constexpr const char* kHistogramBlob = "drift-histogram";

class HistogramStore {
 public:
  HistogramStore();
  HistogramStore(const HistogramStore&) = delete;
  HistogramStore& operator=(const HistogramStore&) = delete;

  // true when the stored histogram was loaded or there was none; false with `error` set.
  bool load(std::string& error);
  bool save(std::string& error);

  fedstat::histogram::SparseHistogram& histogram() { return histogram_; }

 private:
  fedstat::histogram::SparseEntry table_[kHistogramCapacity];
  uint8_t scratch_[fedstat::histogram::SparseHistogram::serialized_bytes(kHistogramCapacity)];
  fedstat::histogram::SparseHistogram histogram_;
};

}  // namespace drift_monitor

#endif  // FEDSTAT_EXAMPLES_DRIFT_MONITOR_HISTOGRAM_STORE_H_
