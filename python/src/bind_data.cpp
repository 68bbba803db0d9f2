#include "python/src/bind_data.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <fstream>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "host_server/estimate/host_common.h"
#include "host_server/estimate/item_counts.h"
#include "python/src/bindings.h"
#include "python/src/conversions.h"
#include "python/src/errors.h"

namespace fedstat {
namespace python {

namespace {

using host::ItemCount;
using host::ItemCounts;

constexpr int64_t kMaxCount = INT64_MAX;  // an item-count file's counts and total: below 2^63
constexpr uint64_t kMaxClients = 100000;  // fedstat-kl's bound (fedstat-tv's is 10^4)

// The rules of an item-count file (item_counts.h), for arrays: ids below 2^32 and distinct,
// counts positive, the total below 2^63, at least one item; sorted by id.
ItemCounts from_arrays(ArrayArg ids, ArrayArg counts) {
  const std::vector<int64_t> id = to_integers(ids, "ids", 0, UINT32_MAX);
  const std::vector<int64_t> count = to_integers(counts, "counts", 1, kMaxCount);
  if (id.size() != count.size()) {
    throw py::value_error("ids and counts differ in length: " + std::to_string(id.size()) +
                          " and " + std::to_string(count.size()));
  }
  if (id.empty()) throw py::value_error("item counts need at least one item");
  ItemCounts result;
  for (size_t i = 0; i < id.size(); ++i) {
    if (result.total > static_cast<uint64_t>(kMaxCount - count[i])) {
      throw py::value_error("the total count must stay below 2^63");
    }
    result.items.push_back(
        ItemCount{static_cast<uint32_t>(id[i]), static_cast<uint64_t>(count[i])});
    result.total += static_cast<uint64_t>(count[i]);
  }
  std::sort(result.items.begin(), result.items.end(),
            [](const ItemCount& a, const ItemCount& b) { return a.id < b.id; });
  for (size_t i = 1; i < result.items.size(); ++i) {
    if (result.items[i].id == result.items[i - 1].id) {
      throw py::value_error("item " + std::to_string(result.items[i].id) + " appears twice");
    }
  }
  return result;
}

// The host's parser; its refusals (malformed lines, named by file and line) become ValueError.
ItemCounts parse(std::istream& in, const std::string& name) {
  try {
    return host::parse_item_counts(in, name);
  } catch (const std::runtime_error& e) {
    throw py::value_error(e.what());
  }
}

}  // namespace

void bind_data(py::module_& m) {
  py::class_<ItemCounts>(m, "ItemCounts",
                         "An item-count distribution: distinct uint32 ids with positive counts "
                         "(the input of fedstat-tv and fedstat-kl).")
      .def(py::init(&from_arrays), py::arg("ids"), py::arg("counts"),
           "From integer arrays (any order; ids distinct, below 2^32; counts positive, total "
           "below 2^63).")
      .def_property_readonly(
          "ids",
          [](const ItemCounts& c) {
            std::vector<uint32_t> out;
            for (const ItemCount& i : c.items) out.push_back(i.id);
            return to_array(out);
          },
          "uint32 ids, ascending")
      .def_property_readonly(
          "counts",
          [](const ItemCounts& c) {
            std::vector<int64_t> out;
            for (const ItemCount& i : c.items) {
              out.push_back(static_cast<int64_t>(i.count));
            }
            return to_array(out);
          },
          "int64 counts, in the order of ids")
      .def_readonly("total", &ItemCounts::total)
      .def("count", &ItemCounts::count, py::arg("id"), "the count of `id` (0 when absent)")
      .def("__len__", [](const ItemCounts& c) { return c.items.size(); })
      .def("__repr__", [](const ItemCounts& c) {
        return "ItemCounts(" + std::to_string(c.items.size()) + " items, total " +
               std::to_string(c.total) + ")";
      });

  m.def(
      "read_item_counts",
      [](const std::string& path) {
        std::ifstream in(path);
        if (!in) raise_os_error(path);
        return parse(in, path);
      },
      py::arg("path"),
      "Reads an item-count file ('<item_id> <count>' lines), as fedstat-tv and fedstat-kl do; "
      "ValueError names the file and line of a malformed one.");
  m.def(
      "parse_item_counts",
      [](const std::string& text, const std::string& name) {
        std::istringstream in(text);
        return parse(in, name);
      },
      py::arg("text"), py::arg("name") = "<text>", "Parses item-count text.");

  py::class_<host::SeededBits>(m, "SeededBits",
                               "The tools' deterministic bit source: stream `stream` of the seed "
                               "seed_from_u64(seed). Each use consumes bits, as in the CLIs.")
      .def(py::init([](IntArg seed, IntArg stream) {
             return std::make_unique<host::SeededBits>(to_seed(seed, "seed"),
                                                       to_seed(stream, "stream"));
           }),
           py::arg("seed"), py::arg("stream") = 0);

  m.def(
      "seed_from_u64",
      [](IntArg seed) { return seed_bytes(host::seed_from_u64(to_seed(seed, "seed"))); },
      py::arg("seed"), "The tools' 32-byte seed of an int: bytes 0..7 little-endian, the rest 0.");

  py::class_<ClientSet>(m, "EmulatedClients",
                        "Item counts split across emulated devices, each an SDK histogram "
                        "(split_across_clients).")
      .def("__len__", [](const ClientSet& s) { return s.clients.size(); })
      .def(
          "histogram",
          [](const ClientSet& s, size_t client) {
            if (client >= s.clients.size()) throw py::index_error("no such client");
            std::vector<histogram::SparseEntry> entries;
            for (const auto& e : s.clients[client]->histogram.slots()) {
              if (e.count > 0) entries.push_back(e);
            }
            std::sort(entries.begin(), entries.end(),
                      [](const auto& a, const auto& b) { return a.id < b.id; });
            std::vector<uint32_t> ids, counts;
            for (const auto& e : entries) {
              ids.push_back(e.id);
              counts.push_back(e.count);
            }
            return py::make_tuple(to_array(ids), to_array(counts));
          },
          py::arg("client"), "(ids, counts) of one client's histogram, ascending ids");

  m.def(
      "split_across_clients",
      [](const ItemCounts& data, IntArg clients, host::SeededBits& bits) {
        const auto n = static_cast<uint32_t>(to_whole_number(clients, "clients", 1, kMaxClients));
        ClientSet set;
        set.clients = host::split_across_clients(data, n, bits.bits());
        return set;
      },
      py::arg("data"), py::arg("clients"), py::arg("bits"),
      "Splits the counts across 1..10^5 emulated clients by a keyed hash of each unit (the key "
      "from `bits`), as the CLIs do: fedstat-tv uses SeededBits(seed, 7) for P then Q.");
}

}  // namespace python
}  // namespace fedstat
