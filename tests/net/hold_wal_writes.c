// A test shim loaded into fedstat-server with LD_PRELOAD (answer_after_commit_test.cpp): every
// write to a SQLite write-ahead log (a file whose path ends in "-wal") waits while the file named
// by FEDSTAT_TEST_HOLD_FILE exists, so the test can keep the server's writer inside a commit.
// The first write that waits creates "<hold file>.entered", so the test knows when it does.
// Without FEDSTAT_TEST_HOLD_FILE every write goes straight through. Test code only: never linked
// into fedstat. Memory: none.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static int is_write_ahead_log(int fd) {
  char link[64];
  char path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n < 4) return 0;
  path[n] = '\0';
  return strcmp(path + n - 4, "-wal") == 0;
}

static void wait_while_held(int fd) {
  const char* hold = getenv("FEDSTAT_TEST_HOLD_FILE");
  if (hold == NULL || access(hold, F_OK) != 0 || !is_write_ahead_log(fd)) return;
  char entered[PATH_MAX];
  snprintf(entered, sizeof entered, "%s.entered", hold);
  const int marker = open(entered, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  if (marker >= 0) close(marker);
  const struct timespec a_millisecond = {0, 1000000};
  while (access(hold, F_OK) == 0) nanosleep(&a_millisecond, NULL);
}

ssize_t pwrite64(int fd, const void* buffer, size_t count, off_t offset) {
  static ssize_t (*real)(int, const void*, size_t, off_t) = NULL;
  if (real == NULL)
    real = (ssize_t(*)(int, const void*, size_t, off_t))dlsym(RTLD_NEXT, "pwrite64");
  wait_while_held(fd);
  return real(fd, buffer, count, offset);
}

ssize_t pwrite(int fd, const void* buffer, size_t count, off_t offset) {
  static ssize_t (*real)(int, const void*, size_t, off_t) = NULL;
  if (real == NULL) real = (ssize_t(*)(int, const void*, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
  wait_while_held(fd);
  return real(fd, buffer, count, offset);
}

ssize_t write(int fd, const void* buffer, size_t count) {
  static ssize_t (*real)(int, const void*, size_t) = NULL;
  if (real == NULL) real = (ssize_t(*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
  wait_while_held(fd);
  return real(fd, buffer, count);
}
