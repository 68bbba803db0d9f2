// D_TV from merged sketches (host_server/estimate/tv_estimator.h, 001 §4.3–4.6): estimate_tv
// with the host's options (keyword arguments, defaults as fedstat-tv's), TvEstimate, exact_tv.
#include <pybind11/pybind11.h>

#include <string>

#include "host_server/estimate/tv_estimator.h"
#include "python/src/bindings.h"
#include "python/src/conversions.h"

namespace fedstat {
namespace python {

void bind_tv(py::module_& m) {
  using host::TvEstimate;
  py::class_<TvEstimate>(m, "TvEstimate", "D_TV estimates and what the estimators used.")
      .def_readonly("hh", &TvEstimate::hh, "heavy-hitter estimate of D_TV")
      .def_readonly("topk", &TvEstimate::topk, "top-k estimate of D_TV")
      .def_readonly("candidates", &TvEstimate::candidates, "candidates after pruning")
      .def_readonly("tau", &TvEstimate::tau, "the HH threshold used")
      .def_readonly("rank", &TvEstimate::rank, "the top-k rank r0 used")
      .def_readonly("window", &TvEstimate::window, "the top-k window used")
      .def_readonly("noise", &TvEstimate::noise,
                    "r.m.s. per counter of what the candidates leave unexplained")
      .def("__repr__", [](const TvEstimate& e) {
        return "TvEstimate(topk=" + text(py::float_(e.topk)) + ", hh=" + text(py::float_(e.hh)) +
               ")";
      });

  m.def(
      "estimate_tv",
      [](const host::MergedSketch& p, const host::MergedSketch& q, IntArg max_candidates,
         bool least_squares, double tau, IntArg rank, IntArg window, double noise_margin,
         IntArg domain) {
        host::TvOptions options;
        options.max_candidates =
            static_cast<size_t>(to_whole_number(max_candidates, "max_candidates", 0, SIZE_MAX));
        options.least_squares = least_squares;
        options.tau = tau;
        options.rank = static_cast<uint32_t>(to_whole_number(rank, "rank", 0, UINT32_MAX));
        options.window = static_cast<uint32_t>(to_whole_number(window, "window", 0, UINT32_MAX));
        options.noise_margin = noise_margin;
        options.domain = static_cast<uint32_t>(to_whole_number(domain, "domain", 0, UINT32_MAX));
        py::gil_scoped_release unlocked;
        return host::estimate_tv(p, q, options);
      },
      py::arg("p"), py::arg("q"), py::kw_only(), py::arg("max_candidates") = 0,
      py::arg("least_squares") = true, py::arg("tau") = 0.0, py::arg("rank") = 0,
      py::arg("window") = 0, py::arg("noise_margin") = 4.0, py::arg("domain") = 0,
      "D_TV(P, Q) from two merged sketches with the HH and top-k estimators (fedstat-tv's "
      "options; 0 means the default). ValueError for sketches of different parameters, an empty "
      "distribution or options out of range.");
  m.def("exact_tv", &host::exact_tv, py::arg("p"), py::arg("q"),
        "The exact D_TV = 1/2 sum |P(x) - Q(x)| of two ItemCounts (evaluation only).");
}

}  // namespace python
}  // namespace fedstat
