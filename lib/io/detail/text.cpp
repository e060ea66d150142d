#include "io/detail/text.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "maskgat/core/error.hpp"

namespace maskgat::detail {
namespace {

bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view text) noexcept {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

}  // namespace

LineReader::LineReader(const std::filesystem::path& path, std::string_view reader,
                       std::int64_t max_line_bytes)
    : file_(path, reader), max_line_bytes_(max_line_bytes) {}

bool LineReader::refill() {
  constexpr std::size_t kChunk = std::size_t{1} << 16;
  chunk_.resize(kChunk);
  chunk_.resize(file_.read(chunk_.data(), kChunk));
  chunk_begin_ = 0;
  if (!started_) {
    started_ = true;
    if (const auto encoding = wide_encoding(chunk_)) {
      throw ParseError(reader(), path(), 1, wide_encoding_message(*encoding));
    }
  }
  return !chunk_.empty();
}

bool LineReader::next(std::string_view& line) {
  line_.clear();
  bool any = false;  // a byte (or the line end) of this line was read
  while (true) {
    if (chunk_begin_ == chunk_.size() && !refill()) {
      if (!any) return false;
      line = line_;
      break;
    }
    if (!any) ++line_number_;
    any = true;
    const std::string_view rest = std::string_view(chunk_).substr(chunk_begin_);
    const std::size_t end = std::min(rest.find('\n'), rest.size());
    const std::string_view piece = rest.substr(0, end);
    // A zero byte is never part of UTF-8 text; files saved as UTF-16 are full of them.
    if (const auto zero = piece.find('\0'); zero != std::string_view::npos) {
      fail(zero_byte_message(line_.size() + zero + 1));
    }
    // Bounded as it is read, with room for a `\r` before the line end and the first line's
    // byte-order mark, which do not count (checked below).
    const std::int64_t slack = line_number_ == 1 ? 1 + kUtf8ByteOrderMark.size() : 1;
    if (static_cast<std::int64_t>(line_.size() + piece.size()) > max_line_bytes_ + slack) {
      fail_line_too_long();
    }
    chunk_begin_ += end;
    if (end == rest.size()) {
      line_.append(piece);
      continue;
    }
    ++chunk_begin_;  // the line end
    if (line_.empty()) {
      line = piece;  // the whole line is in this chunk: no copy
    } else {
      line_.append(piece);
      line = line_;
    }
    break;
  }
  if (line_number_ == 1 && line.starts_with(kUtf8ByteOrderMark)) {
    line.remove_prefix(kUtf8ByteOrderMark.size());
  }
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (static_cast<std::int64_t>(line.size()) > max_line_bytes_) fail_line_too_long();
  if (const auto cr = line.find('\r'); cr != std::string_view::npos) {
    fail("a carriage return at column " + std::to_string(cr + 1) +
         " inside the line: lines must end in \\n or \\r\\n");
  }
  return true;
}

void LineReader::fail(std::string_view message) const {
  throw ParseError(reader(), path(), line_number_, message);
}

void LineReader::fail_limit(std::string_view message) const {
  throw LimitError(reader(), path(), line_number_, message);
}

void LineReader::fail_line_too_long() const {
  fail_limit("the line is longer than " + std::to_string(max_line_bytes_) +
             " bytes, over the limit (raise it with --max-line-bytes)");
}

bool is_blank_or_comment(std::string_view line) noexcept {
  const std::string_view text = trim(line);
  return text.empty() || text.front() == '#' || text.front() == '%';
}

void split_fields(std::string_view line, std::vector<std::string_view>& fields) {
  fields.clear();
  std::size_t pos = 0;
  const auto is_separator = [](char c) { return is_space(c) || c == ','; };
  while (pos < line.size()) {
    while (pos < line.size() && is_separator(line[pos])) ++pos;
    const std::size_t start = pos;
    while (pos < line.size() && !is_separator(line[pos])) ++pos;
    if (pos > start) fields.push_back(line.substr(start, pos - start));
  }
}

void split_delimited(std::string_view line, char delimiter, std::vector<std::string_view>& fields) {
  fields.clear();
  std::size_t start = 0;
  while (true) {
    const std::size_t end = line.find(delimiter, start);
    if (end == std::string_view::npos) {
      fields.push_back(trim(line.substr(start)));
      return;
    }
    fields.push_back(trim(line.substr(start, end - start)));
    start = end + 1;
  }
}

std::optional<double> parse_number(std::string_view token) noexcept {
  if (token.starts_with('+')) token.remove_prefix(1);
  if (token.empty()) return std::nullopt;
  double value = 0.0;
  const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (error == std::errc::result_out_of_range) {
    // from_chars reports overflow and underflow alike; strtod tells them apart (inf or 0).
    const std::string copy(token);
    return std::strtod(copy.c_str(), nullptr);
  }
  if (error != std::errc() || end != token.data() + token.size()) return std::nullopt;
  return value;
}

std::optional<std::int64_t> parse_integer(std::string_view token) noexcept {
  if (token.starts_with('+')) token.remove_prefix(1);
  if (token.empty()) return std::nullopt;
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (error != std::errc() || end != token.data() + token.size()) return std::nullopt;
  return value;
}

std::int64_t count_lines(std::string_view text, std::size_t from, std::size_t to) noexcept {
  return static_cast<std::int64_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(from),
                                              text.begin() + static_cast<std::ptrdiff_t>(to),
                                              '\n'));
}

std::string quoted(std::string_view token) {
  constexpr std::size_t kMaxShown = 40;
  std::string text = "'";
  if (token.size() > kMaxShown) {
    text.append(token.substr(0, kMaxShown)).append("...");
  } else {
    text.append(token);
  }
  return text + "'";
}

std::string quoted_printable(std::string_view bytes) {
  std::string clean(bytes);
  for (char& c : clean) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7F) c = '?';
  }
  return detail::quoted(clean);
}

void append_utf8(std::string& out, std::uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

std::string errno_text() { return std::strerror(errno); }

}  // namespace maskgat::detail
