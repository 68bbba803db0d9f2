// PYBIND11_MODULE(fedstat): the module's docstring, version and error translation, then its
// parts (bindings.h).
#include <pybind11/pybind11.h>

#include "python/src/bindings.h"
#include "python/src/errors.h"

PYBIND11_MODULE(fedstat, m) {
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
