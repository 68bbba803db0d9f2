#include "host_server/store/postgres_connection.h"

namespace fedstat {
namespace host {
namespace {

// libpq's messages end with a newline (and may hold several lines): one line for ours.
std::string one_line(const char* message) {
  std::string out = message != nullptr ? message : "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  for (char& c : out) c = c == '\n' ? ' ' : c;
  return out;
}

// An error of the connection rather than of the statement: libpq's own (no SQLSTATE: the socket
// closed, a write failed — libpq may still say CONNECTION_OK until its next read), class 08
// (connection exception) or the server going down (57P01-57P03: admin shutdown, crash shutdown,
// cannot connect now).
bool connection_failure(const PGresult* result) {
  const char* state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  if (state == nullptr || *state == '\0') return true;
  const std::string code = state;
  return code.compare(0, 2, "08") == 0 || code == "57P01" || code == "57P02" || code == "57P03";
}

}  // namespace

PostgresConnection::PostgresConnection(std::string conninfo, std::string label)
    : conninfo_(std::move(conninfo)), label_(std::move(label)) {
  connect("open");
}

PostgresConnection::~PostgresConnection() {
  if (conn_ != nullptr) PQfinish(conn_);
}

void PostgresConnection::connect(const std::string& operation) {
  if (conn_ != nullptr) PQfinish(conn_);
  conn_ = PQconnectdb(conninfo_.c_str());
  if (conn_ == nullptr) refuse(operation, "out of memory (PQconnectdb)");
  if (PQstatus(conn_) != CONNECTION_OK) {
    const std::string message = one_line(PQerrorMessage(conn_));
    PQfinish(conn_);  // the constructor may be what throws: no destructor would free it
    conn_ = nullptr;
    // Not a refusal: PostgreSQL may be restarting; the store decides how long to wait for it.
    throw PostgresConnectionLost(
        "fedstat store " + label_ + ": " + operation + ": cannot connect: " + message, false);
  }
  // PostgreSQL's notices ("terminating connection due to immediate shutdown") would go to stderr
  // unformatted, amid the server's JSON log lines; what matters of them comes as errors anyway.
  PQsetNoticeProcessor(
      conn_, [](void*, const char*) {}, nullptr);
  for (const std::string& sql : setup_) exec(sql, operation);
  for (const auto& [name, sql] : prepared_) {
    check(PQprepare(conn_, name.c_str(), sql.c_str(), 0, nullptr), operation, false);
  }
}

void PostgresConnection::reconnect(const std::string& operation) {
  connect(operation);
}

void PostgresConnection::add_setup(const std::string& sql) {
  exec(sql, "open");
  setup_.push_back(sql);
}

void PostgresConnection::add_prepared(const std::string& name, const std::string& sql) {
  check(PQprepare(conn_, name.c_str(), sql.c_str(), 0, nullptr), "open (prepare " + name + ")",
        false);
  prepared_.emplace_back(name, sql);
}

PgResult PostgresConnection::check(PGresult* raw, const std::string& operation, bool commit) {
  PgResult result(raw);
  const ExecStatusType status = result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
  const std::string message =
      one_line(result ? PQresultErrorMessage(result.get()) : PQerrorMessage(conn_));
  if (lost() || connection_failure(result.get())) {
    throw PostgresConnectionLost(
        "fedstat store " + label_ + ": " + operation +
            ": connection lost: " + (message.empty() ? one_line(PQerrorMessage(conn_)) : message),
        commit);
  }
  refuse(operation, message);
}

PgResult PostgresConnection::exec(const std::string& sql, const std::string& operation,
                                  bool commit) {
  return check(PQexec(conn_, sql.c_str()), operation, commit);
}

namespace {

// libpq's view of a parameter list: pointers into `params`, which must outlive it.
struct EncodedParams {
  explicit EncodedParams(const std::vector<PgParam>& params) {
    static const char kEmpty = 0;  // a zero-length bytea still needs a non-null pointer
    for (const PgParam& param : params) {
      if (param.binary) {
        values.push_back(param.length == 0 ? &kEmpty : reinterpret_cast<const char*>(param.data));
        lengths.push_back(param.length);
        formats.push_back(1);
      } else {
        values.push_back(param.text_value.c_str());
        lengths.push_back(0);
        formats.push_back(0);
      }
    }
  }
  int count() const { return static_cast<int>(values.size()); }
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
};

}  // namespace

PgResult PostgresConnection::run(const std::string& name, const std::vector<PgParam>& params,
                                 const std::string& operation, bool result_binary) {
  const EncodedParams encoded(params);
  return check(
      PQexecPrepared(conn_, name.c_str(), encoded.count(), encoded.values.data(),
                     encoded.lengths.data(), encoded.formats.data(), result_binary ? 1 : 0),
      operation, false);
}

std::vector<PgResult> PostgresConnection::run_pipelined(
    const std::string& name, const std::vector<std::vector<PgParam>>& executions,
    const std::string& operation) {
  const auto lost_now = [&](const std::string& what) {
    // The connection is in no state to go on: the caller reconnects (postgres_store.h).
    return PostgresConnectionLost("fedstat store " + label_ + ": " + operation + ": " + what +
                                      ": " + one_line(PQerrorMessage(conn_)),
                                  false);
  };
  if (PQenterPipelineMode(conn_) != 1) throw lost_now("cannot enter pipeline mode");
  for (const std::vector<PgParam>& params : executions) {
    const EncodedParams encoded(params);
    if (PQsendQueryPrepared(conn_, name.c_str(), encoded.count(), encoded.values.data(),
                            encoded.lengths.data(), encoded.formats.data(), 0) != 1) {
      throw lost_now("sending a pipelined statement failed");
    }
  }
  if (PQpipelineSync(conn_) != 1) throw lost_now("sending the pipeline's sync failed");
  // Each execution's result is followed by a null; then the sync's PGRES_PIPELINE_SYNC. After an
  // error the rest are PGRES_PIPELINE_ABORTED.
  std::vector<PgResult> out;
  PgResult first_error;
  int nulls_in_a_row = 0;
  for (;;) {
    PGresult* raw = PQgetResult(conn_);
    if (raw == nullptr) {
      if (lost() || ++nulls_in_a_row > 1) throw lost_now("the pipeline's results stopped");
      continue;
    }
    nulls_in_a_row = 0;
    PgResult result(raw);
    const ExecStatusType status = PQresultStatus(raw);
    if (status == PGRES_PIPELINE_SYNC) break;
    if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) {
      out.push_back(std::move(result));
    } else if (!first_error) {
      first_error = std::move(result);
    }
  }
  if (PQexitPipelineMode(conn_) != 1) throw lost_now("cannot leave pipeline mode");
  if (first_error) check(first_error.release(), operation, false);  // throws
  if (out.size() != executions.size()) refuse(operation, "a pipelined statement gave no result");
  return out;
}

void PostgresConnection::drop() {
  if (conn_ != nullptr) PQfinish(conn_);
  conn_ = nullptr;
}

void PostgresConnection::rollback_quietly() {
  if (lost()) return;
  PgResult ignored(PQexec(conn_, "ROLLBACK"));
}

void PostgresConnection::refuse(const std::string& operation, const std::string& message) const {
  throw std::runtime_error("fedstat store " + label_ + ": " + operation + ": " + message);
}

PostgresTransaction::PostgresTransaction(PostgresConnection& connection,
                                         const std::string& operation)
    : connection_(connection), operation_(operation) {
  connection_.exec("BEGIN", operation_);
}

PostgresTransaction::~PostgresTransaction() {
  if (open_) connection_.rollback_quietly();
}

void PostgresTransaction::commit() {
  open_ = false;
  connection_.exec("COMMIT", operation_, /*commit=*/true);
}

}  // namespace host
}  // namespace fedstat
