#pragma once
// Line-oriented text reading shared by the text readers: BOM and CRLF handling, comment lines,
// field splitting, number parsing, and errors located at `<reader>: <path>:<line>`.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/detail/input_file.hpp"

namespace maskgat::detail {

// Reads a text file line by line, in chunks, holding at most one line of `max_line_bytes` (and
// one chunk) whatever the file: a device of zeros or a file without line ends fails at once.
// The first line loses a UTF-8 byte-order mark, every line its trailing `\r`. Errors carry the
// reader name, the path as given and the current line number.
class LineReader {
 public:
  // Throws IoError `<reader>: cannot open '<path>': <reason>` when the file cannot be opened.
  LineReader(const std::filesystem::path& path, std::string_view reader,
             std::int64_t max_line_bytes);

  // The next line without its line end, valid until the next call; false at the end of the
  // file. Throws ParseError on a line with a zero byte (binary data, or UTF-16 text) or a
  // carriage return before its end, on a UTF-16 or UTF-32 byte-order mark, and LimitError on a
  // line longer than `max_line_bytes` (its line end not counted; refused before more of it is
  // read).
  bool next(std::string_view& line);
  [[nodiscard]] std::int64_t line_number() const noexcept { return line_number_; }
  [[nodiscard]] const std::string& path() const noexcept { return file_.path(); }
  [[nodiscard]] std::string_view reader() const noexcept { return file_.reader(); }

  // Throws ParseError at the current line.
  [[noreturn]] void fail(std::string_view message) const;
  // Throws LimitError at the current line.
  [[noreturn]] void fail_limit(std::string_view message) const;

 private:
  // Refills `chunk_` from the file; false at its end.
  bool refill();
  [[noreturn]] void fail_line_too_long() const;

  InputFile file_;
  std::string chunk_;
  std::size_t chunk_begin_ = 0;  // the unread part of `chunk_` starts here
  std::string line_;             // a line that spans chunks
  bool started_ = false;         // the first chunk was read
  std::int64_t max_line_bytes_;
  std::int64_t line_number_ = 0;
};

// True for a blank line or one whose first non-blank character is `#` or `%`.
[[nodiscard]] bool is_blank_or_comment(std::string_view line) noexcept;

// Splits `line` at runs of spaces, tabs and commas into `fields` (cleared first).
void split_fields(std::string_view line, std::vector<std::string_view>& fields);

// Splits `line` at every `delimiter` into `fields` (cleared first), trimming spaces around
// each field; empty fields are kept.
void split_delimited(std::string_view line, char delimiter, std::vector<std::string_view>& fields);

// The whole token as a floating-point number (nan and inf included, leading `+` allowed), or
// nullopt when it is not a number.
[[nodiscard]] std::optional<double> parse_number(std::string_view token) noexcept;

// The whole token as a base-10 integer (leading `+` or `-` allowed), or nullopt when it is not
// an integer or does not fit in 64 bits.
[[nodiscard]] std::optional<std::int64_t> parse_integer(std::string_view token) noexcept;

// The line ends in `text[from, to)`: how far a position's line number moves from `from` to `to`.
[[nodiscard]] std::int64_t count_lines(std::string_view text, std::size_t from,
                                       std::size_t to) noexcept;

// `'token'` for messages, shortened to 40 characters with `...`.
[[nodiscard]] std::string quoted(std::string_view token);

// `quoted` of binary file content, with control and non-ASCII bytes replaced by `?`.
[[nodiscard]] std::string quoted_printable(std::string_view bytes);

// Appends the UTF-8 encoding of the code point `code` (at most 0x10FFFF) to `out`.
void append_utf8(std::string& out, std::uint32_t code);

// `strerror`-style text of the current `errno`.
[[nodiscard]] std::string errno_text();

}  // namespace maskgat::detail
