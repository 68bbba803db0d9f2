#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "platform/blob_format.h"
#include "platform/platform.h"
#include "platform/posix/posix_platform.h"

namespace fedstat {
namespace platform {
namespace {

class StorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/fedstat-storage-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    directory_ = pattern;
    ASSERT_TRUE(posix::set_storage_directory(directory_.c_str()).ok());
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + directory_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }
  std::string path(const char* name) const { return directory_ + "/" + name; }
  std::vector<char> read_file(const char* name) const {
    std::ifstream in(path(name), std::ios::binary);
    return std::vector<char>((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  }
  void write_file(const char* name, const std::vector<char>& bytes) const {
    std::ofstream out(path(name), std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  std::string directory_;
};

TEST_F(StorageTest, SavesAndLoadsAndReplaces) {
  const uint8_t first[] = {1, 2, 3, 4, 5};
  ASSERT_TRUE(save_blob("histogram.v1", ByteSpan(first)).ok());
  EXPECT_EQ(read_file("histogram.v1").size(), sizeof(first) + kBlobOverheadBytes);
  uint8_t out[16] = {};
  auto n = load_blob("histogram.v1", MutableByteSpan(out));
  ASSERT_TRUE(n.ok()) << n.status().message();
  EXPECT_EQ(n.value(), sizeof(first));
  EXPECT_EQ(std::memcmp(out, first, sizeof(first)), 0);

  const uint8_t second[] = {9, 8};
  ASSERT_TRUE(save_blob("histogram.v1", ByteSpan(second)).ok());
  n = load_blob("histogram.v1", MutableByteSpan(out));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n.value(), 2u);
  EXPECT_EQ(out[0], 9);
  EXPECT_EQ(access(path("histogram.v1.tmp").c_str(), F_OK), -1);  // no temporary left behind
}

TEST_F(StorageTest, EmptyPayloadRoundTrips) {
  ASSERT_TRUE(save_blob("empty", ByteSpan()).ok());
  uint8_t out[1];
  EXPECT_EQ(load_blob("empty", MutableByteSpan(out)).value(), 0u);
}

TEST_F(StorageTest, EveryCorruptedByteIsDetected) {
  uint8_t payload[40];
  for (size_t i = 0; i < sizeof(payload); ++i) payload[i] = static_cast<uint8_t>(i * 7);
  ASSERT_TRUE(save_blob("state", ByteSpan(payload)).ok());
  const std::vector<char> good = read_file("state");
  uint8_t out[64];
  for (size_t i = 0; i < good.size(); ++i) {
    std::vector<char> bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    write_file("state", bad);
    const auto r = load_blob("state", MutableByteSpan(out));
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << "flipped byte " << i;
  }
}

TEST_F(StorageTest, TruncatedAndForeignFilesAreDataLoss) {
  const uint8_t payload[] = {1, 2, 3, 4, 5, 6, 7, 8};
  ASSERT_TRUE(save_blob("state", ByteSpan(payload)).ok());
  const std::vector<char> good = read_file("state");
  uint8_t out[64];
  for (size_t keep : {size_t{0}, size_t{3}, size_t{8}, good.size() - 1}) {
    write_file("state", std::vector<char>(good.begin(), good.begin() + static_cast<long>(keep)));
    EXPECT_EQ(load_blob("state", MutableByteSpan(out)).status().code(), StatusCode::kDataLoss)
        << "kept " << keep << " bytes";
  }
  write_file("state",
             std::vector<char>{'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd', '!'});
  const auto r = load_blob("state", MutableByteSpan(out));
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(std::strstr(r.status().message(), "magic"), nullptr);
}

TEST_F(StorageTest, SmallBufferMissingBlobAndBadNamesHaveTheirOwnErrors) {
  const uint8_t payload[] = {1, 2, 3, 4, 5, 6, 7, 8};
  ASSERT_TRUE(save_blob("state", ByteSpan(payload)).ok());
  uint8_t small[4];
  EXPECT_EQ(load_blob("state", MutableByteSpan(small)).status().code(),
            StatusCode::kResourceExhausted);
  uint8_t out[16];
  EXPECT_EQ(load_blob("absent", MutableByteSpan(out)).status().code(), StatusCode::kNotFound);
  for (const char* bad : {"", ".hidden", "a/b", "../up", "sp ace"}) {
    EXPECT_EQ(save_blob(bad, ByteSpan(payload)).code(), StatusCode::kInvalidArgument) << bad;
  }
  const std::string long_name(kMaxBlobNameLength + 1, 'x');
  EXPECT_EQ(save_blob(long_name.c_str(), ByteSpan(payload)).code(), StatusCode::kInvalidArgument);
  const std::string max_name(kMaxBlobNameLength, 'x');
  EXPECT_TRUE(save_blob(max_name.c_str(), ByteSpan(payload)).ok());
}

TEST_F(StorageTest, RemoveDeletesOnce) {
  const uint8_t payload[] = {1};
  ASSERT_TRUE(save_blob("gone", ByteSpan(payload)).ok());
  EXPECT_TRUE(remove_blob("gone").ok());
  EXPECT_EQ(remove_blob("gone").code(), StatusCode::kNotFound);
}

TEST_F(StorageTest, AFailedSaveKeepsTheOldBlob) {
  const uint8_t payload[] = {4, 2};
  ASSERT_TRUE(save_blob("keep", ByteSpan(payload)).ok());
  // Make the temporary path a directory: the new blob cannot be written.
  ASSERT_EQ(mkdir(path("keep.tmp").c_str(), 0700), 0);
  const uint8_t other[] = {7, 7, 7};
  EXPECT_EQ(save_blob("keep", ByteSpan(other)).code(), StatusCode::kUnavailable);
  uint8_t out[8];
  ASSERT_EQ(load_blob("keep", MutableByteSpan(out)).value(), 2u);
  EXPECT_EQ(out[0], 4);
}

TEST(StorageDirectoryTest, RejectsEmptyAndOverlongPaths) {
  EXPECT_EQ(posix::set_storage_directory("").code(), StatusCode::kInvalidArgument);
  const std::string too_long(posix::kMaxStorageDirectoryLength + 1, 'd');
  EXPECT_EQ(posix::set_storage_directory(too_long.c_str()).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace platform
}  // namespace fedstat
