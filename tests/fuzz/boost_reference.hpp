#pragma once
// Boost.Graph's own GraphML and DOT parsers (`read_graphml`, `read_graphviz`) as references for
// the differential fuzz targets: the same bytes go to MaskGAT's reader and to Boost's, and when
// both accept them they must give the same graph. Boost's parsers recurse once per nesting level,
// so they only see inputs MaskGAT's reader accepted (whose depth is within its limit).

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphml.hpp>
#include <boost/graph/graphviz.hpp>
#include <boost/property_map/dynamic_property_map.hpp>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fuzz/fuzz_input.hpp"
#include "maskgat/io/edge_list.hpp"

namespace maskgat::fuzz {

// A graph as its edges between named nodes, each direction of an undirected edge listed, each
// pair once (the first weight kept, as the readers merge duplicates), and its nodes.
struct NamedGraph {
  std::vector<std::string> nodes;  // in id order
  std::map<std::pair<std::string, std::string>, float> edges;

  bool operator==(const NamedGraph&) const = default;
};

inline NamedGraph named_graph(const LoadedGraph& loaded, const NodeIndex& index) {
  NamedGraph graph;
  graph.nodes = index.names();
  const Graph& g = loaded.graph;
  std::size_t edge = 0;  // destination-major, as the weights are stored
  for (NodeId dst = 0; dst < g.num_nodes(); ++dst) {
    const auto sources = g.in_neighbors(dst);
    for (std::size_t k = 0; k < sources.size(); ++k, ++edge) {
      const float weight = g.has_weights() ? g.weights()[edge] : 1.0F;
      graph.edges.emplace(std::pair{graph.nodes[static_cast<std::size_t>(sources[k])],
                                    graph.nodes[static_cast<std::size_t>(dst)]},
                          weight);
    }
  }
  return graph;
}

// MaskGAT's reading of `text` as the file `name` with `read` (`read_graphml` or `read_dot`), at
// the fuzzing depth limit; nullopt when it refuses it with one of its errors.
template <typename Read>
std::optional<NamedGraph> maskgat_graph(const std::string& text, const std::string& name,
                                        Read&& read) {
  const auto path = write_input(text, name);
  NodeIndex nodes = NodeIndex::named(1'000'000);
  EdgeListOptions options;
  options.read.limits.max_nesting_depth = 64;
  std::optional<NamedGraph> graph;
  accept_errors([&] { graph = named_graph(read(path, nodes, options), nodes); });
  return graph;
}

// Stops the process with both graphs printed: a disagreement is a finding.
inline void require_same(const NamedGraph& ours, const NamedGraph& boost, const char* what) {
  if (ours == boost) return;
  const auto print = [](const char* name, const NamedGraph& graph) {
    std::cerr << name << ": " << graph.nodes.size() << " nodes:";
    for (const auto& node : graph.nodes) std::cerr << " '" << node << "'";
    std::cerr << "\n  edges:";
    for (const auto& [ends, weight] : graph.edges) {
      std::cerr << " '" << ends.first << "'->'" << ends.second << "' " << weight;
    }
    std::cerr << '\n';
  };
  std::cerr << what << ": MaskGAT's reader and Boost's disagree\n";
  print("MaskGAT", ours);
  print("Boost", boost);
  std::abort();
}

// Boost's edges, as LoadedGraph holds them: both directions when undirected, first weight kept.
template <typename BglGraph, typename NameOf, typename WeightOf>
NamedGraph boost_named_graph(const BglGraph& graph, const NameOf& name_of,
                             const WeightOf& weight_of) {
  constexpr bool kUndirected =
      std::is_same_v<typename boost::graph_traits<BglGraph>::directed_category,
                     boost::undirected_tag>;
  NamedGraph named;
  for (std::size_t v = 0; v < boost::num_vertices(graph); ++v) named.nodes.push_back(name_of(v));
  for (auto [edge, end] = boost::edges(graph); edge != end; ++edge) {
    const std::string source = name_of(boost::source(*edge, graph));
    const std::string target = name_of(boost::target(*edge, graph));
    const float weight = weight_of(*edge);
    named.edges.emplace(std::pair{source, target}, weight);
    if (kUndirected) named.edges.emplace(std::pair{target, source}, weight);
  }
  return named;
}

// --- GraphML ---------------------------------------------------------------------------------

struct GraphmlVertex {
  std::string name;
};
struct GraphmlEdge {
  double weight = 1.0;
};

// The document as Boost.PropertyTree reads it (the parser under Boost's `read_graphml`), or
// nullopt when it refuses it. It recurses once per level: only documents MaskGAT's reader
// accepted, whose nesting is within its limit, get here.
inline std::optional<boost::property_tree::ptree> graphml_tree(const std::string& text) {
  std::istringstream stream(text);
  boost::property_tree::ptree tree;
  try {
    boost::property_tree::read_xml(stream, tree, boost::property_tree::xml_parser::no_comments);
  } catch (const boost::property_tree::xml_parser_error&) {
    return std::nullopt;
  }
  return tree;
}

// The attribute `name` of an element of the tree, empty when it has none.
inline std::string xml_attribute(const boost::property_tree::ptree& element,
                                 const std::string& name) {
  const auto attributes = element.get_child_optional("<xmlattr>");
  if (!attributes) return {};
  const auto found = attributes->find(name);
  return found == attributes->not_found() ? std::string() : found->second.data();
}

// The first node key named `name` and edge key named `weight` (the ones MaskGAT reads), and
// whether the first graph is undirected: Boost needs property maps of the declared types.
struct GraphmlKeys {
  std::string name_type;
  std::string weight_type;
  bool undirected = false;
};

inline GraphmlKeys graphml_keys(const boost::property_tree::ptree& tree) {
  GraphmlKeys keys;
  bool graph_seen = false;
  for (const auto& [name, element] : tree.get_child("graphml")) {
    if (name == "graph" && !graph_seen) {
      graph_seen = true;
      keys.undirected = xml_attribute(element, "edgedefault") == "undirected";
    } else if (name == "key") {
      const std::string domain = xml_attribute(element, "for");
      const std::string attribute_name = xml_attribute(element, "attr.name");
      if (attribute_name == "name" && (domain == "node" || domain == "all") &&
          keys.name_type.empty()) {
        keys.name_type = xml_attribute(element, "attr.type");
      } else if (attribute_name == "weight" && (domain == "edge" || domain == "all") &&
                 keys.weight_type.empty()) {
        keys.weight_type = xml_attribute(element, "attr.type");
      }
    }
  }
  return keys;
}

// Whether `element` holds a `<graph>` element at any depth.
inline bool holds_graph(const boost::property_tree::ptree& element) {
  for (const auto& [name, child] : element) {
    if (name == "graph" || holds_graph(child)) return true;
  }
  return false;
}

// Whether a `<graph>` element lies inside another.
inline bool has_nested_graph(const boost::property_tree::ptree& tree) {
  for (const auto& [name, element] : tree.get_child("graphml")) {
    if (holds_graph(element)) return true;
  }
  return false;
}

template <typename BglGraph>
std::optional<NamedGraph> boost_graph(const std::string& text, const GraphmlKeys& keys) {
  BglGraph graph;
  boost::dynamic_properties properties(boost::ignore_other_properties);
  if (keys.name_type == "string")
    properties.property("name", boost::get(&GraphmlVertex::name, graph));
  if (keys.weight_type == "double" || keys.weight_type == "string") {
    properties.property("weight", boost::get(&GraphmlEdge::weight, graph));
  }
  std::istringstream stream(text);
  try {
    boost::read_graphml(stream, graph, properties);
  } catch (const std::exception&) {
    return std::nullopt;  // Boost refuses it: nothing to compare
  }
  const bool named = keys.name_type == "string";
  return boost_named_graph(
      graph, [&](std::size_t v) { return named ? graph[v].name : std::to_string(v); },
      [&](const auto& edge) { return static_cast<float>(graph[edge].weight); });
}

// Boost's reading of a GraphML file, or nullopt when Boost refuses it or when it holds what
// Boost reads differently by design: a name or weight key of a type other than string (and
// double for weights), whose conversion rules differ.
inline std::optional<NamedGraph> boost_graphml(const std::string& text, const GraphmlKeys& keys) {
  if (!keys.name_type.empty() && keys.name_type != "string") return std::nullopt;
  if (!keys.weight_type.empty() && keys.weight_type != "double") return std::nullopt;
  using Directed =
      boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, GraphmlVertex, GraphmlEdge>;
  using Undirected = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS,
                                           GraphmlVertex, GraphmlEdge>;
  return keys.undirected ? boost_graph<Undirected>(text, keys) : boost_graph<Directed>(text, keys);
}

// --- DOT -------------------------------------------------------------------------------------

struct DotVertex {
  std::string name;
};
struct DotEdge {
  std::string weight;
};

template <typename BglGraph>
std::optional<NamedGraph> boost_dot(const std::string& text) {
  BglGraph graph;
  boost::dynamic_properties properties(boost::ignore_other_properties);
  properties.property("node_id", boost::get(&DotVertex::name, graph));
  properties.property("weight", boost::get(&DotEdge::weight, graph));
  try {
    if (!boost::read_graphviz(text, graph, properties, "node_id")) return std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
  NamedGraph named = boost_named_graph(
      graph, [&](std::size_t v) { return graph[v].name; },
      [&](const auto& edge) {
        // MaskGAT accepted the file, so every weight given is a finite number.
        const std::string& weight = graph[edge].weight;
        return weight.empty() ? 1.0F : static_cast<float>(std::strtod(weight.c_str(), nullptr));
      });
  // Boost numbers nodes in byte order of their names, MaskGAT in order of appearance.
  std::sort(named.nodes.begin(), named.nodes.end());
  return named;
}

}  // namespace maskgat::fuzz
