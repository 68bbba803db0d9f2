// Persist, then acknowledge: a child process appends events and reports each returned sequence
// number through a pipe, then dies by SIGKILL (at a seeded point, or killed by the parent while
// it is in the middle of appending). Every sequence the child reported must be in the reopened
// store with its payload, and the file must pass integrity_check.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <map>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "host_server/store/sqlite_store.h"
#include "tests/store/temp_dir.h"

namespace fedstat {
namespace host {
namespace {

constexpr uint32_t kTask = 1;
constexpr int kMaxEvents = 400;

enum class Death { kChildRaisesSigkill, kParentSendsSigkill };

struct CrashCase {
  uint32_t seed;
  Durability durability;
  Death death;
};

// The durability's word in a case's name and description.
const char* durability_name(Durability d) {
  return d == Durability::kSurvivesPowerLoss       ? "Full"
         : d == Durability::kStepsSurvivePowerLoss ? "Steps"
                                                   : "Normal";
}

void PrintTo(const CrashCase& c, std::ostream* out) {
  *out << "seed " << c.seed << ", " << durability_name(c.durability)
       << (c.death == Death::kChildRaisesSigkill ? ", child raises" : ", parent kills");
}

// Event number n's payload and client id: anything a replay can check.
std::vector<uint8_t> payload_of(uint64_t n) {
  std::vector<uint8_t> out(static_cast<size_t>(n * 37 % 301));
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(n * 131 + i);
  return out;
}

uint64_t client_of(uint64_t n) {
  return UINT64_MAX - n;
}

bool write_all(int fd, const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  while (size > 0) {
    const ssize_t written = write(fd, bytes, size);
    if (written <= 0) return false;
    bytes += written;
    size -= static_cast<size_t>(written);
  }
  return true;
}

// The child: batches of 1..8 events (seeded), one acknowledgement per returned append; dies by
// SIGKILL after `kill_after` acknowledgements, or runs until the parent kills it.
[[noreturn]] void run_child(const std::string& path, const CrashCase& c, int ack_fd,
                            int kill_after) {
  try {
    auto store = open_sqlite_store(path, {c.durability, 5000});
    std::mt19937 rng(c.seed);
    uint64_t next = 0;
    for (int acks = 0; next < static_cast<uint64_t>(kMaxEvents); ++acks) {
      if (c.death == Death::kChildRaisesSigkill && acks == kill_after) raise(SIGKILL);
      const uint64_t batch = 1 + rng() % 8;
      std::vector<NewEvent> events;
      for (uint64_t i = 0; i < batch; ++i, ++next) {
        events.push_back({kTask, client_of(next), EventKind::kDeviceMessage, payload_of(next)});
      }
      const uint64_t record[2] = {store->append_events(events), next};  // last sequence, count
      if (!write_all(ack_fd, record, sizeof record)) _exit(3);
    }
    raise(SIGKILL);  // the parent had not killed it yet: die the same way
  } catch (...) {
    _exit(2);
  }
  _exit(4);
}

class SqliteStoreCrash : public ::testing::TestWithParam<CrashCase> {};

TEST_P(SqliteStoreCrash, EveryAcknowledgedEventSurvivesKillNine) {
  const CrashCase c = GetParam();
  testing::TempDir dir;
  const std::string path = dir.file("store.db");
  open_sqlite_store(path)->put_task(kTask, "crash test");  // closed before the fork

  std::mt19937 rng(c.seed ^ 0x9e3779b9u);
  const int kill_after = static_cast<int>(rng() % 60);
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipe_fds[0]);
    run_child(path, c, pipe_fds[1], kill_after);
  }
  close(pipe_fds[1]);

  // Every acknowledgement: the batch's last sequence and how many events had been sent by then.
  std::map<uint64_t, uint64_t> acked;  // sequence -> event count
  uint64_t record[2];
  size_t have = 0;
  for (;;) {
    const ssize_t got =
        read(pipe_fds[0], reinterpret_cast<uint8_t*>(record) + have, sizeof record - have);
    if (got <= 0) break;
    have += static_cast<size_t>(got);
    if (have < sizeof record) continue;
    have = 0;
    acked[record[0]] = record[1];
    if (c.death == Death::kParentSendsSigkill && static_cast<int>(acked.size()) == kill_after) {
      kill(child, SIGKILL);  // the child is appending its next batch meanwhile
    }
  }
  close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "the child failed on its own (status " << status << ")";

  auto store = open_sqlite_store(path, {c.durability, 5000});
  EXPECT_EQ(store->integrity_check(), "ok");
  const std::vector<StoredEvent> events = store->events(kTask);
  const uint64_t acked_events = acked.empty() ? 0 : acked.rbegin()->second;
  ASSERT_GE(events.size(), acked_events) << "acknowledged events were lost";
  EXPECT_LE(events.size(), acked_events + 8) << "more than one unacknowledged batch stored";
  std::map<uint64_t, uint64_t> stored_count;  // sequence -> events up to and including it
  for (size_t n = 0; n < events.size(); ++n) {
    ASSERT_EQ(events[n].client_id, client_of(n)) << "event " << n;
    ASSERT_EQ(events[n].payload, payload_of(n)) << "event " << n;
    if (n > 0) {
      ASSERT_GT(events[n].sequence, events[n - 1].sequence);
    }
    stored_count[events[n].sequence] = n + 1;
  }
  for (const auto& [sequence, count] : acked) {
    const auto found = stored_count.find(sequence);
    ASSERT_NE(found, stored_count.end()) << "acknowledged sequence " << sequence << " is missing";
    EXPECT_EQ(found->second, count) << "sequence " << sequence;
  }
}

std::vector<CrashCase> crash_cases() {
  std::vector<CrashCase> out;
  for (uint32_t seed : {11u, 29u, 71u}) {
    for (Durability durability : {Durability::kSurvivesProcessCrash, Durability::kSurvivesPowerLoss,
                                  Durability::kStepsSurvivePowerLoss}) {
      for (Death death : {Death::kChildRaisesSigkill, Death::kParentSendsSigkill}) {
        out.push_back({seed, durability, death});
      }
    }
  }
  return out;
}

std::string case_name(const ::testing::TestParamInfo<CrashCase>& info) {
  const CrashCase& c = info.param;
  return std::string(durability_name(c.durability)) +
         (c.death == Death::kChildRaisesSigkill ? "ChildRaises" : "ParentKills") + "Seed" +
         std::to_string(c.seed);
}

INSTANTIATE_TEST_SUITE_P(Seeds, SqliteStoreCrash, ::testing::ValuesIn(crash_cases()), case_name);

}  // namespace
}  // namespace host
}  // namespace fedstat
