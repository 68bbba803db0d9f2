// Dispersion, Cochran's Q and I² on the host (host_server/estimate/heterogeneity.h, 004 §4):
// estimate_heterogeneity over an (n, d) array of client vectors in [0, 1] under the agm,
// classical, skellam or none mechanism, exact_heterogeneity, and read_client_vectors (the
// fedstat-heterogeneity CSV). The vectors are checked by the SDK's task (NaN, ±inf or a value
// outside [0, 1] is a ValueError naming the client). Privacy parameters are explicit, as in
// bind_kl.cpp (delta defaults to fedstat-heterogeneity's 0.1); noise_seed = N draws what
// `fedstat-heterogeneity --evaluate --noise-seed N` draws.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "host_server/estimate/heterogeneity.h"
#include "python/src/bindings.h"
#include "python/src/conversions.h"
#include "python/src/errors.h"

namespace fedstat {
namespace python {

namespace {

using host::HeterogeneityEstimate;
using host::HeterogeneityMechanism;
using host::StatisticEstimate;

tasks::HeterogeneityConfig config(double p, double max_weight) {
  tasks::HeterogeneityConfig c;
  c.p = p;
  c.max_weight = max_weight;
  return c;
}

py::array_t<double> four(const double (&values)[4]) {
  return to_array(std::vector<double>(values, values + 4));
}

}  // namespace

void bind_heterogeneity(py::module_& m) {
  py::class_<StatisticEstimate>(m, "StatisticEstimate",
                                "A released statistic, its 95% interval (the paper's) and the "
                                "s.d. its final release's noise adds.")
      .def_readonly("estimate", &StatisticEstimate::estimate)
      .def_property_readonly(
          "ci", [](const StatisticEstimate& s) { return py::make_tuple(s.ci.low, s.ci.high); })
      .def_readonly("noise_sd", &StatisticEstimate::noise_sd)
      .def("__repr__", [](const StatisticEstimate& s) {
        return "StatisticEstimate(estimate=" + text(py::float_(s.estimate)) + ", ci=(" +
               text(py::float_(s.ci.low)) + ", " + text(py::float_(s.ci.high)) + "))";
      });

  py::class_<HeterogeneityEstimate>(m, "HeterogeneityEstimate")
      .def_readonly("dispersion", &HeterogeneityEstimate::dispersion)
      .def_readonly("q", &HeterogeneityEstimate::q)
      .def_readonly("i2", &HeterogeneityEstimate::i2)
      .def_property_readonly("sigma", [](const HeterogeneityEstimate& e) { return four(e.sigma); })
      .def_property_readonly("sensitivity",
                             [](const HeterogeneityEstimate& e) { return four(e.sensitivity); })
      .def_property_readonly("grid", [](const HeterogeneityEstimate& e) { return four(e.grid); })
      .def_readonly("xi1_squared", &HeterogeneityEstimate::xi1_squared)
      .def_readonly("eta1_squared", &HeterogeneityEstimate::eta1_squared)
      .def_readonly("skellam_lambda_per_client", &HeterogeneityEstimate::skellam_lambda_per_client);

  m.def(
      "estimate_heterogeneity",
      [](ArrayArg vectors, const std::string& mechanism, OptionalFloatArg epsilon,
         OptionalFloatArg delta, double p, double max_weight, bool secure,
         OptionalIntArg noise_seed) {
        host::HeterogeneityOptions options;
        options.config = config(p, max_weight);
        options.mechanism = host::parse_heterogeneity_mechanism(mechanism);
        options.secure = secure;
        if (options.mechanism == HeterogeneityMechanism::kNone) {
          if (!epsilon.is_none() || !delta.is_none()) {
            throw py::value_error(
                "mechanism 'none' adds no noise: epsilon and delta apply to agm, classical and "
                "skellam");
          }
        } else {
          // None: HeterogeneityOptions' defaults, fedstat-heterogeneity's
          // (tests/python/test_module_contract.py).
          if (!epsilon.is_none()) options.epsilon = to_double(epsilon, "epsilon");
          if (!delta.is_none()) options.delta = to_double(delta, "delta");
        }
        const host::ClientVectors x = to_rows(vectors, "vectors");
        host::NoiseBits noise = noise_bits(noise_seed, "noise_seed");
        py::gil_scoped_release unlocked;
        return host::estimate_heterogeneity(x, options, noise.stream(0));
      },
      py::arg("vectors"), py::kw_only(), py::arg("mechanism") = "agm",
      py::arg("epsilon") = py::none(), py::arg("delta") = py::none(), py::arg("p") = 2.0,
      py::arg("max_weight") = 100.0, py::arg("secure") = false, py::arg("noise_seed") = py::none(),
      "Private dispersion, Q and I^2 of an (n, d) array of client vectors in [0, 1] (n >= 2). "
      "The defaults are fedstat-heterogeneity's: epsilon=None is 0.25 and delta=None 0.1 for a "
      "whole release (both refused under mechanism 'none').");

  py::class_<host::HeterogeneityExact>(m, "HeterogeneityExact",
                                       "The exact statistics (evaluation only).")
      .def_property_readonly("mean",
                             [](const host::HeterogeneityExact& e) { return to_array(e.mean); })
      .def_property_readonly(
          "weighted_mean",
          [](const host::HeterogeneityExact& e) { return to_array(e.weighted_mean); })
      .def_readonly("dispersion", &host::HeterogeneityExact::dispersion)
      .def_readonly("q", &host::HeterogeneityExact::q)
      .def_readonly("i2", &host::HeterogeneityExact::i2)
      .def_readonly("sum_weights", &host::HeterogeneityExact::sum_weights)
      .def_readonly("sum_inverse_weights", &host::HeterogeneityExact::sum_inverse_weights)
      .def_readonly("clipped", &host::HeterogeneityExact::clipped);
  m.def(
      "exact_heterogeneity",
      [](ArrayArg vectors, double p, double max_weight) {
        return host::exact_heterogeneity(to_rows(vectors, "vectors"), config(p, max_weight));
      },
      py::arg("vectors"), py::kw_only(), py::arg("p") = 2.0, py::arg("max_weight") = 100.0);

  m.def(
      "read_client_vectors",
      [](const std::string& path) {
        std::ifstream in(path);
        if (!in) raise_os_error(path);
        host::ClientVectors rows;
        try {
          rows = host::parse_client_vectors(in, path);
        } catch (const std::runtime_error& e) {
          throw py::value_error(e.what());
        }
        std::vector<double> flat;
        for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
        return to_array(flat, rows.size(), rows.empty() ? 0 : rows[0].size());
      },
      py::arg("path"),
      "Reads fedstat-heterogeneity's CSV (one client vector per row, values in [0, 1]) into an "
      "(n, d) float64 array; ValueError names the file, line and field of a malformed one.");
}

}  // namespace python
}  // namespace fedstat
