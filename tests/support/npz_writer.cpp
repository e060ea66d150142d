#include "support/npz_writer.hpp"

#include <zip.h>

#include <fstream>
#include <iterator>
#include <stdexcept>

#include "support/paths.hpp"

namespace maskgat::test {
namespace {

std::uint32_t load32(const std::string& bytes, std::size_t at) {
  std::uint32_t value = 0;
  std::memcpy(&value, bytes.data() + at, 4);
  return value;
}

std::uint16_t load16(const std::string& bytes, std::size_t at) {
  std::uint16_t value = 0;
  std::memcpy(&value, bytes.data() + at, 2);
  return value;
}

// Calls fn(header offset, name offset, size field offset) for the local and central headers of
// member `name`.
template <typename Fn>
void for_each_header(std::string& archive, std::string_view name, Fn&& fn) {
  int found = 0;
  for (std::size_t at = 0; at + 46 <= archive.size(); ++at) {
    const std::uint32_t signature = load32(archive, at);
    if (signature == 0x04034b50U) {  // local file header
      const std::size_t length = load16(archive, at + 26);
      if (std::string_view(archive).substr(at + 30, length) == name) {
        fn(at + 30, at + 22);
        ++found;
      }
    } else if (signature == 0x02014b50U) {  // central directory header
      const std::size_t length = load16(archive, at + 28);
      if (std::string_view(archive).substr(at + 46, length) == name) {
        fn(at + 46, at + 24);
        ++found;
      }
    }
  }
  if (found != 2) throw std::runtime_error("member '" + std::string(name) + "' not found twice");
}

}  // namespace

std::string npy_bytes(std::string_view descr, const std::vector<std::int64_t>& shape,
                      std::string_view data, bool fortran) {
  std::string shape_text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    shape_text += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  }
  shape_text += shape.size() == 1 ? ",)" : ")";
  std::string header = "{'descr': '" + std::string(descr) +
                       "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + shape_text + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string bytes = "\x93NUMPY\x01";
  bytes += '\0';
  bytes += static_cast<char>(header.size() & 0xFF);
  bytes += static_cast<char>(header.size() >> 8);
  return bytes + header + std::string(data);
}

std::string zip_bytes(const Members& members, bool deflate) {
  const std::filesystem::path path = scratch_dir("npz_writer") / "archive.zip";
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  if (archive == nullptr) throw std::runtime_error("zip_open failed");
  for (const auto& [name, content] : members) {
    zip_source_t* source = zip_source_buffer(archive, content.data(), content.size(), 0);
    const zip_int64_t index = zip_file_add(archive, name.c_str(), source, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      zip_source_free(source);
      throw std::runtime_error("zip_file_add failed: " + std::string(zip_strerror(archive)));
    }
    zip_set_file_compression(archive, static_cast<zip_uint64_t>(index),
                             deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0);
  }
  if (zip_close(archive) != 0) throw std::runtime_error("zip_close failed");
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void patch_declared_size(std::string& archive, std::string_view name, std::uint32_t size) {
  for_each_header(archive, name, [&](std::size_t /*name_at*/, std::size_t size_at) {
    std::memcpy(archive.data() + size_at, &size, 4);
  });
}

void patch_name(std::string& archive, std::string_view name, std::string_view renamed) {
  if (renamed.size() != name.size()) throw std::runtime_error("patch_name: lengths differ");
  std::vector<std::size_t> at;
  for_each_header(archive, name,
                  [&](std::size_t name_at, std::size_t /*size_at*/) { at.push_back(name_at); });
  for (const std::size_t offset : at) archive.replace(offset, renamed.size(), renamed);
}

}  // namespace maskgat::test
