#include "maskgat/io/dot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "io/detail/assemble.hpp"
#include "io/detail/dot_lexer.hpp"
#include "io/detail/input_file.hpp"
#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat {
namespace {

using detail::DotToken;

constexpr std::string_view kReader = "dot";
// Graphviz's own default for an edge without a `weight` attribute.
constexpr float kDefaultWeight = 1.0F;

// The nodes an edge statement joins at one step: one node, or every node of a subgraph. A range
// of `members_`.
struct Operand {
  std::size_t begin;
  std::size_t end;
};

// An open `{`: the graph's body or a subgraph.
struct Frame {
  std::int64_t line;                       // of its `{`
  std::optional<std::string> name;         // `subgraph NAME {`
  std::size_t members_begin;               // the nodes named inside it are members_[begin, ...)
  std::optional<std::string> edge_weight;  // `edge [weight=...]` in force
  std::vector<Operand> chain;              // the operands of the edge statement being read
  std::int64_t chain_line = 0;             // where that statement's first edge operator is
  bool expect_operand = false;             // an edge operator was just read
};

// The DOT grammar (graph, statements, edge chains with subgraphs as ends, attribute lists), read
// with an explicit stack of open braces instead of recursion, so any nesting costs heap, not
// stack, and is bounded by `max_nesting_depth`.
class DotParser {
 public:
  DotParser(std::string_view text, NodeIndex& nodes, const EdgeListOptions& options,
            std::string path)
      : lexer_(text, std::move(path), kReader), nodes_(nodes), options_(options) {}

  LoadedGraph read() {
    read_header();
    read_body();
    advance();
    if (token_ == DotToken::kCloseBrace) fail(lexer_.line(), "'}' has no matching '{'");
    if (token_ != DotToken::kEnd) {
      fail(lexer_.line(),
           describe_token() + " after the graph's closing '}': a file holds one graph");
    }
    if (!weighted_) edges_.weights.clear();
    if (strict_) drop_repeated_edges();
    EdgeListOptions assembly = options_;
    assembly.undirected = options_.undirected || !directed_;
    return detail::assemble_graph(edges_, nodes_, assembly, kReader, lexer_.path());
  }

 private:
  [[noreturn]] void fail(std::int64_t line, const std::string& message) const {
    lexer_.fail(line, message);
  }
  std::string describe_token() const { return detail::describe(token_, lexer_.text()); }
  void advance() { token_ = lexer_.next(); }
  void expect(DotToken token, const std::string& what, const std::string& context) {
    if (token_ != token) {
      fail(lexer_.line(), "expected " + what + " " + context + ", got " + describe_token());
    }
  }

  void read_header() {
    const char* const expected = "expected 'graph' or 'digraph' (optionally after 'strict')";
    advance();
    if (token_ == DotToken::kEnd) fail(0, "no graph: expected 'graph' or 'digraph'");
    if (token_ == DotToken::kStrict) {
      strict_ = true;
      advance();
    }
    if (token_ != DotToken::kGraph && token_ != DotToken::kDigraph) {
      fail(lexer_.line(), std::string(expected) + " at the start of the file, got " +
                              detail::quoted(lexer_.text()));
    }
    directed_ = token_ == DotToken::kDigraph;
    advance();
    if (token_ == DotToken::kId) advance();  // the graph's name
    expect(DotToken::kOpenBrace, "'{'", "to open the graph");
    open_frame();
  }

  void open_frame(std::optional<std::string> name = std::nullopt) {
    const auto depth = static_cast<std::int64_t>(frames_.size()) + 1;
    if (depth > options_.read.limits.max_nesting_depth) {
      throw LimitError(kReader, lexer_.path(), lexer_.line(),
                       "nesting depth " + std::to_string(depth) + " exceeds the limit of " +
                           std::to_string(options_.read.limits.max_nesting_depth) +
                           " (raise it with --max-nesting-depth)");
    }
    Frame frame{lexer_.line(), std::move(name), members_.size(), std::nullopt, {}, 0, false};
    if (!frames_.empty()) frame.edge_weight = frames_.back().edge_weight;
    frames_.push_back(std::move(frame));
  }

  // Statements until the graph's closing brace; the current token is the `{` that opened it.
  void read_body() {
    advance();
    while (true) {
      Frame& frame = frames_.back();
      if (token_ == DotToken::kEnd) {
        fail(lexer_.line(), "unexpected end of file: '{' opened at line " +
                                std::to_string(frame.line) + " is not closed");
      }
      if (frame.expect_operand && token_ != DotToken::kId && token_ != DotToken::kOpenBrace &&
          token_ != DotToken::kSubgraph) {
        fail(lexer_.line(),
             "expected a node or a subgraph after the edge operator, got " + describe_token());
      }
      switch (token_) {
        case DotToken::kCloseBrace:
          if (close_frame()) return;
          advance();
          after_operand();
          break;
        case DotToken::kSemicolon:
          advance();
          break;
        case DotToken::kGraph:
        case DotToken::kNode:
        case DotToken::kEdge:
          read_default_attributes();
          break;
        case DotToken::kSubgraph:
          read_subgraph();
          break;
        case DotToken::kOpenBrace:
          open_frame();
          advance();
          break;
        case DotToken::kId:
          read_id_statement();
          break;
        default:
          fail(lexer_.line(), "unexpected " + describe_token() + " where a statement starts");
      }
    }
  }

