// ClientData: the app's data, as the Client and the contribution builders read it — small
// virtual accessors the app implements over its own storage (the SDK holds no copy).
// Return null / kNotFound when the app has none for a kind: the Client declines the task.
// Memory: none of its own. Errors: kNotFound from the defaults. Paper: none.
#ifndef FEDSTAT_SDK_CLIENT_CLIENT_DATA_H_
#define FEDSTAT_SDK_CLIENT_CLIENT_DATA_H_

#include "sdk/base/result.h"
#include "sdk/base/span.h"
#include "sdk/histogram/sparse_histogram.h"
#include "sdk/tasks/logistic_trainer.h"

namespace fedstat {
namespace client {

class ClientData {
 public:
  virtual const histogram::SparseHistogram* histogram() { return nullptr; }
  virtual Result<tasks::Examples> examples() { return not_found("the app holds no examples"); }
  // HETEROGENEITY: the client's x ∈ [0,1]^d (e.g. its label distribution).
  virtual Result<Span<const double>> unit_vector() {
    return not_found("the app holds no vector for heterogeneity");
  }

 protected:
  ~ClientData() = default;
};

}  // namespace client
}  // namespace fedstat

#endif  // FEDSTAT_SDK_CLIENT_CLIENT_DATA_H_
