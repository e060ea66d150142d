#pragma once
// XML read as a flat stream of events, in one pass and constant stack space whatever the nesting:
// the GraphML reader is built on it. Comments, processing instructions and declarations
// (`<!DOCTYPE ...>` with its internal subset, quoted literals honoured) are skipped; every error
// names the line it is on.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "maskgat/export.hpp"

namespace maskgat::detail {

// `name="value"` inside a start tag; the value as written (entities not yet decoded).
struct XmlAttribute {
  std::string_view name;
  std::string_view raw_value;
};

enum class XmlEvent : std::uint8_t {
  kStart,  // a start tag (a self-closing one is followed by its kEnd)
  kEnd,    // the end of the innermost open element
  kText,   // character data, or a CDATA section, inside an element
  kEndOfFile,
};

// Internal (this header is not installed); exported for the differential fuzz target.
class MASKGAT_EXPORT XmlScanner {
 public:
  // Reads `text` (a UTF-8 byte-order mark at its start is skipped). Errors are ParseError
  // `<reader>: <path>:<line>: ...`, and LimitError when more than `max_depth` elements are open.
  XmlScanner(std::string_view text, std::int64_t max_depth, std::string path,
             std::string_view reader);

  // The next event. Throws on malformed XML: an unterminated comment, CDATA section, processing
  // instruction, declaration, tag or attribute value; a closing tag that does not match; an
  // attribute without `="value"` or given twice; text or a second element outside the root; an
  // end of file with elements still open.
  XmlEvent next();

  // The element of the last kStart or kEnd.
  [[nodiscard]] std::string_view name() const noexcept { return name_; }
  // The attributes of the last kStart, in file order.
  [[nodiscard]] const std::vector<XmlAttribute>& attributes() const noexcept { return attributes_; }
  // The value of the last kStart's attribute `name`, as written; nullptr when it has none.
  [[nodiscard]] const std::string_view* attribute(std::string_view name) const noexcept;
  // The text of the last kText: character data as written (entities not decoded), or a CDATA
  // section's content (`is_cdata`).
  [[nodiscard]] std::string_view text() const noexcept { return text_; }
  [[nodiscard]] bool is_cdata() const noexcept { return cdata_; }
  // Elements open after the last event (the root counts 1; a kEnd has already closed its own).
  [[nodiscard]] std::size_t depth() const noexcept { return open_.size(); }
  // The line the last event starts on.
  [[nodiscard]] std::int64_t line() const noexcept { return event_line_; }

  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  // Throws ParseError at `line`.
  [[noreturn]] void fail(std::int64_t line, const std::string& message) const;

 private:
  struct OpenElement {
    std::string_view name;
    std::int64_t line;
  };

  void move_to(std::size_t target) noexcept;
  bool skip_past(std::string_view terminator) noexcept;
  void skip_delimited(std::string_view terminator, const char* unterminated);
  void skip_declaration();
  std::string_view read_name();
  void read_start_tag();
  void read_end_tag();

  std::string_view text_all_;
  std::size_t pos_ = 0;
  std::int64_t line_ = 1;
  std::int64_t max_depth_;
  std::string path_;
  std::string reader_;
  std::vector<OpenElement> open_;
  bool root_seen_ = false;
  bool pending_end_ = false;  // the last kStart was self-closing
  std::int64_t event_line_ = 1;
  std::string_view name_;
  std::vector<XmlAttribute> attributes_;
  std::vector<std::string_view> names_;  // of `attributes_`, sorted to find one given twice
  std::string_view text_;
  bool cdata_ = false;
};

// The text of an attribute value or character data with the entity and character references
// `&lt; &gt; &amp; &quot; &apos; &#N; &#xH;` replaced (a character reference as UTF-8); any other
// `&` is kept as written. With `normalize`, runs of white space become one space and leading and
// trailing white space goes, as for character data. Throws through `scanner` at `line` on a
// character reference that is malformed or outside Unicode.
[[nodiscard]] MASKGAT_EXPORT std::string decode_xml_text(std::string_view raw, bool normalize,
                                                         const XmlScanner& scanner,
                                                         std::int64_t line);

}  // namespace maskgat::detail
