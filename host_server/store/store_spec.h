// Which store a server opens, from the config's "store" field: "sqlite:PATH" or a plain path (the
// embedded SQLite store, the default "fedstat-server.db"), or a libpq URI "postgresql://…" /
// "postgres://…" (store/postgres_store.h). Parsing only, no I/O: the factory is store_factory.h.
// A PostgreSQL URI may hold a password: redacted_store_spec() is what logs and errors print.
// Errors: std::invalid_argument naming the spec (redacted) and what is wrong. Memory: the spec's
// text. Paper: none.
#ifndef FEDSTAT_HOST_STORE_STORE_SPEC_H_
#define FEDSTAT_HOST_STORE_STORE_SPEC_H_

#include <string>

namespace fedstat {
namespace host {

enum class StoreBackend { kSqlite, kPostgresql };

struct StoreSpec {
  StoreBackend backend = StoreBackend::kSqlite;
  // kSqlite: the file's path ("sqlite:" removed); kPostgresql: the whole URI, as libpq reads it.
  std::string location;
};

// "sqlite:PATH" → SQLite at PATH; "postgresql://…" or "postgres://…" → PostgreSQL; any other
// "scheme://…" (e.g. "mysql://h/db") is refused, as are "", "sqlite:" and "postgresql://" alone;
// anything else is a path (today's meaning).
StoreSpec parse_store_spec(const std::string& spec);

// The spec with the password of a PostgreSQL URI ("postgresql://user:secret@host/db",
// "…?password=secret") or key=value conninfo ("password=secret") replaced by "***"; other specs
// unchanged.
std::string redacted_store_spec(const std::string& spec);

// True when this build can open a postgresql:// store (compiled with FEDSTAT_WITH_POSTGRESQL).
bool postgresql_store_available();

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_STORE_STORE_SPEC_H_
