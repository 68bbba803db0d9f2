// How the Python module reports errors: SDK statuses and host exceptions become Python exceptions
// carrying the SDK's (or the host's) message.
//
// An SDK Status reaches Python as host::StatusError (host_server/estimate/host_common.h: the
// binding calls host::check / value_or_throw, as the host does) and is translated by its code:
//   invalid_argument, out_of_range, data_loss  → ValueError   (a value or bytes the call refuses)
//   unimplemented                              → NotImplementedError (e.g. another report version)
//   unavailable                                → OSError      (no platform entropy)
//   anything else                              → RuntimeError
// The message is "<context>: <SDK message>". Host exceptions keep pybind11's mapping:
// std::invalid_argument → ValueError, std::runtime_error → RuntimeError (an estimator's refusal
// on the data, e.g. KL's zero mass). Readers of malformed files raise ValueError naming the file
// and line; a file that cannot be opened raises OSError (errno and file name).
// Memory: none. Paper: none (the binding's plumbing).
#ifndef FEDSTAT_PYTHON_SRC_ERRORS_H_
#define FEDSTAT_PYTHON_SRC_ERRORS_H_

#include <pybind11/pybind11.h>

#include <string>

namespace fedstat {
namespace python {

// Registers the StatusError translation above on the module.
void register_error_translation(pybind11::module_& m);

// Raises OSError with errno's text and `path` (after a failed open).
[[noreturn]] void raise_os_error(const std::string& path);

}  // namespace python
}  // namespace fedstat

#endif  // FEDSTAT_PYTHON_SRC_ERRORS_H_
