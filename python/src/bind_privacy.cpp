// The privacy accountants (sdk/privacy/accountants.h) as Python functions on floats and numpy
// arrays. Each forwards to the SDK function of the same meaning; its refusals (NaN, ±inf,
// non-positive values, δ outside (0, 1), targets no λ reaches) become ValueError with the SDK's
// message. Names follow fedstat-privacy: agm_sigma (analytic Gaussian) and gauss_sigma (classical).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <string>
#include <vector>

#include "host_server/estimate/host_common.h"
#include "python/src/bindings.h"
#include "python/src/conversions.h"
#include "sdk/privacy/accountants.h"

namespace fedstat {
namespace python {

namespace {

using privacy::DpFromRdp;
using privacy::Sensitivity;

constexpr uint64_t kMaxBatches = uint64_t{1} << 24;

uint32_t order(IntArg alpha) {
  return static_cast<uint32_t>(to_whole_number(alpha, "alpha", 0, UINT32_MAX));
}
uint32_t clients(IntArg n) {
  return static_cast<uint32_t>(to_whole_number(n, "clients", 0, UINT32_MAX));
}
Span<const Sensitivity> view(const std::vector<Sensitivity>& s) {
  return Span<const Sensitivity>(s.data(), s.size());
}

}  // namespace

void bind_privacy(py::module_& m) {
  py::class_<DpFromRdp>(m, "DpFromRdp", "An (epsilon, delta) guarantee from an RDP curve.")
      .def_readonly("epsilon", &DpFromRdp::epsilon)
      .def_readonly("best_order", &DpFromRdp::best_order, "the Renyi order that gave epsilon")
      .def("__repr__", [](const DpFromRdp& d) {
        return "DpFromRdp(epsilon=" + text(py::float_(d.epsilon)) +
               ", best_order=" + std::to_string(d.best_order) + ")";
      });

  m.def(
      "skellam_rdp",
      [](IntArg alpha, double l1, double l2, double mu) {
        return host::value_or_throw(privacy::skellam_rdp(order(alpha), Sensitivity{l1, l2}, mu),
                                    "skellam_rdp");
      },
      py::arg("alpha"), py::arg("l1"), py::arg("l2"), py::arg("mu"),
      "RDP epsilon(alpha) of Sk(mu) noise (mu = total Poisson mean) for L1/L2 sensitivities.");
  m.def(
      "skellam_rdp_mixture",
      [](IntArg alpha, ArrayArg sensitivities, double mu) {
        const auto s = to_sensitivities(sensitivities, "sensitivities");
        return host::value_or_throw(privacy::skellam_rdp_mixture(order(alpha), view(s), mu),
                                    "skellam_rdp_mixture");
      },
      py::arg("alpha"), py::arg("sensitivities"), py::arg("mu"),
      "RDP of the mixture over equally likely batches; sensitivities: an (m, 2) array of "
      "(l1, l2).");
  m.def(
      "rdp_to_dp",
      [](IntArg alpha, double rdp, double delta) {
        return host::value_or_throw(privacy::rdp_to_dp(order(alpha), rdp, delta), "rdp_to_dp");
      },
      py::arg("alpha"), py::arg("rdp"), py::arg("delta"),
      "(epsilon, delta) from an RDP value at one order (Canonne, Kamath & Steinke 2020).");
  m.def(
      "skellam_epsilon",
      [](double lam, IntArg n, double l1, double l2, double delta) {
        return host::value_or_throw(
            privacy::skellam_epsilon(lam, clients(n), Sensitivity{l1, l2}, delta),
            "skellam_epsilon");
      },
      py::arg("lam"), py::arg("clients"), py::arg("l1"), py::arg("l2"), py::arg("delta"),
      "Epsilon (and the best order) of `clients` clients each adding Sk(lam): the sum carries "
      "Sk(clients*lam). As `fedstat-privacy skellam-epsilon`.");
  m.def(
      "skellam_epsilon_mixture",
      [](double lam, IntArg n, ArrayArg sensitivities, double delta) {
        const auto s = to_sensitivities(sensitivities, "sensitivities");
        return host::value_or_throw(
            privacy::skellam_epsilon_mixture(lam, clients(n), view(s), delta),
            "skellam_epsilon_mixture");
      },
      py::arg("lam"), py::arg("clients"), py::arg("sensitivities"), py::arg("delta"));
  m.def(
      "skellam_epsilon_composed",
      [](double lam, IntArg n, ArrayArg releases, double delta) {
        const auto s = to_sensitivities(releases, "releases");
        return host::value_or_throw(
            privacy::skellam_epsilon_composed(lam, clients(n), view(s), delta),
            "skellam_epsilon_composed");
      },
      py::arg("lam"), py::arg("clients"), py::arg("releases"), py::arg("delta"),
      "Epsilon of several releases, each coordinate carrying Sk(clients*lam); releases: an "
      "(m, 2) array of (l1, l2).");
  m.def(
      "skellam_lambda",
      [](double epsilon, double delta, double l1, double l2, IntArg n) {
        return host::value_or_throw(
            privacy::skellam_lambda(epsilon, delta, Sensitivity{l1, l2}, clients(n)),
            "skellam_lambda");
      },
      py::arg("epsilon"), py::arg("delta"), py::arg("l1"), py::arg("l2"), py::arg("clients"),
      "The smallest per-client lambda whose epsilon is at most `epsilon`. As `fedstat-privacy "
      "skellam-lambda`.");
  m.def(
      "skellam_lambda_mixture",
      [](double epsilon, double delta, ArrayArg sensitivities, IntArg n) {
        const auto s = to_sensitivities(sensitivities, "sensitivities");
        return host::value_or_throw(
            privacy::skellam_lambda_mixture(epsilon, delta, view(s), clients(n)),
            "skellam_lambda_mixture");
      },
      py::arg("epsilon"), py::arg("delta"), py::arg("sensitivities"), py::arg("clients"));
  m.def(
      "skellam_lambda_composed",
      [](double epsilon, double delta, ArrayArg releases, IntArg n) {
        const auto s = to_sensitivities(releases, "releases");
        return host::value_or_throw(
            privacy::skellam_lambda_composed(epsilon, delta, view(s), clients(n)),
            "skellam_lambda_composed");
      },
      py::arg("epsilon"), py::arg("delta"), py::arg("releases"), py::arg("clients"));
  m.def(
      "agm_sigma",
      [](double epsilon, double delta, double sensitivity) {
        return host::value_or_throw(privacy::gaussian_sigma_analytic(epsilon, delta, sensitivity),
                                    "agm_sigma");
      },
      py::arg("epsilon"), py::arg("delta"), py::arg("sensitivity"),
      "Analytic Gaussian mechanism sigma (Balle & Wang 2018). As `fedstat-privacy agm-sigma`.");
  m.def(
      "gauss_sigma",
      [](double epsilon, double delta, double sensitivity) {
        return host::value_or_throw(privacy::gaussian_sigma_classical(epsilon, delta, sensitivity),
                                    "gauss_sigma");
      },
      py::arg("epsilon"), py::arg("delta"), py::arg("sensitivity"),
      "Classical Gaussian mechanism sigma (epsilon < 1). As `fedstat-privacy gauss-sigma`.");
  m.def(
      "gaussian_delta",
      [](double epsilon, double sigma, double sensitivity) {
        return host::value_or_throw(privacy::gaussian_delta(epsilon, sigma, sensitivity),
                                    "gaussian_delta");
      },
      py::arg("epsilon"), py::arg("sigma"), py::arg("sensitivity"),
      "Delta of the Gaussian mechanism at sigma (the curve agm_sigma inverts).");
  m.def(
      "discretised_sensitivity",
      [](double l2, double gamma, double beta, IntArg dimension) {
        // The SDK function is a formula with no checks: a negative or NaN input would give an
        // understated sensitivity that later calibrations accept.
        if (!(std::isfinite(l2) && l2 >= 0 && std::isfinite(gamma) && gamma > 0 &&
              std::isfinite(beta) && beta >= 0)) {
          throw py::value_error(
              "discretised_sensitivity: l2 and beta must be finite and >= 0, gamma finite and > 0");
        }
        const Sensitivity s = privacy::discretised_sensitivity(
            l2, gamma, beta,
            static_cast<uint32_t>(to_whole_number(dimension, "dimension", 1, UINT32_MAX)));
        return py::make_tuple(s.l1, s.l2);
      },
      py::arg("l2"), py::arg("gamma"), py::arg("beta"), py::arg("dimension"),
      "(l1, l2) of 002 section 4.1's discretised update.");
  m.def(
      "rsgd_ar_sensitivities",
      [](double convexity, double smoothness, IntArg epochs, double eta0, double batch_size,
         double gradient_bound, IntArg batches) {
        std::vector<double> out(to_whole_number(batches, "batches", 1, kMaxBatches));
        host::check(privacy::rsgd_ar_sensitivities(
                        convexity, smoothness,
                        static_cast<uint32_t>(to_whole_number(epochs, "epochs", 0, UINT32_MAX)),
                        eta0, batch_size, gradient_bound, Span<double>(out.data(), out.size())),
                    "rsgd_ar_sensitivities");
        return to_array(out);
      },
      py::arg("convexity"), py::arg("smoothness"), py::arg("epochs"), py::arg("eta0"),
      py::arg("batch_size"), py::arg("gradient_bound"), py::arg("batches"),
      "002 Algorithm 4 as printed: the L2 sensitivity per batch j (an array of `batches`).");
  m.def(
      "rsgd_ar_schedule_sensitivities",
      [](double convexity, double smoothness, IntArg epochs, IntArg averaging_interval, double eta0,
         double batch_size, double gradient_bound, IntArg batches) {
        std::vector<double> out(to_whole_number(batches, "batches", 1, kMaxBatches));
        host::check(privacy::rsgd_ar_schedule_sensitivities(
                        convexity, smoothness,
                        static_cast<uint32_t>(to_whole_number(epochs, "epochs", 0, UINT32_MAX)),
                        static_cast<uint32_t>(to_whole_number(averaging_interval,
                                                              "averaging_interval", 0, UINT32_MAX)),
                        eta0, batch_size, gradient_bound, Span<double>(out.data(), out.size())),
                    "rsgd_ar_schedule_sensitivities");
        return to_array(out);
      },
      py::arg("convexity"), py::arg("smoothness"), py::arg("epochs"), py::arg("averaging_interval"),
      py::arg("eta0"), py::arg("batch_size"), py::arg("gradient_bound"), py::arg("batches"),
      "The sensitivities of the schedule the SDK's trainer runs (resets and window averages).");
  m.def(
      "discrete_laplace_epsilon",
      [](double scale, double l1_sensitivity) {
        return host::value_or_throw(privacy::discrete_laplace_epsilon(scale, l1_sensitivity),
                                    "discrete_laplace_epsilon");
      },
      py::arg("scale"), py::arg("l1_sensitivity"));
  m.def(
      "truncated_discrete_laplace_delta",
      [](double scale, IntArg bound, IntArg l1_sensitivity) {
        return host::value_or_throw(
            privacy::truncated_discrete_laplace_delta(
                scale, to_whole_number(bound, "bound", 0, privacy::kMaxTruncationBound),
                to_whole_number(l1_sensitivity, "l1_sensitivity", 0, UINT64_MAX)),
            "truncated_discrete_laplace_delta");
      },
      py::arg("scale"), py::arg("bound"), py::arg("l1_sensitivity"));
}

}  // namespace python
}  // namespace fedstat
