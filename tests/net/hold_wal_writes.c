// A test shim loaded into fedstat-server with LD_PRELOAD (answer_after_commit_test.cpp): every
// write to a SQLite write-ahead log (a file whose path ends in "-wal") waits while the file named
// by FEDSTAT_TEST_HOLD_FILE exists, so the test can keep the server's writer inside a commit.
// The first write that waits creates "<hold file>.entered", so the test knows when it does.
// Without FEDSTAT_TEST_HOLD_FILE every write goes straight through. Debian 12's libsqlite3 writes
// its files with pwrite64; pwrite and write are held too. Everything the wrappers read is set
// once, before main, by the constructor. Test code only: never linked into fedstat. Memory: two
// paths.
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

typedef ssize_t (*PositionedWrite)(int, const void*, size_t, off64_t);
typedef ssize_t (*Write)(int, const void*, size_t);

static PositionedWrite real_pwrite64;
static PositionedWrite real_pwrite;
static Write real_write;
static char hold_path[PATH_MAX];     // empty: nothing is ever held
static char entered_path[PATH_MAX];  // "<hold_path>.entered"

__attribute__((constructor)) static void find_the_real_writes(void) {
  real_pwrite64 = (PositionedWrite)dlsym(RTLD_NEXT, "pwrite64");
  real_pwrite = (PositionedWrite)dlsym(RTLD_NEXT, "pwrite");
  real_write = (Write)dlsym(RTLD_NEXT, "write");
  const char* hold = getenv("FEDSTAT_TEST_HOLD_FILE");
  if (hold != NULL && strlen(hold) + sizeof ".entered" <= sizeof hold_path) {
    strcpy(hold_path, hold);
    strcpy(entered_path, hold);
    strcat(entered_path, ".entered");
  }
}

static int is_write_ahead_log(int fd) {
  char link[32] = "/proc/self/fd/";
  char digits[16];
  int n = 0;
  for (unsigned value = (unsigned)fd; n == 0 || value != 0; value /= 10)
    digits[n++] = '0' + value % 10;
  size_t at = strlen(link);
  while (n > 0) link[at++] = digits[--n];
  link[at] = '\0';
  char path[PATH_MAX];
  const ssize_t length = readlink(link, path, sizeof path - 1);
  return length >= 4 && memcmp(path + length - 4, "-wal", 4) == 0;
}

static void wait_while_held(int fd) {
  if (hold_path[0] == '\0' || fd < 0 || access(hold_path, F_OK) != 0 || !is_write_ahead_log(fd)) {
    return;
  }
  const int marker = open(entered_path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  if (marker >= 0) close(marker);
  const struct timespec a_millisecond = {0, 1000000};
  while (access(hold_path, F_OK) == 0) nanosleep(&a_millisecond, NULL);
}

// A write before the constructor ran (another library's constructor) finds its function here.
ssize_t pwrite64(int fd, const void* buffer, size_t count, off64_t offset) {
  if (real_pwrite64 == NULL) real_pwrite64 = (PositionedWrite)dlsym(RTLD_NEXT, "pwrite64");
  wait_while_held(fd);
  return real_pwrite64(fd, buffer, count, offset);
}

ssize_t pwrite(int fd, const void* buffer, size_t count, off_t offset) {
  if (real_pwrite == NULL) real_pwrite = (PositionedWrite)dlsym(RTLD_NEXT, "pwrite");
  wait_while_held(fd);
  return real_pwrite(fd, buffer, count, offset);
}

ssize_t write(int fd, const void* buffer, size_t count) {
  if (real_write == NULL) real_write = (Write)dlsym(RTLD_NEXT, "write");
  wait_while_held(fd);
  return real_write(fd, buffer, count);
}
