// PRIEST-KLD on the host (host_server/estimate/kl_estimator.h, 000 §4): the public plan
// (plan_kl), the per-round sums (KlSums: from collect_kl_sums over emulated clients, or from
// arrays a server released), estimate_kl under the four trust models, and exact_kl.
// Privacy parameters: a noised model (trusted, tagg, dist) takes `epsilon` (None: fedstat-kl's 2)
// and `delta` (None: its 1e-6); model "none" refuses them, as fedstat-kl does.
// Sums remember how they were collected (KlSumsRecord): estimate_kl's model=None is the sums'
// model (and, for the model they were collected under, its epsilon and delta), and an estimate
// that would misread them is refused — dist on sums that carry no client noise would label exact
// sums private; trusted/tagg/none on dist sums would noise them twice; dist at another epsilon or
// delta would state a privacy the sums' noise does not give. Sums built from arrays (a server's
// release) have no record: estimate_kl then needs the model named.
// Noise: the CSPRNG, or seeded by noise_seed for measurements; with noise_seed = N, collect_kl_sums
// and estimate_kl draw what `fedstat-kl --evaluate --noise-seed N` draws (clients' streams 1 + c,
// the host's stream 0).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "host_server/estimate/client_emulation.h"
#include "host_server/estimate/kl_estimator.h"
#include "python/src/bind_data.h"
#include "python/src/bindings.h"
#include "python/src/conversions.h"