  // `subgraph [NAME] {` opens a subgraph; `subgraph NAME` alone names the members it has so far
  // (one that was never defined has none), as an operand.
  void read_subgraph() {
    advance();
    std::optional<std::string> name;
    if (token_ == DotToken::kId) {
      name = lexer_.text();
      advance();
    }
    if (token_ == DotToken::kOpenBrace) {
      open_frame(std::move(name));
      advance();
      return;
    }
    if (!name) expect(DotToken::kOpenBrace, "'{'", "after 'subgraph'");
    const std::size_t begin = members_.size();
    if (const auto known = named_subgraphs_.find(*name); known != named_subgraphs_.end()) {
      members_.insert(members_.end(), known->second.begin(), known->second.end());
    }
    frames_.back().chain.push_back({begin, members_.size()});
    after_operand();
  }

  // `graph|node|edge [attributes]`: of these defaults only the edges' weight is read.
  void read_default_attributes() {
    const DotToken kind = token_;
    const std::string keyword = lexer_.text();
    advance();
    expect(DotToken::kOpenBracket, "'['", "after the keyword '" + keyword + "'");
    const std::optional<std::string> weight = read_attributes();
    if (kind == DotToken::kEdge && weight) frames_.back().edge_weight = weight;
  }

  // `ID = ID` (a graph attribute, not read), or a node, maybe the start of an edge statement.
  void read_id_statement() {
    const std::string id = lexer_.text();
    const std::int64_t line = lexer_.line();
    advance();
    if (token_ == DotToken::kEquals && !frames_.back().expect_operand) {
      advance();
      expect(DotToken::kId, "an ID", "after '='");
      advance();
      return;
    }
    // A port (`node:port[:compass]`) names a point of the node; the node is what counts.
    for (int part = 0; part < 2 && token_ == DotToken::kColon; ++part) {
      advance();
      expect(DotToken::kId, "a port name", "after ':'");
      advance();
    }
    members_.push_back(detail::node_id_or_throw(nodes_, id, kReader, lexer_.path(), line));
    frames_.back().chain.push_back({members_.size() - 1, members_.size()});
    after_operand();
  }

  // Closes the innermost brace; true when it was the graph's. A subgraph's members become one
  // operand of the statement around it; the bodies of one named subgraph add up, as in Graphviz.
  bool close_frame() {
    const Frame closed = std::move(frames_.back());
    frames_.pop_back();
    if (frames_.empty()) return true;
    std::vector<NodeId>* named = nullptr;
    if (closed.name) {
      named = &named_subgraphs_[*closed.name];
      members_.insert(members_.end(), named->begin(), named->end());
    }
    // Each member once, in id order (the edges they get are the same either way).
    const auto begin = members_.begin() + static_cast<std::ptrdiff_t>(closed.members_begin);
    std::sort(begin, members_.end());
    members_.erase(std::unique(begin, members_.end()), members_.end());
    if (named != nullptr) named->assign(begin, members_.end());
    frames_.back().chain.push_back({closed.members_begin, members_.size()});
    return false;
  }

  // After a node or subgraph: an edge operator continues the statement, anything else ends it
  // (after its attributes, if any).
  void after_operand() {
    Frame& frame = frames_.back();
    frame.expect_operand = false;
    if (token_ == DotToken::kDirectedEdge || token_ == DotToken::kUndirectedEdge) {
      const bool arrow = token_ == DotToken::kDirectedEdge;
      if (arrow != directed_) {
        fail(lexer_.line(), std::string(arrow ? "'->' in an undirected graph: use '--'"
                                              : "'--' in a directed graph: use '->'"));
      }
      if (frame.chain.size() == 1) frame.chain_line = lexer_.line();
      frame.expect_operand = true;
      advance();
      return;
    }
    std::optional<std::string> weight = frame.edge_weight;
    if (token_ == DotToken::kOpenBracket) {
      if (const auto given = read_attributes()) weight = given;
    }
    add_chain_edges(frame, weight);
    frame.chain.clear();
    // Outside every subgraph no statement needs the nodes it named any more.
    if (frames_.size() == 1) members_.clear();
  }

