// The PostgreSQL store's schema: creates it in the connection's current schema when that holds no
// table, or checks that it holds the fedstat schema at a version this build reads; and the store's
// integrity check. Internal to host_server/store/ (postgres_store.h says what is refused).
// Errors: std::runtime_error, and the database is left as it was. Memory: a few catalog rows.
// Paper: none.
#ifndef FEDSTAT_HOST_STORE_POSTGRES_SCHEMA_H_
#define FEDSTAT_HOST_STORE_POSTGRES_SCHEMA_H_

#include <string>

#include "host_server/store/postgres_connection.h"

namespace fedstat {
namespace host {

// One transaction, holding the schema advisory lock (creators racing on an empty database).
void create_or_check_postgres_schema(PostgresConnection& connection);

// "ok", or one line per finding (postgres_store.h: what is checked).
std::string check_postgres_schema_integrity(PostgresConnection& connection);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_STORE_POSTGRES_SCHEMA_H_
