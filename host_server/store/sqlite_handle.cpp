#include "host_server/store/sqlite_handle.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>

namespace fedstat {
namespace host {
namespace {

std::string errno_text() {
  return std::strerror(errno);
}

// Refuses (the reason) a store file that is not a regular file of this process's effective
// user with one name (a hard link elsewhere would be another way in), as fstat or lstat saw it.
std::optional<std::string> not_our_own(const struct stat& s) {
  if (S_ISLNK(s.st_mode)) {
    return std::string(
        "is a symbolic link: not followed (who can write its directory could "
        "point it anywhere); give the real path");
  }
  if (!S_ISREG(s.st_mode)) return std::string("is not a regular file");
  if (s.st_uid != geteuid()) {
    return "is owned by uid " + std::to_string(s.st_uid) + ", not this server's user (uid " +
           std::to_string(geteuid()) +
           "): its owner could read every device's words; run the server as its owner, or move "
           "it away and let the server create its own";
  }
  if (s.st_nlink != 1) {
    return "has " + std::to_string(s.st_nlink) + " hard links: another name reaches it";
  }
  return std::nullopt;
}

}  // namespace

// Before SQLite opens the store: each missing directory above it is made 0700; the file itself is
// opened without following a symbolic link (O_NOFOLLOW) — created empty and 0600 when absent (an
// empty file is an empty database to SQLite, which gives the -wal and -shm it makes beside it the
// database's own mode, so no moment exists where the store is readable by others, whatever the
// umask) — and refused unless it is a regular file of this process's user with one link. Its
// -wal, -shm and -journal, where they exist, must be so too (lstat: a link there is refused).
// The directory above is resolved (realpath: a link the operator made to a data disk is fine) and
// SQLite opens the resolved path with SQLITE_OPEN_NOFOLLOW. What is left: another user who can
// write the directory can still act between these checks and SQLite's own opens (file_access.h
// warns about such a directory). ":memory:" and "" (SQLite's in-memory and temporary databases)
// are not files. Returns the path SQLite is to open.
std::string SqliteConnection::prepare_private(const std::string& path) const {
  if (path.empty() || path == ":memory:") return path;
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    if (mkdir(path.substr(0, slash).c_str(), 0700) != 0 && errno != EEXIST) break;
  }
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == ELOOP) {
      refuse("open", "the store " + path +
                         " is a symbolic link: not followed (who can write its directory could "
                         "point it anywhere); give the real path");
    }
    refuse("open", "cannot open " + path + ": " + errno_text());
  }
  struct stat s {};
  const bool looked = fstat(fd, &s) == 0;
  close(fd);
  if (!looked) refuse("open", "cannot look at " + path + ": " + errno_text());
  if (auto why = not_our_own(s)) refuse("open", "the store " + path + " " + *why);
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    struct stat beside {};
    if (lstat((path + suffix).c_str(), &beside) != 0) continue;  // absent: SQLite makes it
    if (auto why = not_our_own(beside))
      refuse("open", "the store's " + (path + suffix) + " " + *why);
  }
  const size_t slash = path.rfind('/');
  const std::string directory = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  char resolved[PATH_MAX];
  if (realpath(directory.c_str(), resolved) == nullptr) return path;
  return std::string(resolved) + "/" + path.substr(slash == std::string::npos ? 0 : slash + 1);
}

SqliteConnection::SqliteConnection(const std::string& path) : path_(path) {
  const std::string opened = prepare_private(path);
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if (!path.empty() && path != ":memory:") flags |= SQLITE_OPEN_NOFOLLOW;  // none on the way
  const int rc = sqlite3_open_v2(opened.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    const std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    refuse("open", message);
  }
  sqlite3_extended_result_codes(db_, 1);
}

SqliteConnection::~SqliteConnection() {
  sqlite3_close_v2(db_);
}

void SqliteConnection::fail(const std::string& operation) const {
  refuse(operation, sqlite3_errmsg(db_));
}

void SqliteConnection::refuse(const std::string& operation, const std::string& message) const {
  throw std::runtime_error("fedstat store " + path_ + ": " + operation + ": " + message);
}

void SqliteConnection::exec(const char* sql, const std::string& operation) {
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) fail(operation);
}

SqliteStatement::SqliteStatement(SqliteConnection& connection, const char* sql)
    : connection_(connection) {
  if (sqlite3_prepare_v3(connection.db(), sql, -1, SQLITE_PREPARE_PERSISTENT, &statement_,
                         nullptr) != SQLITE_OK) {
    connection.fail(std::string("prepare \"") + sql + "\"");
  }
}

SqliteStatement::~SqliteStatement() {
  sqlite3_finalize(statement_);
}

void SqliteStatement::bind_int64(int index, int64_t value) {
  if (sqlite3_bind_int64(statement_, index, value) != SQLITE_OK) connection_.fail("bind");
}

void SqliteStatement::bind_text(int index, const std::string& value) {
  if (sqlite3_bind_text64(statement_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                          SQLITE_UTF8) != SQLITE_OK) {
    connection_.fail("bind");
  }
}

void SqliteStatement::bind_blob(int index, const std::vector<uint8_t>& value) {
  // A null pointer would bind SQL NULL; an empty payload is an empty blob.
  static const uint8_t kEmpty = 0;
  const void* data = value.empty() ? &kEmpty : value.data();
  if (sqlite3_bind_blob64(statement_, index, data, value.size(), SQLITE_TRANSIENT) != SQLITE_OK) {
    connection_.fail("bind");
  }
}

bool SqliteStatement::step(const std::string& operation) {
  const int rc = sqlite3_step(statement_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  connection_.fail(operation);
}

void SqliteStatement::step_done(const std::string& operation) {
  if (step(operation)) connection_.refuse(operation, "a statement returned an unexpected row");
}

void SqliteStatement::reset() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
}

std::string SqliteStatement::column_text(int index) const {
  const unsigned char* text = sqlite3_column_text(statement_, index);
  const int bytes = sqlite3_column_bytes(statement_, index);
  if (text == nullptr) return std::string();
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(bytes));
}

std::vector<uint8_t> SqliteStatement::column_blob(int index) const {
  const auto* data = static_cast<const uint8_t*>(sqlite3_column_blob(statement_, index));
  const int bytes = sqlite3_column_bytes(statement_, index);
  if (data == nullptr) return {};
  return std::vector<uint8_t>(data, data + bytes);
}

SqliteTransaction::SqliteTransaction(SqliteConnection& connection, SqliteStatement& begin,
                                     SqliteStatement& commit, SqliteStatement& rollback,
                                     const std::string& operation)
    : connection_(connection), commit_(commit), rollback_(rollback), operation_(operation) {
  StatementScope scope(begin);
  begin.step_done(operation + " (begin)");
}

SqliteTransaction::~SqliteTransaction() {
  if (!open_ || sqlite3_get_autocommit(connection_.db()) != 0) return;
  StatementScope scope(rollback_);
  rollback_.step_result_code();  // a destructor cannot report; the file stays consistent
}

void SqliteTransaction::commit() {
  StatementScope scope(commit_);
  commit_.step_done(operation_ + " (commit)");
  open_ = false;
}

}  // namespace host
}  // namespace fedstat
