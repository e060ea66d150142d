#include "maskgat/io/graphml.hpp"

#include <expat.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "io/detail/assemble.hpp"
#include "io/detail/input_file.hpp"
#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat {
namespace {

constexpr std::string_view kReader = "graphml";

// Bytes handed to expat per call: XML_Parse takes an int length, and expat copies each chunk
// into a buffer of its own, which a small chunk keeps small.
constexpr std::size_t kChunk = std::size_t{64} << 10;

// A `<key>` the reader uses: the node key named `name` or the edge key named `weight`.
struct Key {
  std::string id;
  std::string domain;  // the `for` attribute
  std::string type;    // the `attr.type` attribute, empty when absent
  std::optional<std::string> default_value;
};

// What an open element is to the reader; everything it does not read is skipped whole.
enum class Context : std::uint8_t { kGraphml, kKey, kDefault, kGraph, kNode, kEdge, kData, kSkip };

struct OpenElement {
  std::string name;
  std::int64_t line;
  Context context;
};

struct ParserDeleter {
  void operator()(XML_Parser parser) const noexcept { XML_ParserFree(parser); }
};

bool is_xml_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Characters that end an element or attribute name.
bool ends_name(char c) noexcept {
  return is_xml_space(c) || c == '/' || c == '>' || c == '<' || c == '=' || c == '"' || c == '\'';
}

// The name that starts `text`.
std::string name_at(std::string_view text) {
  return std::string(
      text.substr(0, std::find_if(text.begin(), text.end(), ends_name) - text.begin()));
}

std::string tag(std::string_view name) { return "<" + std::string(name) + ">"; }

// The first reference in `text` to an entity XML does not predefine, such as `&lol;`.
std::optional<std::string_view> unknown_reference(std::string_view text) {
  static constexpr std::string_view kPredefined[] = {"&lt;", "&gt;", "&amp;", "&quot;", "&apos;"};
  for (std::size_t at = text.find('&'); at != std::string_view::npos; at = text.find('&', at + 1)) {
    const std::size_t end = text.find(';', at);
    const std::string_view reference =
        text.substr(at, end == std::string_view::npos ? 1 : end - at + 1);
    if (!reference.starts_with("&#") && std::find(std::begin(kPredefined), std::end(kPredefined),
                                                  reference) == std::end(kPredefined)) {
      return reference;
    }
  }
  return std::nullopt;
}

std::string unknown_entity(std::string_view reference) {
  return "the entity " + detail::quoted(reference) +
         " is not declared: expected &lt; &gt; &amp; &quot; &apos; or a character reference "
         "(no DTD is read)";
}

class GraphmlReader {
 public:
  GraphmlReader(std::string_view text, const EdgeListOptions& options, std::string path)
      : text_(text), options_(options), path_(std::move(path)), parser_(XML_ParserCreate(nullptr)) {
    if (!parser_) throw std::bad_alloc();
    XML_Parser parser = parser_.get();
    XML_SetUserData(parser, this);
    XML_SetElementHandler(parser, callback<&GraphmlReader::on_start>,
                          callback<&GraphmlReader::on_end>);
    XML_SetCharacterDataHandler(parser, callback<&GraphmlReader::on_text>);
    XML_SetCdataSectionHandler(parser, callback<&GraphmlReader::on_cdata_start>,
                               callback<&GraphmlReader::on_cdata_end>);
    XML_SetCommentHandler(parser, callback<&GraphmlReader::on_comment>);
    XML_SetProcessingInstructionHandler(parser, callback<&GraphmlReader::on_instruction>);
    // No entity is declared, so none is expanded (no entity bomb) or fetched, and the external
    // DTD subset is never read. A document with one (or with a parameter entity reference) makes
    // expat skip undeclared entities instead of refusing them: they are refused here.
    XML_SetEntityDeclHandler(parser, callback<&GraphmlReader::on_entity_declaration>);
    XML_SetParamEntityParsing(parser, XML_PARAM_ENTITY_PARSING_NEVER);
    XML_SetSkippedEntityHandler(parser, callback<&GraphmlReader::on_skipped_entity>);
    XML_SetNotStandaloneHandler(parser, [](void* reader) {
      static_cast<GraphmlReader*>(reader)->entities_skipped_ = true;
      return static_cast<int>(XML_STATUS_OK);
    });
  }
  GraphmlReader(const GraphmlReader&) = delete;
  GraphmlReader& operator=(const GraphmlReader&) = delete;
  GraphmlReader(GraphmlReader&&) = delete;
  GraphmlReader& operator=(GraphmlReader&&) = delete;
  ~GraphmlReader() = default;

