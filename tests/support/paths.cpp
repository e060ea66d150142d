#include "support/paths.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <stdexcept>
#include <system_error>

namespace maskgat::test {
namespace {

// The scratch directories this process made, removed with their contents when it exits.
class ScratchDirs {
 public:
  ScratchDirs() = default;
  ScratchDirs(const ScratchDirs&) = delete;
  ScratchDirs& operator=(const ScratchDirs&) = delete;
  ~ScratchDirs() {
    for (const auto& dir : dirs_) {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  }

  // Makes `dir` fresh and empty the first time this process asks for it (a directory left by an
  // earlier process of the same id is emptied), and keeps it as it is afterwards.
  void make(const std::filesystem::path& dir) {
    const std::lock_guard lock(mutex_);
    if (dirs_.insert(dir).second) std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }

 private:
  std::mutex mutex_;
  std::set<std::filesystem::path> dirs_;
};

ScratchDirs& scratch_dirs() {
  static ScratchDirs dirs;
  return dirs;
}

}  // namespace

std::filesystem::path fixture(const std::string& name) {
  return std::filesystem::path(MASKGAT_FIXTURE_DIR) / name;
}

std::filesystem::path data_dir() {
  const char* env = std::getenv("MASKGAT_DATA_DIR");
  if (env != nullptr && *env != '\0') return env;
  return MASKGAT_SOURCE_DATA_DIR;
}

std::filesystem::path scratch_dir(const std::string& tag) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("maskgat-test-" + std::to_string(::getpid()) + "-" + tag);
  scratch_dirs().make(dir);
  return dir;
}

std::filesystem::path write_file(const std::string& tag, const std::string& name,
                                 const std::string& content) {
  const auto path = scratch_dir(tag) / name;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << content;
  if (!out) throw std::runtime_error("cannot write test file " + path.string());
  return path;
}

}  // namespace maskgat::test
