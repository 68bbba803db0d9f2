// Labelled examples from a CSV file (labelled_examples.h).
#include "host_server/estimate/labelled_examples.h"

#include <fstream>
#include <stdexcept>

#include "host_server/estimate/csv_fields.h"

namespace fedstat {
namespace host {

tasks::Examples LabelledExamples::view(size_t first, size_t rows) const {
  if (first > count() || rows > count() - first) {
    throw std::out_of_range("labelled examples: rows past the end");
  }
  return tasks::Examples{Span<const float>(features.data() + first * dimension, rows * dimension),
                         Span<const int8_t>(labels.data() + first, rows), dimension};
}

LabelledExamples LabelledExamples::slice(size_t first, size_t rows) const {
  if (first > count() || rows > count() - first) {
    throw std::out_of_range("labelled examples: rows past the end");
  }
  LabelledExamples out;
  out.dimension = dimension;
  out.features.assign(features.begin() + first * dimension,
                      features.begin() + (first + rows) * dimension);
  out.labels.assign(labels.begin() + first, labels.begin() + first + rows);
  return out;
}

LabelledExamples read_labelled_examples(const std::string& path, size_t dimension) {
  if (dimension == 0) throw std::invalid_argument("labelled examples: dimension must be >= 1");
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  LabelledExamples out;
  out.dimension = dimension;
  std::string line;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::vector<double> values = parse_decimal_row(line, path, number);  // strict
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (values.size() != dimension + 1) {
      throw std::runtime_error(where + std::to_string(values.size()) + " fields; a label and " +
                               std::to_string(dimension) + " features expected");
    }
    const double label = values[0];
    if (label != 1 && label != -1 && label != 0) {
      throw std::runtime_error(
          csv_error(CsvPlace{path, number, 1}, "the label must be -1, 0 or 1"));
    }
    double norm2 = 0;
    for (size_t k = 1; k <= dimension; ++k) {
      const float x = static_cast<float>(values[k]);
      norm2 += static_cast<double>(x) * x;
      out.features.push_back(x);
    }
    if (!(norm2 <= tasks::kMaxFeatureNorm2)) {
      throw std::runtime_error(where +
                               "the features' L2 norm is above 1 (the trainer needs unit-norm "
                               "rows: scale the features)");
    }
    out.labels.push_back(static_cast<int8_t>(label == 1 ? 1 : -1));
  }
  if (in.bad()) throw std::runtime_error(path + ": read error");
  if (out.count() == 0) throw std::runtime_error(path + ": no examples");
  return out;
}

}  // namespace host
}  // namespace fedstat