  LoadedGraph read(NodeIndex& nodes) {
    for (std::size_t at = 0, size = 0; at < text_.size() || at == 0; at += size) {
      size = std::min(kChunk, text_.size() - at);
      const bool last = at + size == text_.size();
      if (XML_Parse(parser_.get(), text_.data() + at, static_cast<int>(size),
                    last ? XML_TRUE : XML_FALSE) == XML_STATUS_ERROR) {
        if (error_) std::rethrow_exception(error_);
        // No element at all (an empty file, or only comments) is no graph, as below.
        if (XML_GetErrorCode(parser_.get()) != XML_ERROR_NO_ELEMENTS || !open_.empty()) {
          fail_malformed();
        }
      }
      if (last) break;
    }
    if (!graph_read_) fail(0, "no <graph> element inside <graphml>");
    return finish(nodes);
  }

 private:
  // An expat callback that runs `handler` on the reader. No exception may unwind through
  // expat's C frames: the first one stops the parser and is rethrown once XML_Parse returns,
  // and the events expat still reports after it are ignored.
  template <auto handler, typename... Args>
  static void XMLCALL callback(void* reader_data, Args... args) {
    auto& reader = *static_cast<GraphmlReader*>(reader_data);
    if (reader.error_) return;
    try {
      (reader.*handler)(args...);
    } catch (...) {
      reader.error_ = std::current_exception();
      XML_StopParser(reader.parser_.get(), XML_FALSE);
    }
  }

  [[noreturn]] void fail(std::int64_t line, const std::string& message) const {
    throw ParseError(kReader, path_, line, message);
  }

  [[nodiscard]] std::int64_t current_line() const noexcept {
    return static_cast<std::int64_t>(XML_GetCurrentLineNumber(parser_.get()));
  }

  // Expat's events

  void on_start(const XML_Char* name, const XML_Char** attributes) {
    end_text_run();
    element_ = name;
    line_ = current_line();
    // Only the attributes the file gives: defaults an <!ATTLIST> declares are not read.
    attributes_ = std::span(
        attributes, static_cast<std::size_t>(XML_GetSpecifiedAttributeCount(parser_.get())));
    if (entities_skipped_) {
      const auto begin = static_cast<std::size_t>(XML_GetCurrentByteIndex(parser_.get()));
      const auto count = static_cast<std::size_t>(XML_GetCurrentByteCount(parser_.get()));
      if (const auto reference = unknown_reference(text_.substr(begin, count))) {
        fail(line_, unknown_entity(*reference) + " in the tag " + tag(element_));
      }
    }
    const std::size_t depth = open_.size() + 1;
    const std::int64_t limit = options_.read.limits.max_nesting_depth;
    if (limit < 0 || depth > static_cast<std::uint64_t>(limit)) {
      throw LimitError(kReader, path_, line_,
                       "nesting depth " + std::to_string(depth) + " exceeds the limit of " +
                           std::to_string(limit) + " (raise it with --max-nesting-depth)");
    }
    start();
  }

  void on_end(const XML_Char* /*name*/) {
    end_text_run();
    end();
  }

  // Character data of the data and default elements the reader reads: in each run of text
  // between two pieces of markup, runs of white space become one space and leading and trailing
  // white space goes; what a character reference gives and CDATA sections are kept as they are.
  void on_text(const XML_Char* data, int size) {
    const Context context = open_.back().context;
    if (context != Context::kData && context != Context::kDefault) return;
    const auto at = XML_GetCurrentByteIndex(parser_.get());
    const bool literal = in_cdata_ || (at >= 0 && static_cast<std::size_t>(at) < text_.size() &&
                                       text_[static_cast<std::size_t>(at)] == '&');
    for (const char c : std::string_view(data, static_cast<std::size_t>(size))) {
      if (!literal && is_xml_space(c)) {
        space_pending_ = run_has_text_;
        continue;
      }
      if (space_pending_) {
        value_ += ' ';
        space_pending_ = false;
      }
      value_ += c;
      run_has_text_ = true;
    }
  }

  void end_text_run() noexcept {
    space_pending_ = false;
    run_has_text_ = false;
  }

  void on_cdata_start() {
    end_text_run();
    in_cdata_ = true;
  }

  void on_cdata_end() {
    end_text_run();
    in_cdata_ = false;
  }

  void on_comment(const XML_Char* /*text*/) { end_text_run(); }

