// The store factory's spec (store/store_spec.h, store/store_factory.h): which backend a "store"
// field names, garbage refused, passwords redacted, and the factory opening each kind.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "host_server/store/store_factory.h"
#include "host_server/store/store_spec.h"
#include "tests/store/temp_dir.h"

#ifdef FEDSTAT_WITH_POSTGRESQL
#include "tests/store/postgres_cluster.h"
#endif

namespace fedstat {
namespace host {
namespace {

TEST(StoreSpec, PlainPathAndSqlitePrefixNameSqlite) {
  for (const auto& [spec, path] :
       {std::pair<std::string, std::string>{"fedstat-server.db", "fedstat-server.db"},
        {"/var/lib/fedstat/store.db", "/var/lib/fedstat/store.db"},
        {"sqlite:/var/lib/x.db", "/var/lib/x.db"},
        {"sqlite:relative/x.db", "relative/x.db"},
        {"dir:with:colons/x.db", "dir:with:colons/x.db"}}) {
    const StoreSpec parsed = parse_store_spec(spec);
    EXPECT_EQ(parsed.backend, StoreBackend::kSqlite) << spec;
    EXPECT_EQ(parsed.location, path) << spec;
  }
}

TEST(StoreSpec, PostgresUrisNamePostgresql) {
  for (const std::string spec :
       {"postgresql://fedstat@db.example:5432/fedstat", "postgres://u:p@h/d?sslmode=require",
        "postgresql:///fedstat?host=/tmp/x&port=5433"}) {
    const StoreSpec parsed = parse_store_spec(spec);
    EXPECT_EQ(parsed.backend, StoreBackend::kPostgresql) << spec;
    EXPECT_EQ(parsed.location, spec);
  }
}

TEST(StoreSpec, GarbageIsRefusedByName) {
  for (const std::string spec : {"", "sqlite:", "mysql://h/db", "postgresql://", "http://x"}) {
    EXPECT_THROW(parse_store_spec(spec), std::invalid_argument) << spec;
  }
  try {
    parse_store_spec("mysql://root:hunter2@h/db");
    FAIL();
  } catch (const std::invalid_argument& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("unknown scheme mysql"), std::string::npos) << what;
    EXPECT_EQ(what.find("hunter2"), std::string::npos) << what;
  }
}

TEST(StoreSpec, RedactsEveryPasswordForm) {
  EXPECT_EQ(redacted_store_spec("postgresql://fedstat:hunter2@db:5432/fedstat"),
            "postgresql://fedstat:***@db:5432/fedstat");
  EXPECT_EQ(redacted_store_spec("postgres://u:p%40ss:x@h/d"), "postgres://u:***@h/d");
  EXPECT_EQ(redacted_store_spec("postgresql://fedstat@h/d?password=hunter2&sslmode=require"),
            "postgresql://fedstat@h/d?password=***&sslmode=require");
  EXPECT_EQ(redacted_store_spec("host=/tmp/x password=hunter2 dbname=d"),
            "host=/tmp/x password=*** dbname=d");
  EXPECT_EQ(redacted_store_spec("host=h password='a b' dbname=d"), "host=h password=*** dbname=d");
  // Nothing to redact: unchanged.
  EXPECT_EQ(redacted_store_spec("postgresql://fedstat@h:5432/d"), "postgresql://fedstat@h:5432/d");
  EXPECT_EQ(redacted_store_spec("postgresql://h/d?x=@y"), "postgresql://h/d?x=@y");
  EXPECT_EQ(redacted_store_spec("/var/lib/fedstat/store.db"), "/var/lib/fedstat/store.db");
}

TEST(StoreFactory, OpensSqliteForAPathAndTheSqlitePrefix) {
  testing::TempDir dir;
  open_store(dir.file("a.db"))->put_task(1, "one");
  EXPECT_EQ(open_store("sqlite:" + dir.file("a.db"))->tasks().size(), 1u);
}

TEST(StoreFactory, OpensPostgresqlForAUri) {
#ifdef FEDSTAT_WITH_POSTGRESQL
  EXPECT_TRUE(postgresql_store_available());
  testing::PostgresCluster& cluster = testing::shared_postgres_cluster();
  const std::string uri = cluster.uri(cluster.create_database());
  open_store(uri)->put_task(2, "two");
  EXPECT_EQ(open_store(uri)->tasks().size(), 1u);
#else
  EXPECT_FALSE(postgresql_store_available());
  try {
    open_store("postgresql://h/d");
    FAIL();
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("built without PostgreSQL (libpq-dev)"),
              std::string::npos);
  }
#endif
}

}  // namespace
}  // namespace host
}  // namespace fedstat
