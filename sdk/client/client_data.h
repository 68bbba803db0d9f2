/// @file
/// ClientData: the app's data, as the Client and the contribution builders read it — small
/// virtual accessors the app implements over its own storage (the SDK holds no copy).
/// Return null / kNotFound when the app has none for a kind: the Client declines the task.
/// Errors: kNotFound from the defaults.
///
/// @memory none of its own (the app's storage is viewed, never copied).
/// @paper none (infrastructure).
#ifndef FEDSTAT_SDK_CLIENT_CLIENT_DATA_H_
#define FEDSTAT_SDK_CLIENT_CLIENT_DATA_H_

#include "sdk/base/result.h"
#include "sdk/base/span.h"
#include "sdk/histogram/sparse_histogram.h"
#include "sdk/tasks/logistic_trainer.h"

namespace fedstat {
namespace client {

/// The app's data as the Client reads it; the app overrides the accessors for the kinds it
/// serves. The views returned must stay valid while a session runs.
class ClientData {
 public:
  /// DATA_SHIFT and KL_ANSWERS: the app's item histogram; null (the default) when it has none.
  virtual const histogram::SparseHistogram* histogram() { return nullptr; }
  /// MODEL_UPDATE: the app's training examples.
  /// @errors kNotFound: the app holds no examples (the default). An override may return any
  /// status; the Client then declines the task (kDeclinedNoData).
  virtual Result<tasks::Examples> examples() { return not_found("the app holds no examples"); }
  /// HETEROGENEITY: the client's x ∈ [0,1]^d (e.g. its label distribution).
  /// @errors kNotFound: the app holds no vector (the default). An override may return any
  /// status; the Client then declines the task (kDeclinedNoData).
  virtual Result<Span<const double>> unit_vector() {
    return not_found("the app holds no vector for heterogeneity");
  }

 protected:
  ~ClientData() = default;
};

}  // namespace client
}  // namespace fedstat

#endif  // FEDSTAT_SDK_CLIENT_CLIENT_DATA_H_