  void on_instruction(const XML_Char* /*target*/, const XML_Char* /*data*/) { end_text_run(); }

  void on_entity_declaration(const XML_Char* name, int is_parameter_entity,
                             const XML_Char* /*value*/, int /*value_length*/,
                             const XML_Char* /*base*/, const XML_Char* /*system_id*/,
                             const XML_Char* /*public_id*/, const XML_Char* /*notation*/) {
    fail(current_line(),
         std::string("the DOCTYPE declares the entity '") + (is_parameter_entity != 0 ? "%" : "") +
             name + "': entities are neither expanded nor fetched, so none may be declared");
  }

  void on_skipped_entity(const XML_Char* name, int is_parameter_entity) {
    // A parameter entity is skipped with the rest of the DTD, which is not read.
    if (is_parameter_entity == 0) {
      fail(current_line(), unknown_entity("&" + std::string(name) + ";"));
    }
  }

  // Expat's error as the reader's own message.
  [[noreturn]] void fail_malformed() const {
    const XML_Error code = XML_GetErrorCode(parser_.get());
    if (code == XML_ERROR_NO_MEMORY) throw std::bad_alloc();
    const auto [line, message] = describe(code);
    fail(line, message);
  }

  // The line and message of expat's error `code`: what is wrong, where, and what is found
  // there, named from the text around the place expat stopped at (the file is in memory whole).
  [[nodiscard]] std::pair<std::int64_t, std::string> describe(XML_Error code) const {
    const std::int64_t line = current_line();
    const auto at = std::min(
        static_cast<std::size_t>(std::max<XML_Index>(XML_GetCurrentByteIndex(parser_.get()), 0)),
        text_.size());
    const std::string_view rest = text_.substr(at);
    switch (code) {
      case XML_ERROR_TAG_MISMATCH:  // at the name after `</`
        return {line, "closing tag </" + name_at(rest) + "> does not match " +
                          tag(open_.back().name) + " opened at line " +
                          std::to_string(open_.back().line)};
      case XML_ERROR_NO_ELEMENTS:  // at the end of the file, with an element open
        return {text_.ends_with('\n') && line > 1 ? line - 1 : line,
                "unexpected end of file: element " + tag(open_.back().name) + " opened at line " +
                    std::to_string(open_.back().line) + " is not closed"};
      case XML_ERROR_UNCLOSED_TOKEN:  // at the token's start
        if (rest.starts_with("<!--")) {
          return {line, "unterminated comment: '<!--' has no closing '-->'"};
        }
        if (rest.starts_with("<?")) {
          return {line, "unterminated processing instruction: '<?' has no closing '?>'"};
        }
        // A quoted literal is a part of a declaration.
        if (rest.starts_with("<!") || rest.starts_with('"') || rest.starts_with('\'')) {
          return {line, "unterminated declaration: '<!' has no closing '>'"};
        }
        if (rest.starts_with("</")) {
          return {line, "the closing tag </" + name_at(rest.substr(2)) + "> is not closed by '>'"};
        }
        if (rest.starts_with('<')) {
          return {line, "the tag " + tag(name_at(rest.substr(1))) + " is not closed by '>'"};
        }
        break;
      case XML_ERROR_UNCLOSED_CDATA_SECTION:  // at the end of the file
        return {line - detail::count_lines(text_, text_.rfind("<![CDATA[", at), at),
                "unterminated CDATA section: '<![CDATA[' has no closing ']]>'"};
      case XML_ERROR_JUNK_AFTER_DOC_ELEMENT:
        if (rest.starts_with("<![CDATA[")) {
          return {line, "a CDATA section outside the root element"};
        }
        if (rest.starts_with('<') && rest.size() > 1 && !ends_name(rest[1]) && rest[1] != '!' &&
            rest[1] != '?') {
          return {line, "a second root element " + tag(name_at(rest.substr(1))) +
                            ": a document has one root element"};
        }
        if (rest.starts_with('<')) break;
        return {line,
                "text outside the root element: " + detail::quoted(rest.substr(0, rest.find('<')))};
      case XML_ERROR_DUPLICATE_ATTRIBUTE:  // at the second one
        if (const auto inside = enclosing_tag(at)) {
          return {line, "the attribute '" + name_at(rest) + "' appears twice in the tag " +
                            tag(name_at(text_.substr(inside->begin + 1)))};
        }
        break;
      case XML_ERROR_UNDEFINED_ENTITY:  // at the reference, or at the start of its tag
        if (const auto reference = unknown_reference(rest)) {
          return {line, unknown_entity(*reference)};
        }
        break;
      case XML_ERROR_BAD_CHAR_REF:  // at the reference, or at the start of its tag
        if (rest.starts_with('&')) {
          return {line, "invalid character reference " +
                            detail::quoted(rest.substr(0, rest.find(';') + 1))};
        }
        break;
      case XML_ERROR_SYNTAX:  // text before the root element, or a malformed declaration
        if (const auto run = text_run(at); run && open_.empty()) {
          return {line, "text outside the root element: " + detail::quoted(*run)};
        }
        break;
      case XML_ERROR_INVALID_TOKEN:
        if (auto described = describe_token(line, at)) return std::move(*described);
        break;
      default:
        break;
    }
    return {line, "malformed XML: " + std::string(XML_ErrorString(code)) + " at column " +
                      std::to_string(XML_GetCurrentColumnNumber(parser_.get()) + 1) + ", before " +
                      detail::quoted(rest.substr(0, rest.find('\n')))};
  }

