#include "io/detail/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat::detail {
namespace {

constexpr std::size_t kChunk = std::size_t{1} << 16;

// Rejects text whose bytes [checked, text.size()) hold a zero byte, or that starts with a
// UTF-16/UTF-32 byte-order mark.
void check_text(std::string_view text, std::size_t checked, const InputFile& file) {
  if (checked == 0) {
    if (const auto encoding = wide_encoding(text)) {
      throw ParseError(file.reader(), file.path(), 1, wide_encoding_message(*encoding));
    }
  }
  const void* zero = std::memchr(text.data() + checked, '\0', text.size() - checked);
  if (zero == nullptr) return;
  const std::string_view before(
      text.data(), static_cast<std::size_t>(static_cast<const char*>(zero) - text.data()));
  const std::size_t line_start = before.rfind('\n');
  const std::size_t column =
      line_start == std::string_view::npos ? before.size() + 1 : before.size() - line_start;
  throw ParseError(file.reader(), file.path(), std::count(before.begin(), before.end(), '\n') + 1,
                   zero_byte_message(column));
}

}  // namespace

void require_readable(const std::filesystem::path& path, std::string_view reader) {
  if (::access(path.c_str(), R_OK) != 0) {
    throw IoError(std::string(reader) + ": cannot open '" + path.string() + "': " + errno_text());
  }
}

InputFile::InputFile(const std::filesystem::path& path, std::string_view reader)
    : path_(path.string()), reader_(reader) {
  const auto fail = [&](const std::string& why) {
    throw IoError(reader_ + ": cannot open '" + path_ + "': " + why);
  };
  // A FIFO waits for its writer here, as for any program that reads one.
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) fail(errno_text());
  struct stat status {};
  if (::fstat(fd_, &status) != 0) {
    const std::string why = errno_text();
    ::close(fd_);
    fail(why);
  }
  if (S_ISDIR(status.st_mode)) {
    ::close(fd_);
    fail("is a directory");
  }
  if (S_ISREG(status.st_mode)) size_ = static_cast<std::uint64_t>(status.st_size);
}

InputFile::InputFile(InputFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      size_(other.size_),
      consumed_(other.consumed_),
      path_(std::move(other.path_)),
      reader_(std::move(other.reader_)) {}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t InputFile::read(char* buffer, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t got = ::read(fd_, buffer + done, size - done);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw IoError(reader_ + ": cannot read '" + path_ + "': " + errno_text());
    }
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  consumed_ += done;
  return done;
}

std::string InputFile::read_up_to(std::uint64_t count) {
  std::string bytes;
  while (bytes.size() < count) {
    const std::size_t old = bytes.size();
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, count - old));
    bytes.resize(old + want);
    const std::size_t got = read(bytes.data() + old, want);
    bytes.resize(old + got);
    if (got < want) break;
  }
  return bytes;
}

std::string read_bounded_file(InputFile& file, std::int64_t max_bytes, Content content) {
  const auto limit = static_cast<std::uint64_t>(std::max<std::int64_t>(max_bytes, 0));
  std::string bytes;
  if (const auto size = file.regular_size()) {
    if (*size > limit) throw_file_too_large(file, *size, max_bytes);
    if (*size > file.consumed()) {
      bytes.reserve(static_cast<std::size_t>(*size - file.consumed()) + kChunk);
    }
  }
  // Chunk by chunk, also for a regular file (it may grow while it is read): each chunk is
  // checked as it arrives, so a device of zeros fails at its first byte, not at the limit.
  while (true) {
    const std::size_t checked = bytes.size();
    bytes.resize(checked + kChunk);
    const std::size_t got = file.read(bytes.data() + checked, kChunk);
    bytes.resize(checked + got);
    if (file.consumed() > limit) {
      throw LimitError(file.reader(), file.path(), 0,
                       "file has more than " + std::to_string(limit) +
                           " bytes, over the limit (raise it with --max-file-bytes)");
    }
    if (content == Content::kText) check_text(bytes, checked, file);
    if (got < kChunk) return bytes;
  }
}

std::string wide_encoding_message(const std::string& encoding) {
  return "the file is " + encoding + ", expected UTF-8: convert it to UTF-8";
}

std::string zero_byte_message(std::size_t column) {
  return "a zero byte at column " + std::to_string(column) +
         ": not UTF-8 text (convert UTF-16 files to UTF-8)";
}

void throw_file_too_large(const InputFile& file, std::uint64_t size, std::int64_t limit) {
  throw LimitError(file.reader(), file.path(), 0,
                   "file is " + std::to_string(size) + " bytes, over the limit of " +
                       std::to_string(limit) + " (raise it with --max-file-bytes)");
}

std::optional<std::string> wide_encoding(std::string_view text) noexcept {
  // UTF-32 first: its little-endian mark starts with UTF-16's.
  if (text.starts_with(std::string_view("\xFF\xFE\0\0", 4))) {
    return "UTF-32 little-endian text (byte-order mark FF FE 00 00)";
  }
  if (text.starts_with(std::string_view("\0\0\xFE\xFF", 4))) {
    return "UTF-32 big-endian text (byte-order mark 00 00 FE FF)";
  }
  if (text.starts_with("\xFF\xFE")) return "UTF-16 little-endian text (byte-order mark FF FE)";
  if (text.starts_with("\xFE\xFF")) return "UTF-16 big-endian text (byte-order mark FE FF)";
  return std::nullopt;
}

}  // namespace maskgat::detail
