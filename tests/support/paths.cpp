#include "support/paths.hpp"

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

namespace maskgat::test {

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
  std::filesystem::create_directories(dir);
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
