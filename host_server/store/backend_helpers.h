// Small helpers every Store backend (SQLite, PostgreSQL) shares: a 64-bit unsigned id kept in a
// signed 64-bit column, and the table-name checks of a schema's open. Memory: none. Paper: none.
#ifndef FEDSTAT_HOST_STORE_BACKEND_HELPERS_H_
#define FEDSTAT_HOST_STORE_BACKEND_HELPERS_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace fedstat {
namespace host {

// Signed 64-bit integer columns (SQLite INTEGER, PostgreSQL bigint): a client id is stored as the
// same 64 bits.
inline int64_t to_column(uint64_t value) {
  int64_t out;
  std::memcpy(&out, &value, sizeof out);
  return out;
}

inline uint64_t from_column(int64_t value) {
  uint64_t out;
  std::memcpy(&out, &value, sizeof out);
  return out;
}

inline bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// "a, b, c": the tables a refused database holds, for its error.
inline std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_STORE_BACKEND_HELPERS_H_
