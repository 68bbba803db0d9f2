// tools/progress.h: the progress line of a long run is drawn only on a terminal, only after
// kProgressDelay, at most every kProgressInterval, and erased at the end; nothing at all when the
// output is not a terminal (a pipe, a log file, a test's captured stderr).
#include "host_server/tools/progress.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace fedstat {
namespace tools {
namespace {

using std::chrono::milliseconds;

class ProgressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = std::tmpfile();
    ASSERT_NE(out_, nullptr);
  }
  void TearDown() override { std::fclose(out_); }

  Progress::Clock clock() {
    return [this] { return std::chrono::steady_clock::time_point(now_); };
  }
  std::string written() {
    std::fflush(out_);
    std::rewind(out_);
    std::string text;
    char buffer[256];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), out_)) > 0) text.append(buffer, n);
    return text;
  }

  std::FILE* out_ = nullptr;
  milliseconds now_{1000};
};

TEST_F(ProgressTest, NothingIsDrawnWhenTheOutputIsNotATerminal) {
  {
    Progress progress("fedstat-kl", "run", 10, out_, /*terminal=*/false, clock());
    for (uint64_t done = 0; done < 10; ++done) {
      now_ += milliseconds(5000);
      progress.update(done);
    }
  }
  EXPECT_EQ(written(), "");
}

TEST_F(ProgressTest, ARunShorterThanTheDelayDrawsNothing) {
  {
    Progress progress("fedstat-kl", "run", 10, out_, /*terminal=*/true, clock());
    now_ += kProgressDelay - milliseconds(1);
    progress.update(9);
  }
  EXPECT_EQ(written(), "");
}

TEST_F(ProgressTest, ALongRunRedrawsOneLineAtMostEveryIntervalAndErasesIt) {
  Progress progress("fedstat-kl", "run", 200, out_, /*terminal=*/true, clock());
  now_ += kProgressDelay;
  progress.update(40);
  EXPECT_EQ(written(), "\r\033[Kfedstat-kl: run 40 of 200 (20%)");
  now_ += kProgressInterval - milliseconds(1);
  progress.update(41);  // too soon: not drawn
  now_ += milliseconds(1);
  progress.update(100);
  EXPECT_EQ(written(),
            "\r\033[Kfedstat-kl: run 40 of 200 (20%)\r\033[Kfedstat-kl: run 100 of 200 (50%)");
  progress.finish();
  const std::string text = written();
  EXPECT_EQ(text.substr(text.size() - 4), "\r\033[K");
  progress.finish();  // erased once: nothing more
  EXPECT_EQ(written(), text);
}

}  // namespace
}  // namespace tools
}  // namespace fedstat
