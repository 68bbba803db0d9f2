// A Store held in memory with the SQLite store's semantics: for tests of the rounds and for a
// dry-run server. Nothing survives the object.
// Errors: those store.h names; a failed call changes nothing. Memory: everything stored (tasks,
// events with their payloads, results) plus container overhead. Paper: none.
#ifndef FEDSTAT_HOST_STORE_MEMORY_STORE_H_
#define FEDSTAT_HOST_STORE_MEMORY_STORE_H_

#include <memory>

#include "host_server/store/store.h"

namespace fedstat {
namespace host {

std::unique_ptr<Store> make_memory_store();

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_STORE_MEMORY_STORE_H_
