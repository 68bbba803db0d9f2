// The SQLite store's schema: creates it in an empty file, or checks that a file holds it at a
// version this build reads. Internal to host_server/store/.
// Errors: std::runtime_error, and the file is left as it was, when the file is not SQLite, holds
// another program's tables, or was written by a newer schema version.
// Memory: a few rows of sqlite_master. Paper: none.
#ifndef FEDSTAT_HOST_STORE_SQLITE_SCHEMA_H_
#define FEDSTAT_HOST_STORE_SQLITE_SCHEMA_H_

#include "host_server/store/sqlite_handle.h"

namespace fedstat {
namespace host {

// PRAGMA application_id of a fedstat store: "fdst".
inline constexpr int32_t kSqliteStoreApplicationId = 0x66647374;

// Creates the schema when the database is empty; otherwise checks it. One write transaction.
void create_or_check_schema(SqliteConnection& connection);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_STORE_SQLITE_SCHEMA_H_
