#include "tests/store/postgres_cluster.h"

#include <libpq-fe.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace fedstat {
namespace testing {
namespace {

std::string read_port(const std::string& dir) {
  std::ifstream in(dir + "/port");
  std::string port;
  if (!(in >> port)) throw std::runtime_error("postgres cluster " + dir + ": no port file");
  return port;
}

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

PostgresCluster::PostgresCluster(std::string dir, bool owned)
    : dir_(std::move(dir)), owned_(owned) {}

std::unique_ptr<PostgresCluster> PostgresCluster::start() {
  std::string pattern = "/tmp/fedstat-pg-XXXXXX";  // short: the socket path has 107 bytes
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  std::unique_ptr<PostgresCluster> cluster(new PostgresCluster(buffer.data(), true));
  cluster->script("start");
  cluster->port_ = read_port(cluster->dir_);
  return cluster;
}

std::unique_ptr<PostgresCluster> PostgresCluster::attach(const std::string& dir) {
  std::unique_ptr<PostgresCluster> cluster(new PostgresCluster(dir, false));
  cluster->port_ = read_port(dir);
  return cluster;
}

PostgresCluster::~PostgresCluster() {
  if (!owned_) return;
  try {
    script("stop");
  } catch (const std::exception&) {
    // Nothing more to do in a destructor: the script already said why on stderr.
  }
}

void PostgresCluster::script(const std::string& command) const {
  const std::string line = std::string("bash ") + FEDSTAT_POSTGRES_CLUSTER_SCRIPT + " " + command +
                           " " + shell_quoted(dir_);
  if (std::system(line.c_str()) != 0) throw std::runtime_error("failed: " + line);
}

std::string PostgresCluster::conninfo(const std::string& database) const {
  return "host=" + dir_ + " port=" + port_ + " user=fedstat dbname=" + database +
         " connect_timeout=10";
}

std::string PostgresCluster::uri(const std::string& database) const {
  return "postgresql://fedstat@/" + database + "?host=" + dir_ + "&port=" + port_;
}

void PostgresCluster::execute(const std::string& database, const std::string& sql) const {
  PGconn* connection = PQconnectdb(conninfo(database).c_str());
  std::string error;
  if (PQstatus(connection) != CONNECTION_OK) {
    error = PQerrorMessage(connection);
  } else {
    PGresult* result = PQexec(connection, sql.c_str());
    const ExecStatusType status = PQresultStatus(result);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      error = PQresultErrorMessage(result);
    }
    PQclear(result);
  }
  PQfinish(connection);
  if (!error.empty()) throw std::runtime_error("postgres cluster: " + sql + ": " + error);
}

std::string PostgresCluster::create_database() {
  static std::atomic<int> counter{0};
  const std::string name =
      "t_" + std::to_string(getpid()) + "_" + std::to_string(counter.fetch_add(1));
  execute("postgres", "CREATE DATABASE " + name);
  return name;
}

void PostgresCluster::halt() {
  script("halt");
}

void PostgresCluster::resume() {
  script("resume");
}

PostgresCluster& shared_postgres_cluster() {
  static std::unique_ptr<PostgresCluster> cluster = [] {
    const char* dir = std::getenv("FEDSTAT_TEST_POSTGRES_DIR");
    return dir != nullptr && *dir != '\0' ? PostgresCluster::attach(dir) : PostgresCluster::start();
  }();
  return *cluster;
}

}  // namespace testing
}  // namespace fedstat
