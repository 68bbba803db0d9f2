// A throw-away PostgreSQL cluster for the store tests (postgres_cluster.sh: initdb and pg_ctl from
// the Debian binaries, as the `postgres` user when run as root), and a fresh database per test.
// shared_postgres_cluster() is the ctest fixture's (FEDSTAT_TEST_POSTGRES_DIR, started and removed
// by the fixture's setup and cleanup tests however the tests end) or else one this process starts
// and stops at exit; PostgresCluster::start() is a private one (for a test that halts it).
// Errors: std::runtime_error when the cluster cannot be started or a database made.
// Memory: a few strings. Paper: none.
#ifndef FEDSTAT_TESTS_STORE_POSTGRES_CLUSTER_H_
#define FEDSTAT_TESTS_STORE_POSTGRES_CLUSTER_H_

#include <memory>
#include <string>

namespace fedstat {
namespace testing {

class PostgresCluster {
 public:
  // A new cluster in a new directory under /tmp; stopped and removed by the destructor.
  static std::unique_ptr<PostgresCluster> start();
  // The cluster whose directory the ctest fixture made (not stopped by the destructor).
  static std::unique_ptr<PostgresCluster> attach(const std::string& dir);
  ~PostgresCluster();
  PostgresCluster(const PostgresCluster&) = delete;
  PostgresCluster& operator=(const PostgresCluster&) = delete;

  // key=value conninfo for `database` over the Unix socket in the cluster's directory.
  std::string conninfo(const std::string& database) const;
  // The same as a libpq URI (what a server config holds).
  std::string uri(const std::string& database) const;
  // CREATE DATABASE with a name no other test of any process uses; returns the name.
  std::string create_database();
  // Runs `sql` in `database` (std::runtime_error naming PostgreSQL's message when it fails).
  void execute(const std::string& database, const std::string& sql) const;
  void halt();    // pg_ctl stop -m immediate: a crash, the data kept
  void resume();  // start it again (crash recovery)

 private:
  PostgresCluster(std::string dir, bool owned);
  void script(const std::string& command) const;

  std::string dir_;
  std::string port_;
  bool owned_;
};

// The cluster every test of this process shares (see above).
PostgresCluster& shared_postgres_cluster();

}  // namespace testing
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_STORE_POSTGRES_CLUSTER_H_