  // A start or closing tag that text position `at` is inside of.
  struct TagAt {
    std::size_t begin;       // its `<`
    std::size_t open_quote;  // the quote of an attribute value still open at `at`, or npos
  };

  // The tag around `at`: the last `<` before it, unless a `>` outside quotes closes it before
  // `at` (expat has accepted all of the text before `at`, so no `<` is inside a value).
  [[nodiscard]] std::optional<TagAt> enclosing_tag(std::size_t at) const {
    const std::size_t begin = at == 0 ? std::string_view::npos : text_.rfind('<', at - 1);
    if (begin == std::string_view::npos || begin + 1 >= at) return std::nullopt;
    const char first = text_[begin + 1];
    if (first != '/' && (ends_name(first) || first == '!' || first == '?')) return std::nullopt;
    std::size_t open_quote = std::string_view::npos;
    for (std::size_t i = begin + 1; i < at; ++i) {
      const char c = text_[i];
      if (open_quote != std::string_view::npos) {
        if (c == text_[open_quote]) open_quote = std::string_view::npos;
      } else if (c == '"' || c == '\'') {
        open_quote = i;
      } else if (c == '>') {
        return std::nullopt;
      }
    }
    return TagAt{begin, open_quote};
  }

  // The text between two pieces of markup that holds `at` (or ends there), without the white
  // space around it; nullopt when there is none.
  [[nodiscard]] std::optional<std::string_view> text_run(std::size_t at) const {
    const std::size_t markup = at == 0 ? std::string_view::npos : text_.rfind('>', at - 1);
    std::size_t begin = markup == std::string_view::npos ? 0 : markup + 1;
    if (begin == 0 && text_.starts_with(detail::kUtf8ByteOrderMark)) {
      begin = detail::kUtf8ByteOrderMark.size();
    }
    std::string_view run = text_.substr(begin, text_.find('<', begin) - begin);
    while (!run.empty() && is_xml_space(run.front())) run.remove_prefix(1);
    while (!run.empty() && is_xml_space(run.back())) run.remove_suffix(1);
    if (run.empty()) return std::nullopt;
    return run;
  }

