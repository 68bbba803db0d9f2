// The device's task policy (sdk/client/task_policy.h) as fedstat.TaskPolicy: the trust models a
// device's Client answers, the (ε, δ) bounds of a task's ledger charge and the noise shares it
// assumes honest, with the SDK's defaults (trust "none" off). An analyst checks a task against
// it before declaring the task to a fleet whose devices keep that policy: check(task) plans the
// task's declaration with fedstat-server's own planner (host_server/tasks/task_plan.h; both
// stages of a heterogeneity task), and runs on each Task what a device runs — validate_task, its
// charge device_spend (contribution.h) at the policy's assumed_honest_shares, the policy's rules
// — so it answers what the device does. A malformed policy, a declaration the server refuses or
// an unknown trust name is a ValueError with the C++ message (the field named).
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "host_server/estimate/host_common.h"
#include "host_server/tasks/heterogeneity_plan.h"
#include "host_server/tasks/task_plan.h"
#include "nlohmann/json.hpp"
#include "python/src/bindings.h"
#include "python/src/typed_args.h"
#include "sdk/client/contribution.h"
#include "sdk/client/task_policy.h"

namespace fedstat {
namespace python {

namespace py = pybind11;

namespace {

using client::TaskPolicy;

// A name list, a "none,dist" string or an iterable of names, joined with commas;
// `type_error` when an item is not a str.
std::string joined_names(py::handle names, const char* type_error) {
  if (py::isinstance<py::str>(names)) return names.cast<std::string>();
  std::string list;
  for (py::handle item : py::iter(names)) {
    if (!py::isinstance<py::str>(item)) throw py::type_error(type_error);
    list += (list.empty() ? "" : ",") + item.cast<std::string>();
  }
  return list;
}

// The kAccept* bits of a trust model name list.
uint32_t accepted_bits(NamesArg accept) {
  const std::string list =
      joined_names(accept, "accept: trust model names (str), e.g. (\"dist\", \"none\")");
  return host::value_or_throw(client::parse_accepted_trust(list.c_str()), "accept");
}

// The kAnswer* bits of a task kind name list.
uint32_t answered_bits(NamesArg answer) {
  const std::string list =
      joined_names(answer, "answer: task kind names (str), e.g. (\"kl\", \"data_shift\")");
  return host::value_or_throw(client::parse_answered_kinds(list.c_str()), "answer");
}

py::tuple answered_names(uint32_t bits) {
  py::list names;
  if (bits & client::kAnswerDataShift) names.append("data_shift");
  if (bits & client::kAnswerKlAnswers) names.append("kl");
  if (bits & client::kAnswerModelUpdate) names.append("model_update");
  if (bits & client::kAnswerHeterogeneity) names.append("heterogeneity");
  return py::tuple(names);
}

py::tuple accepted_names(uint32_t bits) {
  py::list names;
  if (bits & client::kAcceptTrusted) names.append("trusted");
  if (bits & client::kAcceptTagg) names.append("tagg");
  if (bits & client::kAcceptDist) names.append("dist");
  if (bits & client::kAcceptNone) names.append("none");
  return py::tuple(names);
}

// The Tasks devices receive for a task declaration (a dict or a JSON string, as fedstat-server's
// config holds it; files relative to `base_dir`): one, or a heterogeneity task's two stages.
std::vector<fedstat_v1_Task> device_tasks(TaskArg task, OptionalPathArg base_dir) {
  if (!py::isinstance<py::str>(task) && !py::isinstance<py::dict>(task)) {
    throw py::type_error("task: a task declaration, as a dict or as JSON text");
  }
  const std::string text =
      py::isinstance<py::str>(task)
          ? task.cast<std::string>()
          : py::module_::import("json").attr("dumps")(task).cast<std::string>();
  nlohmann::json declaration;
  try {
    declaration = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw py::value_error(std::string("task: not JSON: ") + e.what());
  }
  if (!declaration.is_object()) throw py::value_error("task: a declaration is a JSON object");
  const std::string dir =
      base_dir.is_none() ? std::string(".")
                         : py::module_::import("os").attr("fspath")(base_dir).cast<std::string>();
  // The opening time only sets the deadline, which the device's checks do not read; the plan's
  // own noise (never drawn here) from a fixed seed rather than the CSPRNG.
  try {
    const host::TaskPlan plan = host::plan_task(declaration, dir, 0, /*noise_seed=*/1);
    std::vector<fedstat_v1_Task> tasks = {plan.task};
    if (plan.task.kind == fedstat_v1_TaskKind_HETEROGENEITY) {
      tasks.push_back(host::heterogeneity_stage2_task(declaration, dir, 0));
    }
    return tasks;
  } catch (const nlohmann::json::exception& e) {  // a field of the wrong JSON type
    throw py::value_error(std::string("task: ") + e.what());
  }
}

// What a device with `policy` is charged for `task` (the ledger's spend) as the policy weighs it;
// the device's refusal of the task itself (validate_task, the accountant) is a ValueError.
client::PolicyCharge device_charge(const TaskPolicy& policy, const fedstat_v1_Task& task) {
  const client::DeviceSpend spend = host::value_or_throw(
      client::device_spend(task, client::all_task_kinds(), policy.assumed_honest_shares),
      "the device refuses the task " + std::to_string(task.task_id));
  return client::policy_charge(spend, task.delta);
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
    case client::PolicyRefusal::kTaskKind:
      return "task_kind";
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
                         "models it accepts, the task kinds it answers, the bounds of a task's "
                         "ledger charge and, for dist tasks, how many noise shares it assumes "
                         "honest. The defaults are the SDK's: trusted, tagg and dist (none off), "
                         "every kind, epsilon <= 10, delta <= 1e-5, trusted/tagg tasks charged "
                         "epsilon >= 0.1, assumed_honest_shares 0 (the task's threshold).")
      .def(py::init([](NamesArg accept, double max_epsilon, double max_delta,
                       double min_exact_epsilon, py::int_ assumed_honest_shares, NamesArg answer,
                       py::int_ min_assumed_dropout_ppm, py::int_ min_assumed_corrupt_ppm) {
             TaskPolicy p;
             p.accepted_trust = accepted_bits(accept);
             p.answered_kinds = answered_bits(answer);
             p.max_epsilon = max_epsilon;
             p.max_delta = max_delta;
             p.min_exact_epsilon = min_exact_epsilon;
             const long long shares = assumed_honest_shares.cast<long long>();
             if (shares < 0 || shares > UINT32_MAX) {
               throw py::value_error(
                   "TaskPolicy: assumed_honest_shares must be in [0, 2^32 - 1] (0: the task's "
                   "threshold)");
             }
             p.assumed_honest_shares = static_cast<uint32_t>(shares);
             const long long dropout = min_assumed_dropout_ppm.cast<long long>();
             const long long corrupt = min_assumed_corrupt_ppm.cast<long long>();
             if (dropout < 0 || dropout >= 1000000) {
               throw py::value_error(
                   "TaskPolicy: min_assumed_dropout_ppm must be in [0, 1000000) (parts per "
                   "million: 50000 is 5 %)");
             }
             if (corrupt < 0 || corrupt >= 1000000) {
               throw py::value_error(
                   "TaskPolicy: min_assumed_corrupt_ppm must be in [0, 1000000) (parts per "
                   "million: 50000 is 5 %)");
             }
             p.min_assumed_dropout_ppm = static_cast<uint32_t>(dropout);
             p.min_assumed_corrupt_ppm = static_cast<uint32_t>(corrupt);
             host::check(client::validate_task_policy(p), "TaskPolicy");
             return p;
           }),
           py::kw_only(), py::arg("accept") = py::make_tuple("trusted", "tagg", "dist"),
           py::arg("max_epsilon") = defaults.max_epsilon, py::arg("max_delta") = defaults.max_delta,
           py::arg("min_exact_epsilon") = defaults.min_exact_epsilon,
           py::arg("assumed_honest_shares") = defaults.assumed_honest_shares,
           py::arg("answer") = py::make_tuple("data_shift", "kl", "model_update", "heterogeneity"),
           py::arg("min_assumed_dropout_ppm") = defaults.min_assumed_dropout_ppm,
           py::arg("min_assumed_corrupt_ppm") = defaults.min_assumed_corrupt_ppm,
           "accept: trust model names (\"trusted\", \"tagg\", \"dist\", \"none\", \"all\"), as a "
           "tuple or a comma-separated string. assumed_honest_shares: the noise shares in a dist "
           "sum (the device's own included) the device assumes honest; it is charged the epsilon "
           "of min(threshold, this) shares (0: threshold, the semi-honest server; 1: its own share "
           "alone). answer: the task kinds the device answers (\"data_shift\", \"kl\", "
           "\"model_update\", \"heterogeneity\", \"all\"), likewise; a device declines a task of "
           "another kind for free — leave out a kind it never holds data for, since a decline for "
           "want of data is charged. min_assumed_dropout_ppm, min_assumed_corrupt_ppm: a dist "
           "task's sparse secure-aggregation graph is judged at least at these rates (parts per "
           "million; default 50000 each, 5 %): a degree and threshold that fail the SecAgg+ bound "
           "there are refused. A malformed policy is a ValueError naming the field.")
      .def_property_readonly(
          "accept", [](const TaskPolicy& p) { return accepted_names(p.accepted_trust); },
          "the accepted trust models, as names")
      .def_property_readonly(
          "answer", [](const TaskPolicy& p) { return answered_names(p.answered_kinds); },
          "the task kinds answered, as names")
      .def_readonly("max_epsilon", &TaskPolicy::max_epsilon, "the largest epsilon charged per task")
      .def_readonly("max_delta", &TaskPolicy::max_delta, "the largest delta charged per task")
      .def_readonly("min_exact_epsilon", &TaskPolicy::min_exact_epsilon,
                    "the smallest epsilon a trusted or tagg task may be charged")
      .def_readonly("assumed_honest_shares", &TaskPolicy::assumed_honest_shares,
                    "the noise shares of a dist sum assumed honest (0: the task's threshold)")
      .def_readonly("min_assumed_dropout_ppm", &TaskPolicy::min_assumed_dropout_ppm,
                    "the least dropout rate (ppm) a sparse graph is judged at")
      .def_readonly("min_assumed_corrupt_ppm", &TaskPolicy::min_assumed_corrupt_ppm,
                    "the least corrupt fraction (ppm) a sparse graph is judged at")
      .def(
          "charges",
          [](const TaskPolicy& p, TaskArg task, OptionalPathArg base_dir) {
            py::list out;
            for (const fedstat_v1_Task& t : device_tasks(task, base_dir)) {
              const client::PolicyCharge c = device_charge(p, t);
              out.append(py::make_tuple(c.epsilon, c.delta));
            }
            return out;
          },
          py::arg("task"), py::kw_only(), py::arg("base_dir") = py::none(),
          "[(epsilon, delta)] a device with this policy is charged for `task` — a task "
          "declaration as fedstat-server's config holds it (a dict or JSON text; file names "
          "relative to base_dir, default the working directory), planned by the server's own "
          "planner — one pair per Task the devices receive (a heterogeneity task: both stages), as "
          "the policy weighs it: what the device's noise gives, never less than declared (dist: at "
          "min(threshold, assumed_honest_shares) shares; a heterogeneity stage's RDP curve "
          "converted at the task's delta); trust none: (0, 0). A declaration the server refuses, "
          "or a Task the device refuses, is a ValueError.")
      .def(
          "check",
          [](const TaskPolicy& p, TaskArg task, OptionalPathArg base_dir) -> OptionalStrResult {
            for (const fedstat_v1_Task& t : device_tasks(task, base_dir)) {
              secagg::SecAggThreatModel floor;
              floor.dropout_ppm = p.min_assumed_dropout_ppm;
              floor.corrupt_ppm = p.min_assumed_corrupt_ppm;
              if (!client::validate_task(t, client::all_task_kinds(), floor).ok()) {
                return py::str("task_refused");
              }
              if (!client::answers_kind(p, t.kind)) return py::str("task_kind");
              const Result<client::DeviceSpend> spend =
                  client::device_spend(t, client::all_task_kinds(), p.assumed_honest_shares);
              if (!spend.ok()) return py::str("task_refused");
              const client::PolicyRefusal refusal = client::check_task_policy(
                  p, t.trust, client::policy_charge(spend.value(), t.delta));
              if (const char* name = refusal_name(refusal)) return py::str(name);
            }
            return py::none();
          },
          py::arg("task"), py::kw_only(), py::arg("base_dir") = py::none(),
          "None when a device with this policy answers `task` (a declaration, as for charges), "
          "else why it declines: \"task_refused\" (the device's own checks refuse the Task), or "
          "the policy's rule — \"task_kind\", \"trust_model\", \"epsilon_above_max\", "
          "\"delta_above_max\", \"exact_epsilon_below_min\" — for the first Task (heterogeneity: "
          "stage 1, then 2) it declines. It models the checks on the Task and the policy only: "
          "not the device's check of the TaskData (the query points, the initial model, the "
          "means), its memory, its budget, a task it was already charged for, nor the declines "
          "that depend on its data (none held, or none that fits), which come after the charge "
          "and keep it. None means the policy lets the task through, not that a device answers "
          "it. A declaration the server refuses is a ValueError.")
      .def("__repr__", [](const TaskPolicy& p) {
        std::string names;
        for (py::handle n : accepted_names(p.accepted_trust)) {
          names += (names.empty() ? "'" : ", '") + n.cast<std::string>() + "'";
        }
        return "TaskPolicy(accept=(" + names +
               "), max_epsilon=" + py::repr(py::float_(p.max_epsilon)).cast<std::string>() +
               ", max_delta=" + py::repr(py::float_(p.max_delta)).cast<std::string>() +
               ", min_exact_epsilon=" +
               py::repr(py::float_(p.min_exact_epsilon)).cast<std::string>() +
               ", assumed_honest_shares=" + std::to_string(p.assumed_honest_shares) +
               ", answer=" + py::repr(answered_names(p.answered_kinds)).cast<std::string>() +
               ", min_assumed_dropout_ppm=" + std::to_string(p.min_assumed_dropout_ppm) +
               ", min_assumed_corrupt_ppm=" + std::to_string(p.min_assumed_corrupt_ppm) + ")";
      });
}

}  // namespace python
}  // namespace fedstat
