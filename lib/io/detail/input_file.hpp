#pragma once
// Opening and reading an input file with errors that name the reader and the path, and reading
// a file whole within a byte limit. Every read is bounded before it is made: from a pipe or a
// device (`/dev/zero`) as from a regular file.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace maskgat::detail {

// Throws the IoError `InputFile` would (`<reader>: cannot open '<path>': <why>`) when `path` cannot
// be read, without opening it (a FIFO would wait for its writer), so that a command checks all its
// inputs before it parses any.
void require_readable(const std::filesystem::path& path, std::string_view reader);

// A file opened for reading. Pipes and devices are read as they come; their size is unknown.
class InputFile {
 public:
  // Throws IoError `<reader>: cannot open '<path>': <reason>`: no such file, a directory,
  // permission denied, a loop of symbolic links, a name too long, ...
  // A FIFO is read from its writer, waited for as any program that reads a FIFO waits.
  InputFile(const std::filesystem::path& path, std::string_view reader);
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&&) = delete;
  ~InputFile();

  // Reads up to `size` bytes into `buffer` (fewer only at the end of the file); returns the count.
  // Throws IoError `<reader>: cannot read '<path>': <reason>`.
  std::size_t read(char* buffer, std::size_t size);

  // Up to `count` bytes (fewer only at the end of the file), read in chunks so that memory
  // grows with the bytes that arrive, not with `count`.
  [[nodiscard]] std::string read_up_to(std::uint64_t count);

  // The size of a regular file; nullopt for a pipe, a device or anything else.
  [[nodiscard]] std::optional<std::uint64_t> regular_size() const noexcept { return size_; }
  // The bytes read so far.
  [[nodiscard]] std::uint64_t consumed() const noexcept { return consumed_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] std::string_view reader() const noexcept { return reader_; }

 private:
  int fd_ = -1;
  std::optional<std::uint64_t> size_;
  std::uint64_t consumed_ = 0;
  std::string path_;
  std::string reader_;
};

// What a whole-file read may hold.
enum class Content : std::uint8_t {
  kBinary,
  // UTF-8 (or another ASCII-compatible 8-bit encoding): a zero byte or a UTF-16/UTF-32
  // byte-order mark is rejected as soon as it is read, naming the line and column or the
  // encoding.
  kText,
};

// The rest of the file (what `file.read` has not returned yet), when the whole file holds at most
// `max_bytes`: a regular file's size is checked before anything more is read (LimitError
// `<reader>: <path>: file is N bytes, over the limit of M (raise it with --max-file-bytes)`), any
// other file is read in chunks and refused one chunk past the limit.
[[nodiscard]] std::string read_bounded_file(InputFile& file, std::int64_t max_bytes,
                                            Content content);

// The UTF-8 byte-order mark, which the text readers skip at the start of a file.
inline constexpr std::string_view kUtf8ByteOrderMark = "\xEF\xBB\xBF";

// `what` for messages about a UTF-16 or UTF-32 byte-order mark at the start of `text`, e.g.
// `UTF-16 little-endian text (byte-order mark FF FE)`; nullopt when there is none.
[[nodiscard]] std::optional<std::string> wide_encoding(std::string_view text) noexcept;

// The messages every text reader gives for text that is not UTF-8: a file starting with
// `encoding` (from `wide_encoding`), a zero byte at 1-based `column`.
[[nodiscard]] std::string wide_encoding_message(const std::string& encoding);
[[nodiscard]] std::string zero_byte_message(std::size_t column);

// Throws LimitError `<reader>: <path>: file is N bytes, over the limit of M (raise it with
// --max-file-bytes)`.
[[noreturn]] void throw_file_too_large(const InputFile& file, std::uint64_t size,
                                       std::int64_t limit);

}  // namespace maskgat::detail
