// TaggForwarder: retries an unreachable TAgg a bounded number of times, never retries a refusal,
// and reports every try (the last one final) — with a scripted exchange instead of TLS.
#include "host_server/tagg/tagg_forwarder.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

namespace fedstat {
namespace host {
namespace {

struct Script {
  std::mutex mutex;
  std::condition_variable done;
  std::vector<TaggAnswer::Kind> answers;  // one per try, the last repeated
  size_t tries = 0;
  std::vector<TaggAttempt> delivered;
  std::vector<std::vector<uint64_t>> sent;

  TaggAnswer exchange(const ExactAggregate& a) {
    std::lock_guard<std::mutex> lock(mutex);
    sent.push_back(a.words);
    TaggAnswer answer;
    answer.kind = answers[std::min(tries++, answers.size() - 1)];
    if (answer.kind == TaggAnswer::Kind::kReleased) answer.result_json = "{\"estimate\":1}";
    return answer;
  }
  void deliver(const TaggAttempt& a) {
    std::lock_guard<std::mutex> lock(mutex);
    delivered.push_back(a);
    if (a.final) done.notify_all();
  }
  // Waits (bounded) for `finals` final reports.
  void wait(size_t finals) {
    std::unique_lock<std::mutex> lock(mutex);
    ASSERT_TRUE(done.wait_for(lock, std::chrono::seconds(20), [&] {
      size_t n = 0;
      for (const auto& a : delivered) n += a.final;
      return n >= finals;
    }));
  }
};

TaggEndpoint endpoint(uint32_t attempts) {
  TaggEndpoint e;
  e.endpoint = "127.0.0.1:9";
  e.identity = "c";
  e.attempts = attempts;
  return e;
}

std::unique_ptr<TaggForwarder> forwarder(Script& s, uint32_t attempts) {
  return std::make_unique<TaggForwarder>(
      endpoint(attempts), [&s](const TaggAttempt& a) { s.deliver(a); },
      [&s](const TaggEndpoint&, const ExactAggregate& a) { return s.exchange(a); },
      /*first_retry_ms=*/1);
}

TEST(TaggForwarder, RetriesAnUnreachableTaggUntilItAnswers) {
  Script s;
  s.answers = {TaggAnswer::Kind::kUnreachable, TaggAnswer::Kind::kUnreachable,
               TaggAnswer::Kind::kReleased};
  auto f = forwarder(s, 5);
  f->submit(ExactAggregate{4, 6, {1, 2, 3}});
  s.wait(1);
  f.reset();
  ASSERT_EQ(s.delivered.size(), 3u);
  EXPECT_FALSE(s.delivered[0].final);
  EXPECT_EQ(s.delivered[0].retry_in_ms, 1u);
  EXPECT_EQ(s.delivered[1].retry_in_ms, 2u);  // doubling
  EXPECT_TRUE(s.delivered[2].final);
  EXPECT_EQ(s.delivered[2].attempt, 3u);
  EXPECT_EQ(s.delivered[2].answer.result_json, "{\"estimate\":1}");
  for (const auto& words : s.sent) EXPECT_EQ(words, (std::vector<uint64_t>{1, 2, 3}));
}

TEST(TaggForwarder, GivesUpAfterItsAttemptsAndNeverRetriesARefusal) {
  Script s;
  s.answers = {TaggAnswer::Kind::kUnreachable};
  auto f = forwarder(s, 3);
  f->submit(ExactAggregate{4, 6, {1}});
  s.wait(1);
  ASSERT_EQ(s.delivered.size(), 3u);
  EXPECT_TRUE(s.delivered[2].final);
  EXPECT_EQ(s.delivered[2].answer.kind, TaggAnswer::Kind::kUnreachable);

  Script r;
  r.answers = {TaggAnswer::Kind::kRefused};
  auto g = forwarder(r, 3);
  g->submit(ExactAggregate{4, 6, {1}});
  g->submit(ExactAggregate{5, 6, {2}});  // the next aggregate still goes out
  r.wait(2);
  ASSERT_EQ(r.delivered.size(), 2u);
  EXPECT_EQ(r.delivered[0].task_id, 4u);
  EXPECT_EQ(r.delivered[1].task_id, 5u);
  EXPECT_TRUE(r.delivered[0].final && r.delivered[1].final);
}

TEST(TaggForwarder, StopsPromptlyWhileWaitingToRetry) {
  Script s;
  s.answers = {TaggAnswer::Kind::kUnreachable};
  auto f = std::make_unique<TaggForwarder>(
      endpoint(100), [&s](const TaggAttempt& a) { s.deliver(a); },
      [&s](const TaggEndpoint&, const ExactAggregate& a) { return s.exchange(a); },
      /*first_retry_ms=*/60000);
  f->submit(ExactAggregate{4, 6, {1}});
  for (int i = 0; i < 2000; ++i) {
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      if (!s.delivered.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const auto start = std::chrono::steady_clock::now();
  f.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(s.delivered.size(), 1u);
}

}  // namespace
}  // namespace host
}  // namespace fedstat
