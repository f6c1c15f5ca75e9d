// Test helpers: a scratch directory removed at the end of the test, and
// small file utilities.
#ifndef TF_GULP_CC_TESTING_TEMP_DIR_H_
#define TF_GULP_CC_TESTING_TEMP_DIR_H_

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace tfg {
namespace testing {

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TEST_TMPDIR");  // set by Bazel
    std::string pattern = std::string(base ? base : "/tmp") + "/tfg_test_XXXXXX";
    path_ = ::mkdtemp(pattern.data()) ? pattern : "";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string Join(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
}

}  // namespace testing
}  // namespace tfg

#endif  // TF_GULP_CC_TESTING_TEMP_DIR_H_
