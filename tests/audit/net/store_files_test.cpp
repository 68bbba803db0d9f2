// Issue 39 item 9: the store's files hold every TRUSTED and TAGG device's exact words, and the
// credentials file every device's key: the server creates its store (database, -wal, -shm; the
// TAgg's tagg.db is the same code) for its owner only, and a directory it creates for it 0700,
// whatever the umask; and it warns, naming the file and the fix, about a credentials file or an
// existing store that others can read. Item 10 (a corrupt store): the store is checked (PRAGMA
// quick_check) when it is opened, and the server refuses to serve it, exiting non-zero with a
// message that says so. Host only.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "host_server/store/sqlite_store.h"
#include "tests/audit/net/audit_server.h"
#include "tests/common/server_process.h"

namespace fedstat {
namespace audit {
namespace {

using namespace std::chrono_literals;

// Runs the test body with the common umask 022 (files 0644 unless their creator says otherwise),
// restoring the process's own after.
class CommonUmask {
 public:
  CommonUmask() : saved_(umask(022)) {}
  ~CommonUmask() { umask(saved_); }

 private:
  mode_t saved_;
};

std::string octal(int mode) {
  char text[16];
  std::snprintf(text, sizeof(text), "%04o", mode);
  return text;
}

TEST(StoreFiles, TheDatabaseItsWalAndItsShmAreTheOwnersOnly) {
  const CommonUmask umask_022;
  ServerDir files;
  const fs::path db = files.dir / "server.db";
  auto store = host::open_sqlite_store(db.string());
  store->put_task(1, "{}");  // a commit: the WAL holds it, the -shm indexes it
  EXPECT_EQ(octal(mode_of(db)), "0600");
  EXPECT_EQ(octal(mode_of(db.string() + "-wal")), "0600");
  EXPECT_EQ(octal(mode_of(db.string() + "-shm")), "0600");
}

TEST(StoreFiles, ADirectoryMadeForTheStoreIsTheOwnersOnly) {
  const CommonUmask umask_022;
  ServerDir files;
  const fs::path db = files.dir / "state" / "fedstat" / "server.db";
  std::unique_ptr<host::Store> store;
  ASSERT_NO_THROW(store = host::open_sqlite_store(db.string()));
  EXPECT_EQ(octal(mode_of(files.dir / "state")), "0700");
  EXPECT_EQ(octal(mode_of(files.dir / "state" / "fedstat")), "0700");
  EXPECT_EQ(octal(mode_of(db)), "0600");
}

// A running collector: its store is its own, and a credentials file others can read is named in
// a warning with the command that fixes it.
TEST(StoreFiles, TheServerKeepsItsStoreToItselfAndWarnsAboutReadableCredentials) {
  const CommonUmask umask_022;  // the server inherits it
  ServerDir files;
  const fs::path credentials = files.dir / "devices.txt";
  std::ofstream(credentials) << "1 " << host::encode_hex(files.key(1).data(), 32) << "\n";
  ASSERT_EQ(chmod(credentials.c_str(), 0644), 0);
  files.write_config({{"credentials", credentials.string()}});
  testing::ServerProcess server(files.config(), files.port_file(), files.log());
  const fs::path db = files.dir / "server.db";
  EXPECT_EQ(octal(mode_of(db)), "0600");
  EXPECT_EQ(octal(mode_of(db.string() + "-wal")), "0600");
  EXPECT_EQ(octal(mode_of(db.string() + "-shm")), "0600");
  const std::string log = file_text(files.log());
  const size_t warning = log.find("\"event\":\"warning\"");
  EXPECT_NE(warning, std::string::npos) << log;
  EXPECT_NE(log.find(credentials.string(), warning == std::string::npos ? 0 : warning),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("chmod 600"), std::string::npos) << log;
  server.stop();
  EXPECT_TRUE(server.exited_cleanly());
}

// A store made before this fix (0644) is not changed behind the operator's back, but named.
TEST(StoreFiles, TheServerWarnsAboutAStoreOthersCanRead) {
  ServerDir files;
  const fs::path db = files.dir / "server.db";
  host::open_sqlite_store(db.string())->put_task(7, "{}");  // closed: checkpointed, no -wal left
  ASSERT_EQ(chmod(db.c_str(), 0644), 0);
  files.write_config();
  testing::ServerProcess server(files.config(), files.port_file(), files.log());
  const std::string log = file_text(files.log());
  const size_t warning = log.find("\"event\":\"warning\"");
  ASSERT_NE(warning, std::string::npos) << log;
  EXPECT_NE(log.find(db.string(), warning), std::string::npos) << log;
  EXPECT_NE(log.find("chmod 600", warning), std::string::npos) << log;
}

// Review L1: the store's path in a directory another user can write. A symbolic link planted at
// the store's path, or at its -wal's, is not followed (SQLite would create the store, or its WAL,
// wherever the link points: a directory the link's author chose); the store is refused.
TEST(StoreFiles, ALinkAtTheStoreOrItsWalIsNotFollowed) {
  const CommonUmask umask_022;
  ServerDir files;
  const fs::path elsewhere = files.dir / "elsewhere";
  fs::create_directory(elsewhere);
  for (const char* suffix : {"", "-wal"}) {
    const fs::path db = files.dir / (std::string("server") + suffix + ".db");
    const fs::path link = db.string() + suffix;  // server.db, or server-wal.db's -wal
    const fs::path target = elsewhere / (std::string("stolen") + suffix);
    fs::create_symlink(target, link);
    std::string refusal;
    try {
      host::open_sqlite_store(db.string())->put_task(1, "{}");
    } catch (const std::runtime_error& e) {
      refusal = e.what();
    }
    EXPECT_FALSE(fs::exists(target)) << "the store's file was made through the link at " << link
                                     << " (mode " << octal(mode_of(target)) << ")";
    EXPECT_NE(refusal.find("symbolic link"), std::string::npos)
        << "a link at " << link << ": " << (refusal.empty() ? "opened" : refusal);
  }
}

// Review L1: another user pre-creates an empty 0600 store file it owns: the server would fill it
// with every device's words for its owner to read. A store not owned by the server's user is
// refused.
TEST(StoreFiles, AStoreOwnedByAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to make a file owned by another user";
  ServerDir files;
  const fs::path db = files.dir / "server.db";
  std::ofstream(db).close();
  ASSERT_EQ(chmod(db.c_str(), 0600), 0);
  ASSERT_EQ(chown(db.c_str(), kOtherUser, kOtherUser), 0);
  std::string refusal;
  try {
    host::open_sqlite_store(db.string())->put_task(1, "{}");
  } catch (const std::runtime_error& e) {
    refusal = e.what();
  }
  EXPECT_NE(refusal.find("owned by uid 65534"), std::string::npos)
      << (refusal.empty() ? "another user's store was filled" : refusal);
}

// Review L1: a store in a directory group or others can write (they can plant files beside it)
// is named in a warning at start.
TEST(StoreFiles, TheServerWarnsAboutAStoreDirectoryOthersCanWrite) {
  ServerDir files;
  const fs::path shared = files.dir / "shared";
  fs::create_directory(shared);
  ASSERT_EQ(chmod(shared.c_str(), 01777), 0);
  files.write_config({{"store", (shared / "server.db").string()}});
  testing::ServerProcess server(files.config(), files.port_file(), files.log());
  const std::string log = file_text(files.log());
  const size_t warning = log.find("\"detail\":\"the store's directory " + shared.string());
  EXPECT_NE(warning, std::string::npos) << log;
}

// A store with one damaged page: a leaf of its events table (task 7's, a task no config here
// declares, so that nothing reads it before the check would) gets an invalid page type. SQLite
// opens the file and its schema reads.
void damage_a_page(const fs::path& db) {
  {
    auto store = host::open_sqlite_store(db.string());
    store->put_task(7, "{}");
    std::vector<host::NewEvent> events;
    for (uint64_t client = 1; client <= 200; ++client) {
      host::NewEvent event;
      event.task_id = 7;
      event.client_id = client;
      event.payload.assign(200, static_cast<uint8_t>(client));
      events.push_back(event);
    }
    store->append_events(events);
  }  // closed: the WAL is checkpointed into the file
  std::fstream file(db, std::ios::in | std::ios::out | std::ios::binary);
  unsigned char header[18];
  file.read(reinterpret_cast<char*>(header), sizeof(header));
  const size_t page = size_t{header[16]} << 8 | header[17];
  std::vector<size_t> table_leaves;  // pages (after the first) whose type is 13, a table leaf
  for (size_t p = 1; p < fs::file_size(db) / page; ++p) {
    char type = 0;
    file.seekg(static_cast<std::streamoff>(p * page));
    file.read(&type, 1);
    if (type == 13) table_leaves.push_back(p);
  }
  ASSERT_GE(table_leaves.size(), 3u);  // 200 events of 200 bytes: a dozen leaves
  file.seekp(static_cast<std::streamoff>(table_leaves[table_leaves.size() / 2] * page));
  const char invalid = 0x7f;
  file.write(&invalid, 1);
}

TEST(StoreCheck, ADamagedStoreIsRefusedWhenOpened) {
  ServerDir files;
  const fs::path db = files.dir / "server.db";
  ASSERT_NO_FATAL_FAILURE(damage_a_page(db));
  try {
    host::open_sqlite_store(db.string());
    ADD_FAILURE() << "a damaged store was opened";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("quick_check"), std::string::npos) << e.what();
  }
}

TEST(StoreCheck, TheServerRefusesToServeADamagedStore) {
  ServerDir files;
  ASSERT_NO_FATAL_FAILURE(damage_a_page(files.dir / "server.db"));
  files.write_config();
  Child server({FEDSTAT_SERVER_BINARY, "--config", files.config().string(), "--port-file",
                files.port_file().string()},
               files.dir / "stdout", files.log());
  const std::optional<int> code = server.wait(20s);
  ASSERT_TRUE(code.has_value()) << "the server still runs on a damaged store: "
                                << file_text(files.log());
  EXPECT_EQ(*code, 1) << file_text(files.log());
  EXPECT_FALSE(fs::exists(files.port_file())) << "it listened first";
  EXPECT_NE(file_text(files.log()).find("quick_check"), std::string::npos)
      << file_text(files.log());
}

}  // namespace
}  // namespace audit
}  // namespace fedstat