  // A token that is not well-formed at `at` (expat says no more), named from what precedes it.
  [[nodiscard]] std::optional<std::pair<std::int64_t, std::string>> describe_token(
      std::int64_t line, std::size_t at) const {
    const std::string_view rest = text_.substr(at);
    const char before = at > 0 ? text_[at - 1] : '\0';
    if (!rest.empty() && static_cast<unsigned char>(rest.front()) >= 0x80) {
      static constexpr char kHex[] = "0123456789ABCDEF";
      const auto byte = static_cast<unsigned char>(rest.front());
      return {{line, std::string("the byte 0x") + kHex[byte >> 4] + kHex[byte & 15] +
                         " is not UTF-8: convert the file to UTF-8, or name its encoding in an XML "
                         "declaration such as <?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>"}};
    }
    if (before == '<') {
      if (rest.starts_with('/')) {
        return {
            {line, "closing tag </" + name_at(rest.substr(1)) + "> has no matching opening tag"}};
      }
      return {{line, "'<' is not followed by an element name"}};
    }
    if (before == '!' && at >= 2 && text_[at - 2] == '<' && !open_.empty()) {
      return {{line, "'<!" + name_at(rest) + "' inside the element " + tag(open_.back().name) +
                         ": expected a comment '<!--' or a CDATA section '<![CDATA[' (declarations "
                         "come before the root element)"}};
    }
    if (before == '&') {
      return {{line, "'&' does not start an entity or character reference: write '&amp;' for '&'"}};
    }
    const auto inside = enclosing_tag(at);
    if (!inside && open_.empty()) {
      if (const auto run = text_run(at)) {
        return {{line, "text outside the root element: " + detail::quoted(*run)}};
      }
    }
    if (!inside) return std::nullopt;
    const std::string found = detail::quoted(rest.substr(0, 1));
    if (text_[inside->begin + 1] == '/') {
      return {{line, "unexpected " + found + " in the closing tag </" +
                         name_at(text_.substr(inside->begin + 2)) + ">"}};
    }
    const std::string shown = tag(name_at(text_.substr(inside->begin + 1)));
    if (inside->open_quote != std::string_view::npos) {
      return {{line - detail::count_lines(text_, inside->open_quote, at),
               "unterminated attribute value in the tag " + shown}};
    }
    if (rest.starts_with('<')) {
      return {{line, "'<' inside the tag " + shown + ": the tag is not closed"}};
    }
    // The name before `end` (white space before it skipped), and where it begins.
    const auto name_before = [&](std::size_t end) {
      while (end > inside->begin && is_xml_space(text_[end - 1])) --end;
      std::size_t begin = end;
      while (begin > inside->begin && !ends_name(text_[begin - 1])) --begin;
      return std::pair{begin, std::string(text_.substr(begin, end - begin))};
    };
    std::size_t previous = at;  // just after what precedes the token, white space skipped
    while (previous > inside->begin && is_xml_space(text_[previous - 1])) --previous;
    const char last = text_[previous - 1];
    if (last == '=') {
      return {{line, "the value of the attribute '" + name_before(previous - 1).second +
                         "' in the tag " + shown + " is not quoted"}};
    }
    if ((last == '"' || last == '\'') && previous == at) {
      return {{line, "the attribute '" + name_at(rest) + "' in the tag " + shown +
                         " is not separated from what precedes it by white space"}};
    }
    // A name, then white space or the tag's end: an attribute without its value.
    const bool name_ends = previous < at || rest.starts_with('/') || rest.starts_with('>');
    if (const auto [begin, attribute] = name_before(previous);
        name_ends && !attribute.empty() && begin > inside->begin + 1) {
      return {{line, "the attribute '" + attribute + "' in the tag " + shown +
                         " has no value: expected ='...' or =\"...\""}};
    }
    return {{line, "unexpected " + found + " in the tag " + shown}};
  }

  // The value of the attribute `name` of the element being started, or nullopt.
  [[nodiscard]] std::optional<std::string> attribute(std::string_view name) const {
    for (std::size_t i = 0; i + 1 < attributes_.size(); i += 2) {
      if (name == attributes_[i]) return std::string(attributes_[i + 1]);
    }
    return std::nullopt;
  }

  std::string required(std::string_view name) const {
    auto value = attribute(name);
    if (!value) {
      fail(line_, "the " + tag(element_) + " element has no '" + std::string(name) + "' attribute");
    }
    return std::move(*value);
  }

  void start() {
    const std::string_view name = element_;
    if (open_.empty()) {
      if (name != "graphml") {
        fail(line_, "the root element is " + tag(name) + ", expected <graphml>");
      }
      open_.push_back({std::string(name), line_, Context::kGraphml});
      return;
    }
    Context next = Context::kSkip;
    switch (open_.back().context) {
      case Context::kGraphml:
        if (name == "key") {
          start_key();
          next = Context::kKey;
        } else if (name == "graph") {
          if (graph_read_) {
            ++extra_graphs_;
          } else {
            graph_read_ = true;
            start_graph();
            next = Context::kGraph;
          }
        }
        break;
      case Context::kKey:
        if (name == "default") {
          value_.clear();
          next = Context::kDefault;
        }
        break;
      case Context::kGraph:
        if (name == "node") {
          start_node();
          next = Context::kNode;
        } else if (name == "edge") {
          start_edge();
          next = Context::kEdge;
        } else if (name == "graph") {
          start_graph();  // a graph inside a graph: its nodes and edges join the graph
          next = Context::kGraph;
        } else if (name == "hyperedge") {
          ++hyperedges_;
        }
        break;
      case Context::kNode:
      case Context::kEdge:
        if (name == "data") {
          next = start_data();
        } else if (name == "graph" && open_.back().context == Context::kNode) {
          ++node_graphs_;
        }
        break;
      case Context::kDefault:
      case Context::kData:
      case Context::kSkip:
        break;  // only the direct text of data and default elements is read
    }
    open_.push_back({std::string(name), line_, next});
  }

