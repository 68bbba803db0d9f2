// Converting Python arguments to the SDK's types and results to numpy arrays, refusing what the
// SDK's types cannot hold instead of wrapping or truncating it (a negative count never becomes a
// huge unsigned one, a float id never becomes an integer).
//
//   rational (sampler parameters): a str is read by the SDK's parse_rational ("7/3", "0.25", as
//     fedstat-noise reads it); an int, fractions.Fraction or decimal.Decimal exactly; a float as
//     the decimal it prints as (0.1 is 1/10, 1e-07 is 1/10^7: the number the analyst wrote).
//   seeds: an int in [0, 2^64 − 1] is the tools' convention (host_common.h seed_from_u64: bytes
//     0..7 little-endian, the rest 0); a task seed may also be 32 bytes.
//   integer arrays: anything numpy.asarray turns into integers (not floats, not bools), checked
//     against the allowed range before any cast.
// ValueError for a value out of range, TypeError for a value of the wrong kind.
// Memory: the converted copy of each argument. Paper: none.
#ifndef FEDSTAT_PYTHON_SRC_CONVERSIONS_H_
#define FEDSTAT_PYTHON_SRC_CONVERSIONS_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "host_server/estimate/noise_bits.h"
#include "python/src/typed_args.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/noise/rational.h"
#include "sdk/privacy/accountants.h"

namespace fedstat {
namespace python {

namespace py = pybind11;

// str(value), as a std::string (for messages and reprs).
inline std::string text(py::handle value) {
  return py::str(value).cast<std::string>();
}

noise::Rational to_rational(py::handle value, const std::string& name);

// An int in [low, high] (ValueError outside, TypeError for a non-integer).
uint64_t to_whole_number(py::handle value, const std::string& name, uint64_t low, uint64_t high);
// A number as a double (validation is the caller's: NaN and ±inf pass); TypeError otherwise.
double to_double(py::handle value, const std::string& name);
// A seed in [0, 2^64 − 1].
inline uint64_t to_seed(py::handle value, const std::string& name) {
  return to_whole_number(value, name, 0, UINT64_MAX);
}
// An int (seed_from_u64) or 32 bytes.
Seed256 to_seed256(py::handle value, const std::string& name);
py::bytes seed_bytes(const Seed256& seed);

// None: the platform CSPRNG (what a release needs); an int: seeded streams (measurements only).
host::NoiseBits noise_bits(py::handle seed, const std::string& name);

// A one-dimensional integer array with every value in [low, high].
std::vector<int64_t> to_integers(py::handle values, const std::string& name, int64_t low,
                                 int64_t high);
// A two-dimensional array of finite or non-finite doubles (validation is the caller's), as rows.
std::vector<std::vector<double>> to_rows(py::handle values, const std::string& name);
// An (m, 2) array of (l1, l2) sensitivities.
std::vector<privacy::Sensitivity> to_sensitivities(py::handle values, const std::string& name);

template <typename T>
py::array_t<T> to_array(const std::vector<T>& values) {
  py::array_t<T> out(static_cast<py::ssize_t>(values.size()));
  if (!values.empty()) std::copy(values.begin(), values.end(), out.mutable_data());
  return out;
}
template <typename T>
py::array_t<T> to_array(const std::vector<T>& values, size_t rows, size_t columns) {
  py::array_t<T> out({static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(columns)});
  if (!values.empty()) std::copy(values.begin(), values.end(), out.mutable_data());
  return out;
}

}  // namespace python
}  // namespace fedstat

#endif  // FEDSTAT_PYTHON_SRC_CONVERSIONS_H_
