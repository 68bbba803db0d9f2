#include "python/src/errors.h"

#include <Python.h>

#include <exception>

#include "host_server/estimate/host_common.h"

namespace fedstat {
namespace python {

namespace {

PyObject* exception_for(StatusCode code) {
  switch (code) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
    case StatusCode::kDataLoss:
      return PyExc_ValueError;
    case StatusCode::kUnimplemented:
      return PyExc_NotImplementedError;
    case StatusCode::kUnavailable:
      return PyExc_OSError;
    default:
      return PyExc_RuntimeError;
  }
}

}  // namespace

void register_error_translation(pybind11::module_&) {
  pybind11::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const host::StatusError& e) {
      PyErr_SetString(exception_for(e.code()), e.what());
    }
  });
}

void raise_os_error(const std::string& path) {
  PyErr_SetFromErrnoWithFilename(PyExc_OSError, path.c_str());
  throw pybind11::error_already_set();
}

}  // namespace python
}  // namespace fedstat
