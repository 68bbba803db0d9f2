// The DIST data-shift task (issue 41, docs/data_shift_dp.md): hashed-domain histograms with
// distributed discrete-Laplace noise.
//   host side (host_server/estimate/hashed_tv.h)
//     HashedTvEstimate     tv, total_p, total_q, buckets, negative_p, threshold
//     estimate_hashed_tv   ½·Σ_b |p_b/N_p − q_b/N_q| over the clamped (or thresholded) buckets
//     signed_sum           each word of a sum mod 2^bits as a two's-complement number
//     bucket_counts        the exact bucket counts of item counts under the task seed
//   device side (host_server/estimate/dist_shift.h: the SDK's own builder)
//     DistShiftConfig           B, bits, m, max_clients, s, T (checked as the server checks them)
//     dist_shift_noise_scale    T = Δ/ε, Δ = 1 (item level) or 2m (user level)
//     dist_shift_device_vector  one device's vector (B words < 2^bits) from its histogram
//     dist_shift_clients        every emulated client's vector, client c's noise from stream 1 + c
// Words are uint64 numpy arrays, counts int64. Memory: B words per vector (8·B bytes), plus the
// device's histogram (16 bytes per distinct item). Paper: 001 §4.7 (distributed noise), Goryczka &
// Xiong 2015 (Pólya shares).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <string>
#include <vector>

#include "host_server/estimate/client_emulation.h"
#include "host_server/estimate/dist_shift.h"
#include "host_server/estimate/hashed_tv.h"
#include "host_server/estimate/host_common.h"
#include "python/src/bind_data.h"
#include "python/src/bindings.h"
#include "python/src/conversions.h"
#include "sdk/noise/polya.h"
#include "sdk/sketch/hashed_histogram.h"

namespace fedstat {
namespace python {

namespace {

using host::DistShiftConfig;

uint32_t to_u32(py::handle value, const std::string& name, uint32_t low, uint32_t high) {
  return static_cast<uint32_t>(to_whole_number(value, name, low, high));
}

uint32_t to_buckets(py::handle value) {
  return to_u32(value, "buckets", 1, sketch::kMaxHashedBuckets);
}

// A one-dimensional array of words, each in [0, 2^bits) (a word at or above 2^bits is refused,
// not reduced: it cannot come from a sum modulo 2^bits).
std::vector<uint64_t> to_words(py::handle values, const std::string& name, uint32_t bits) {
  const py::array array(py::module_::import("numpy").attr("asarray")(values));
  if (array.ndim() != 1) {
    throw py::value_error(name + " must be one-dimensional, not " + std::to_string(array.ndim()) +
                          "-dimensional");
  }
  std::vector<uint64_t> out;
  const char kind = array.dtype().kind();
  if (kind == 'u') {
    const auto u = py::array_t<uint64_t, py::array::c_style | py::array::forcecast>::ensure(array);
    out.assign(u.data(), u.data() + u.size());
  } else {
    for (int64_t v : to_integers(array, name, 0, INT64_MAX))
      out.push_back(static_cast<uint64_t>(v));
  }
  if (bits < 64) {
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] >> bits) {
        throw py::value_error(name + "[" + std::to_string(i) + "] = " + std::to_string(out[i]) +
                              " is not below 2^bits = 2^" + std::to_string(bits));
      }
    }
  }
  return out;
}

double finite_at_least(double value, const std::string& name, double low) {
  if (!std::isfinite(value) || value < low) {
    throw py::value_error(name + " must be a finite number >= " + text(py::float_(low)) + ", not " +
                          text(py::float_(value)));
  }
  return value;
}

DistShiftConfig make_config(IntArg buckets, IntArg bits, IntArg max_events, IntArg max_clients,
                            IntArg shares, OptionalFloatArg noise_scale) {
  DistShiftConfig c;
  c.buckets = to_buckets(buckets);
  c.bits = to_u32(bits, "bits", 0, UINT32_MAX);
  if (c.bits != 32 && c.bits != 64) {
    throw py::value_error("bits must be 32 or 64, not " + std::to_string(c.bits));
  }
  c.max_events = to_u32(max_events, "max_events", 0, UINT32_MAX);
  c.max_clients = to_u32(max_clients, "max_clients", 1, UINT32_MAX);
  c.shares = to_u32(shares, "shares", 1, UINT32_MAX);
  if (noise_scale.is_none()) {
    throw py::value_error(
        "noise_scale is required: T = dist_shift_noise_scale(epsilon, max_events)");
  }
  c.noise_scale = to_double(noise_scale, "noise_scale");
  if (!std::isfinite(c.noise_scale) || c.noise_scale <= 0 ||
      c.noise_scale > static_cast<double>(noise::kMaxPolyaScale)) {
    throw py::value_error("noise_scale must be a finite number in (0, " +
                          std::to_string(noise::kMaxPolyaScale) + "], not " +
                          text(py::float_(c.noise_scale)) + " (raise epsilon)");
  }
  host::check_dist_shift(c);  // the rest (the clamp ≥ 1): the server's own check
  return c;
}

