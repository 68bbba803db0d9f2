// What every libFuzzer target of tests/fuzz shares: invariant checks that abort (so libFuzzer
// saves the input that broke them), and the seed corpus each target writes itself.
//
// Seeds: a target defines `void write_seeds(fedstat::fuzz::SeedWriter& out)` (valid inputs made
// with the SDK's own encoders, a few broken ones) and FEDSTAT_FUZZ_SEEDS(write_seeds); then
// `fuzz_<name> --write-seeds DIR` writes them to DIR and exits, before libFuzzer parses its flags
// (tests/fuzz/run_fuzz.cmake uses it to start every run from a fresh generated corpus). Nothing
// binary is committed but the regression inputs of tests/fuzz/corpus/<name>/, which we made.
// Host-only test code (full standard library). Memory: the seeds while they are written.
#ifndef FEDSTAT_TESTS_FUZZ_FUZZ_COMMON_H_
#define FEDSTAT_TESTS_FUZZ_FUZZ_COMMON_H_

#include <stdlib.h>  // mkdtemp

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "sdk/base/bytes.h"
#include "sdk/base/crc32.h"
#include "sdk/wire/envelope_codec.h"

namespace fedstat {
namespace fuzz {

// The "CRC repair" mode of the targets whose format ends with a CRC-32 of everything before it
// (sketch reports, histogram blobs, stored blobs): recompute it, so that mutated inputs reach the
// parser behind the check. Inputs shorter than 4 bytes stay as they are.
inline void repair_trailing_crc(std::vector<uint8_t>& bytes) {
  if (bytes.size() < 4) return;
  const size_t body = bytes.size() - 4;
  store_le32(bytes.data() + body, crc32(ByteSpan(bytes.data(), body)));
}

// An invariant broken: print it and abort, so libFuzzer reports the input as a crash.
#define FUZZ_CHECK(condition)                                                          \
  do {                                                                                 \
    if (!(condition)) {                                                                \
      std::fprintf(stderr, "fuzz invariant broken at %s:%d: %s\n", __FILE__, __LINE__, \
                   #condition);                                                        \
      std::abort();                                                                    \
    }                                                                                  \
  } while (0)

// Seeds of the message-sequence targets: an envelope of one message kind, its body zeroed, and
// an envelope's encoding (which must succeed: seeds are made of valid messages).
inline wire::Envelope empty_envelope(pb_size_t tag) {
  wire::Envelope e = wire::make_envelope();
  e.which_body = tag;
  std::memset(&e.body, 0, sizeof e.body);
  return e;
}
inline std::vector<uint8_t> encoded(const wire::Envelope& e) {
  std::vector<uint8_t> out(wire::kMaxEnvelopeBytes);
  const auto n = wire::encode_envelope(e, MutableByteSpan(out.data(), out.size()));
  FUZZ_CHECK(n.ok());
  out.resize(n.value());
  return out;
}

// A scratch directory for this fuzz process, made once (in /dev/shm where it exists, memory-
// backed, else /tmp) and removed when the process exits normally.
inline const std::string& scratch_directory() {
  static std::string directory;
  if (directory.empty()) {
    char pattern[] = "/dev/shm/fedstat-fuzz-XXXXXX";
    char fallback[] = "/tmp/fedstat-fuzz-XXXXXX";
    const char* made = mkdtemp(pattern);
    if (made == nullptr) made = mkdtemp(fallback);
    FUZZ_CHECK(made != nullptr);
    directory = made;
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(directory, ignored);
    });
  }
  return directory;
}

class SeedWriter {
 public:
  explicit SeedWriter(std::string dir) : dir_(std::move(dir)) {}
  void add(const uint8_t* data, size_t size) {
    char name[32];
    std::snprintf(name, sizeof(name), "/seed-%04d", count_++);
    const std::string path = dir_ + name;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0) {
      std::fprintf(stderr, "cannot write seed %s\n", path.c_str());
      std::exit(1);
    }
  }
  void add(const std::vector<uint8_t>& bytes) { add(bytes.data(), bytes.size()); }
  int count() const { return count_; }

 private:
  std::string dir_;
  int count_ = 0;
};

// Handles `--write-seeds DIR` (anywhere on the command line) before libFuzzer sees the flags.
inline void handle_seed_flag(int argc, char** argv, void (*write_seeds)(SeedWriter&)) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--write-seeds") == 0) {
      SeedWriter out(argv[i + 1]);
      write_seeds(out);
      std::printf("wrote %d seeds to %s\n", out.count(), argv[i + 1]);
      std::exit(0);
    }
  }
}

}  // namespace fuzz
}  // namespace fedstat

#define FEDSTAT_FUZZ_SEEDS(write_seeds)                          \
  extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) { \
    fedstat::fuzz::handle_seed_flag(*argc, *argv, write_seeds);  \
    return 0;                                                    \
  }

#endif  // FEDSTAT_TESTS_FUZZ_FUZZ_COMMON_H_
