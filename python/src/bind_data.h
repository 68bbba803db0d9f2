// The data the estimators read, as Python types (bind_data.cpp):
//   ItemCounts       an item-count distribution (host_server/estimate/item_counts.h): ids uint32,
//                    counts int64 > 0, total < 2^63; from arrays, a file or text
//   SeededBits       the tools' deterministic bit source (host_common.h: seed_from_u64(seed),
//                    stream id): what the CLIs split clients and plan KL rounds with
//   EmulatedClients  item counts split across N devices, each an SDK SparseHistogram
//                    (client_emulation.h), the input of sketch_clients and collect_kl_sums
// Memory: 16 bytes per distinct item (ItemCounts), 16 bytes per client's distinct item.
// Paper: 000 §5 and 001 §5 (the empirical distributions, the clients' local histograms).
#ifndef FEDSTAT_PYTHON_SRC_BIND_DATA_H_
#define FEDSTAT_PYTHON_SRC_BIND_DATA_H_

#include "host_server/estimate/client_emulation.h"

namespace fedstat {
namespace python {

// Owns the emulated clients (host::EmulatedClients is move-only).
// Copies are deleted explicitly: a vector of unique_ptr claims to be copyable to type traits.
struct ClientSet {
  ClientSet() = default;
  ClientSet(ClientSet&&) = default;
  ClientSet& operator=(ClientSet&&) = default;
  ClientSet(const ClientSet&) = delete;
  ClientSet& operator=(const ClientSet&) = delete;

  host::EmulatedClients clients;
};

}  // namespace python
}  // namespace fedstat

#endif  // FEDSTAT_PYTHON_SRC_BIND_DATA_H_
