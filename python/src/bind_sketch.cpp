// The data-shift sketch on the host (sdk/sketch, host_server/estimate/tv_estimator.h):
//   SketchParams       ShiftSketchParams (R, w, H, k, the 32-byte task seed, buffer slots),
//                      validated by the SDK; params_for_budget the SDK's budget rule
//   SketchReport       a device's serialized report, parsed by the SDK (magic, version,
//                      parameters, length, CRC: ValueError for corrupt bytes, NotImplementedError
//                      for another version); it keeps its own copy of the bytes
//   MergedSketch       one distribution's summed counters (mod 2^64), total and heap ids; from
//                      merge_reports, or from arrays (e.g. counters summed by secure aggregation)
//   sketch_clients     every emulated client sketches its histogram through the SDK (optionally
//                      after the local-DP stability histogram): the report bytes, one per client
// Counters are int64 numpy arrays of shape (R, w). Memory: one copy of each report's bytes;
// merged counters 8·R·w bytes. Paper: 001 §4.2–4.6, Algorithm 1, Fact 4.11.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "host_server/estimate/client_emulation.h"
#include "host_server/estimate/host_common.h"
#include "host_server/estimate/tv_estimator.h"
#include "python/src/bind_data.h"
#include "python/src/bindings.h"
#include "python/src/conversions.h"
#include "sdk/sketch/sketch_budget.h"

