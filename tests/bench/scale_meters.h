// What the scale benchmark reads off the machine around a fleet run (scale_bench.cpp): the CPU
// seconds of a PostgreSQL cluster's processes and the bytes its database and WAL hold, the bytes
// of a SQLite store (main file + WAL), the load average. Host only (Linux /proc, libpq).
// Errors: std::runtime_error when /proc or the database cannot be read. Memory: none to speak of.
// Paper: none.
#ifndef FEDSTAT_TESTS_BENCH_SCALE_METERS_H_
#define FEDSTAT_TESTS_BENCH_SCALE_METERS_H_

#include <string>

namespace fedstat {
namespace bench {

// The CPU seconds (user + system) of the cluster whose data directory is `data_dir`: its
// postmaster (the first line of postmaster.pid), the children it has reaped (cutime + cstime: the
// backends that came and went) and every live process whose parent it is (the server's backend,
// the WAL writer, the checkpointer, ...).
double postgres_cpu_seconds(const std::string& data_dir);

// pg_database_size(current_database()) and the WAL position in bytes (pg_current_wal_lsn −
// '0/0'), read over `conninfo`.
struct PostgresBytes {
  double database = 0;
  double wal_position = 0;
};
PostgresBytes postgres_bytes(const std::string& conninfo);

// The SQLite store's bytes on disk: `path` plus `path`-wal (0 for a file that is not there).
double sqlite_bytes(const std::string& path);

// /proc/loadavg's first three fields.
std::string load_average();

}  // namespace bench
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_BENCH_SCALE_METERS_H_
