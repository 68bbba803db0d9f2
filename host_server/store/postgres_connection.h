// RAII over libpq for the PostgreSQL store: one connection (reconnectable, its prepared statements
// prepared again on each connect), results, and a transaction. Internal to host_server/store/.
// Errors: std::runtime_error "fedstat store <conninfo, password redacted>: <operation>: <message>";
// PostgresConnectionLost (a std::runtime_error) when the connection itself went away, saying
// whether a COMMIT was in flight. Memory: libpq's buffers and the results held. Paper: none.
#ifndef FEDSTAT_HOST_STORE_POSTGRES_CONNECTION_H_
#define FEDSTAT_HOST_STORE_POSTGRES_CONNECTION_H_

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fedstat {
namespace host {

class PostgresConnectionLost : public std::runtime_error {
 public:
  PostgresConnectionLost(const std::string& message, bool commit_unknown)
      : std::runtime_error(message), commit_unknown_(commit_unknown) {}
  // True when the connection went while a COMMIT was sent: the transaction may have committed.
  bool commit_unknown() const { return commit_unknown_; }

 private:
  bool commit_unknown_;
};

struct PgResultDeleter {
  void operator()(PGresult* result) const { PQclear(result); }
};
using PgResult = std::unique_ptr<PGresult, PgResultDeleter>;

// One parameter of a prepared statement: text, or binary bytes (bytea).
struct PgParam {
  static PgParam text(std::string value) { return PgParam{std::move(value), nullptr, 0, false}; }
  static PgParam int64(int64_t value) { return text(std::to_string(value)); }
  static PgParam bytes(const std::vector<uint8_t>& value) {
    return PgParam{std::string(), value.data(), static_cast<int>(value.size()), true};
  }
  std::string text_value;
  const uint8_t* data;
  int length;
  bool binary;
};

class PostgresConnection {
 public:
  // Connects (std::runtime_error when it cannot) and runs `setup` — session settings, prepared
  // statements — after this and every later connect.
  PostgresConnection(std::string conninfo, std::string label);
  ~PostgresConnection();
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;

  const std::string& label() const { return label_; }
  bool lost() const { return conn_ == nullptr || PQstatus(conn_) != CONNECTION_OK; }
  // Drops the connection and connects again; PostgresConnectionLost when PostgreSQL cannot be
  // reached, std::runtime_error when a setup statement is refused.
  void reconnect(const std::string& operation);
  // Statements prepared after every connect, by name.
  void add_prepared(const std::string& name, const std::string& sql);
  // Session settings run after every connect, before the statements are prepared.
  void add_setup(const std::string& sql);

  // Runs `sql` (no parameters, text results); throws on any error.
  PgResult exec(const std::string& sql, const std::string& operation, bool commit = false);
  // Runs the prepared statement `name`; result_binary: every column in binary.
  PgResult run(const std::string& name, const std::vector<PgParam>& params,
               const std::string& operation, bool result_binary = false);
  // Runs the prepared statement `name` once per parameter list in one pipeline (libpq pipeline
  // mode: every execution sent, then every result read: one round trip however many); the
  // results in order. Throws as run() does for the first execution that fails.
  std::vector<PgResult> run_pipelined(const std::string& name,
                                      const std::vector<std::vector<PgParam>>& executions,
                                      const std::string& operation);
  // Closes the connection (lost() is then true; the next reconnect opens a new one).
  void drop();
  // Rolls back an open transaction, ignoring errors (a lost connection has none open).
  void rollback_quietly();

  [[noreturn]] void refuse(const std::string& operation, const std::string& message) const;

 private:
  void connect(const std::string& operation);
  PgResult check(PGresult* result, const std::string& operation, bool commit);

  std::string conninfo_;
  std::string label_;
  PGconn* conn_ = nullptr;
  std::vector<std::string> setup_;
  std::vector<std::pair<std::string, std::string>> prepared_;
};

// A transaction: BEGIN now; COMMIT with commit(); rolled back unless committed.
class PostgresTransaction {
 public:
  PostgresTransaction(PostgresConnection& connection, const std::string& operation);
  ~PostgresTransaction();
  PostgresTransaction(const PostgresTransaction&) = delete;
  PostgresTransaction& operator=(const PostgresTransaction&) = delete;
  void commit();

 private:
  PostgresConnection& connection_;
  std::string operation_;
  bool open_ = true;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_STORE_POSTGRES_CONNECTION_H_