  // `[name=value, ...]...`, the current token the first `[`; returns the value of `weight`.
  std::optional<std::string> read_attributes() {
    std::optional<std::string> weight;
    while (token_ == DotToken::kOpenBracket) {
      const std::int64_t open = lexer_.line();
      advance();
      while (token_ != DotToken::kCloseBracket) {
        const std::string context = "in the '[' opened at line " + std::to_string(open);
        expect(DotToken::kId, "an attribute name or ']'", context);
        const std::string name = lexer_.text();
        advance();
        expect(DotToken::kEquals, "'='", "after the attribute " + detail::quoted(name));
        advance();
        expect(DotToken::kId, "a value", "for the attribute " + detail::quoted(name));
        if (name == "weight") weight = lexer_.text();
        advance();
        if (token_ == DotToken::kComma || token_ == DotToken::kSemicolon) advance();
      }
      advance();
    }
    return weight;
  }

  void add_chain_edges(const Frame& frame, const std::optional<std::string>& weight_text) {
    // The first step with an edge (an empty subgraph joins nothing) names one for messages.
    std::size_t first = 0;
    while (first + 1 < frame.chain.size() &&
           (frame.chain[first].begin == frame.chain[first].end ||
            frame.chain[first + 1].begin == frame.chain[first + 1].end)) {
      ++first;
    }
    if (first + 1 >= frame.chain.size()) return;
    float weight = kDefaultWeight;
    if (weight_text) {
      weighted_ = true;
      const auto describe = [&] {
        return detail::describe_edge(nodes_.name(members_[frame.chain[first].begin]),
                                     nodes_.name(members_[frame.chain[first + 1].begin]),
                                     !directed_);
      };
      const auto parsed = detail::parse_number(*weight_text);
      if (!parsed) {
        fail(frame.chain_line,
             describe() + ": weight " + detail::quoted(*weight_text) + " is not a number");
      }
      if (!std::isfinite(*parsed) || !std::isfinite(static_cast<float>(*parsed))) {
        fail(frame.chain_line,
             describe() + ": weight " + detail::quoted(*weight_text) + " is not finite");
      }
      weight = static_cast<float>(*parsed);
    }
    for (std::size_t step = first; step + 1 < frame.chain.size(); ++step) {
      const Operand& from = frame.chain[step];
      const Operand& to = frame.chain[step + 1];
      const auto added = static_cast<std::int64_t>((from.end - from.begin) * (to.end - to.begin));
      detail::check_edge_limit(static_cast<std::int64_t>(edges_.sources.size()) + added, options_,
                               kReader, lexer_.path(), frame.chain_line);
      for (std::size_t s = from.begin; s < from.end; ++s) {
        for (std::size_t t = to.begin; t < to.end; ++t) {
          edges_.sources.push_back(members_[s]);
          edges_.targets.push_back(members_[t]);
          edges_.weights.push_back(weight);
        }
      }
    }
  }

  // A `strict` graph keeps one edge per pair of nodes (either order when undirected), the first,
  // and no self-loops, as Boost.Graph reads it.
  void drop_repeated_edges() {
    std::unordered_set<std::uint64_t> seen;
    std::size_t kept = 0;
    for (std::size_t e = 0; e < edges_.sources.size(); ++e) {
      auto a = static_cast<std::uint32_t>(edges_.sources[e]);
      auto b = static_cast<std::uint32_t>(edges_.targets[e]);
      if (a == b) continue;
      if (!directed_ && b < a) std::swap(a, b);
      if (!seen.insert((std::uint64_t{a} << 32) | b).second) continue;
      edges_.sources[kept] = edges_.sources[e];
      edges_.targets[kept] = edges_.targets[e];
      if (!edges_.weights.empty()) edges_.weights[kept] = edges_.weights[e];
      ++kept;
    }
    edges_.sources.resize(kept);
    edges_.targets.resize(kept);
    if (!edges_.weights.empty()) edges_.weights.resize(kept);
  }

  detail::DotLexer lexer_;
  NodeIndex& nodes_;
  const EdgeListOptions& options_;
  DotToken token_ = DotToken::kEnd;
  bool strict_ = false;
  bool directed_ = true;
  bool weighted_ = false;
  std::vector<Frame> frames_;
  std::vector<NodeId> members_;  // nodes named inside the open subgraphs, outermost first
  std::unordered_map<std::string, std::vector<NodeId>> named_subgraphs_;  // members so far
  EdgeList edges_;
};

}  // namespace

LoadedGraph read_dot(const std::filesystem::path& path, NodeIndex& nodes,
                     const EdgeListOptions& options) {
  detail::InputFile file(path, kReader);
  const std::string content =
      detail::read_bounded_file(file, options.read.limits.max_file_bytes, detail::Content::kText);
  return DotParser(content, nodes, options, file.path()).read();
}

}  // namespace maskgat
