// Fuzz target: platform::load_blob (platform/blob_store.cpp over the POSIX backend) reading a
// stored blob file (platform/blob_format.h: magic "FSB1", payload length n, n bytes, CRC-32). The
// input is written as the file's content, in a temporary directory this process makes (removed
// at exit), and loaded. The first input byte is the mode, the rest the file:
//   bit 0: repair the CRC-32 (recompute it over the file and store it in its last 4 bytes), so
//          that mutations get past the CRC; clear: the bytes raw;
//   bit 1: first set the length field (bytes 4..7) to the file's size − 12;
//   bits 2..3: the output buffer's size: 0 the file's size − 12 (the payload it can hold), 1 one
//          byte less, 2 16 bytes, 3 4096 bytes.
// Invariants beyond "no crash": load_blob's verdict is the format's — kDataLoss for a file
// shorter than 12 bytes, a wrong magic, a length field other than size − 12 (or above
// kMaxBlobPayloadBytes) or a failed CRC; kResourceExhausted when the payload is larger than the
// buffer; otherwise the payload size n, with n ≤ the buffer's size, n = the length field, and the
// buffer's first n bytes the file's payload. (On an error the buffer's contents are unspecified:
// platform.h.) The buffer is exactly its size on the heap, so ASan catches a write past it.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "platform/blob_format.h"
#include "platform/platform.h"
#include "platform/posix/posix_platform.h"
#include "sdk/base/bytes.h"
#include "sdk/base/crc32.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

using fedstat::ByteSpan;
using fedstat::MutableByteSpan;
using fedstat::StatusCode;
namespace platform = fedstat::platform;

constexpr int kRepairCrc = 1;
constexpr int kRepairLength = 2;
constexpr char kName[] = "fuzzed-blob";

std::string g_directory;

void remove_directory() {
  if (g_directory.empty()) return;
  unlink((g_directory + "/" + kName).c_str());
  unlink((g_directory + "/" + kName + ".tmp").c_str());
  rmdir(g_directory.c_str());
}

// The process's own storage directory, made on first use: under $TMPDIR, else /dev/shm (no disk
// writes), else /tmp.
const std::string& directory() {
  if (!g_directory.empty()) return g_directory;
  const char* base = getenv("TMPDIR");
  struct stat info;
  if (base == nullptr || base[0] == '\0') {
    base = stat("/dev/shm", &info) == 0 && S_ISDIR(info.st_mode) && access("/dev/shm", W_OK) == 0
               ? "/dev/shm"
               : "/tmp";
  }
  std::string pattern = std::string(base) + "/fedstat-fuzz-blob-store-XXXXXX";
  FUZZ_CHECK(mkdtemp(&pattern[0]) != nullptr);
  g_directory = pattern;
  FUZZ_CHECK(platform::posix::set_storage_directory(g_directory.c_str()).ok());
  std::atexit(remove_directory);
  return g_directory;
}

void write_file(const std::vector<uint8_t>& content) {
  const std::string path = directory() + "/" + kName;
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  FUZZ_CHECK(fd >= 0);
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = write(fd, content.data() + done, content.size() - done);
    FUZZ_CHECK(n > 0);
    done += static_cast<size_t>(n);
  }
  FUZZ_CHECK(close(fd) == 0);
}

std::vector<uint8_t> read_file() {
  const std::string path = directory() + "/" + kName;
  std::vector<uint8_t> content;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  FUZZ_CHECK(fd >= 0);
  uint8_t chunk[4096];
  for (;;) {
    const ssize_t n = read(fd, chunk, sizeof chunk);
    FUZZ_CHECK(n >= 0);
    if (n == 0) break;
    content.insert(content.end(), chunk, chunk + n);
  }
  close(fd);
  return content;
}

void repair(int mode, std::vector<uint8_t>& file) {
  if ((mode & kRepairLength) != 0 && file.size() >= platform::kBlobOverheadBytes) {
    fedstat::store_le32(file.data() + 4,
                        static_cast<uint32_t>(file.size() - platform::kBlobOverheadBytes));
  }
  if ((mode & kRepairCrc) != 0) fedstat::fuzz::repair_trailing_crc(file);
}

