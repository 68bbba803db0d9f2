// The Python module's parts, one per file, each adding its classes and functions to the module
// (module.cpp calls them in this order, so the types a later part takes are registered first).
//   bind_noise         exact samplers: skellam, poisson, discrete_laplace, discrete_gaussian,
//                      polya_share, and rational_at_least (sdk/noise)
//   bind_privacy       the accountants (sdk/privacy/accountants.h)
//   bind_data          ItemCounts, SeededBits, seed_from_u64, EmulatedClients,
//                      split_across_clients (host_server/estimate: item_counts, client_emulation)
//   bind_sketch        SketchParams, params_for_budget, SketchReport, MergedSketch,
//                      merge_reports, sketch_clients (sdk/sketch, tv_estimator.h)
//   bind_tv            estimate_tv, exact_tv (tv_estimator.h)
//   bind_dist_shift    the DIST data-shift task: HashedTvEstimate, estimate_hashed_tv,
//                      signed_sum, bucket_counts (hashed_tv.h); DistShiftConfig,
//                      dist_shift_noise_scale, dist_shift_device_vector, dist_shift_clients
//                      (dist_shift.h)
//   bind_kl            plan_kl, KlSums, collect_kl_sums, estimate_kl, exact_kl (kl_estimator.h)
//   bind_heterogeneity estimate_heterogeneity, exact_heterogeneity, read_client_vectors
//                      (heterogeneity.h)
//   bind_policy        TaskPolicy: a device's task policy and its check (sdk/client/task_policy.h)
// Memory: none of their own. Paper: as the headers they bind.
#ifndef FEDSTAT_PYTHON_SRC_BINDINGS_H_
#define FEDSTAT_PYTHON_SRC_BINDINGS_H_

#include <pybind11/pybind11.h>

namespace fedstat {
namespace python {

void bind_noise(pybind11::module_& m);
void bind_privacy(pybind11::module_& m);
void bind_data(pybind11::module_& m);
void bind_sketch(pybind11::module_& m);
void bind_tv(pybind11::module_& m);
void bind_dist_shift(pybind11::module_& m);
void bind_kl(pybind11::module_& m);
void bind_heterogeneity(pybind11::module_& m);
void bind_policy(pybind11::module_& m);

}  // namespace python
}  // namespace fedstat

#endif  // FEDSTAT_PYTHON_SRC_BINDINGS_H_
