// The device's task policy (sdk/client/task_policy.h) as fedstat.TaskPolicy: the trust models a
// device's Client answers and the (ε, δ) bounds of a task's ledger charge, with the SDK's defaults
// (trust "none" off). An analyst checks a task against it before declaring the task to a fleet
// whose devices keep the default: TaskPolicy().check("trusted", 1e-9) says which rule the devices
// would decline it by. A malformed policy or an unknown trust name is a ValueError with the SDK's
// message (the field named).
#include <pybind11/pybind11.h>

#include <string>

#include "host_server/estimate/host_common.h"
#include "python/src/bindings.h"
#include "sdk/client/task_policy.h"

namespace fedstat {
namespace python {

namespace py = pybind11;

namespace {

using client::TaskPolicy;

// The kAccept* bits of a name list: a "none,dist" string or an iterable of names.
uint32_t accepted_bits(py::handle accept) {
  std::string list;
  if (py::isinstance<py::str>(accept)) {
    list = accept.cast<std::string>();
  } else {
    for (py::handle item : py::iter(accept)) {
      if (!py::isinstance<py::str>(item)) {
        throw py::type_error("accept: trust model names (str), e.g. (\"dist\", \"none\")");
      }
      list += (list.empty() ? "" : ",") + item.cast<std::string>();
    }
  }
  return host::value_or_throw(client::parse_accepted_trust(list.c_str()), "accept");
}

// The wire's number of a trust model's name.
int64_t trust_number(const std::string& name) {
  if (name == "trusted") return fedstat_v1_TrustModel_TRUSTED;
  if (name == "tagg") return fedstat_v1_TrustModel_TAGG;
  if (name == "dist") return fedstat_v1_TrustModel_DIST;
  if (name == "none") return fedstat_v1_TrustModel_NONE;
  throw py::value_error("trust must be \"trusted\", \"tagg\", \"dist\" or \"none\", not \"" + name +
                        "\"");
}

py::tuple accepted_names(uint32_t bits) {
  py::list names;
  if (bits & client::kAcceptTrusted) names.append("trusted");
  if (bits & client::kAcceptTagg) names.append("tagg");
  if (bits & client::kAcceptDist) names.append("dist");
  if (bits & client::kAcceptNone) names.append("none");
  return py::tuple(names);
}

const char* refusal_name(client::PolicyRefusal refusal) {
  switch (refusal) {
    case client::PolicyRefusal::kTrustModel:
      return "trust_model";
    case client::PolicyRefusal::kEpsilonAboveMax:
      return "epsilon_above_max";
    case client::PolicyRefusal::kDeltaAboveMax:
      return "delta_above_max";
    case client::PolicyRefusal::kExactEpsilonBelow:
      return "exact_epsilon_below_min";
    case client::PolicyRefusal::kNotRefused:
      break;
  }
  return nullptr;
}

}  // namespace

void bind_policy(py::module_& m) {
  const TaskPolicy defaults;
  py::class_<TaskPolicy>(m, "TaskPolicy",
                         "What a device's Client answers (sdk/client/task_policy.h): the trust "
                         "models it accepts and the bounds of a task's ledger charge. The "
                         "defaults are the SDK's: trusted, tagg and dist (none off), epsilon <= "
                         "10, delta <= 1e-5, and trusted/tagg tasks charged epsilon >= 0.1.")
      .def(py::init([](py::handle accept, double max_epsilon, double max_delta,
                       double min_exact_epsilon) {
             TaskPolicy p;
             p.accepted_trust = accepted_bits(accept);
             p.max_epsilon = max_epsilon;
             p.max_delta = max_delta;
             p.min_exact_epsilon = min_exact_epsilon;
             host::check(client::validate_task_policy(p), "TaskPolicy");
             return p;
           }),
           py::kw_only(), py::arg("accept") = py::make_tuple("trusted", "tagg", "dist"),
           py::arg("max_epsilon") = defaults.max_epsilon, py::arg("max_delta") = defaults.max_delta,
           py::arg("min_exact_epsilon") = defaults.min_exact_epsilon,
           "accept: trust model names (\"trusted\", \"tagg\", \"dist\", \"none\", \"all\"), as a "
           "tuple or a comma-separated string; a malformed policy is a ValueError naming the "
           "field.")
      .def_property_readonly(
          "accept", [](const TaskPolicy& p) { return accepted_names(p.accepted_trust); },
          "the accepted trust models, as names")
      .def_readonly("max_epsilon", &TaskPolicy::max_epsilon, "the largest epsilon charged per task")
      .def_readonly("max_delta", &TaskPolicy::max_delta, "the largest delta charged per task")
      .def_readonly("min_exact_epsilon", &TaskPolicy::min_exact_epsilon,
                    "the smallest epsilon a trusted or tagg task may be charged")
      .def(
          "check",
          [](const TaskPolicy& p, const std::string& trust, double epsilon,
             double delta) -> py::object {
            const client::PolicyRefusal refusal = client::check_task_policy(
                p, trust_number(trust), client::PolicyCharge{epsilon, delta});
            const char* name = refusal_name(refusal);
            if (name == nullptr) return py::none();
            return py::str(name);
          },
          py::arg("trust"), py::arg("epsilon"), py::arg("delta") = 0.0,
          "None when a device with this policy answers a task of trust model `trust` whose ledger "
          "charge is (epsilon, delta) — the task's own for trusted, tagg and none; for dist and "
          "data-shift tasks with local noise what the device's noise gives "
          "(sdk/client/contribution.h, device_spend) — else the rule that declines it: "
          "\"trust_model\", \"epsilon_above_max\", \"delta_above_max\" or "
          "\"exact_epsilon_below_min\".")
      .def("__repr__", [](const TaskPolicy& p) {
        std::string names;
        for (py::handle n : accepted_names(p.accepted_trust)) {
          names += (names.empty() ? "'" : ", '") + n.cast<std::string>() + "'";
        }
        return "TaskPolicy(accept=(" + names +
               "), max_epsilon=" + py::repr(py::float_(p.max_epsilon)).cast<std::string>() +
               ", max_delta=" + py::repr(py::float_(p.max_delta)).cast<std::string>() +
               ", min_exact_epsilon=" +
               py::repr(py::float_(p.min_exact_epsilon)).cast<std::string>() + ")";
      });
}

}  // namespace python
}  // namespace fedstat
