// Differential fuzz target: the same bytes to MaskGAT's GraphML reader and to Boost.Graph's
// read_graphml. When both accept them, they must give the same graph: the same nodes in the same
// order (named by the `name` key, or compared by position when there is none, since Boost 1.74
// does not expose GraphML node ids), the same edges and weights. Boost only sees inputs MaskGAT
// accepted, so their nesting is within MaskGAT's limit. Not compared: files with a graph nested
// in the graph, whose nodes Boost numbers graph by graph and MaskGAT in file order.

#include "fuzz/boost_reference.hpp"
#include "maskgat/io/graphml.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(maskgat::fuzz::as_text(data, size));
  auto ours = maskgat::fuzz::maskgat_graph(text, "graph.graphml", maskgat::read_graphml);
  if (!ours) return 0;
  const auto tree = maskgat::fuzz::graphml_tree(text);
  if (!tree || maskgat::fuzz::has_nested_graph(*tree)) return 0;
  const auto keys = maskgat::fuzz::graphml_keys(*tree);
  const auto boost = maskgat::fuzz::boost_graphml(text, keys);
  if (!boost) return 0;
  if (keys.name_type.empty()) {
    // By position: node i of each reader is the i-th node seen.
    std::map<std::string, std::string> position;
    for (std::size_t i = 0; i < ours->nodes.size(); ++i)
      position[ours->nodes[i]] = std::to_string(i);
    maskgat::fuzz::NamedGraph renamed;
    for (const auto& node : ours->nodes) renamed.nodes.push_back(position[node]);
    for (const auto& [ends, weight] : ours->edges) {
      renamed.edges.emplace(std::pair{position[ends.first], position[ends.second]}, weight);
    }
    ours = std::move(renamed);
  }
  maskgat::fuzz::require_same(*ours, *boost, "graphml");
  return 0;
}
