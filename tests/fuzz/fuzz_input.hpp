#pragma once
// Shared by the fuzz targets. The readers take paths, so each input is written to a file in a
// directory of this process's own, then read. A target accepts MaskGAT's documented errors
// (`maskgat::Error` and its subclasses: a clear message, exit code 1 in the CLI) and nothing
// else: any other exception, a crash, a sanitizer report, a leak, a timeout or an allocation over
// libFuzzer's limit is a finding.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "maskgat/core/error.hpp"

namespace maskgat::fuzz {

// `<temp>/maskgat-fuzz-<pid>`, removed when the process exits normally.
inline const std::filesystem::path& work_dir() {
  struct Dir {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("maskgat-fuzz-" + std::to_string(::getpid()));
    Dir() { std::filesystem::create_directories(path); }
    ~Dir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Dir dir;
  return dir.path;
}

// Writes `bytes` to `<work_dir>/<name>` and returns the path.
inline std::filesystem::path write_input(std::string_view bytes, const std::string& name) {
  const std::filesystem::path path = work_dir() / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

// The bytes of the file at `path` (none when it cannot be read).
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Runs `read`, accepting only MaskGAT's own errors.
template <typename Read>
int accept_errors(Read&& read) {
  try {
    read();
  } catch (const maskgat::Error&) {
  }
  return 0;
}

// Writes the input as `name` and runs `read(path)`, accepting only MaskGAT's own errors.
template <typename Read>
int read_input(const std::uint8_t* data, std::size_t size, const std::string& name, Read&& read) {
  const auto path = write_input(as_text(data, size), name);
  return accept_errors([&] { read(path); });
}

}  // namespace maskgat::fuzz
