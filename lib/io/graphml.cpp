#include "maskgat/io/graphml.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphml.hpp>
#include <boost/lexical_cast.hpp>
#include <boost/property_map/dynamic_property_map.hpp>
#include <cmath>
#include <sstream>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "detail/boost_graph.hpp"
#include "detail/input_file.hpp"
#include "detail/prescan.hpp"
#include "detail/text.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat {
namespace {

constexpr std::string_view kReader = "graphml";

// One `<data>` value as Boost delivered it, converted to the key's declared `attr.type`.
struct DataValue {
  std::string text;     // the string, or the number written back as text for messages
  double number = 0.0;  // valid when `is_number`
  bool is_number = false;
  bool present = false;  // false when the element had no data for the key and it has no default
};

struct VertexData {
  DataValue value;
};
struct EdgeData {
  DataValue value;
};

// A property map storing into the bundled `DataValue` of a vertex or an edge. Boost hands
// `dynamic_properties` values of the key's declared type, so the map's value type must match it;
// unlike a plain bundled member it also records that a value was given at all.
template <typename BglGraph, typename Key, typename Value>
class DataValueMap {
 public:
  using key_type = Key;
  using value_type = Value;
  using reference = Value;
  using category = boost::read_write_property_map_tag;

  explicit DataValueMap(BglGraph& graph) : graph_(&graph) {}

  friend Value get(const DataValueMap& map, const Key& key) {
    const DataValue& data = (*map.graph_)[key].value;
    if constexpr (std::is_same_v<Value, std::string>) {
      return data.text;
    } else {
      return static_cast<Value>(data.number);
    }
  }

  friend void put(const DataValueMap& map, const Key& key, const Value& value) {
    DataValue& data = (*map.graph_)[key].value;
    if constexpr (std::is_same_v<Value, std::string>) {
      data.text = value;
      data.is_number = false;
    } else {
      data.text = boost::lexical_cast<std::string>(value);
      data.number = static_cast<double>(value);
      data.is_number = true;
    }
    data.present = true;
  }