  void end() {
    const Context closed = open_.back().context;
    open_.pop_back();
    switch (closed) {
      case Context::kKey:
        end_key();
        break;
      case Context::kDefault:
        key_default_ = std::move(value_);
        break;
      case Context::kGraph:
        edgedefault_.pop_back();
        break;
      case Context::kNode:
        end_node();
        break;
      case Context::kEdge:
        end_edge();
        break;
      case Context::kData:
        (data_is_name_ ? node_name_ : edge_weight_) = std::move(value_);
        break;
      case Context::kGraphml:
      case Context::kSkip:
        break;
    }
  }

  // Keys

  void start_key() {
    if (graph_read_) {
      fail(line_, "a <key> after the <graph>: keys are declared before the graph");
    }
    key_ = {required("id"), attribute("for").value_or(""), attribute("attr.type").value_or(""),
            std::nullopt};
    key_name_ = attribute("attr.name").value_or("");
    key_line_ = line_;
    key_default_.reset();
    static constexpr std::string_view kDomains[] = {"graph", "node",     "edge", "hyperedge",
                                                    "port",  "endpoint", "all",  "graphml"};
    if (std::find(std::begin(kDomains), std::end(kDomains), key_.domain) == std::end(kDomains)) {
      fail(key_line_, "key '" + key_.id + "' has for='" + key_.domain +
                          "': expected graph, node, edge, hyperedge, port, endpoint, all or "
                          "graphml");
    }
    if (!declared_keys_.emplace(key_.id, key_line_).second) {
      fail(key_line_, "key '" + key_.id + "' is declared twice (first on line " +
                          std::to_string(declared_keys_.at(key_.id)) + ")");
    }
  }

  void end_key() {
    key_.default_value = std::move(key_default_);
    const bool for_nodes = key_.domain == "node" || key_.domain == "all";
    const bool for_edges = key_.domain == "edge" || key_.domain == "all";
    if (key_name_ == "name" && for_nodes && !name_key_) {
      if (key_.type != "string" && key_.type != "int" && key_.type != "long") {
        fail(key_line_, "key '" + key_.id + "' (node attr.name 'name') has attr.type '" +
                            key_.type + "': expected string, int or long");
      }
      name_key_ = std::move(key_);
    } else if (key_name_ == "weight" && for_edges && !weight_key_) {
      if (key_.type != "double" && key_.type != "float" && key_.type != "int" &&
          key_.type != "long" && key_.type != "string") {
        fail(key_line_, "key '" + key_.id + "' (edge attr.name 'weight') has attr.type '" +
                            key_.type + "': expected double, float, int, long or string");
      }
      weight_key_ = std::move(key_);
    }
  }

  // Graphs, nodes, edges and their data

  void start_graph() {
    const auto kind = attribute("edgedefault");
    if (!kind || (*kind != "directed" && *kind != "undirected")) {
      fail(line_, "the <graph> element has edgedefault=" +
                      (kind ? "'" + *kind + "'" : std::string("(none)")) +
                      ": expected 'directed' or 'undirected'");
    }
    edgedefault_.push_back(*kind == "directed");
    if (edgedefault_.size() == 1) directed_ = edgedefault_.front();
  }

  Context start_data() {
    const std::string key = required("key");
    const bool on_node = open_.back().context == Context::kNode;
    const std::optional<Key>& wanted = on_node ? name_key_ : weight_key_;
    if (!declared_keys_.contains(key)) {
      fail(line_, "<data key='" + key + "'>: no <key> with this id is declared before it");
    }
    if (!wanted || wanted->id != key) return Context::kSkip;
    data_is_name_ = on_node;
    value_.clear();
    return Context::kData;
  }

  // The reader's own number for GraphML node id `id`, added on first sight (a node or an edge end).
  std::int32_t internal(std::string id, std::int64_t line) {
    if (const auto found = internal_.find(id); found != internal_.end()) return found->second;
    if (static_cast<std::int64_t>(ids_.size()) >= options_.read.limits.max_nodes) {
      throw LimitError(kReader, path_, line,
                       "more than " + std::to_string(options_.read.limits.max_nodes) +
                           " nodes: over the node limit (raise it with --max-nodes)");
    }
    const auto number = static_cast<std::int32_t>(ids_.size());
    ids_.push_back(std::move(id));
    internal_.emplace(ids_.back(), number);
    declared_line_.push_back(0);
    if (name_key_) tokens_.emplace_back();
    return number;
  }

