#include "detail/prescan.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>
#include <vector>

#include "detail/text.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat::detail {
namespace {

constexpr std::string_view kGraphml = "graphml";
constexpr std::string_view kDot = "dot";
constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

// A position in the text and the 1-based line it is on. Every move goes through `move_to`, so the
// line count stays right whatever construct is skipped.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}

  [[nodiscard]] bool at_end() const noexcept { return pos_ >= text_.size(); }
  [[nodiscard]] std::size_t pos() const noexcept { return pos_; }
  [[nodiscard]] std::int64_t line() const noexcept { return line_; }
  [[nodiscard]] char peek(std::size_t ahead = 0) const noexcept {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  [[nodiscard]] bool looking_at(std::string_view prefix) const noexcept {
    return text_.substr(pos_).starts_with(prefix);
  }
  [[nodiscard]] bool at_line_start() const noexcept { return pos_ == 0 || text_[pos_ - 1] == '\n'; }

  void move_to(std::size_t target) noexcept {
    target = std::min(target, text_.size());
    line_ += static_cast<std::int64_t>(
        std::count(text_.begin() + static_cast<std::ptrdiff_t>(pos_),
                   text_.begin() + static_cast<std::ptrdiff_t>(target), '\n'));
    pos_ = target;
  }
  void advance(std::size_t count = 1) noexcept { move_to(pos_ + count); }

  // Moves past the next `terminator`; false, at the end of the text, when there is none.
  bool skip_past(std::string_view terminator) noexcept {
    const std::size_t found = text_.find(terminator, pos_);
    if (found == std::string_view::npos) {
      move_to(text_.size());
      return false;
    }
    move_to(found + terminator.size());
    return true;
  }

  // Moves to the next of `chars` (not past it); false, at the end, when there is none.
  bool skip_to_any(std::string_view chars) noexcept {
    const std::size_t found = text_.find_first_of(chars, pos_);
    move_to(found == std::string_view::npos ? text_.size() : found);
    return found != std::string_view::npos;
  }

  // The line the text ends on (a final line end does not start another line).
  [[nodiscard]] std::int64_t last_line() const noexcept {
    return text_.ends_with('\n') && line_ > 1 ? line_ - 1 : line_;
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::int64_t line_ = 1;
};

[[noreturn]] void throw_depth(std::string_view reader, const std::string& path, std::int64_t line,
                              std::size_t depth, std::int64_t limit) {
  throw LimitError(reader, path, line,
                   "nesting depth " + std::to_string(depth) + " exceeds the limit of " +
                       std::to_string(limit) + " (raise it with --max-nesting-depth)");
}

bool exceeds(std::size_t depth, std::int64_t limit) noexcept {
  return limit < 0 || depth > static_cast<std::uint64_t>(limit);
}

// ---------------------------------------------------------------------------------------------
// GraphML

bool is_xml_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

struct OpenElement {
  std::string_view name;
  std::int64_t line;
};

// Calls `visit(name, value)` for every `name="value"` in the inside of a tag. Stops quietly at
// anything malformed: Boost's XML parser reports that with its own message.
template <typename Visit>
void for_each_attribute(std::string_view inside, Visit visit) {
  std::size_t i = 0;
  const auto skip_spaces = [&] {
    while (i < inside.size() && is_xml_space(inside[i])) ++i;
  };
  while (true) {
    skip_spaces();
    const std::size_t name_begin = i;
    while (i < inside.size() && !is_xml_space(inside[i]) && inside[i] != '=') ++i;
    if (i == name_begin) return;
    const std::string_view name = inside.substr(name_begin, i - name_begin);
    skip_spaces();
    if (i >= inside.size() || inside[i] != '=') return;
    ++i;
    skip_spaces();
    if (i >= inside.size() || (inside[i] != '"' && inside[i] != '\'')) return;
    const std::size_t close = inside.find(inside[i], i + 1);
    if (close == std::string_view::npos) return;
    visit(name, inside.substr(i + 1, close - i - 1));
    i = close + 1;
  }
}

class GraphmlScanner {
 public:
  GraphmlScanner(std::string_view text, const Limits& limits, const std::string& path)
      : cursor_(text), text_(text), limit_(limits.max_nesting_depth), path_(path) {}

  GraphmlScan run() {
    while (cursor_.skip_to_any("<")) {
      if (cursor_.looking_at("<!--")) {
        skip_delimited("-->", "unterminated comment: '<!--' has no closing '-->'");
      } else if (cursor_.looking_at("<![CDATA[")) {
        skip_delimited("]]>", "unterminated CDATA section: '<![CDATA[' has no closing ']]>'");
      } else if (cursor_.looking_at("<?")) {
        skip_delimited("?>", "unterminated processing instruction: '<?' has no closing '?>'");
      } else if (cursor_.looking_at("<!")) {
        skip_declaration();
      } else if (cursor_.looking_at("</")) {
        close_element();
      } else {
        open_element();
      }
    }
    if (!open_.empty()) {
      const OpenElement& innermost = open_.back();
      fail(cursor_.last_line(), "unexpected end of file: element <" + std::string(innermost.name) +
                                    "> opened at line " + std::to_string(innermost.line) +
                                    " is not closed");
    }
    return scan_;
  }

 private:
  [[noreturn]] void fail(std::int64_t line, const std::string& message) const {
    throw ParseError(kGraphml, path_, line, message);
  }

  void skip_delimited(std::string_view terminator, const char* unterminated) {
    const std::int64_t start = cursor_.line();
    if (!cursor_.skip_past(terminator)) fail(start, unterminated);
  }

  // `<!DOCTYPE ...>` and other declarations, with a bracketed internal subset whose own
  // declarations and comments may contain `>`.
  void skip_declaration() {
    const std::int64_t start = cursor_.line();
    const char* const unterminated = "unterminated declaration: '<!' has no closing '>'";
    cursor_.advance(2);
    std::int64_t brackets = 0;
    while (true) {
      if (!cursor_.skip_to_any("\"'[]<>")) fail(start, unterminated);
      const char c = cursor_.peek();
      if (c == '"' || c == '\'') {
        cursor_.advance();
        if (!cursor_.skip_past(std::string_view(&c, 1))) fail(start, unterminated);
      } else if (c == '<' && cursor_.looking_at("<!--")) {
        skip_delimited("-->", "unterminated comment: '<!--' has no closing '-->'");
      } else {
        cursor_.advance();
        if (c == '[') ++brackets;
        if (c == ']' && brackets > 0) --brackets;
        if (c == '>' && brackets == 0) return;
      }
    }
  }

  std::string_view read_name() {
    const std::size_t begin = cursor_.pos();
    while (!cursor_.at_end()) {
      const char c = cursor_.peek();
      if (is_xml_space(c) || c == '/' || c == '>' || c == '<') break;
      cursor_.advance();
    }
    return text_.substr(begin, cursor_.pos() - begin);
  }

  void close_element() {
    const std::int64_t start = cursor_.line();
    cursor_.advance(2);
    const std::string_view name = read_name();
    const std::string shown = std::string("</").append(name).append(">");
    while (!cursor_.at_end() && is_xml_space(cursor_.peek())) cursor_.advance();
    if (cursor_.at_end()) fail(start, "the closing tag " + shown + " is not closed by '>'");
    if (cursor_.peek() != '>') {
      fail(cursor_.line(),
           "unexpected " + quoted(text_.substr(cursor_.pos(), 1)) + " in the closing tag " + shown);
    }
    cursor_.advance();
    if (open_.empty()) fail(start, "closing tag " + shown + " has no matching opening tag");
    const OpenElement& innermost = open_.back();
    if (innermost.name != name) {
      fail(start, "closing tag " + shown + " does not match <" + std::string(innermost.name) +
                      "> opened at line " + std::to_string(innermost.line));
    }
    open_.pop_back();
  }

  void open_element() {
    const std::int64_t start = cursor_.line();
    cursor_.advance();
    const std::string_view name = read_name();
    if (name.empty()) fail(start, "'<' is not followed by an element name");
    const std::string shown = std::string("<").append(name).append(">");
    const std::size_t inside_begin = cursor_.pos();
    while (true) {
      if (!cursor_.skip_to_any("\"'<>")) {
        fail(start, "the tag " + shown + " is not closed by '>'");
      }
      const char c = cursor_.peek();
      if (c == '>') break;
      if (c == '<') fail(cursor_.line(), "'<' inside the tag " + shown + ": the tag is not closed");
      const std::int64_t value_line = cursor_.line();
      cursor_.advance();
      if (!cursor_.skip_past(std::string_view(&c, 1))) {
        fail(value_line, "unterminated attribute value in the tag " + shown);
      }
    }
    std::string_view inside = text_.substr(inside_begin, cursor_.pos() - inside_begin);
    cursor_.advance();
    const bool self_closing = inside.ends_with('/');
    if (self_closing) inside.remove_suffix(1);

    const std::size_t depth = open_.size() + 1;
    if (exceeds(depth, limit_)) throw_depth(kGraphml, path_, start, depth, limit_);
    if (depth == 2) record_top_level(name, inside);
    if (name == "node") ++scan_.declared_nodes;
    if (!self_closing) open_.push_back({name, start});
  }

  // Boost reads keys and graphs only among the children of the root `<graphml>`.
  void record_top_level(std::string_view name, std::string_view inside) {
    if (name == "graph" && !seen_graph_) {
      seen_graph_ = true;
      scan_.has_graph = true;
      for_each_attribute(inside, [&](std::string_view attribute, std::string_view value) {
        if (attribute == "edgedefault") scan_.undirected = value == "undirected";
      });
      return;
    }
    if (name != "key") return;
    std::string_view id;
    std::string_view domain;
    std::string_view attr_name;
    std::string_view attr_type;
    for_each_attribute(inside, [&](std::string_view attribute, std::string_view value) {
      if (attribute == "id") id = value;
      if (attribute == "for") domain = value;
      if (attribute == "attr.name") attr_name = value;
      if (attribute == "attr.type") attr_type = value;
    });
    GraphmlKey key{std::string(id), std::string(attr_type)};
    if (attr_name == "name" && (domain == "node" || domain == "all") && !scan_.node_name) {
      scan_.node_name = std::move(key);
    } else if (attr_name == "weight" && (domain == "edge" || domain == "all") &&
               !scan_.edge_weight) {
      scan_.edge_weight = std::move(key);
    }
  }

  Cursor cursor_;
  std::string_view text_;
  std::int64_t limit_;
  const std::string& path_;
  std::vector<OpenElement> open_;
  bool seen_graph_ = false;
  GraphmlScan scan_;
};

// ---------------------------------------------------------------------------------------------
// DOT

bool is_dot_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}
bool starts_word(char c) noexcept {
  return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_';
}
bool continues_word(char c) noexcept {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

char closer_of(char open) noexcept {
  switch (open) {
    case '{':
      return '}';
    case '[':
      return ']';
    default:
      return ')';
  }
}

char opener_of(char close) noexcept {
  switch (close) {
    case '}':
      return '{';
    case ']':
      return '[';
    default:
      return '(';
  }
}

std::string in_quotes(char c) { return std::string{'\'', c, '\''}; }

struct OpenBracket {
  char bracket;
  std::int64_t line;
};

class DotScanner {
 public:
  DotScanner(std::string_view text, const Limits& limits, const std::string& path)
      : cursor_(text), text_(text), limit_(limits.max_nesting_depth), path_(path) {}

  DotScan run() {
    if (cursor_.looking_at(kByteOrderMark)) cursor_.advance(kByteOrderMark.size());
    while (!cursor_.at_end()) {
      const char c = cursor_.peek();
      if (is_dot_space(c)) {
        cursor_.advance();
      } else if (c == '#' && cursor_.at_line_start()) {
        cursor_.skip_to_any("\n");
      } else if (cursor_.looking_at("//")) {
        cursor_.skip_to_any("\n");
      } else if (cursor_.looking_at("/*")) {
        const std::int64_t start = cursor_.line();
        if (!cursor_.skip_past("*/")) fail(start, "unterminated comment: '/*' has no closing '*/'");
      } else if (!kind_known_) {
        read_graph_kind();
      } else if (c == '"') {
        skip_quoted();
      } else if (c == '<') {
        skip_html();
      } else if (c == '{' || c == '[' || c == '(') {
        open(c);
      } else if (c == '}' || c == ']' || c == ')') {
        close(c);
      } else {
        cursor_.advance();
      }
    }
    if (!kind_known_) fail(0, "no graph: expected 'graph' or 'digraph'");
    if (!open_.empty()) {
      const OpenBracket& innermost = open_.back();
      fail(cursor_.last_line(), "unexpected end of file: " + in_quotes(innermost.bracket) +
                                    " opened at line " + std::to_string(innermost.line) +
                                    " is not closed");
    }
    return scan_;
  }

 private:
  [[noreturn]] void fail(std::int64_t line, const std::string& message) const {
    throw ParseError(kDot, path_, line, message);
  }

  void read_graph_kind() {
    const char* const expected = "expected 'graph' or 'digraph' (optionally after 'strict')";
    if (!starts_word(cursor_.peek())) {
      fail(cursor_.line(), std::string(expected) + " at the start of the file, got " +
                               quoted(text_.substr(cursor_.pos(), 1)));
    }
    const std::size_t begin = cursor_.pos();
    while (!cursor_.at_end() && continues_word(cursor_.peek())) cursor_.advance();
    const std::string_view word = text_.substr(begin, cursor_.pos() - begin);
    std::string lower(word);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower == "strict" && !scan_.strict) {
      scan_.strict = true;
    } else if (lower == "graph" || lower == "digraph") {
      scan_.directed = lower == "digraph";
      kind_known_ = true;
    } else {
      fail(cursor_.line(),
           std::string(expected) + " at the start of the file, got " + quoted(word));
    }
  }

  // A backslash escapes the next character, a line end included.
  void skip_quoted() {
    const std::int64_t start = cursor_.line();
    cursor_.advance();
    while (true) {
      if (!cursor_.skip_to_any("\\\""))
        fail(start, "unterminated quoted string: '\"' has no closing '\"'");
      const char c = cursor_.peek();
      cursor_.advance(c == '\\' ? 2 : 1);
      if (c == '"') return;
    }
  }

  // An HTML string, delimited as Boost 1.74's tokenizer does it (not as Graphviz does): the
  // string's own `<` belongs to its first tag, and the string ends when the count of open minus
  // close tags is back to zero, so `<<b>x</b>` is one string. Following the same rule means the
  // braces counted here are exactly those Boost's recursive parser will see.
  void skip_html() {
    const std::int64_t start = cursor_.line();
    std::int64_t open_tags = 0;
    do {
      if (!cursor_.skip_to_any("<")) {
        fail(start, "unterminated HTML string: '<' has no matching close tag");
      }
      if (cursor_.looking_at("<![CDATA[")) {
        const std::int64_t cdata = cursor_.line();
        if (!cursor_.skip_past("]]>")) {
          fail(cdata, "unterminated CDATA section in an HTML string: no closing ']]>'");
        }
        continue;
      }
      open_tags += html_tag();
    } while (open_tags > 0);
  }

  // Moves past the tag at the cursor; +1 for an open tag, -1 for a close tag, 0 for `<x/>`.
  // Outside quoted attribute values a tag ends at the first `>` and may not contain `!` or `?`.
  std::int64_t html_tag() {
    const std::int64_t start = cursor_.line();
    std::size_t i = cursor_.pos() + 1;
    const bool closing = i < text_.size() && text_[i] == '/';
    if (closing) ++i;
    while (true) {
      if (i >= text_.size()) fail(start, "unterminated tag in an HTML string");
      const char c = text_[i];
      if (c == '/' && i + 1 < text_.size() && text_[i + 1] == '>') {
        cursor_.move_to(i + 2);
        return closing ? -1 : 0;
      }
      if (c == '>') {
        cursor_.move_to(i + 1);
        return closing ? -1 : 1;
      }
      if (c == '!' || c == '?')
        fail(start, "invalid " + in_quotes(c) + " in a tag of an HTML string");
      if (c == '"' || c == '\'') {
        const std::size_t close = text_.find(c, i + 1);
        if (close == std::string_view::npos) fail(start, "unterminated tag in an HTML string");
        i = close;
      }
      ++i;
    }
  }

  void open(char bracket) {
    const std::size_t depth = open_.size() + 1;
    if (exceeds(depth, limit_)) throw_depth(kDot, path_, cursor_.line(), depth, limit_);
    open_.push_back({bracket, cursor_.line()});
    cursor_.advance();
  }

  void close(char bracket) {
    if (open_.empty()) {
      fail(cursor_.line(),
           in_quotes(bracket) + " has no matching " + in_quotes(opener_of(bracket)));
    }
    const OpenBracket& innermost = open_.back();
    if (closer_of(innermost.bracket) != bracket) {
      fail(cursor_.line(), in_quotes(bracket) + " does not match the " +
                               in_quotes(innermost.bracket) + " opened at line " +
                               std::to_string(innermost.line));
    }
    open_.pop_back();
    cursor_.advance();
  }

  Cursor cursor_;
  std::string_view text_;
  std::int64_t limit_;
  const std::string& path_;
  std::vector<OpenBracket> open_;
  bool kind_known_ = false;
  DotScan scan_;
};

}  // namespace

GraphmlScan prescan_graphml(std::string_view text, const Limits& limits, const std::string& path) {
  return GraphmlScanner(text, limits, path).run();
}

DotScan prescan_dot(std::string_view text, const Limits& limits, const std::string& path) {
  return DotScanner(text, limits, path).run();
}

}  // namespace maskgat::detail
