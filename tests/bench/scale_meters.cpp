// The scale benchmark's meters (scale_meters.h).
#include "tests/bench/scale_meters.h"

#include <dirent.h>
#include <libpq-fe.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace fedstat {
namespace bench {
namespace {

// /proc/PID/stat's fields after the command name: [0] is field 3 (state).
bool stat_fields(long pid, std::vector<std::string>& fields) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t name_end = text.rfind(')');  // the command name may hold spaces
  if (name_end == std::string::npos) return false;
  std::istringstream rest(text.substr(name_end + 2));
  fields.clear();
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields.size() > 14;
}

double ticks(const std::string& field) {
  return std::strtod(field.c_str(), nullptr) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace

double postgres_cpu_seconds(const std::string& data_dir) {
  std::ifstream pid_file(data_dir + "/postmaster.pid");
  long postmaster = 0;
  if (!(pid_file >> postmaster) || postmaster <= 0) {
    throw std::runtime_error("no postmaster.pid in " + data_dir);
  }
  std::vector<std::string> f;
  if (!stat_fields(postmaster, f)) throw std::runtime_error("cannot read the postmaster's stat");
  // Fields 14–17 (utime, stime, cutime, cstime) are f[11]–f[14].
  double seconds = ticks(f[11]) + ticks(f[12]) + ticks(f[13]) + ticks(f[14]);
  DIR* proc = opendir("/proc");
  if (proc == nullptr) throw std::runtime_error("cannot list /proc");
  while (dirent* entry = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (*end != '\0' || pid <= 0 || pid == postmaster) continue;
    // Field 4 (ppid) is f[1]; a child's own utime + stime (its reaped children are none).
    if (stat_fields(pid, f) && std::strtol(f[1].c_str(), nullptr, 10) == postmaster) {
      seconds += ticks(f[11]) + ticks(f[12]);
    }
  }
  closedir(proc);
  return seconds;
}

PostgresBytes postgres_bytes(const std::string& conninfo) {
  PGconn* connection = PQconnectdb(conninfo.c_str());
  if (PQstatus(connection) != CONNECTION_OK) {
    const std::string why = PQerrorMessage(connection);
    PQfinish(connection);
    throw std::runtime_error("PostgreSQL: " + why);
  }
  PGresult* result = PQexec(connection,
                            "SELECT pg_database_size(current_database()), "
                            "pg_current_wal_lsn() - '0/0'::pg_lsn");
  PostgresBytes bytes;
  const bool ok = PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) == 1;
  if (ok) {
    bytes.database = std::strtod(PQgetvalue(result, 0, 0), nullptr);
    bytes.wal_position = std::strtod(PQgetvalue(result, 0, 1), nullptr);
  }
  const std::string why = ok ? "" : PQerrorMessage(connection);
  PQclear(result);
  PQfinish(connection);
  if (!ok) throw std::runtime_error("PostgreSQL: " + why);
  return bytes;
}

double sqlite_bytes(const std::string& path) {
  double bytes = 0;
  for (const std::string& file : {path, path + "-wal"}) {
    std::error_code error;
    const auto size = std::filesystem::file_size(file, error);
    if (!error) bytes += static_cast<double>(size);
  }
  return bytes;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

}  // namespace bench
}  // namespace fedstat
