#include "io/detail/zip_archive.hpp"

#include <zip.h>

#include <algorithm>
#include <utility>

#include "io/detail/input_file.hpp"
#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat::detail {
namespace {

// A folder path with every run of slashes made one: `MUTAG//MUTAG_A.txt` is `MUTAG/MUTAG_A.txt`.
std::string single_slashes(std::string_view name) {
  std::string out;
  for (const char c : name) {
    if (c != '/' || out.empty() || out.back() != '/') out += c;
  }
  return out;
}

// Why a name cannot stand for a member, or empty when it can.
std::string bad_name(std::string_view name, ZipNames naming) {
  if (name.empty()) return "is empty";
  if (naming == ZipNames::kFlat) {
    if (name.find('/') != std::string_view::npos || name.find('\\') != std::string_view::npos) {
      return "is a path (it holds a '/' or '\\')";
    }
    if (name == "." || name == "..") return "is a path";
  } else {
    if (name.find('\\') != std::string_view::npos) return "holds a '\\'";
    if (name.front() == '/') return "is an absolute path";
    std::size_t start = 0;
    while (start < name.size()) {
      const std::size_t end = std::min(name.find('/', start), name.size());
      const std::string_view part = name.substr(start, end - start);
      if (part == "." || part == "..") {
        return "is not a relative path of named folders (it holds a '.' or '..' part)";
      }
      start = end + 1;
    }
  }
  for (const char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) return "holds a control character";
  }
  return {};
}

std::string limit_message(std::string_view name, std::uint64_t size, std::int64_t limit) {
  return "member " + quoted_printable(name) + " declares " + std::to_string(size) +
         " bytes, over the limit of " + std::to_string(limit) + " (raise it with --max-file-bytes)";
}

}  // namespace

void ZipArchive::Closer::operator()(zip* archive) const noexcept { zip_discard(archive); }

ZipArchive::ZipArchive(std::string bytes, std::string_view reader, std::string path,
                       const Limits& limits, ZipNames naming)
    : bytes_(std::move(bytes)), reader_(reader), path_(std::move(path)), limits_(limits) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes_.data(), bytes_.size(), 0, &error);
  if (source == nullptr) {
    const std::string reason = zip_error_strerror(&error);
    zip_error_fini(&error);
    fail("cannot read the archive: " + reason);
  }
  archive_.reset(zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error));
  if (!archive_) {
    zip_source_free(source);
    // libzip refuses a name given twice itself (ZIP_CHECKCONS), naming no member.
    const std::string reason = zip_error_code_zip(&error) == ZIP_ER_EXISTS
                                   ? std::string("two members have the same name")
                                   : std::string(zip_error_strerror(&error));
    zip_error_fini(&error);
    fail("not a readable zip archive: " + reason);
  }
  zip_error_fini(&error);
  const zip_int64_t count = zip_get_num_entries(archive_.get(), 0);
  if (count > kMaxZipMembers) {
    fail("the archive declares " + std::to_string(count) + " members, over the limit of " +
         std::to_string(kMaxZipMembers));
  }
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t stat;
    zip_stat_init(&stat);
    if (zip_stat_index(archive_.get(), static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW, &stat) != 0 ||
        (stat.valid & ZIP_STAT_NAME) == 0 || (stat.valid & ZIP_STAT_SIZE) == 0) {
      fail("member " + std::to_string(i) + ": " + zip_strerror(archive_.get()));
    }
    const std::string name(stat.name);
    const std::string problem = bad_name(name, naming);
    if (!problem.empty()) fail("member name " + quoted_printable(name) + " " + problem);
    if ((stat.valid & ZIP_STAT_ENCRYPTION_METHOD) != 0 && stat.encryption_method != ZIP_EM_NONE) {
      fail("member " + quoted_printable(name) + " is encrypted");
    }
    if ((stat.valid & ZIP_STAT_COMP_METHOD) != 0 && stat.comp_method != ZIP_CM_STORE &&
        stat.comp_method != ZIP_CM_DEFLATE) {
      fail("member " + quoted_printable(name) + " uses compression method " +
           std::to_string(stat.comp_method) + ", expected stored (0) or deflate (8)");
    }
    if (naming == ZipNames::kFolders) {
      if (name.back() == '/') continue;  // a folder's own entry
      const std::string single = single_slashes(name);
      if (contains(single)) {
        fail("member names " + quoted_printable(name) + " and " + quoted_printable(single) +
             " name one file");
      }
      names_.push_back(single);
    } else {
      names_.push_back(name);
    }
    indices_.push_back(static_cast<zip_uint64_t>(i));
    sizes_.push_back(stat.size);
  }
}

ZipArchive::~ZipArchive() = default;

bool ZipArchive::contains(std::string_view name) const noexcept {
  return std::find(names_.begin(), names_.end(), name) != names_.end();
}

std::string ZipArchive::read(std::string_view name) const {
  const auto found = std::find(names_.begin(), names_.end(), name);
  if (found == names_.end()) fail("no member " + quoted_printable(name));
  const auto index = static_cast<std::size_t>(found - names_.begin());
  const std::uint64_t size = sizes_[index];
  if (size > static_cast<std::uint64_t>(limits_.max_file_bytes)) {
    throw LimitError(reader_, path_, 0, limit_message(name, size, limits_.max_file_bytes));
  }
  zip_file_t* file = zip_fopen_index(archive_.get(), indices_[index], 0);
  if (file == nullptr) {
    fail("member " + quoted_printable(name) + ": " + zip_strerror(archive_.get()));
  }
  // One byte more than declared, so data that inflates past its size is seen.
  std::string content(static_cast<std::size_t>(size) + 1, '\0');
  std::uint64_t got = 0;
  std::string problem;
  while (got < content.size()) {
    const zip_int64_t n = zip_fread(file, content.data() + got, content.size() - got);
    if (n < 0) {
      problem = zip_file_strerror(file);
      break;
    }
    if (n == 0) break;
    got += static_cast<std::uint64_t>(n);
  }
  zip_fclose(file);
  if (!problem.empty()) fail("member " + quoted_printable(name) + ": " + problem);
  if (got != size) {
    fail("member " + quoted_printable(name) + " declares " + std::to_string(size) +
         " bytes, its data holds " + (got > size ? std::string("more") : std::to_string(got)));
  }
  content.resize(static_cast<std::size_t>(size));
  return content;
}

void ZipArchive::fail(std::string_view message) const {
  throw ParseError(reader_, path_, 0, message);
}

std::unique_ptr<ZipArchive> read_zip(const std::filesystem::path& path, std::string_view reader,
                                     const Limits& limits, ZipNames naming) {
  InputFile file(path, reader);
  std::string bytes = read_bounded_file(file, limits.max_file_bytes, Content::kBinary);
  return std::make_unique<ZipArchive>(std::move(bytes), reader, file.path(), limits, naming);
}

}  // namespace maskgat::detail