std::string describe(const DistShiftConfig& c) {
  return "DistShiftConfig(buckets=" + std::to_string(c.buckets) +
         ", bits=" + std::to_string(c.bits) + ", max_events=" + std::to_string(c.max_events) +
         ", max_clients=" + std::to_string(c.max_clients) + ", shares=" + std::to_string(c.shares) +
         ", noise_scale=" + text(py::float_(c.noise_scale)) + ")";
}

py::array_t<uint64_t> device_vector(const host::EmulatedClient& client, const fedstat_v1_Task& task,
                                    RandomBits& noise) {
  std::vector<uint64_t> words;
  {
    py::gil_scoped_release unlocked;
    words = host::dist_shift_device_vector(client, task, noise);
  }
  return to_array(words);
}

}  // namespace

void bind_dist_shift(py::module_& m) {
  using host::HashedTvEstimate;
  py::class_<HashedTvEstimate>(m, "HashedTvEstimate",
                               "D_TV from two hashed-domain histograms and what the estimate "
                               "used (host_server/estimate/hashed_tv.h).")
      .def_readonly("tv", &HashedTvEstimate::tv, "1/2 sum_b |p_b/N_p - q_b/N_q|")
      .def_readonly("total_p", &HashedTvEstimate::total_p, "N_p: the sum of P's kept buckets")
      .def_readonly("total_q", &HashedTvEstimate::total_q, "N_q: the sum of Q's kept buckets")
      .def_readonly("buckets", &HashedTvEstimate::buckets, "B")
      .def_readonly("negative_p", &HashedTvEstimate::negative_p,
                    "buckets of P below 0 that the clamp raised to 0")
      .def_readonly("threshold", &HashedTvEstimate::threshold,
                    "tau when the noise called for a threshold (buckets below it read as 0), "
                    "else 0")
      .def("__repr__", [](const HashedTvEstimate& e) {
        return "HashedTvEstimate(tv=" + text(py::float_(e.tv)) +
               ", buckets=" + std::to_string(e.buckets) +
               ", threshold=" + std::to_string(e.threshold) + ")";
      });

  m.def(
      "estimate_hashed_tv",
      [](ArrayArg p, ArrayArg q, double noise_scale, double laplaces) {
        const std::vector<int64_t> pc = to_integers(p, "p", INT64_MIN, INT64_MAX);
        const std::vector<int64_t> qc = to_integers(q, "q", INT64_MIN, INT64_MAX);
        finite_at_least(noise_scale, "noise_scale", 0);
        finite_at_least(laplaces, "laplaces", 1);
        if (pc.size() != qc.size()) {
          throw py::value_error("p and q must have the same number of buckets, not " +
                                std::to_string(pc.size()) + " and " + std::to_string(qc.size()));
        }
        py::gil_scoped_release unlocked;
        return host::estimate_hashed_tv(pc, qc, noise_scale, laplaces);
      },
      py::arg("p"), py::arg("q"), py::kw_only(), py::arg("noise_scale") = 0.0,
      py::arg("laplaces") = 1.0,
      "D_TV from two bucket-count vectors (p: the fleet's noised sum through signed_sum, q: "
      "bucket_counts of the reference): negatives clamped to 0; given the noise scale T of p's "
      "discrete Laplace (and L >= 1 such Laplaces per bucket), buckets below a threshold read as "
      "0 when the noise's phantom mass exceeds half of p's total. ValueError for vectors of "
      "different lengths, a side with no positive bucket, noise_scale < 0 or laplaces < 1.");

  m.def(
      "signed_sum",
      [](ArrayArg words, IntArg bits) {
        const auto b = static_cast<uint32_t>(to_whole_number(bits, "bits", 1, 64));
        return to_array(host::signed_sum(to_words(words, "words", b), b));
      },
      py::arg("words"), py::arg("bits"),
      "Each word of a sum modulo 2^bits (each in [0, 2^bits)) as a signed int64 (two's "
      "complement of `bits` bits). ValueError for bits outside [1, 64] or a word >= 2^bits.");

  m.def(
      "bucket_counts",
      [](const host::ItemCounts& items, SeedArg seed, IntArg buckets) {
        const sketch::BucketMap map(to_seed256(seed, "seed"), to_buckets(buckets));
        return to_array(host::bucket_counts(items, map));
      },
      py::arg("items"), py::arg("seed"), py::arg("buckets"),
      "The exact counts of `items` in the task's B buckets (the SDK's bucket function of the "
      "task seed: an int as seed_from_u64, or 32 bytes), int64. ValueError for buckets outside "
      "[1, 2^22].");

  py::class_<DistShiftConfig>(m, "DistShiftConfig",
                              "A DIST data-shift task's parameters: buckets B, bits (32 or 64), "
                              "max_events m (0: item level), max_clients (the per-device clamp), "
                              "shares s, noise_scale T.")
      .def(py::init(&make_config), py::kw_only(),
           py::arg("buckets") = host::kDefaultDistShiftBuckets, py::arg("bits") = 32,
           py::arg("max_events") = 0, py::arg("max_clients") = 1, py::arg("shares") = 1,
           py::arg("noise_scale") = py::none(),
           "noise_scale is required (no default privacy): dist_shift_noise_scale(epsilon, m). "
           "ValueError naming the parameter out of range (buckets in [1, 2^22], bits 32 or 64, "
           "max_clients and shares >= 1, noise_scale in (0, 10^4]).")
      .def_readonly("buckets", &DistShiftConfig::buckets)
      .def_readonly("bits", &DistShiftConfig::bits)
      .def_readonly("max_events", &DistShiftConfig::max_events)
      .def_readonly("max_clients", &DistShiftConfig::max_clients)
      .def_readonly("shares", &DistShiftConfig::shares)
      .def_readonly("noise_scale", &DistShiftConfig::noise_scale)
      .def_property_readonly(
          "epsilon",
          [](const DistShiftConfig& c) {
            return host::dist_shift_sensitivity(c.max_events) / c.noise_scale;
          },
          "Delta/T: a device's epsilon when at least s honest shares are summed")
      .def("__repr__", &describe);

  m.def(
      "dist_shift_noise_scale",
      [](double epsilon, IntArg max_events) {
        return host::dist_shift_noise_scale(epsilon,
                                            to_u32(max_events, "max_events", 0, UINT32_MAX));
      },
      py::arg("epsilon"), py::arg("max_events") = 0,
      "T = Delta/epsilon, Delta = 1 (max_events 0: item level) or 2*max_events (user level). "
      "ValueError for epsilon not finite or <= 0.");

  m.def(
      "dist_shift_device_vector",
      [](OptionalItemCountsArg histogram, const DistShiftConfig& config, SeedArg seed,
         OptionalIntArg noise_seed) {
        const fedstat_v1_Task task = host::dist_shift_task(config, to_seed256(seed, "seed"));
        host::NoiseBits noise = noise_bits(noise_seed, "noise_seed");
        if (histogram.is_none())
          return device_vector(host::EmulatedClient{}, task, noise.stream(1));
        // One client holds every count (split_across_clients with 1 client hashes nothing).
        host::SeededBits unused(0, 0);
        const host::EmulatedClients one =
            host::split_across_clients(histogram.cast<const host::ItemCounts&>(), 1, unused.bits());
        return device_vector(*one[0], task, noise.stream(1));
      },
      py::arg("histogram"), py::arg("config"), py::arg("seed"), py::kw_only(),
      py::arg("noise_seed") = py::none(),
      "One device's DIST data-shift vector (uint64, B words < 2^bits) through the SDK's builder: "
      "the histogram (ItemCounts, or None for a device holding nothing; counts stop at 2^32 - 1 "
      "as a device's do) folded into the task seed's buckets (at most max_events events), each "
      "bucket clamped to (2^(bits-1) - 1) // max(2, max_clients), plus one Polya share of the "
      "discrete Laplace(T) split s ways. Noise from the CSPRNG, or seeded by noise_seed "
      "(measurements only; stream 1, as client 0 of dist_shift_clients).");

  m.def(
      "dist_shift_clients",
      [](const ClientSet& clients, const DistShiftConfig& config, SeedArg seed,
         OptionalIntArg noise_seed) {
        const fedstat_v1_Task task = host::dist_shift_task(config, to_seed256(seed, "seed"));
        host::NoiseBits noise = noise_bits(noise_seed, "noise_seed");
        py::list out;
        for (size_t c = 0; c < clients.clients.size(); ++c) {
          out.append(device_vector(*clients.clients[c], task, noise.stream(1 + c)));
        }
        return out;
      },
      py::arg("clients"), py::arg("config"), py::arg("seed"), py::kw_only(),
      py::arg("noise_seed") = py::none(),
      "Every emulated client's vector (dist_shift_device_vector), client c's noise from stream "
      "1 + c as the host's dist_shift_fleet_sum draws it; their sum modulo 2^bits through "
      "signed_sum is "
      "the fleet's noised bucket counts.");
}

}  // namespace python
}  // namespace fedstat