  void start_node() {
    node_line_ = line_;
    node_ = internal(required("id"), node_line_);
    if (declared_line_[static_cast<std::size_t>(node_)] != 0) {
      fail(node_line_, "node id '" + ids_[static_cast<std::size_t>(node_)] +
                           "' is declared twice (first on line " +
                           std::to_string(declared_line_[static_cast<std::size_t>(node_)]) + ")");
    }
    declared_line_[static_cast<std::size_t>(node_)] = node_line_;
    declaration_order_.push_back(node_);
    node_name_.reset();
  }

  void end_node() {
    const auto slot = static_cast<std::size_t>(node_);
    const std::string& id = ids_[slot];
    if (!name_key_) return;
    if (!node_name_ && name_key_->domain == "node") node_name_ = name_key_->default_value;
    if (!node_name_ || node_name_->empty()) {
      fail(node_line_, "node '" + id + "' has no 'name' value (key '" + name_key_->id + "')");
    }
    std::string name = std::move(*node_name_);
    if (name_key_->type != "string") {
      const auto number = detail::parse_integer(name);
      if (!number) {
        fail(node_line_, "node '" + id + "': name " + detail::quoted(name) +
                             " is not an integer (key '" + name_key_->id + "' has attr.type '" +
                             name_key_->type + "')");
      }
      name = std::to_string(*number);
    }
    tokens_[slot] = std::move(name);
    const auto [found, inserted] = node_of_name_.emplace(tokens_[slot], node_);
    if (!inserted) {
      const auto other = static_cast<std::size_t>(found->second);
      fail(node_line_, "nodes '" + ids_[other] + "' (line " +
                           std::to_string(declared_line_[other]) + ") and '" + id +
                           "' have the same name " + detail::quoted(tokens_[slot]));
    }
  }

  void start_edge() {
    edge_line_ = line_;
    edge_source_ = required("source");
    edge_target_ = required("target");
    const auto directed = attribute("directed");
    bool edge_directed = edgedefault_.back();
    if (directed) {
      if (*directed != "true" && *directed != "false") {
        fail(edge_line_, "directed='" + *directed + "': expected 'true' or 'false'");
      }
      edge_directed = *directed == "true";
    }
    if (edge_directed != directed_) {
      fail(edge_line_, detail::describe_edge(edge_source_, edge_target_, !edge_directed) + " is " +
                           (edge_directed ? "directed" : "undirected") +
                           " in a graph whose edges are " +
                           (directed_ ? "directed" : "undirected") +
                           " (the first <graph>'s edgedefault): mixed graphs are not supported");
    }
    edge_weight_.reset();
  }

  void end_edge() {
    detail::check_edge_limit(static_cast<std::int64_t>(edges_.sources.size()) + 1, options_,
                             kReader, path_, edge_line_);
    edges_.sources.push_back(internal(edge_source_, edge_line_));
    edges_.targets.push_back(internal(edge_target_, edge_line_));
    if (!weight_key_) return;
    if (!edge_weight_ && weight_key_->domain == "edge") edge_weight_ = weight_key_->default_value;
    const std::string edge = detail::describe_edge(edge_source_, edge_target_, !directed_);
    if (!edge_weight_) {
      fail(edge_line_,
           edge + ": no 'weight' value, and key '" + weight_key_->id + "' has no default");
    }
    const std::string& text = *edge_weight_;
    const bool integral = weight_key_->type == "int" || weight_key_->type == "long";
    std::optional<double> weight;
    if (!integral) {
      weight = detail::parse_number(text);
    } else if (const auto value = detail::parse_integer(text)) {
      weight = static_cast<double>(*value);
    }
    if (!weight) {
      fail(edge_line_, edge + ": weight " + detail::quoted(text) + " is not " +
                           (integral ? "an integer (key '" + weight_key_->id + "' has attr.type '" +
                                           weight_key_->type + "')"
                                     : std::string("a number")));
    }
    if (!std::isfinite(*weight) || !std::isfinite(static_cast<float>(*weight))) {
      fail(edge_line_, edge + ": weight " + detail::quoted(text) + " is not finite");
    }
    edges_.weights.push_back(static_cast<float>(*weight));
  }

