#include "python/src/conversions.h"

#include <cmath>

#include "host_server/estimate/host_common.h"

namespace fedstat {
namespace python {

namespace {

bool is_bool(py::handle value) {
  return py::isinstance<py::bool_>(value) ||
         py::isinstance(value, py::module_::import("numpy").attr("bool_"));
}

// value as a Python int, or TypeError (floats and bools are refused: no silent truncation).
py::int_ as_int(py::handle value, const std::string& name) {
  const py::object index = py::module_::import("operator").attr("index");
  if (is_bool(value)) throw py::type_error(name + " must be an integer, not a bool");
  try {
    return index(value);
  } catch (py::error_already_set&) {
    throw py::type_error(name + " must be an integer, not " +
                         text(value.get_type().attr("__name__")));
  }
}

// A non-negative Python int that must fit 64 bits; ValueError otherwise.
uint64_t as_u64(const py::int_& value, const std::string& name, const std::string& range) {
  if (value < py::int_(0) || value > py::int_(UINT64_MAX)) {
    throw py::value_error(name + " must be " + range + ", not " + text(value));
  }
  return value.cast<uint64_t>();
}

py::object numpy_array(py::handle values) {
  return py::module_::import("numpy").attr("asarray")(values);
}

}  // namespace

noise::Rational to_rational(py::handle value, const std::string& name) {
  if (py::isinstance<py::str>(value)) {
    const std::string literal = value.cast<std::string>();
    return host::value_or_throw(noise::parse_rational(literal.c_str()),
                                name + " '" + literal + "'");
  }
  if (is_bool(value)) throw py::type_error(name + " must be a number, not a bool");
  const py::object fraction_type = py::module_::import("fractions").attr("Fraction");
  py::object fraction;
  if (py::isinstance<py::float_>(value) ||
      py::isinstance(value, py::module_::import("numpy").attr("floating"))) {
    const double x = py::float_(py::reinterpret_borrow<py::object>(value));
    if (!std::isfinite(x)) {
      throw py::value_error(name + " must be a finite number, not " + text(value));
    }
    fraction = fraction_type(py::str(py::float_(x)));  // the decimal it prints as
  } else {
    try {
      fraction = fraction_type(value);
    } catch (py::error_already_set&) {
      throw py::type_error(name + " must be an int, a Fraction, a float or a str like '7/3'");
    }
  }
  const py::int_ num = fraction.attr("numerator"), den = fraction.attr("denominator");
  if (num < py::int_(0)) {
    throw py::value_error(name + " must be positive, not " + text(fraction));
  }
  const std::string range = "a fraction p/q with p and q below 2^64";
  return noise::Rational{as_u64(num, name, range), as_u64(den, name, range)};
}

uint64_t to_whole_number(py::handle value, const std::string& name, uint64_t low, uint64_t high) {
  const py::int_ n = as_int(value, name);
  const std::string range =
      "a whole number from " + std::to_string(low) + " to " + std::to_string(high);
  const uint64_t v = as_u64(n, name, range);
  if (v < low || v > high)
    throw py::value_error(name + " must be " + range + ", not " + std::to_string(v));
  return v;
}

double to_double(py::handle value, const std::string& name) {
  if (is_bool(value) || py::isinstance<py::str>(value)) {
    throw py::type_error(name + " must be a number");
  }
  try {
    return py::float_(py::reinterpret_borrow<py::object>(value));
  } catch (py::error_already_set&) {
    throw py::type_error(name + " must be a number");
  }
}

Seed256 to_seed256(py::handle value, const std::string& name) {
  if (py::isinstance<py::bytes>(value)) {
    const std::string bytes = value.cast<std::string>();
    if (bytes.size() != 32) {
      throw py::value_error(name + " must be an int or 32 bytes, not " +
                            std::to_string(bytes.size()) + " bytes");
    }
    Seed256 seed;
    std::copy(bytes.begin(), bytes.end(), seed.bytes);
    return seed;
  }
  return host::seed_from_u64(to_seed(value, name));
}

py::bytes seed_bytes(const Seed256& seed) {
  return py::bytes(reinterpret_cast<const char*>(seed.bytes), sizeof(seed.bytes));
}

host::NoiseBits noise_bits(py::handle seed, const std::string& name) {
  if (seed.is_none()) return host::NoiseBits::csprng();
  return host::NoiseBits::seeded(to_seed(seed, name));
}

std::vector<int64_t> to_integers(py::handle values, const std::string& name, int64_t low,
                                 int64_t high) {
  const py::array array(numpy_array(values));
  if (array.ndim() != 1) {
    throw py::value_error(name + " must be one-dimensional, not " + std::to_string(array.ndim()) +
                          "-dimensional");
  }
  const char kind = array.dtype().kind();
  if (kind != 'i' && kind != 'u' && !(kind == 'f' && array.size() == 0)) {
    throw py::type_error(name + " must hold integers, not numpy dtype " + text(array.dtype()));
  }
  const std::string range = "from " + std::to_string(low) + " to " + std::to_string(high);
  std::vector<int64_t> out(static_cast<size_t>(array.size()));
  if (kind == 'u') {
    const auto u = py::array_t<uint64_t, py::array::c_style | py::array::forcecast>::ensure(array);
    for (size_t i = 0; i < out.size(); ++i) {
      const uint64_t v = u.data()[i];
      if (v > static_cast<uint64_t>(high) || (low > 0 && v < static_cast<uint64_t>(low))) {
        throw py::value_error(name + "[" + std::to_string(i) + "] = " + std::to_string(v) +
                              " is outside the allowed values " + range);
      }
      out[i] = static_cast<int64_t>(v);
    }
  } else if (kind == 'i') {
    const auto s = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(array);
    for (size_t i = 0; i < out.size(); ++i) {
      const int64_t v = s.data()[i];
      if (v < low || v > high) {
        throw py::value_error(name + "[" + std::to_string(i) + "] = " + std::to_string(v) +
                              " is outside the allowed values " + range);
      }
      out[i] = v;
    }
  }
  return out;
}

std::vector<std::vector<double>> to_rows(py::handle values, const std::string& name) {
  const py::array array(numpy_array(values));
  const char kind = array.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u') {
    throw py::type_error(name + " must hold numbers, not numpy dtype " + text(array.dtype()));
  }
  if (array.ndim() != 2) {
    throw py::value_error(name + " must be two-dimensional (one row per client), not " +
                          std::to_string(array.ndim()) + "-dimensional");
  }
  const auto d = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(array);
  const size_t rows = static_cast<size_t>(d.shape(0)), columns = static_cast<size_t>(d.shape(1));
  std::vector<std::vector<double>> out(rows, std::vector<double>(columns));
  for (size_t r = 0; r < rows; ++r) {
    std::copy(d.data() + r * columns, d.data() + (r + 1) * columns, out[r].begin());
  }
  return out;
}

std::vector<privacy::Sensitivity> to_sensitivities(py::handle values, const std::string& name) {
  const std::vector<std::vector<double>> rows = to_rows(values, name);
  std::vector<privacy::Sensitivity> out;
  for (const auto& row : rows) {
    if (row.size() != 2) throw py::value_error(name + " must have two columns: (l1, l2)");
    out.push_back(privacy::Sensitivity{row[0], row[1]});
  }
  return out;
}

}  // namespace python
}  // namespace fedstat
