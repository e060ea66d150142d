#include "io/detail/dot_lexer.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <utility>

#include "io/detail/input_file.hpp"
#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat::detail {
namespace {

bool is_dot_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
// A comment that runs to the end of the line stops before any of these.
bool ends_line(char c) noexcept { return c == '\n' || c == '\r' || c == '\f'; }
bool starts_name(char c) noexcept {
  const auto byte = static_cast<unsigned char>(c);
  return std::isalpha(byte) != 0 || c == '_' || byte >= 0x80;
}
bool continues_name(char c) noexcept {
  return starts_name(c) || std::isdigit(static_cast<unsigned char>(c)) != 0;
}
bool is_digit(char c) noexcept { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// A byte for messages: itself in quotes when printable, else its code.
std::string shown(char c) {
  const auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x21 && byte < 0x7F) return std::string{'\'', c, '\''};
  std::array<char, 8> code{};
  std::snprintf(code.data(), code.size(), "0x%02X", byte);
  return std::string("the byte ") + code.data();
}

constexpr std::pair<std::string_view, DotToken> kKeywords[] = {
    {"strict", DotToken::kStrict}, {"graph", DotToken::kGraph}, {"digraph", DotToken::kDigraph},
    {"node", DotToken::kNode},     {"edge", DotToken::kEdge},   {"subgraph", DotToken::kSubgraph}};

}  // namespace

std::string describe(DotToken token, std::string_view text) {
  switch (token) {
    case DotToken::kEnd:
      return "the end of the file";
    case DotToken::kId:
      return "the ID " + quoted(text);
    case DotToken::kStrict:
    case DotToken::kGraph:
    case DotToken::kDigraph:
    case DotToken::kNode:
    case DotToken::kEdge:
    case DotToken::kSubgraph:
      return "the keyword " + quoted(text);
    default:
      return "'" + std::string(text) + "'";
  }
}

DotLexer::DotLexer(std::string_view text, std::string path, std::string_view reader)
    : input_(text), path_(std::move(path)), reader_(reader) {
  if (input_.starts_with(kUtf8ByteOrderMark)) pos_ = kUtf8ByteOrderMark.size();
}

void DotLexer::fail(std::int64_t line, const std::string& message) const {
  throw ParseError(reader_, path_, line, message);
}

void DotLexer::move_to(std::size_t target) noexcept {
  target = std::min(target, input_.size());
  line_ += count_lines(input_, pos_, target);
  pos_ = target;
}

void DotLexer::skip_space_and_comments() {
  const auto skip_line = [&] {
    std::size_t end = pos_;
    while (end < input_.size() && !ends_line(input_[end])) ++end;
    pos_ = end;  // no line end inside
  };
  while (pos_ < input_.size()) {
    const char c = input_[pos_];
    const std::string_view rest = input_.substr(pos_);
    if (is_dot_space(c)) {
      move_to(pos_ + 1);
    } else if (rest.starts_with("\\\n") || rest.starts_with("\\\r\n")) {
      move_to(pos_ + (rest[1] == '\n' ? 2 : 3));
    } else if (rest.starts_with("//")) {
      skip_line();
    } else if (rest.starts_with("/*")) {
      const std::int64_t start = line_;
      const std::size_t close = input_.find("*/", pos_ + 2);
      if (close == std::string_view::npos) {
        fail(start, "unterminated comment: '/*' has no closing '*/'");
      }
      move_to(close + 2);
    } else if (c == '#') {
      // A `#` line (C preprocessor output): `#` first on its line, after blanks at most.
      std::size_t before = pos_;
      while (before > 0 && (input_[before - 1] == ' ' || input_[before - 1] == '\t')) --before;
      const bool line_start =
          before == 0 || ends_line(input_[before - 1]) ||
          (before == kUtf8ByteOrderMark.size() && input_.starts_with(kUtf8ByteOrderMark));
      if (!line_start) return;  // next() refuses it
      skip_line();
    } else {
      return;
    }
  }
}

void DotLexer::read_quoted() {
  const std::int64_t start = line_;
  std::size_t i = pos_ + 1;
  while (true) {
    const std::size_t stop = input_.find_first_of("\\\"", i);
    if (stop == std::string_view::npos) {
      fail(start, "unterminated quoted string: '\"' has no closing '\"'");
    }
    text_.append(input_.substr(i, stop - i));
    if (input_[stop] == '"') {
      move_to(stop + 1);
      return;
    }
    // A backslash: `\"` is a quote, a backslash before a `\n` joins the lines, any other escape
    // stays as written (Graphviz reads it).
    const std::string_view escape = input_.substr(stop, 3);
    if (escape.starts_with("\\\"")) {
      text_ += '"';
      i = stop + 2;
    } else if (escape.starts_with("\\\n")) {
      i = stop + 2;
    } else {
      text_.append(input_.substr(stop, std::min<std::size_t>(2, input_.size() - stop)));
      i = stop + 2;
    }
    if (i > input_.size()) fail(start, "unterminated quoted string: '\"' has no closing '\"'");
  }
}

