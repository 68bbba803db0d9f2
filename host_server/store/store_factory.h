// Opens the store a spec names (store/store_spec.h): SQLite at a path (with `sqlite` options) or
// PostgreSQL at a libpq URI (store/postgres_store.h; every commit synchronous there, so the
// SQLite durability options do not apply). Errors: what the backend throws; std::invalid_argument
// for a spec that does not parse, or a postgresql:// store in a build without libpq ("this
// fedstat-server was built without PostgreSQL (libpq-dev)"). Memory: the backend's. Paper: none.
#ifndef FEDSTAT_HOST_STORE_STORE_FACTORY_H_
#define FEDSTAT_HOST_STORE_STORE_FACTORY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "host_server/store/sqlite_store.h"
#include "host_server/store/store.h"
#include "host_server/store/store_spec.h"

namespace fedstat {
namespace host {

// `outage_seconds`: how long a PostgreSQL store's call waits for a lost database
// (PostgresStoreOptions::outage_limit); `on_outage` its report of an outage (may be empty).
// Who serves the store (PostgreSQL): one collector and one TAgg a database at a time; a second
// process of the same role waits as a standby until the first stops (postgres_store.h,
// serving_lock). kNone (the `tasks` / `results` commands, tools): no lock. SQLite: no effect.
enum class ServingRole { kNone, kCollector, kTagg };

struct StoreOpenOptions {
  SqliteStoreOptions sqlite;
  uint32_t outage_seconds = 300;
  std::function<void(bool reachable, const std::string& detail)> on_outage;
  ServingRole serving = ServingRole::kNone;
  std::function<void()> on_standby;  // a standby waits (called once, on the opening thread)
};

std::unique_ptr<Store> open_store(const std::string& spec, const SqliteStoreOptions& sqlite = {});
std::unique_ptr<Store> open_store(const std::string& spec, const StoreOpenOptions& options);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_STORE_STORE_FACTORY_H_
