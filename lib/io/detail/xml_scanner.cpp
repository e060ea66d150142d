#include "io/detail/xml_scanner.hpp"

#include <algorithm>

#include "io/detail/input_file.hpp"
#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat::detail {
namespace {

bool is_xml_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Characters that end an element or attribute name.
bool ends_name(char c) noexcept {
  return is_xml_space(c) || c == '/' || c == '>' || c == '<' || c == '=' || c == '"' || c == '\'';
}

std::string tag(std::string_view name) { return "<" + std::string(name) + ">"; }

}  // namespace

XmlScanner::XmlScanner(std::string_view text, std::int64_t max_depth, std::string path,
                       std::string_view reader)
    : text_all_(text), max_depth_(max_depth), path_(std::move(path)), reader_(reader) {
  if (text_all_.starts_with(kUtf8ByteOrderMark)) pos_ = kUtf8ByteOrderMark.size();
}

void XmlScanner::fail(std::int64_t line, const std::string& message) const {
  throw ParseError(reader_, path_, line, message);
}

const std::string_view* XmlScanner::attribute(std::string_view name) const noexcept {
  for (const XmlAttribute& attribute : attributes_) {
    if (attribute.name == name) return &attribute.raw_value;
  }
  return nullptr;
}

void XmlScanner::move_to(std::size_t target) noexcept {
  target = std::min(target, text_all_.size());
  line_ += count_lines(text_all_, pos_, target);
  pos_ = target;
}

bool XmlScanner::skip_past(std::string_view terminator) noexcept {
  const std::size_t found = text_all_.find(terminator, pos_);
  if (found == std::string_view::npos) {
    move_to(text_all_.size());
    return false;
  }
  move_to(found + terminator.size());
  return true;
}

void XmlScanner::skip_delimited(std::string_view terminator, const char* unterminated) {
  const std::int64_t start = line_;
  if (!skip_past(terminator)) fail(start, unterminated);
}

// `<!DOCTYPE ...>` and other declarations: quoted literals and an internal subset in brackets,
// whose declarations, comments and literals may hold `>`, are skipped as XML defines them.
void XmlScanner::skip_declaration() {
  const std::int64_t start = line_;
  const char* const unterminated = "unterminated declaration: '<!' has no closing '>'";
  move_to(pos_ + 2);
  std::int64_t brackets = 0;
  while (true) {
    const std::size_t found = text_all_.find_first_of("\"'[]<>", pos_);
    if (found == std::string_view::npos) fail(start, unterminated);
    move_to(found);
    const char c = text_all_[pos_];
    if (c == '"' || c == '\'') {
      move_to(pos_ + 1);
      if (!skip_past(std::string_view(&c, 1))) fail(start, unterminated);
    } else if (c == '<' && text_all_.substr(pos_).starts_with("<!--")) {
      skip_delimited("-->", "unterminated comment: '<!--' has no closing '-->'");
    } else {
      move_to(pos_ + 1);
      if (c == '[') ++brackets;
      if (c == ']' && brackets > 0) --brackets;
      if (c == '>' && brackets == 0) return;
    }
  }
}

std::string_view XmlScanner::read_name() {
  const std::size_t begin = pos_;
  while (pos_ < text_all_.size() && !ends_name(text_all_[pos_])) ++pos_;
  return text_all_.substr(begin, pos_ - begin);
}

