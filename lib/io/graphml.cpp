#include "maskgat/io/graphml.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "io/detail/assemble.hpp"
#include "io/detail/input_file.hpp"
#include "io/detail/text.hpp"
#include "io/detail/xml_scanner.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat {
namespace {

constexpr std::string_view kReader = "graphml";

// A `<key>` the reader uses: the node key named `name` or the edge key named `weight`.
struct Key {
  std::string id;
  std::string domain;  // the `for` attribute
  std::string type;    // the `attr.type` attribute, empty when absent
  std::optional<std::string> default_value;
};

// What an open element is to the reader; everything it does not read is skipped whole.
enum class Context : std::uint8_t { kGraphml, kKey, kDefault, kGraph, kNode, kEdge, kData, kSkip };

class GraphmlReader {
 public:
  GraphmlReader(std::string_view text, const EdgeListOptions& options, std::string path)
      : scanner_(text, options.read.limits.max_nesting_depth, std::move(path), kReader),
        options_(options) {}

  LoadedGraph read(NodeIndex& nodes) {
    for (detail::XmlEvent event = scanner_.next(); event != detail::XmlEvent::kEndOfFile;
         event = scanner_.next()) {
      if (event == detail::XmlEvent::kStart) {
        start();
      } else if (event == detail::XmlEvent::kEnd) {
        end();
      } else if (!context_.empty() &&
                 (context_.back() == Context::kData || context_.back() == Context::kDefault)) {
        value_ += scanner_.is_cdata()
                      ? std::string(scanner_.text())
                      : detail::decode_xml_text(scanner_.text(), true, scanner_, scanner_.line());
      }
    }
    if (!graph_read_) fail(0, "no <graph> element inside <graphml>");
    return finish(nodes);
  }

 private:
  [[noreturn]] void fail(std::int64_t line, const std::string& message) const {
    scanner_.fail(line, message);
  }

  // An attribute's decoded value, or nullopt.
  std::optional<std::string> attribute(std::string_view name) const {
    const std::string_view* raw = scanner_.attribute(name);
    if (raw == nullptr) return std::nullopt;
    return detail::decode_xml_text(*raw, false, scanner_, scanner_.line());
  }

  std::string required(std::string_view name) const {
    auto value = attribute(name);
    if (!value) {
      fail(scanner_.line(), "the <" + std::string(scanner_.name()) + "> element has no '" +
                                std::string(name) + "' attribute");
    }
    return std::move(*value);
  }

  void start() {
    const std::string_view name = scanner_.name();
    const std::int64_t line = scanner_.line();
    if (context_.empty()) {
      if (name != "graphml") {
        fail(line, "the root element is <" + std::string(name) + ">, expected <graphml>");
      }
      context_.push_back(Context::kGraphml);
      return;
    }
    Context next = Context::kSkip;
    switch (context_.back()) {
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
        } else if (name == "graph" && context_.back() == Context::kNode) {
          ++node_graphs_;
        }
        break;
      case Context::kDefault:
      case Context::kData:
      case Context::kSkip:
        break;  // only the direct text of data and default elements is read
    }
    context_.push_back(next);
  }

  void end() {
    const Context closed = context_.back();
    context_.pop_back();
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
      fail(scanner_.line(), "a <key> after the <graph>: keys are declared before the graph");
    }
    key_ = {required("id"), attribute("for").value_or(""), attribute("attr.type").value_or(""),
            std::nullopt};
    key_name_ = attribute("attr.name").value_or("");
    key_line_ = scanner_.line();
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
      fail(scanner_.line(), "the <graph> element has edgedefault=" +
                                (kind ? "'" + *kind + "'" : std::string("(none)")) +
                                ": expected 'directed' or 'undirected'");
    }
    edgedefault_.push_back(*kind == "directed");
    if (edgedefault_.size() == 1) directed_ = edgedefault_.front();
  }

  Context start_data() {
    const std::string key = required("key");
    const bool on_node = context_.back() == Context::kNode;
    const std::optional<Key>& wanted = on_node ? name_key_ : weight_key_;
    if (!declared_keys_.contains(key)) {
      fail(scanner_.line(),
           "<data key='" + key + "'>: no <key> with this id is declared before it");
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
      throw LimitError(kReader, scanner_.path(), line,
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
    node_line_ = scanner_.line();
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
    edge_line_ = scanner_.line();
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
                             kReader, scanner_.path(), edge_line_);
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
    notes.push_back(std::string(kReader) + ": " + scanner_.path() + ": " + text);
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
                                             scanner_.path(), declared_line_[slot]);
    }
    for (auto* ends : {&edges_.sources, &edges_.targets}) {
      for (NodeId& end : *ends) end = id_of[static_cast<std::size_t>(end)];
    }
    EdgeListOptions assembly = options_;
    assembly.undirected = options_.undirected || !directed_;
    LoadedGraph loaded = detail::assemble_graph(edges_, nodes, assembly, kReader, scanner_.path());
    loaded.notes.insert(loaded.notes.begin(), notes.begin(), notes.end());
    return loaded;
  }

  detail::XmlScanner scanner_;
  const EdgeListOptions& options_;
  std::vector<Context> context_;
  std::string value_;  // the text of the data or default element being read

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