namespace fedstat {
namespace python {

namespace {

using sketch::ShiftSketchParams;

// A parsed report and the bytes it views (never copied: the view points into `bytes`).
struct ParsedReport {
  std::vector<uint8_t> bytes;
  sketch::SketchReport view;
};

std::unique_ptr<ParsedReport> parse_report(const py::buffer& data, const std::string& name) {
  const py::buffer_info info = data.request();
  // Only a contiguous buffer is read as bytes: a strided view (memoryview(b)[::2] or [::-1])
  // would otherwise be read as other bytes, or past its end.
  ssize_t expected_stride = info.itemsize;
  for (ssize_t d = info.ndim - 1; d >= 0; --d) {
    if (info.shape[d] > 1 && info.strides[d] != expected_stride) {
      throw py::value_error(name + ": the buffer must be contiguous (bytes, bytearray, a C array)");
    }
    expected_stride *= info.shape[d];
  }
  const auto* begin = static_cast<const uint8_t*>(info.ptr);
  auto report = std::make_unique<ParsedReport>();
  report->bytes.assign(begin, begin + info.size * info.itemsize);
  host::check(sketch::parse_sketch_report(ByteSpan(report->bytes.data(), report->bytes.size()),
                                          report->view),
              name);
  return report;
}

uint32_t u32(py::handle value, const std::string& name, uint32_t low) {
  return static_cast<uint32_t>(to_whole_number(value, name, low, UINT32_MAX));
}

std::string describe(const ShiftSketchParams& p) {
  return "SketchParams(rows=" + std::to_string(p.rows) + ", width=" + std::to_string(p.width) +
         ", heap_capacity=" + std::to_string(p.heap_capacity) + ", k=" + std::to_string(p.k) +
         ", buffer_slots=" + std::to_string(p.buffer_slots) + ")";
}

py::array_t<int64_t> counters_of(const std::vector<int64_t>& counters, const ShiftSketchParams& p) {
  return to_array(counters, p.rows, p.width);
}

host::MergedSketch merged_from_arrays(const ShiftSketchParams& params, ArrayArg counters,
                                      IntArg total, ArrayArg heap_items) {
  host::check(sketch::validate_params(params), "params");
  host::MergedSketch m;
  m.params = params;
  const py::array array(py::module_::import("numpy").attr("asarray")(counters));
  m.counters = to_integers(array.attr("reshape")(-1), "counters", INT64_MIN, INT64_MAX);
  const size_t cells = size_t{params.rows} * params.width;
  if (m.counters.size() != cells) {
    throw py::value_error("counters must hold rows x width = " + std::to_string(cells) +
                          " values, not " + std::to_string(m.counters.size()));
  }
  m.total = static_cast<int64_t>(to_whole_number(total, "total", 0, INT64_MAX));
  for (int64_t id : to_integers(heap_items, "heap_items", 0, UINT32_MAX)) {
    m.heap_items.push_back(static_cast<uint32_t>(id));
  }
  std::sort(m.heap_items.begin(), m.heap_items.end());
  m.heap_items.erase(std::unique(m.heap_items.begin(), m.heap_items.end()), m.heap_items.end());
  return m;
}

}  // namespace

void bind_sketch(py::module_& m) {
  py::class_<ShiftSketchParams>(m, "SketchParams",
                                "Data-shift sketch parameters: rows R, width w, heap capacity H, "
                                "sampling k, the 32-byte task seed, buffer slots C.")
      .def(py::init([](IntArg rows, IntArg width, IntArg heap_capacity, IntArg k, SeedArg seed,
                       IntArg buffer_slots) {
             ShiftSketchParams p;
             p.rows = u32(rows, "rows", 0);
             p.width = u32(width, "width", 0);
             p.heap_capacity = u32(heap_capacity, "heap_capacity", 0);
             p.k = u32(k, "k", 0);
             p.seed = to_seed256(seed, "seed");
             p.buffer_slots = u32(buffer_slots, "buffer_slots", 0);
             host::check(sketch::validate_params(p), "SketchParams");
             return p;
           }),
           py::arg("rows") = 5, py::arg("width") = 1024, py::arg("heap_capacity") = 1024,
           py::arg("k") = 4096, py::arg("seed") = 0, py::arg("buffer_slots") = 0)
      .def_readonly("rows", &ShiftSketchParams::rows)
      .def_readonly("width", &ShiftSketchParams::width)
      .def_readonly("heap_capacity", &ShiftSketchParams::heap_capacity)
      .def_readonly("k", &ShiftSketchParams::k)
      .def_readonly("buffer_slots", &ShiftSketchParams::buffer_slots)
      .def_property_readonly("seed", [](const ShiftSketchParams& p) { return seed_bytes(p.seed); })
      .def(
          "memory_bytes",
          [](const ShiftSketchParams& p) { return sketch::shift_sketch_memory_bytes(p); },
          "Device memory of the sketch: 8Rw + 8H + 4S(H) + 4C bytes.")
      .def("__eq__", [](const ShiftSketchParams& a,
                        const ShiftSketchParams& b) { return sketch::same_params(a, b); })
      .def("__repr__", &describe);

  m.def(
      "params_for_budget",
      [](IntArg budget, SeedArg seed, double heap_fraction, IntArg k_per_heap, bool buffer) {
        sketch::BudgetRule rule;
        rule.heap_fraction = heap_fraction;
        rule.k_per_heap = u32(k_per_heap, "k_per_heap", 0);
        rule.buffer = buffer;
        return host::value_or_throw(sketch::params_for_budget(static_cast<size_t>(to_whole_number(
                                                                  budget, "budget", 0, SIZE_MAX)),
                                                              to_seed256(seed, "seed"), rule),
                                    "params_for_budget");
      },
      py::arg("budget"), py::arg("seed"), py::arg("heap_fraction") = 0.35,
      py::arg("k_per_heap") = 4, py::arg("buffer") = true,
      "The SDK's parameters for a device-memory budget in bytes (1 KiB to 2 GiB). fedstat-tv "
      "uses seed = seed_from_u64(S ^ 0x7A5C0FFEE) for --seed S.");

  py::class_<ParsedReport>(m, "SketchReport",
                           "A device's serialized data-shift sketch report, parsed and checked "
                           "by the SDK.")
      .def(py::init([](const py::buffer& data) { return parse_report(data, "sketch report"); }),
           py::arg("data"))
      .def_property_readonly("params", [](const ParsedReport& r) { return r.view.params; })
      .def_property_readonly("total", [](const ParsedReport& r) { return r.view.total; })
      .def_property_readonly(
          "counters",
          [](const ParsedReport& r) {
            std::vector<int64_t> c(size_t{r.view.params.rows} * r.view.params.width);
            for (size_t i = 0; i < c.size(); ++i) c[i] = r.view.counter(i);
            return counters_of(c, r.view.params);
          },
          "int64 counters, shape (rows, width)")
      .def_property_readonly(
          "heap_items",
          [](const ParsedReport& r) {
            std::vector<uint32_t> ids(r.view.heap_count);
            for (size_t i = 0; i < ids.size(); ++i) {
              ids[i] = r.view.heap_item(i);
            }
            return to_array(ids);
          },
          "uint32 ids of the device's heap, in report order")
      .def("to_bytes",
           [](const ParsedReport& r) {
             return py::bytes(reinterpret_cast<const char*>(r.bytes.data()), r.bytes.size());
           })
      .def("__len__", [](const ParsedReport& r) { return r.bytes.size(); })
      .def("__repr__", [](const ParsedReport& r) {
        return "SketchReport(" + describe(r.view.params) + ", total " +
               std::to_string(r.view.total) + ", " + std::to_string(r.view.heap_count) +
               " heap items, " + std::to_string(r.bytes.size()) + " bytes)";
      });

  py::class_<host::MergedSketch>(m, "MergedSketch",
                                 "One distribution's merged sketch: counters summed mod 2^64, "
                                 "the total, the union of the heaps' ids.")
      .def(py::init(&merged_from_arrays), py::arg("params"), py::arg("counters"), py::arg("total"),
           py::arg("heap_items") = py::tuple(),
           "From arrays, e.g. counters summed by secure aggregation (then no heap ids: give "
           "estimate_tv a domain).")
      .def_readonly("params", &host::MergedSketch::params)
      .def_readonly("total", &host::MergedSketch::total)
      .def_property_readonly(
          "counters", [](const host::MergedSketch& s) { return counters_of(s.counters, s.params); },
          "int64 counters, shape (rows, width)")
      .def_property_readonly(
          "heap_items", [](const host::MergedSketch& s) { return to_array(s.heap_items); },
          "uint32 ids, ascending");

  m.def(
      "merge_reports",
      [](const py::list& reports) {
        std::vector<std::unique_ptr<ParsedReport>> owned;  // reports given as bytes
        std::vector<sketch::SketchReport> views;
        for (size_t i = 0; i < reports.size(); ++i) {
          const py::handle item = reports[i];
          if (py::isinstance<ParsedReport>(item)) {
            views.push_back(item.cast<const ParsedReport&>().view);
          } else {
            owned.push_back(parse_report(item.cast<py::buffer>(), "report " + std::to_string(i)));
            views.push_back(owned.back()->view);
          }
        }
        return host::merge_reports(views);
      },
      py::arg("reports"),
      "Merges one distribution's reports (SketchReport objects or bytes): counters summed mod "
      "2^64, heaps united. ValueError when they differ in parameters or seed.");

  m.def(
      "sketch_clients",
      [](const ClientSet& clients, const ShiftSketchParams& params, double epsilon,
         OptionalIntArg noise_seed) {
        host::NoiseBits noise = noise_bits(noise_seed, "noise_seed");
        std::vector<std::vector<uint8_t>> reports;
        {
          py::gil_scoped_release unlocked;
          reports = host::sketch_clients(clients.clients, params, epsilon, noise);
        }
        py::list out;
        for (const auto& r : reports) {
          out.append(py::bytes(reinterpret_cast<const char*>(r.data()), r.size()));
        }
        return out;
      },
      py::arg("clients"), py::arg("params"), py::arg("epsilon") = 0.0,
      py::arg("noise_seed") = py::none(),
      "Every emulated client sketches its histogram through the SDK and serializes its report "
      "(bytes, one per client). epsilon > 0: the local-DP stability histogram first (delta "
      "1e-6), noise from the CSPRNG, or seeded by noise_seed (measurements only).");
}

}  // namespace python
}  // namespace fedstat
