#pragma once
// Writing small npz archives for the reader tests: `.npy` members built byte by byte and zipped
// through libzip, and patches that make an archive hostile.

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace maskgat::test {

// The little-endian bytes of `values`.
template <typename T>
std::string raw_bytes(std::initializer_list<T> values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  std::size_t at = 0;
  for (const T value : values) {
    std::memcpy(bytes.data() + at, &value, sizeof(T));
    at += sizeof(T);
  }
  return bytes;
}

// An `.npy` file (version 1.0) whose header declares `descr` and `shape` and whose data is `data`.
std::string npy_bytes(std::string_view descr, const std::vector<std::int64_t>& shape,
                      std::string_view data, bool fortran = false);

// A zip archive of `members` (name, content) in that order, stored or deflated.
using Members = std::vector<std::pair<std::string, std::string>>;
std::string zip_bytes(const Members& members, bool deflate);

// Sets the uncompressed size that the local and central headers of member `name` declare.
void patch_declared_size(std::string& archive, std::string_view name, std::uint32_t size);

// Renames member `name` to `renamed` (of the same length) in its local and central headers.
void patch_name(std::string& archive, std::string_view name, std::string_view renamed);

}  // namespace maskgat::test
