// PRIEST-KLD on the host (host_server/estimate/kl_estimator.h, 000 §4): the public plan
// (plan_kl), the per-round sums (KlSums: from collect_kl_sums over emulated clients, or from
// arrays a server released), estimate_kl under the four trust models, and exact_kl.
// Privacy parameters are explicit: a noised model (trusted, tagg, dist) needs `epsilon`
// (delta defaults to fedstat-kl's 1e-6), and model "none" refuses them, as fedstat-kl does.
// Noise: the CSPRNG, or seeded by noise_seed for measurements; with noise_seed = N, collect_kl_sums
// and estimate_kl draw what `fedstat-kl --evaluate --noise-seed N` draws (clients' streams 1 + c,
// the host's stream 0).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

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

KlSums sums_from_arrays(ArrayArg counts, ArrayArg totals) {
  KlSums sums;
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

  py::class_<KlSums>(m, "KlSums", "Per round: A_t (the clients' summed counts) and N_t (totals).")
      .def(py::init(&sums_from_arrays), py::arg("counts"), py::arg("totals"))
      .def_property_readonly("counts", [](const KlSums& s) { return to_array(s.counts); })
      .def_property_readonly("totals", [](const KlSums& s) {
        return to_array(std::vector<int64_t>(s.totals.begin(), s.totals.end()));
      });

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
        py::gil_scoped_release unlocked;
        return host::collect_kl_sums(plan, clients.clients, options, noise, secure);
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
      [](const KlPlan& plan, const KlSums& sums, const std::string& model, double lam, double tau,
         OptionalFloatArg epsilon, OptionalFloatArg delta, const std::string& calibration,
         OptionalIntArg noise_seed) {
        const host::KlOptions options = kl_options(model, lam, tau, epsilon, delta, calibration);
        check_matches(plan, sums);
        host::NoiseBits noise = noise_bits(noise_seed, "noise_seed");
        py::gil_scoped_release unlocked;
        return host::estimate_kl(plan, sums, options, noise.stream(0));
      },
      py::arg("plan"), py::arg("sums"), py::kw_only(),
      py::arg("model") = host::kl_model_name(host::kKlDefaultModel), py::arg("lam") = 0.1,
      py::arg("tau") = 1e-6, py::arg("epsilon") = py::none(), py::arg("delta") = py::none(),
      py::arg("calibration") = "analytic", py::arg("noise_seed") = py::none(),
      "D_KL(Pi || P) from the plan and the sums under model none, trusted, tagg or dist (default "
      "dist, as fedstat-kl; epsilon=None is its 2, delta=None its 1e-6; model 'none' refuses "
      "both). Give collect_kl_sums the same model, epsilon and delta. "
      "RuntimeError for a round whose clients hold nothing, and (model none) for a point where "
      "P has no mass.");

  py::class_<host::KlExact>(m, "KlExact", "The exact divergence (evaluation only).")
      .def_readonly("divergence", &host::KlExact::divergence, "+inf when not covered")
      .def_readonly("covered", &host::KlExact::covered, "P > 0 on all of supp Pi")
      .def_readonly("support_mass", &host::KlExact::support_mass, "P(supp Pi)");
  m.def("exact_kl", &host::exact_kl, py::arg("reference"), py::arg("p"),
        "The exact D_KL(reference || p) of two ItemCounts.");
}

}  // namespace python
}  // namespace fedstat