  // Ignored parts: a note each, or an error when strict.
  void report(Notes& notes, std::int64_t count, const std::string& what) const {
    if (count == 0) return;
    const std::string text = std::to_string(count) + " " + what;
    if (options_.read.strict) fail(0, text + " (--strict)");
    notes.push_back(std::string(kReader) + ": " + path_ + ": " + text);
  }

  LoadedGraph finish(NodeIndex& nodes) {
    const auto known = static_cast<std::int64_t>(ids_.size());
    const auto declared = static_cast<std::int64_t>(declaration_order_.size());
    if (known > declared) {
      fail(0, std::to_string(known - declared) +
                  " edge end(s) name a node no <node> element declares (" +
                  std::to_string(declared) + " declared)");
    }
    Notes notes;
    report(notes, hyperedges_, "<hyperedge> element(s) ignored: hyperedges are not read");
    report(notes, node_graphs_,
           "<graph> element(s) inside <node> elements ignored: nested graphs are not read");
    report(notes, extra_graphs_, "<graph> element(s) after the first ignored: one graph is read");
    // Nodes take their ids in the order of their <node> elements.
    std::vector<NodeId> id_of(ids_.size());
    for (const std::int32_t v : declaration_order_) {
      const auto slot = static_cast<std::size_t>(v);
      id_of[slot] = detail::node_id_or_throw(nodes, name_key_ ? tokens_[slot] : ids_[slot], kReader,
                                             path_, declared_line_[slot]);
    }
    for (auto* ends : {&edges_.sources, &edges_.targets}) {
      for (NodeId& end : *ends) end = id_of[static_cast<std::size_t>(end)];
    }
    EdgeListOptions assembly = options_;
    assembly.undirected = options_.undirected || !directed_;
    LoadedGraph loaded = detail::assemble_graph(edges_, nodes, assembly, kReader, path_);
    loaded.notes.insert(loaded.notes.begin(), notes.begin(), notes.end());
    return loaded;
  }

  std::string_view text_;
  const EdgeListOptions& options_;
  std::string path_;
  std::unique_ptr<XML_ParserStruct, ParserDeleter> parser_;
  std::exception_ptr error_;       // thrown by a handler, rethrown once expat has returned
  bool entities_skipped_ = false;  // expat skips undeclared entities instead of refusing them

  // The element being started: valid inside on_start only.
  std::string_view element_;
  std::int64_t line_ = 0;
  std::span<const XML_Char*> attributes_;  // names and values, alternating

  std::vector<OpenElement> open_;
  std::string value_;  // the text of the data or default element being read
  bool in_cdata_ = false;
  bool space_pending_ = false;  // white space seen since the last character of the text run
  bool run_has_text_ = false;   // the text run has a character that is not white space

  std::unordered_map<std::string, std::int64_t> declared_keys_;  // id -> line
  Key key_;
  std::string key_name_;
  std::int64_t key_line_ = 0;
  std::optional<std::string> key_default_;
  std::optional<Key> name_key_;
  std::optional<Key> weight_key_;

  bool graph_read_ = false;
  bool directed_ = true;           // the first graph's edgedefault
  std::vector<bool> edgedefault_;  // of the graphs being read, innermost last
  std::int64_t hyperedges_ = 0;
  std::int64_t node_graphs_ = 0;
  std::int64_t extra_graphs_ = 0;

  // Nodes by the reader's own numbering: the order of first sight, as ids or edge ends. The maps
  // view strings held by the deques, which never move them.
  std::deque<std::string> ids_;
  std::unordered_map<std::string_view, std::int32_t> internal_;
  std::deque<std::string> tokens_;  // with a name key: each node's name
  std::unordered_map<std::string_view, std::int32_t> node_of_name_;
  std::vector<std::int64_t> declared_line_;      // 0: not declared (yet)
  std::vector<std::int32_t> declaration_order_;  // the reader's numbers, in <node> order
  std::int32_t node_ = 0;
  std::int64_t node_line_ = 0;
  std::optional<std::string> node_name_;
  bool data_is_name_ = false;

  EdgeList edges_;
  std::string edge_source_;
  std::string edge_target_;
  std::int64_t edge_line_ = 0;
  std::optional<std::string> edge_weight_;
};

}  // namespace

LoadedGraph read_graphml(const std::filesystem::path& path, NodeIndex& nodes,
                         const EdgeListOptions& options) {
  detail::InputFile file(path, kReader);
  const std::string content =
      detail::read_bounded_file(file, options.read.limits.max_file_bytes, detail::Content::kText);
  return GraphmlReader(content, options, file.path()).read(nodes);
}

}  // namespace maskgat