void XmlScanner::read_start_tag() {
  const std::int64_t start = line_;
  move_to(pos_ + 1);
  name_ = read_name();
  if (name_.empty()) fail(start, "'<' is not followed by an element name");
  const std::string shown = tag(name_);
  if (open_.empty()) {
    if (root_seen_) {
      fail(start, "a second root element " + shown + ": a document has one root element");
    }
    root_seen_ = true;
  }
  attributes_.clear();
  while (true) {
    const std::size_t space = pos_;
    while (pos_ < text_all_.size() && is_xml_space(text_all_[pos_])) move_to(pos_ + 1);
    if (pos_ >= text_all_.size()) fail(start, "the tag " + shown + " is not closed by '>'");
    const char c = text_all_[pos_];
    if (c == '>' || (c == '/' && text_all_.substr(pos_).starts_with("/>"))) {
      pending_end_ = c == '/';
      move_to(pos_ + (pending_end_ ? 2 : 1));
      break;
    }
    if (c == '<') fail(line_, "'<' inside the tag " + shown + ": the tag is not closed");
    const std::int64_t attribute_line = line_;
    const std::string_view attribute_name = read_name();
    if (pos_ >= text_all_.size()) fail(start, "the tag " + shown + " is not closed by '>'");
    if (attribute_name.empty()) {
      fail(line_, "unexpected " + quoted(text_all_.substr(pos_, 1)) + " in the tag " + shown);
    }
    if (space == pos_ - attribute_name.size()) {
      fail(line_, "the attribute '" + std::string(attribute_name) + "' in the tag " + shown +
                      " is not separated from what precedes it by white space");
    }
    const auto skip_space = [&] {
      while (pos_ < text_all_.size() && is_xml_space(text_all_[pos_])) move_to(pos_ + 1);
      if (pos_ >= text_all_.size()) fail(start, "the tag " + shown + " is not closed by '>'");
    };
    skip_space();
    if (text_all_[pos_] != '=') {
      fail(line_, "the attribute '" + std::string(attribute_name) + "' in the tag " + shown +
                      " has no value: expected ='...' or =\"...\"");
    }
    move_to(pos_ + 1);
    skip_space();
    if (text_all_[pos_] != '"' && text_all_[pos_] != '\'') {
      fail(line_, "the value of the attribute '" + std::string(attribute_name) + "' in the tag " +
                      shown + " is not quoted");
    }
    const char quote = text_all_[pos_];
    const std::size_t close = text_all_.find(quote, pos_ + 1);
    if (close == std::string_view::npos) {
      fail(attribute_line, "unterminated attribute value in the tag " + shown);
    }
    const std::string_view value = text_all_.substr(pos_ + 1, close - pos_ - 1);
    move_to(close + 1);
    attributes_.push_back({attribute_name, value});
  }
  // Each attribute once: sorted names, so a tag of many attributes costs n log n.
  names_.clear();
  for (const XmlAttribute& attribute : attributes_) names_.push_back(attribute.name);
  std::sort(names_.begin(), names_.end());
  if (const auto twice = std::adjacent_find(names_.begin(), names_.end()); twice != names_.end()) {
    fail(start, "the attribute '" + std::string(*twice) + "' appears twice in the tag " + shown);
  }
  const std::size_t depth = open_.size() + 1;
  if (max_depth_ < 0 || depth > static_cast<std::uint64_t>(max_depth_)) {
    throw LimitError(reader_, path_, start,
                     "nesting depth " + std::to_string(depth) + " exceeds the limit of " +
                         std::to_string(max_depth_) + " (raise it with --max-nesting-depth)");
  }
  open_.push_back({name_, start});
}

void XmlScanner::read_end_tag() {
  const std::int64_t start = line_;
  move_to(pos_ + 2);
  const std::string_view name = read_name();
  const std::string shown = "</" + std::string(name) + ">";
  while (pos_ < text_all_.size() && is_xml_space(text_all_[pos_])) move_to(pos_ + 1);
  if (pos_ >= text_all_.size()) fail(start, "the closing tag " + shown + " is not closed by '>'");
  if (text_all_[pos_] != '>') {
    fail(line_, "unexpected " + quoted(text_all_.substr(pos_, 1)) + " in the closing tag " + shown);
  }
  move_to(pos_ + 1);
  if (open_.empty()) fail(start, "closing tag " + shown + " has no matching opening tag");
  const OpenElement& innermost = open_.back();
  if (innermost.name != name) {
    fail(start, "closing tag " + shown + " does not match " + tag(innermost.name) +
                    " opened at line " + std::to_string(innermost.line));
  }
  name_ = name;
  open_.pop_back();
}

