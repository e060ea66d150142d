#pragma once
// The tokens of the Graphviz DOT language, read in one pass without recursion or regular
// expressions; the DOT reader parses them with an explicit stack. Every error names its line.
//
// Skipped: white space, `//` and `#` comments (to the end of the line: a `\n`, `\r` or `\f`; a `#`
// comment starts a line), `/* */` comments, and a backslash before a line end. Tokens: keywords
// (`strict graph digraph node edge subgraph`, any case); IDs: names (`[A-Za-z_\x80-\xff]` then
// also digits), numerals (`-?(.[0-9]+|[0-9]+(.[0-9]*)?)`, which a letter may not follow: `1e400`
// is refused, not split), quoted strings (`\"` and a backslash before `\n` unescaped; `"a" + "b"`
// joined) and HTML strings (`<...>`, balanced angle brackets; the ID is what is inside);
// punctuation `{ } [ ] ; , = :` and the edge operators `->` `--`.

#include <cstdint>
#include <string>
#include <string_view>

#include "maskgat/export.hpp"

namespace maskgat::detail {

enum class DotToken : std::uint8_t {
  kEnd,  // of the file
  kId,
  kStrict,
  kGraph,
  kDigraph,
  kNode,
  kEdge,
  kSubgraph,
  kOpenBrace,
  kCloseBrace,
  kOpenBracket,
  kCloseBracket,
  kSemicolon,
  kComma,
  kEquals,
  kColon,
  kDirectedEdge,    // ->
  kUndirectedEdge,  // --
};

// How a token is shown in messages: `'{'`, `'->'`, `the keyword 'node'`, `the ID 'a'`, ...
[[nodiscard]] std::string describe(DotToken token, std::string_view text);

// Internal (this header is not installed); exported for the differential fuzz target.
class MASKGAT_EXPORT DotLexer {
 public:
  // Reads `text` (a UTF-8 byte-order mark at its start is skipped). Errors are ParseError
  // `<reader>: <path>:<line>: ...`.
  DotLexer(std::string_view text, std::string path, std::string_view reader);

  // The next token; kEnd at the end of the file. Throws on an unterminated comment, quoted
  // string or HTML string, a character no token starts with, or a numeral followed by a letter.
  DotToken next();

  // The ID of the last kId (unescaped), or the text of the last other token.
  [[nodiscard]] const std::string& text() const noexcept { return text_; }
  // The line the last token starts on.
  [[nodiscard]] std::int64_t line() const noexcept { return token_line_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

  // Throws ParseError at `line`.
  [[noreturn]] void fail(std::int64_t line, const std::string& message) const;

 private:
  void move_to(std::size_t target) noexcept;
  void skip_space_and_comments();
  void read_quoted();
  void read_html();

  std::string_view input_;
  std::size_t pos_ = 0;
  std::int64_t line_ = 1;
  std::string path_;
  std::string reader_;
  std::int64_t token_line_ = 1;
  std::string text_;
};

}  // namespace maskgat::detail
