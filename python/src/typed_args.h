// Argument and result types that name their Python type in the module's signatures (help(),
// __doc__, IDEs reading them): a binding that took a bare py::handle or
// py::object showed `handle` / `object` there ("skellam(lam: handle, size: handle, ...)").
//
// Each type here is a py::object that accepts any Python value, exactly as py::handle did: the
// conversions (conversions.h) still check the value and raise the TypeError / ValueError that
// names the argument; only the signature text changes. The names are Python annotations, PEP 604
// unions (Python >= 3.10; Debian 12 has 3.11), so a signature reads e.g.
//   skellam(lam: int | fractions.Fraction | str | float, size: int, seed: int | None = None, ...)
// tests/python/test_module_contract.py asserts that no signature in the module shows `handle` or a
// bare `object`.
// Memory: none. Paper: none (the binding's plumbing).
#ifndef FEDSTAT_PYTHON_SRC_TYPED_ARGS_H_
#define FEDSTAT_PYTHON_SRC_TYPED_ARGS_H_

#include <pybind11/pybind11.h>

namespace fedstat {
namespace python {

// Every value passes the caster; the conversion that reads it decides.
inline bool any_python_value(PyObject*) {
  return true;
}

#define FEDSTAT_PYTHON_TYPED_OBJECT(Name)                             \
  class Name : public pybind11::object {                              \
   public:                                                            \
    PYBIND11_OBJECT_DEFAULT(Name, pybind11::object, any_python_value) \
  };

FEDSTAT_PYTHON_TYPED_OBJECT(IntArg)                 // int (checked against the argument's range)
FEDSTAT_PYTHON_TYPED_OBJECT(OptionalIntArg)         // int | None (a seed: None = the CSPRNG)
FEDSTAT_PYTHON_TYPED_OBJECT(SeedArg)                // int | bytes (a task seed: an int or 32 bytes)
FEDSTAT_PYTHON_TYPED_OBJECT(RationalArg)            // a sampler's exact parameter (conversions.h)
FEDSTAT_PYTHON_TYPED_OBJECT(OptionalFloatArg)       // float | None (None: the CLI default)
FEDSTAT_PYTHON_TYPED_OBJECT(ArrayArg)               // anything numpy.asarray reads
FEDSTAT_PYTHON_TYPED_OBJECT(NamesArg)               // an iterable of str (trust models, task kinds)
FEDSTAT_PYTHON_TYPED_OBJECT(TaskArg)                // a task declaration: a dict or JSON text
FEDSTAT_PYTHON_TYPED_OBJECT(OptionalPathArg)        // str | os.PathLike | None
FEDSTAT_PYTHON_TYPED_OBJECT(OptionalItemCountsArg)  // fedstat.ItemCounts | None
FEDSTAT_PYTHON_TYPED_OBJECT(FractionResult)         // fractions.Fraction
FEDSTAT_PYTHON_TYPED_OBJECT(OptionalStrResult)      // str | None
FEDSTAT_PYTHON_TYPED_OBJECT(OptionalArrayListResult)  // list[numpy.ndarray] | None

#undef FEDSTAT_PYTHON_TYPED_OBJECT

}  // namespace python
}  // namespace fedstat

namespace pybind11 {
namespace detail {

#define FEDSTAT_PYTHON_TYPE_NAME(Name, text)       \
  template <>                                      \
  struct handle_type_name<fedstat::python::Name> { \
    static constexpr auto name = const_name(text); \
  };

FEDSTAT_PYTHON_TYPE_NAME(IntArg, "int")
FEDSTAT_PYTHON_TYPE_NAME(OptionalIntArg, "int | None")
FEDSTAT_PYTHON_TYPE_NAME(SeedArg, "int | bytes")
FEDSTAT_PYTHON_TYPE_NAME(RationalArg, "int | fractions.Fraction | str | float")
FEDSTAT_PYTHON_TYPE_NAME(OptionalFloatArg, "float | None")
FEDSTAT_PYTHON_TYPE_NAME(ArrayArg, "numpy.typing.ArrayLike")
FEDSTAT_PYTHON_TYPE_NAME(NamesArg, "collections.abc.Iterable[str]")
FEDSTAT_PYTHON_TYPE_NAME(TaskArg, "dict | str")
FEDSTAT_PYTHON_TYPE_NAME(OptionalPathArg, "str | os.PathLike | None")
FEDSTAT_PYTHON_TYPE_NAME(OptionalItemCountsArg, "fedstat.ItemCounts | None")
FEDSTAT_PYTHON_TYPE_NAME(FractionResult, "fractions.Fraction")
FEDSTAT_PYTHON_TYPE_NAME(OptionalStrResult, "str | None")
FEDSTAT_PYTHON_TYPE_NAME(OptionalArrayListResult, "list[numpy.ndarray] | None")

#undef FEDSTAT_PYTHON_TYPE_NAME

}  // namespace detail
}  // namespace pybind11

#endif  // FEDSTAT_PYTHON_SRC_TYPED_ARGS_H_