void DotLexer::read_html() {
  const std::int64_t start = line_;
  std::int64_t depth = 0;
  std::size_t i = pos_;
  while (true) {
    const std::size_t bracket = input_.find_first_of("<>", i);
    if (bracket == std::string_view::npos) {
      fail(start, "unterminated HTML string: '<' has no matching '>'");
    }
    depth += input_[bracket] == '<' ? 1 : -1;
    i = bracket + 1;
    if (depth == 0) break;
  }
  text_.assign(input_.substr(pos_ + 1, i - pos_ - 2));
  move_to(i);
}

DotToken DotLexer::next() {
  skip_space_and_comments();
  token_line_ = line_;
  text_.clear();
  if (pos_ >= input_.size()) return DotToken::kEnd;
  const char c = input_[pos_];
  const std::string_view rest = input_.substr(pos_);
  static constexpr std::pair<char, DotToken> kPunctuation[] = {
      {'{', DotToken::kOpenBrace},    {'}', DotToken::kCloseBrace}, {'[', DotToken::kOpenBracket},
      {']', DotToken::kCloseBracket}, {';', DotToken::kSemicolon},  {',', DotToken::kComma},
      {'=', DotToken::kEquals},       {':', DotToken::kColon}};
  for (const auto& [symbol, token] : kPunctuation) {
    if (c != symbol) continue;
    text_ = std::string(1, c);
    move_to(pos_ + 1);
    return token;
  }
  if (rest.starts_with("->") || rest.starts_with("--")) {
    text_ = std::string(rest.substr(0, 2));
    move_to(pos_ + 2);
    return rest[1] == '>' ? DotToken::kDirectedEdge : DotToken::kUndirectedEdge;
  }
  if (starts_name(c)) {
    std::size_t end = pos_;
    while (end < input_.size() && continues_name(input_[end])) ++end;
    text_.assign(input_.substr(pos_, end - pos_));
    pos_ = end;
    std::string lower = text_;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char b) { return static_cast<char>(std::tolower(b)); });
    for (const auto& [keyword, token] : kKeywords) {
      if (lower == keyword) return token;
    }
    return DotToken::kId;
  }
  const bool negative = c == '-';
  const std::size_t digits = pos_ + (negative ? 1 : 0);
  if (digits < input_.size() && (is_digit(input_[digits]) || input_[digits] == '.')) {
    std::size_t end = digits;
    while (end < input_.size() && is_digit(input_[end])) ++end;
    const bool integer_part = end > digits;
    if (end < input_.size() && input_[end] == '.') {
      ++end;
      const std::size_t fraction = end;
      while (end < input_.size() && is_digit(input_[end])) ++end;
      if (!integer_part && end == fraction) fail(line_, "unexpected '.'");
    }
    std::size_t run = end;
    while (run < input_.size() && (continues_name(input_[run]) || input_[run] == '.')) ++run;
    if (run > end) {
      fail(line_, "the numeral " + quoted(input_.substr(pos_, end - pos_)) + " runs into " +
                      quoted(input_.substr(end, run - end)) + ": quote " +
                      quoted(input_.substr(pos_, run - pos_)) + " to make it one ID");
    }
    text_.assign(input_.substr(pos_, end - pos_));
    pos_ = end;
    return DotToken::kId;
  }
  if (c == '"') {
    read_quoted();
    // `"a" + "b"` is one ID.
    while (true) {
      const std::size_t saved_pos = pos_;
      const std::int64_t saved_line = line_;
      skip_space_and_comments();
      if (pos_ >= input_.size() || input_[pos_] != '+') {
        pos_ = saved_pos;
        line_ = saved_line;
        break;
      }
      move_to(pos_ + 1);
      skip_space_and_comments();
      if (pos_ >= input_.size() || input_[pos_] != '"') {
        fail(line_, "'+' joins quoted strings: expected '\"' after it");
      }
      read_quoted();
    }
    return DotToken::kId;
  }
  if (c == '<') {
    read_html();
    return DotToken::kId;
  }
  fail(line_, "unexpected " + shown(c));
}

}  // namespace maskgat::detail
