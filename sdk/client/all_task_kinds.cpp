// all_task_kinds() (task_kinds.h): every kind, with secure aggregation — what a Client links
// when the app does not choose.
#include "sdk/client/task_kinds.h"

namespace fedstat {
namespace client {
namespace {

const TaskKindSupport* const kAllKinds[] = {&kDataShiftKind, &kKlAnswersKind, &kModelUpdateKind,
                                            &kHeterogeneityKind};

}  // namespace

TaskKinds all_task_kinds() {
  return TaskKinds{kAllKinds, &kSecureAggregation};
}

}  // namespace client
}  // namespace fedstat
