// PYBIND11_MODULE(fedstat): numpy first (the import fails without it), the module's docstring,
// version and error translation, then its parts (bindings.h).
#include <pybind11/pybind11.h>

#include <stdexcept>

#include "python/src/bindings.h"
#include "python/src/errors.h"

PYBIND11_MODULE(fedstat, m) {
  // Every part takes or returns numpy arrays, and pybind11 imports numpy only at the first array:
  // without numpy the module imported and its first call failed far from the cause (a python3
  // other than Debian's first on PATH). So the import itself fails, and says what to install;
  // pybind11 turns an exception thrown here into ImportError with this message.
  try {
    pybind11::module_::import("numpy");
  } catch (const pybind11::error_already_set&) {
    throw std::runtime_error(
        "fedstat needs numpy: apt-get install python3-numpy or pip install numpy (for the "
        "interpreter importing fedstat; docs/python.md)");
  }
  m.doc() =
      "fedstat for analysts: the host side of the fedstat SDK over numpy arrays.\n\n"
      "Item counts and sketch reports, their merge, the D_TV / KL / heterogeneity estimators,\n"
      "the privacy accountants and the exact integer samplers. Every computation is the C++\n"
      "SDK's or host's; errors are ValueError (a refused value or corrupt bytes, with the SDK's\n"
      "message), OSError, NotImplementedError or RuntimeError. See docs/python.md.";
  m.attr("__version__") = FEDSTAT_PYTHON_VERSION;
  fedstat::python::register_error_translation(m);
  fedstat::python::bind_noise(m);
  fedstat::python::bind_privacy(m);
  fedstat::python::bind_data(m);
  fedstat::python::bind_sketch(m);
  fedstat::python::bind_tv(m);
  fedstat::python::bind_dist_shift(m);
  fedstat::python::bind_kl(m);
  fedstat::python::bind_heterogeneity(m);
  fedstat::python::bind_policy(m);
}
