// RAII over SQLite's C API for the SQLite store: a connection, a prepared statement, a
// transaction. Internal to host_server/store/ (not part of the Store interface).
// Errors: std::runtime_error "fedstat store <path>: <operation>: <sqlite3_errmsg>".
// Memory: SQLite's own (a statement holds its compiled program). Paper: none.
#ifndef FEDSTAT_HOST_STORE_SQLITE_HANDLE_H_
#define FEDSTAT_HOST_STORE_SQLITE_HANDLE_H_

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fedstat {
namespace host {

class SqliteConnection {
 public:
  // Read-write; created when absent, 0600 (its missing directories 0700), before SQLite opens it.
  // Refused (std::runtime_error, "fedstat store <path>: open: ..."): a path that is a symbolic
  // link (never followed), or a store — or an existing -wal, -shm, -journal beside it — that is
  // not a regular file owned by this process's effective user with one link (sqlite_handle.cpp).
  explicit SqliteConnection(const std::string& path);
  ~SqliteConnection();
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  sqlite3* db() const { return db_; }
  // Throws std::runtime_error naming the path, the operation and SQLite's last message.
  [[noreturn]] void fail(const std::string& operation) const;
  // Throws std::runtime_error naming the path, the operation and `message`.
  [[noreturn]] void refuse(const std::string& operation, const std::string& message) const;
  void exec(const char* sql, const std::string& operation);

 private:
  // Makes, checks and resolves the store's path before SQLite opens it (sqlite_handle.cpp).
  std::string prepare_private(const std::string& path) const;

  std::string path_;
  sqlite3* db_ = nullptr;
};

class SqliteStatement {
 public:
  SqliteStatement(SqliteConnection& connection, const char* sql);
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  void bind_int64(int index, int64_t value);
  void bind_text(int index, const std::string& value);
  void bind_blob(int index, const std::vector<uint8_t>& value);
  // true: a row is ready; false: done. Throws on an error, naming `operation`.
  bool step(const std::string& operation);
  void step_done(const std::string& operation);  // a statement that returns no row
  int step_result_code() noexcept { return sqlite3_step(statement_); }  // never throws
  // Resets the statement and clears its bindings (releasing its read of the database).
  void reset();

  int column_type(int index) const { return sqlite3_column_type(statement_, index); }
  int64_t column_int64(int index) const { return sqlite3_column_int64(statement_, index); }
  std::string column_text(int index) const;
  std::vector<uint8_t> column_blob(int index) const;

 private:
  SqliteConnection& connection_;
  sqlite3_stmt* statement_ = nullptr;
};

// Resets a statement when the scope ends, however it ends.
class StatementScope {
 public:
  explicit StatementScope(SqliteStatement& statement) : statement_(statement) {}
  ~StatementScope() { statement_.reset(); }
  StatementScope(const StatementScope&) = delete;
  StatementScope& operator=(const StatementScope&) = delete;

 private:
  SqliteStatement& statement_;
};

// BEGIN (`begin` is BEGIN IMMEDIATE for writes) ... commit(); rolled back if commit() was not
// reached or failed.
class SqliteTransaction {
 public:
  SqliteTransaction(SqliteConnection& connection, SqliteStatement& begin, SqliteStatement& commit,
                    SqliteStatement& rollback, const std::string& operation);
  ~SqliteTransaction();
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;
  void commit();

 private:
  SqliteConnection& connection_;
  SqliteStatement& commit_;
  SqliteStatement& rollback_;
  std::string operation_;
  bool open_ = true;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_STORE_SQLITE_HANDLE_H_
