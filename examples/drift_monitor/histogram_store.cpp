// The drift monitor's persisted histogram (histogram_store.h).
#include "examples/drift_monitor/histogram_store.h"

#include "platform/platform.h"

namespace drift_monitor {

using fedstat::MutableByteSpan;
using fedstat::Span;
using fedstat::StatusCode;

HistogramStore::HistogramStore() {
  // A power-of-two table: init() cannot fail.
  (void)histogram_.init(Span<fedstat::histogram::SparseEntry>(table_, kHistogramCapacity));
}

bool HistogramStore::load(std::string& error) {
  histogram_.clear();
  const fedstat::Status loaded =
      histogram_.load(kHistogramBlob, MutableByteSpan(scratch_, sizeof(scratch_)));
  if (loaded.ok()) return true;
  histogram_.clear();
  if (loaded.code() == StatusCode::kNotFound) return true;  // the first run: nothing counted yet
  error = std::string("the stored histogram (blob '") + kHistogramBlob +
          "') cannot be read: " + fedstat::status_code_name(loaded.code()) + ": " +
          loaded.message() +
          "; nothing was changed — move the file away to start counting from zero";
  return false;
}

bool HistogramStore::save(std::string& error) {
  const fedstat::Status saved =
      histogram_.save(kHistogramBlob, MutableByteSpan(scratch_, sizeof(scratch_)));
  if (saved.ok()) return true;
  error = std::string("saving the histogram (blob '") + kHistogramBlob +
          "') failed: " + fedstat::status_code_name(saved.code()) + ": " + saved.message();
  return false;
}

}  // namespace drift_monitor
