// A fresh directory under $TMPDIR (or /tmp) for one test, removed with everything in it at the
// end of the test. Errors: std::runtime_error when it cannot be made. Memory: its path.
// Paper: none.
#ifndef FEDSTAT_TESTS_STORE_TEMP_DIR_H_
#define FEDSTAT_TESTS_STORE_TEMP_DIR_H_

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace fedstat {
namespace testing {

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/fedstat-store-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = buffer.data();
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace testing
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_STORE_TEMP_DIR_H_
