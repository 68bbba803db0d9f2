// Test helpers that reach the SQLite file directly (not through the Store): to damage it, to
// make another program's database, and to compare a file's bytes before and after.
// Errors: a gtest failure naming SQLite's message. Memory: the file's bytes. Paper: none.
#ifndef FEDSTAT_TESTS_STORE_RAW_SQLITE_H_
#define FEDSTAT_TESTS_STORE_RAW_SQLITE_H_

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fedstat {
namespace testing {

// Runs `sql` on its own connection and returns the first column of the first row ("" if none).
inline std::string raw_sqlite(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string first;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    ADD_FAILURE() << "open " << path << ": " << sqlite3_errmsg(db);
  } else {
    auto take_first = [](void* out, int columns, char** values, char**) {
      auto* text = static_cast<std::string*>(out);
      if (text->empty() && columns > 0 && values[0] != nullptr) *text = values[0];
      return 0;
    };
    char* error = nullptr;
    if (sqlite3_exec(db, sql.c_str(), take_first, &first, &error) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << (error != nullptr ? error : "?");
      sqlite3_free(error);
    }
  }
  sqlite3_close(db);
  return first;
}

inline std::vector<char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace testing
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_STORE_RAW_SQLITE_H_
