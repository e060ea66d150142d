#include "maskgat/io/dot.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphviz.hpp>
#include <boost/property_map/dynamic_property_map.hpp>
#include <cmath>
#include <string>

#include "detail/boost_graph.hpp"
#include "detail/input_file.hpp"
#include "detail/prescan.hpp"
#include "detail/text.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat {
namespace {

constexpr std::string_view kReader = "dot";
constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
// Graphviz's own default for an edge without a `weight` attribute.
constexpr float kDefaultWeight = 1.0F;

struct DotVertex {
  std::string name;
};
struct DotEdge {
  std::string weight;
  bool has_weight = false;
};

// The edge `weight` attribute as text, recording whether the edge had one: `weight=""` and no
// attribute at all must not look alike.
template <typename BglGraph>
class WeightMap {
 public:
  using key_type = typename boost::graph_traits<BglGraph>::edge_descriptor;
  using value_type = std::string;
  using reference = std::string;
  using category = boost::read_write_property_map_tag;

  explicit WeightMap(BglGraph& graph) : graph_(&graph) {}

  friend std::string get(const WeightMap& map, const key_type& edge) {
    return (*map.graph_)[edge].weight;
  }
  friend void put(const WeightMap& map, const key_type& edge, const std::string& value) {
    DotEdge& data = (*map.graph_)[edge];
    data.weight = value;
    data.has_weight = true;
  }

 private:
  BglGraph* graph_;
};

float weight_or_throw(const std::string& text, const std::string& edge, const std::string& path) {
  const auto weight = detail::parse_number(text);
  if (!weight) {
    throw ParseError(kReader, path, 0,
                     edge + ": weight " + detail::quoted(text) + " is not a number");
  }
  if (!std::isfinite(*weight) || !std::isfinite(static_cast<float>(*weight))) {
    throw ParseError(kReader, path, 0,
                     edge + ": weight " + detail::quoted(text) + " is not finite");
  }
  return static_cast<float>(*weight);
}

template <typename BglGraph>
LoadedGraph load(const std::string& content, NodeIndex& nodes, const EdgeListOptions& options,
                 const std::string& path) {
  BglGraph graph;
  boost::dynamic_properties properties(boost::ignore_other_properties);
  properties.property("node_id", boost::get(&DotVertex::name, graph));
  properties.property("weight", WeightMap<BglGraph>(graph));
  detail::run_boost_reader([&] { boost::read_graphviz(content, graph, properties, "node_id"); },
                           "read_graphviz", kReader, path);

  bool weighted = false;
  for (auto [edge, end] = boost::edges(graph); edge != end; ++edge) {
    weighted = weighted || graph[*edge].has_weight;
  }
  // Boost creates vertices in byte order of their names, so ids follow that order.
  const auto name_of = [&](std::size_t v) -> const std::string& { return graph[v].name; };
  const auto weight_of = [&](const auto& edge, const auto& describe) {
    const DotEdge& data = graph[edge];
    return data.has_weight ? weight_or_throw(data.weight, describe(), path) : kDefaultWeight;
  };
  return detail::assemble_boost_graph(graph, name_of, weighted, weight_of, nodes, options, kReader,
                                      path);
}

using DirectedDot =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, DotVertex, DotEdge>;
using UndirectedDot =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, DotVertex, DotEdge>;

}  // namespace

LoadedGraph read_dot(const std::filesystem::path& path, NodeIndex& nodes,
                     const EdgeListOptions& options) {
  const std::string shown = path.string();
  detail::InputFile file(path, kReader);
  std::string content =
      detail::read_bounded_file(file, options.read.limits.max_file_bytes, detail::Content::kText);
  const detail::DotScan scan = detail::prescan_dot(content, options.read.limits, shown);
  // Boost's tokenizer does not skip a byte-order mark.
  if (std::string_view(content).starts_with(kByteOrderMark))
    content.erase(0, kByteOrderMark.size());
  // read_graphviz rejects a file whose kind differs from the graph type, so pick it from the file.
  if (scan.directed) return load<DirectedDot>(content, nodes, options, shown);
  return load<UndirectedDot>(content, nodes, options, shown);
}

}  // namespace maskgat
