#include "maskgat/io/output_file.hpp"

#include <fstream>
#include <string>
#include <system_error>

#include "maskgat/core/error.hpp"
#include "maskgat/core/random.hpp"

namespace maskgat {

void write_file_atomically(const std::filesystem::path& path, std::string_view content,
                           bool overwrite) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!overwrite && fs::exists(path, error)) {
    throw IoError(path.string() + ": the file exists; pass --force to replace it");
  }
  // A name unlikely to collide, from the path and the content size.
  const auto tag = counter_hash(
      std::hash<std::string>{}(path.string()), content.size(),
      static_cast<std::uint64_t>(fs::file_time_type::clock::now().time_since_epoch().count()));
  fs::path temporary = path;
  temporary += ".tmp" + std::to_string(tag % 1000000007ULL);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw IoError(temporary.string() + ": cannot create the file");
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      out.close();
      fs::remove(temporary, error);
      throw IoError(temporary.string() + ": write failed");
    }
  }
  fs::rename(temporary, path, error);
  if (error) {
    const std::string reason = error.message();
    fs::remove(temporary, error);
    throw IoError(path.string() + ": cannot replace the file: " + reason);
  }
}

}  // namespace maskgat
