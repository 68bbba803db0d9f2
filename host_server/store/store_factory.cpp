#include "host_server/store/store_factory.h"

#include <stdexcept>

#ifdef FEDSTAT_WITH_POSTGRESQL
#include "host_server/store/postgres_store.h"
#endif

namespace fedstat {
namespace host {

std::unique_ptr<Store> open_store(const std::string& spec, const SqliteStoreOptions& sqlite) {
  StoreOpenOptions options;
  options.sqlite = sqlite;
  return open_store(spec, options);
}

std::unique_ptr<Store> open_store(const std::string& spec, const StoreOpenOptions& options) {
  const StoreSpec parsed = parse_store_spec(spec);
  if (parsed.backend == StoreBackend::kSqlite) {
    return open_sqlite_store(parsed.location, options.sqlite);
  }
#ifdef FEDSTAT_WITH_POSTGRESQL
  PostgresStoreOptions postgres;
  postgres.outage_limit = std::chrono::seconds(options.outage_seconds);
  postgres.on_outage = options.on_outage;
  postgres.serving_lock = options.serving == ServingRole::kCollector ? kPostgresCollectorServingLock
                          : options.serving == ServingRole::kTagg    ? kPostgresTaggServingLock
                                                                     : 0;
  postgres.on_standby = options.on_standby;
  return open_postgres_store(parsed.location, postgres);
#else
  throw std::invalid_argument("store \"" + redacted_store_spec(spec) +
                              "\": this fedstat-server was built without PostgreSQL (libpq-dev)");
#endif
}

}  // namespace host
}  // namespace fedstat
