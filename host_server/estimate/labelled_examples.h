// Labelled examples for logistic regression (002 §5) from a CSV file, as devices hold them: the
// data of fedstat-sim's model_update devices (DIR/examples.csv) and a model_update task's
// held-out evaluation set (host_server/tasks/model_update_plan.h).
//
// Format: every non-blank line is "label,x1,...,xd": finite decimal numbers read strictly
// (csv_fields.h: no empty field, hex, inf/nan or trailing text), the label −1, 0 or 1 (0 is read
// as −1, as federated_logreg reads it), exactly d features. The features are used as written
// (converted to float, the trainer's type) and each row must have ‖x‖² ≤ tasks::kMaxFeatureNorm2
// in float (the trainer's assumption, logistic_trainer.h): scaling features is the app's job, and
// nothing here rescales them. Errors: std::runtime_error naming the file, line and (where there is
// one) field — an unreadable file, a malformed field, a wrong number of fields, a label outside
// {−1, 0, 1}, a row of norm above 1, or no row at all.
// Memory: 4·d + 1 bytes per row. Paper: 002 §3.2 (unit-norm features), §5.
#ifndef FEDSTAT_HOST_ESTIMATE_LABELLED_EXAMPLES_H_
#define FEDSTAT_HOST_ESTIMATE_LABELLED_EXAMPLES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sdk/tasks/logistic_trainer.h"

namespace fedstat {
namespace host {

struct LabelledExamples {
  std::vector<float> features;  // row-major, count() × dimension
  std::vector<int8_t> labels;   // −1 or +1
  size_t dimension = 0;
  size_t count() const { return labels.size(); }
  // Rows [first, first + rows) as the SDK reads them (valid while this object is unchanged);
  // std::out_of_range past the end.
  tasks::Examples view(size_t first, size_t rows) const;
  tasks::Examples view() const { return view(0, count()); }
  // A copy of rows [first, first + rows); std::out_of_range past the end.
  LabelledExamples slice(size_t first, size_t rows) const;
};

LabelledExamples read_labelled_examples(const std::string& path, size_t dimension);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_ESTIMATE_LABELLED_EXAMPLES_H_