 private:
  BglGraph* graph_;
};

template <typename BglGraph>
void add_name_property(boost::dynamic_properties& properties, BglGraph& graph,
                       const detail::GraphmlKey& key, const std::string& path) {
  using Vertex = typename boost::graph_traits<BglGraph>::vertex_descriptor;
  if (key.type == "string") {
    properties.property("name", DataValueMap<BglGraph, Vertex, std::string>(graph));
  } else if (key.type == "int") {
    properties.property("name", DataValueMap<BglGraph, Vertex, int>(graph));
  } else if (key.type == "long") {
    properties.property("name", DataValueMap<BglGraph, Vertex, long>(graph));
  } else {
    throw ParseError(kReader, path, 0,
                     "key '" + key.id + "' (node attr.name 'name') has attr.type '" + key.type +
                         "': expected string, int or long");
  }
}

template <typename BglGraph>
void add_weight_property(boost::dynamic_properties& properties, BglGraph& graph,
                         const detail::GraphmlKey& key, const std::string& path) {
  using Edge = typename boost::graph_traits<BglGraph>::edge_descriptor;
  if (key.type == "double") {
    properties.property("weight", DataValueMap<BglGraph, Edge, double>(graph));
  } else if (key.type == "float") {
    properties.property("weight", DataValueMap<BglGraph, Edge, float>(graph));
  } else if (key.type == "int") {
    properties.property("weight", DataValueMap<BglGraph, Edge, int>(graph));
  } else if (key.type == "long") {
    properties.property("weight", DataValueMap<BglGraph, Edge, long>(graph));
  } else if (key.type == "string") {
    properties.property("weight", DataValueMap<BglGraph, Edge, std::string>(graph));
  } else {
    throw ParseError(kReader, path, 0,
                     "key '" + key.id + "' (edge attr.name 'weight') has attr.type '" + key.type +
                         "': expected double, float, int, long or string");
  }
}

float weight_or_throw(const DataValue& value, const std::string& edge,
                      const detail::GraphmlKey& key, const std::string& path) {
  if (!value.present) {
    throw ParseError(kReader, path, 0,
                     edge + ": no 'weight' value, and key '" + key.id + "' has no default");
  }
  double weight = value.number;
  if (!value.is_number) {
    const auto parsed = detail::parse_number(value.text);
    if (!parsed) {
      throw ParseError(kReader, path, 0,
                       edge + ": weight " + detail::quoted(value.text) + " is not a number");
    }
    weight = *parsed;
  }
  if (!std::isfinite(weight) || !std::isfinite(static_cast<float>(weight))) {
    throw ParseError(kReader, path, 0,
                     edge + ": weight " + detail::quoted(value.text) + " is not finite");
  }
  return static_cast<float>(weight);
}

template <typename BglGraph>
LoadedGraph load(std::string content, const detail::GraphmlScan& scan, NodeIndex& nodes,
                 const EdgeListOptions& options, const std::string& path) {
  BglGraph graph;
  boost::dynamic_properties properties(boost::ignore_other_properties);
  if (scan.node_name) add_name_property(properties, graph, *scan.node_name, path);
  if (scan.edge_weight) add_weight_property(properties, graph, *scan.edge_weight, path);

  std::istringstream stream(std::move(content));
  detail::run_boost_reader([&] { boost::read_graphml(stream, graph, properties); }, "read_graphml",
                           kReader, path);
  // Boost adds a vertex for an edge end no <node> declares; GraphML requires the declaration.
  const auto num_vertices = static_cast<std::int64_t>(boost::num_vertices(graph));
  if (num_vertices > scan.declared_nodes) {
    throw ParseError(kReader, path, 0,
                     std::to_string(num_vertices - scan.declared_nodes) +
                         " edge end(s) name a node no <node> element declares (" +
                         std::to_string(scan.declared_nodes) + " declared)");
  }

  // Boost numbers vertices in file order; without a name key that position is the token.
  std::vector<std::string> tokens(static_cast<std::size_t>(num_vertices));
  std::unordered_map<std::string_view, std::size_t> position_of_name;
  for (std::size_t v = 0; v < tokens.size(); ++v) {
    if (!scan.node_name) {
      tokens[v] = std::to_string(v);
      continue;
    }
    const DataValue& name = graph[v].value;
    if (!name.present || name.text.empty()) {
      throw ParseError(kReader, path, 0,
                       "node " + std::to_string(v) +
                           " (0-based, in file order) has no 'name' value (key '" +
                           scan.node_name->id + "')");
    }
    tokens[v] = name.text;
    const auto [found, inserted] = position_of_name.emplace(name.text, v);
    if (!inserted) {
      throw ParseError(kReader, path, 0,
                       "nodes " + std::to_string(found->second) + " and " + std::to_string(v) +
                           " (0-based, in file order) have the same name " +
                           detail::quoted(name.text));
    }
  }
  const auto token_of = [&](std::size_t v) -> const std::string& { return tokens[v]; };
  const auto weight_of = [&](const auto& edge, const auto& describe) {
    return weight_or_throw(graph[edge].value, describe(), *scan.edge_weight, path);
  };
  return detail::assemble_boost_graph(graph, token_of, scan.edge_weight.has_value(), weight_of,
                                      nodes, options, kReader, path);
}

using DirectedGraphml =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, VertexData, EdgeData>;
using UndirectedGraphml =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, VertexData, EdgeData>;

}  // namespace

LoadedGraph read_graphml(const std::filesystem::path& path, NodeIndex& nodes,
                         const EdgeListOptions& options) {
  const std::string shown = path.string();
  detail::InputFile file(path, kReader);
  std::string content =
      detail::read_bounded_file(file, options.read.limits.max_file_bytes, detail::Content::kText);
  const detail::GraphmlScan scan = detail::prescan_graphml(content, options.read.limits, shown);
  if (!scan.has_graph) throw ParseError(kReader, shown, 0, "no <graph> element inside <graphml>");
  // Boost rejects edges whose direction differs from the graph type, so pick it from the file.
  if (scan.undirected)
    return load<UndirectedGraphml>(std::move(content), scan, nodes, options, shown);
  return load<DirectedGraphml>(std::move(content), scan, nodes, options, shown);
}

}  // namespace maskgat