XmlEvent XmlScanner::next() {
  if (pending_end_) {
    pending_end_ = false;
    open_.pop_back();
    return XmlEvent::kEnd;
  }
  while (true) {
    event_line_ = line_;
    if (pos_ >= text_all_.size()) {
      if (!open_.empty()) {
        const OpenElement& innermost = open_.back();
        const std::int64_t last = text_all_.ends_with('\n') && line_ > 1 ? line_ - 1 : line_;
        fail(last, "unexpected end of file: element " + tag(innermost.name) + " opened at line " +
                       std::to_string(innermost.line) + " is not closed");
      }
      return XmlEvent::kEndOfFile;
    }
    if (text_all_[pos_] != '<') {
      const std::size_t end = std::min(text_all_.find('<', pos_), text_all_.size());
      const std::string_view text = text_all_.substr(pos_, end - pos_);
      move_to(end);
      if (open_.empty()) {
        if (std::all_of(text.begin(), text.end(), is_xml_space)) continue;
        fail(event_line_, "text outside the root element: " + quoted(text));
      }
      text_ = text;
      cdata_ = false;
      return XmlEvent::kText;
    }
    const std::string_view rest = text_all_.substr(pos_);
    if (rest.starts_with("<!--")) {
      move_to(pos_ + 4);
      skip_delimited("-->", "unterminated comment: '<!--' has no closing '-->'");
    } else if (rest.starts_with("<![CDATA[")) {
      move_to(pos_ + 9);
      const std::size_t begin = pos_;
      skip_delimited("]]>", "unterminated CDATA section: '<![CDATA[' has no closing ']]>'");
      if (open_.empty()) fail(event_line_, "a CDATA section outside the root element");
      text_ = text_all_.substr(begin, pos_ - 3 - begin);
      cdata_ = true;
      return XmlEvent::kText;
    } else if (rest.starts_with("<?")) {
      move_to(pos_ + 2);
      skip_delimited("?>", "unterminated processing instruction: '<?' has no closing '?>'");
    } else if (rest.starts_with("<!")) {
      skip_declaration();
    } else if (rest.starts_with("</")) {
      read_end_tag();
      return XmlEvent::kEnd;
    } else {
      read_start_tag();
      return XmlEvent::kStart;
    }
  }
}

std::string decode_xml_text(std::string_view raw, bool normalize, const XmlScanner& scanner,
                            std::int64_t line) {
  std::string out;
  out.reserve(raw.size());
  bool space = false;  // a run of white space is pending (normalize only)
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (normalize && is_xml_space(c)) {
      space = !out.empty();
      continue;
    }
    if (space) {
      out += ' ';
      space = false;
    }
    if (c != '&') {
      out += c;
      continue;
    }
    // The longest reference XML defines is `&#x10FFFF;`: the `;` is looked for that far only.
    const std::size_t semicolon = raw.substr(0, i + 12).find(';', i);
    const std::string_view entity =
        semicolon == std::string_view::npos ? std::string_view() : raw.substr(i, semicolon - i + 1);
    static constexpr std::pair<std::string_view, char> kNamed[] = {
        {"&lt;", '<'}, {"&gt;", '>'}, {"&amp;", '&'}, {"&quot;", '"'}, {"&apos;", '\''}};
    const auto named = std::find_if(std::begin(kNamed), std::end(kNamed),
                                    [&](const auto& known) { return known.first == entity; });
    if (named != std::end(kNamed)) {
      out += named->second;
      i = semicolon;
      continue;
    }
    if (!raw.substr(i).starts_with("&#")) {
      out += c;  // not a reference XML defines: kept as written
      continue;
    }
    const bool hex = raw.substr(i).starts_with("&#x");
    const std::string_view digits = entity.empty()
                                        ? std::string_view()
                                        : entity.substr(hex ? 3 : 2, entity.size() - (hex ? 4 : 3));
    std::uint32_t code = 0;
    bool valid = !digits.empty() && digits.size() <= 8;
    for (const char d : digits) {
      const int value = d >= '0' && d <= '9'          ? d - '0'
                        : hex && d >= 'a' && d <= 'f' ? d - 'a' + 10
                        : hex && d >= 'A' && d <= 'F' ? d - 'A' + 10
                                                      : -1;
      if (value < 0) valid = false;
      code = code * (hex ? 16 : 10) + static_cast<std::uint32_t>(std::max(value, 0));
    }
    if (!valid || code == 0 || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      scanner.fail(line, "invalid character reference " +
                             quoted(entity.empty() ? raw.substr(i, 12) : entity));
    }
    append_utf8(out, code);
    i = semicolon;
  }
  return out;
}

}  // namespace maskgat::detail