namespace fedstat {
namespace python {

namespace {

using host::KlEstimate;
using host::KlModel;
using host::KlPlan;
using host::KlSums;

// host::KlSums and, when collect_kl_sums made them, the options they were collected under.
struct KlSumsRecord : KlSums {
  std::optional<host::KlOptions> collected;
};

host::KlOptions kl_options(const std::string& model, double lam, double tau,
                           OptionalFloatArg epsilon, OptionalFloatArg delta,
                           const std::string& calibration) {
  host::KlOptions options;
  options.model = host::parse_kl_model(model);
  options.lambda = lam;
  options.tau = tau;
  if (options.model == KlModel::kNone) {
    if (!epsilon.is_none() || !delta.is_none()) {
      throw py::value_error(
          "model 'none' adds no noise: epsilon and delta apply to trusted, tagg and dist");
    }
  } else {
    // None: fedstat-kl's defaults (tests/python/test_module_contract.py).
    options.epsilon = epsilon.is_none() ? host::kKlDefaultEpsilon : to_double(epsilon, "epsilon");
    if (!delta.is_none()) options.delta = to_double(delta, "delta");
  }
  if (calibration != "analytic" && calibration != "classical") {
    throw py::value_error("calibration must be 'analytic' or 'classical', not '" + calibration +
                          "'");
  }
  options.calibration = calibration == "analytic" ? host::GaussianCalibration::kAnalytic
                                                  : host::GaussianCalibration::kClassical;
  host::validate_kl_options(options);
  return options;
}

KlSumsRecord sums_from_arrays(ArrayArg counts, ArrayArg totals) {
  KlSumsRecord sums;
  sums.counts = to_integers(counts, "counts", INT64_MIN, INT64_MAX);
  for (int64_t t : to_integers(totals, "totals", 0, INT64_MAX)) {
    sums.totals.push_back(static_cast<uint64_t>(t));
  }
  if (sums.counts.size() != sums.totals.size()) {
    throw py::value_error("counts and totals differ in length");
  }
  return sums;
}

void check_matches(const KlPlan& plan, const KlSums& sums) {
  if (sums.counts.size() != plan.points.size()) {
    throw py::value_error("the sums have " + std::to_string(sums.counts.size()) +
                          " rounds; the plan has " + std::to_string(plan.points.size()));
  }
}

// The options estimate_kl runs with: `model` (None: the sums' own) checked against how the sums
// were collected, where that is known.
host::KlOptions estimate_options(const KlSumsRecord& sums, const std::optional<std::string>& model,
                                 double lam, double tau, OptionalFloatArg epsilon,
                                 OptionalFloatArg delta, const std::string& calibration) {
  const std::optional<host::KlOptions>& c = sums.collected;
  if (!model && !c) {
    throw py::value_error(
        "these sums were built from arrays: name the model they were collected under, "
        "estimate_kl(plan, sums, model='dist' | 'trusted' | 'tagg' | 'none')");
  }
  const std::string name = model ? *model : host::kl_model_name(c->model);
  const bool dist = name == host::kl_model_name(KlModel::kDist);
  // The model they were collected under, epsilon/delta left out: the collection's (dist: the
  // noise the sums carry; trusted, tagg: what the user declared when collecting).
  if (c && c->model != KlModel::kNone && name == host::kl_model_name(c->model)) {
    if (epsilon.is_none()) epsilon = py::float_(c->epsilon);
    if (delta.is_none()) delta = py::float_(c->delta);
  }
  host::KlOptions options = kl_options(name, lam, tau, epsilon, delta, calibration);
  if (!c) return options;
  const std::string collected = host::kl_model_name(c->model);
  if (dist != (c->model == KlModel::kDist)) {
    throw py::value_error(
        "the sums were collected under model '" + collected + "' " +
        (dist ? "and carry no client noise: model 'dist' would label exact sums private"
              : "and carry the clients' noise: model '" + name + "' would add noise again") +
        "; estimate them under '" + collected + "' (or leave model out)");
  }
  if (dist && (options.epsilon != c->epsilon || options.delta != c->delta)) {
    throw py::value_error(
        "the sums were collected under dist at epsilon " + text(py::float_(c->epsilon)) +
        ", delta " + text(py::float_(c->delta)) +
        ": estimate them with the same (leave epsilon and delta out to take the sums')");
  }
  return options;
}

}  // namespace

void bind_kl(py::module_& m) {
  py::class_<KlPlan>(m, "KlPlan",
                     "The public plan: T points sampled from the reference, Pi at each, and the "
                     "clients asked in each round.")
      .def_readonly("clients", &KlPlan::clients)
      .def_property_readonly("points", [](const KlPlan& p) { return to_array(p.points); })
      .def_property_readonly("reference", [](const KlPlan& p) { return to_array(p.reference); })
      .def_property_readonly(
          "round_clients",
          [](const KlPlan& p) -> OptionalArrayListResult {
            if (p.every_client_every_round) return py::none();
            py::list rounds;
            for (const auto& r : p.round_clients) rounds.append(to_array(r));
            return std::move(rounds);
          },
          "per round the clients asked (None: every client every round)")
      .def_property_readonly(
          "most_asked",
          [](const KlPlan& p) { return py::make_tuple(p.most_asked[0], p.most_asked[1]); })
      .def("__len__", [](const KlPlan& p) { return p.points.size(); });

  m.def(
      "plan_kl",
      [](const host::ItemCounts& reference, IntArg rounds, IntArg clients, double rate,
         host::SeededBits& bits) {
        return host::plan_kl(reference,
                             static_cast<uint32_t>(to_whole_number(rounds, "rounds", 1, 1000000)),
                             static_cast<uint32_t>(to_whole_number(clients, "clients", 1, 100000)),
                             rate, bits.bits());
      },
      py::arg("reference"), py::arg("rounds"), py::arg("clients"), py::arg("rate"), py::arg("bits"),
      "T = rounds points from the reference and the clients of each round (each with "
      "probability `rate`). fedstat-kl --seed S uses SeededBits(S, 2**32).");

  py::class_<KlSumsRecord>(m, "KlSums",
                           "Per round: A_t (the clients' summed counts) and N_t (totals), and the "
                           "model they were collected under (collect_kl_sums; None when built "
                           "from arrays).")
      .def(py::init(&sums_from_arrays), py::arg("counts"), py::arg("totals"))
      .def_property_readonly("counts", [](const KlSumsRecord& s) { return to_array(s.counts); })
      .def_property_readonly(
          "totals",
          [](const KlSumsRecord& s) {
            return to_array(std::vector<int64_t>(s.totals.begin(), s.totals.end()));
          })
      .def_property_readonly(
          "model",
          [](const KlSumsRecord& s) -> OptionalStrResult {
            if (!s.collected) return py::none();
            return py::str(host::kl_model_name(s.collected->model));
          },
          "the model collect_kl_sums used (None: built from arrays)");

  m.def(
      "collect_kl_sums",
      [](const KlPlan& plan, const ClientSet& clients, const std::string& model, double lam,
         double tau, OptionalFloatArg epsilon, OptionalFloatArg delta,
         const std::string& calibration, OptionalIntArg noise_seed, bool secure) {
        const host::KlOptions options = kl_options(model, lam, tau, epsilon, delta, calibration);
        if (clients.clients.size() != plan.clients) {
          throw py::value_error("the plan is for " + std::to_string(plan.clients) +
                                " clients, not " + std::to_string(clients.clients.size()));
        }
        host::NoiseBits noise = noise_bits(noise_seed, "noise_seed");
        KlSumsRecord sums;
        {
          py::gil_scoped_release unlocked;
          static_cast<KlSums&>(sums) =
              host::collect_kl_sums(plan, clients.clients, options, noise, secure);
        }
        sums.collected = options;
        return sums;
      },
      py::arg("plan"), py::arg("clients"), py::kw_only(),
      py::arg("model") = host::kl_model_name(host::kKlDefaultModel), py::arg("lam") = 0.1,
      py::arg("tau") = 1e-6, py::arg("epsilon") = py::none(), py::arg("delta") = py::none(),
      py::arg("calibration") = "analytic", py::arg("noise_seed") = py::none(),
      py::arg("secure") = false,
      "Every client of every round answers through the SDK (dist: with its Skellam share; "
      "secure: summed by a real secure-aggregation session). The defaults are fedstat-kl's: "
      "model dist; epsilon=None is 2, delta=None 1e-6 (both refused under model 'none').");

  py::class_<KlEstimate>(m, "KlEstimate", "A PRIEST-KLD release and its public parameters.")
      .def_readonly("estimate", &KlEstimate::estimate)
      .def_readonly("noiseless", &KlEstimate::noiseless,
                    "the same estimate without the host's noise (measurements only)")
      .def_readonly("sensitivity", &KlEstimate::sensitivity)
      .def_readonly("sigma", &KlEstimate::sigma)
      .def_readonly("grid", &KlEstimate::grid)
      .def_readonly("estimate_sd", &KlEstimate::estimate_sd)
      .def_readonly("dist_lambda", &KlEstimate::dist_lambda, "dist: Skellam mu in every sum")
      .def_readonly("clamped", &KlEstimate::clamped, "dist: rounds clamped to tau")
      .def_readonly("clamped_above", &KlEstimate::clamped_above,
                    "dist: rounds clamped to 1 (a summed count above its total)")
      .def("__repr__", [](const KlEstimate& e) {
        return "KlEstimate(estimate=" + text(py::float_(e.estimate)) +
               ", estimate_sd=" + text(py::float_(e.estimate_sd)) + ")";
      });

  m.def(
      "estimate_kl",
      [](const KlPlan& plan, const KlSumsRecord& sums, const std::optional<std::string>& model,
         double lam, double tau, OptionalFloatArg epsilon, OptionalFloatArg delta,
         const std::string& calibration, OptionalIntArg noise_seed) {
        check_matches(plan, sums);
        const host::KlOptions options =
            estimate_options(sums, model, lam, tau, epsilon, delta, calibration);
        host::NoiseBits noise = noise_bits(noise_seed, "noise_seed");
        py::gil_scoped_release unlocked;
        return host::estimate_kl(plan, sums, options, noise.stream(0));
      },
      py::arg("plan"), py::arg("sums"), py::kw_only(), py::arg("model") = py::none(),
      py::arg("lam") = 0.1, py::arg("tau") = 1e-6, py::arg("epsilon") = py::none(),
      py::arg("delta") = py::none(), py::arg("calibration") = "analytic",
      py::arg("noise_seed") = py::none(),
      "D_KL(Pi || P) from the plan and the sums under model none, trusted, tagg or dist. "
      "model=None: the model collect_kl_sums used (its default dist, as fedstat-kl); sums built "
      "from arrays need it named. epsilon=None is fedstat-kl's 2 and delta=None its 1e-6, or the "
      "sums' own under the model they were collected with; model 'none' refuses both. ValueError "
      "for a model that would "
      "misread the sums (dist on sums without client noise, another model on dist sums, dist at "
      "another epsilon or delta); RuntimeError for a round whose clients hold nothing, and "
      "(model none) for a point where P has no mass.");

  py::class_<host::KlExact>(m, "KlExact", "The exact divergence (evaluation only).")
      .def_readonly("divergence", &host::KlExact::divergence, "+inf when not covered")
      .def_readonly("covered", &host::KlExact::covered, "P > 0 on all of supp Pi")
      .def_readonly("support_mass", &host::KlExact::support_mass, "P(supp Pi)");
  m.def("exact_kl", &host::exact_kl, py::arg("reference"), py::arg("p"),
        "The exact D_KL(reference || p) of two ItemCounts.");
}

}  // namespace python
}  // namespace fedstat