size_t buffer_size(int mode, size_t file_size) {
  const size_t payload =
      file_size > platform::kBlobOverheadBytes ? file_size - platform::kBlobOverheadBytes : 0;
  switch ((mode >> 2) & 3) {
    case 0:
      return payload;
    case 1:
      return payload > 0 ? payload - 1 : 0;
    case 2:
      return 16;
    default:
      return 4096;
  }
}

// What the format says load_blob must answer for `file` and a buffer of `capacity` bytes.
StatusCode expected_verdict(const std::vector<uint8_t>& file, size_t capacity) {
  if (file.size() < platform::kBlobOverheadBytes) return StatusCode::kDataLoss;
  if (std::memcmp(file.data(), platform::kBlobMagic, 4) != 0) return StatusCode::kDataLoss;
  const uint32_t n = fedstat::load_le32(file.data() + 4);
  if (n > platform::kMaxBlobPayloadBytes || file.size() != size_t{n} + 12) {
    return StatusCode::kDataLoss;
  }
  if (n > capacity) return StatusCode::kResourceExhausted;
  const size_t body = file.size() - 4;
  if (fedstat::crc32(ByteSpan(file.data(), body)) != fedstat::load_le32(file.data() + body)) {
    return StatusCode::kDataLoss;
  }
  return StatusCode::kOk;
}

std::vector<uint8_t> with_mode(int mode, const std::vector<uint8_t>& file) {
  std::vector<uint8_t> input(1, static_cast<uint8_t>(mode));
  input.insert(input.end(), file.begin(), file.end());
  return input;
}

void write_seeds(fedstat::fuzz::SeedWriter& out) {
  // Files save_blob writes: payloads of 0, 1, 13 and 300 bytes, in every mode's buffer size.
  for (size_t length : {size_t{0}, size_t{1}, size_t{13}, size_t{300}}) {
    std::vector<uint8_t> payload(length);
    for (size_t i = 0; i < length; ++i) payload[i] = static_cast<uint8_t>(i * 37 + 1);
    directory();
    FUZZ_CHECK(platform::save_blob(kName, ByteSpan(payload.data(), payload.size())).ok());
    const std::vector<uint8_t> file = read_file();
    FUZZ_CHECK(file.size() == length + platform::kBlobOverheadBytes);
    for (int buffer = 0; buffer < 4; ++buffer) out.add(with_mode(buffer << 2, file));
    out.add(with_mode(kRepairCrc, file));
    out.add(with_mode(kRepairCrc | kRepairLength, file));
    if (length == 13) {  // truncated, raw and with its length and CRC fixed
      const std::vector<uint8_t> truncated(file.begin(), file.end() - 5);
      out.add(with_mode(0, truncated));
      out.add(with_mode(kRepairCrc | kRepairLength, truncated));
    }
  }
}

}  // namespace

FEDSTAT_FUZZ_SEEDS(write_seeds)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int mode = data[0];
  std::vector<uint8_t> file(data + 1, data + size);
  repair(mode, file);
  write_file(file);
  const size_t capacity = buffer_size(mode, file.size());
  // The buffer on the heap, exactly `capacity` bytes.
  std::vector<uint8_t> buffer(capacity, 0xA5);
  const fedstat::Result<size_t> loaded =
      platform::load_blob(kName, MutableByteSpan(buffer.data(), buffer.size()));
  const StatusCode expected = expected_verdict(file, capacity);
  FUZZ_CHECK(loaded.status().code() == expected);
  if (!loaded.ok()) return 0;
  const size_t n = loaded.value();
  FUZZ_CHECK(n <= capacity && n == fedstat::load_le32(file.data() + 4));
  FUZZ_CHECK(n + platform::kBlobOverheadBytes == file.size());
  FUZZ_CHECK(n == 0 || std::memcmp(buffer.data(), file.data() + 8, n) == 0);
  return 0;
}
