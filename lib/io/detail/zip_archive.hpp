#pragma once
// A zip archive (as numpy's `.npz`) read through libzip from memory: its members' names, checked
// when it is opened, and each member's bytes, checked against the limits before it is inflated.
//
// Refused, each with a ParseError (LimitError for limits) `<reader>: <path>: <message>` that names
// the member: what libzip does not open (not a zip, truncated, central directory and local
// headers that disagree, a name given twice), more than `kMaxZipMembers` members, an empty,
// path-like or control-character name (as stored; with `ZipNames::kFlat` any `/` or `\`, with
// `ZipNames::kFolders` a `\`, a leading `/`, or a `.` or `..` folder; there doubled slashes read
// as one and folders' own entries are skipped), an encrypted member, a compression other than
// stored or deflate, a member declaring more than `Limits::max_file_bytes`, and a member whose data
// does not inflate to its declared size or fails its CRC-32.

// The reader is internal (this header is not installed); its entry points carry MASKGAT_EXPORT
// only so that the unit tests and fuzz targets can call them in a shared build.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "maskgat/export.hpp"
#include "maskgat/io/limits.hpp"

struct zip;  // libzip's archive, kept out of this header

namespace maskgat::detail {

// More members than any npz file holds (a few dozen arrays).
inline constexpr std::int64_t kMaxZipMembers = 65'536;

// The member names an archive may hold: flat (`x.npy`, as in an npz) or relative paths of folders
// (`archive/data/0`, as in a torch.save file).
enum class ZipNames : std::uint8_t { kFlat, kFolders };

class MASKGAT_EXPORT ZipArchive {
 public:
  // Opens the archive `bytes`; `reader` and `path` are only used in messages.
  ZipArchive(std::string bytes, std::string_view reader, std::string path, const Limits& limits,
             ZipNames naming = ZipNames::kFlat);
  ZipArchive(const ZipArchive&) = delete;
  ZipArchive& operator=(const ZipArchive&) = delete;
  ~ZipArchive();

  // The members' names, in the archive's order.
  [[nodiscard]] const std::vector<std::string>& names() const noexcept { return names_; }
  [[nodiscard]] bool contains(std::string_view name) const noexcept;
  // The whole content of member `name` (ParseError when there is none).
  [[nodiscard]] std::string read(std::string_view name) const;

  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] std::string_view reader() const noexcept { return reader_; }

 private:
  struct Closer {
    void operator()(zip* archive) const noexcept;
  };
  [[noreturn]] void fail(std::string_view message) const;

  std::string bytes_;
  std::string reader_;
  std::string path_;
  Limits limits_;
  std::unique_ptr<zip, Closer> archive_;
  std::vector<std::string> names_;      // as stored; with ZipNames::kFolders, single slashes
  std::vector<std::uint64_t> indices_;  // libzip's index of each
  std::vector<std::uint64_t> sizes_;
};

// Reads the archive at `path` whole (at most `limits.max_file_bytes`) and opens it. Throws IoError
// `<reader>: cannot open '<path>': <reason>`, LimitError, ParseError.
[[nodiscard]] MASKGAT_EXPORT std::unique_ptr<ZipArchive> read_zip(
    const std::filesystem::path& path, std::string_view reader, const Limits& limits,
    ZipNames naming = ZipNames::kFlat);

}  // namespace maskgat::detail
