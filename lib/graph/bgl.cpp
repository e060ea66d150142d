#include "maskgat/graph/bgl.hpp"

#include <boost/graph/strong_components.hpp>
#include <boost/range/iterator_range.hpp>
#include <string>
#include <utility>

#include "maskgat/core/error.hpp"
#include "maskgat/graph/build.hpp"

namespace maskgat {

BglGraph to_bgl(const Graph& graph) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  std::vector<BglEdge> bundles;
  pairs.reserve(static_cast<std::size_t>(graph.num_edges()));
  bundles.reserve(static_cast<std::size_t>(graph.num_edges()));
  for (NodeId src = 0; src < graph.num_nodes(); ++src) {
    const auto s = static_cast<std::size_t>(src);
    for (EdgeId slot = graph.out_offsets()[s]; slot < graph.out_offsets()[s + 1]; ++slot) {
      const EdgeId id = graph.out_edge_ids()[static_cast<std::size_t>(slot)];
      pairs.emplace_back(static_cast<std::uint32_t>(src),
                         static_cast<std::uint32_t>(graph.out_targets()[static_cast<std::size_t>(slot)]));
      bundles.push_back({graph.has_weights() ? graph.weights()[static_cast<std::size_t>(id)] : 1.0F, id});
    }
  }
  return {boost::edges_are_unsorted_multi_pass, pairs.begin(), pairs.end(), bundles.begin(),
          static_cast<std::uint32_t>(graph.num_nodes())};
}

Graph from_bgl(const BglGraph& bgl, bool weighted) {
  EdgeList edges;
  for (const auto edge : boost::make_iterator_range(boost::edges(bgl))) {
    edges.sources.push_back(static_cast<NodeId>(boost::source(edge, bgl)));
    edges.targets.push_back(static_cast<NodeId>(boost::target(edge, bgl)));
    if (weighted) edges.weights.push_back(bgl[edge].weight);
  }
  GraphEdit built = build_graph(static_cast<std::int64_t>(boost::num_vertices(bgl)), edges);
  if (built.removed > 0) {
    throw InvalidArgument("from_bgl: the BGL graph has " + std::to_string(built.removed) +
                          " parallel edge(s); a MaskGAT graph has at most one edge per pair");
  }
  return std::move(built.graph);
}

std::int64_t weak_components(const Graph& graph, std::vector<std::int32_t>* component) {
  const Graph both = symmetrize(graph).graph;
  const BglGraph bgl = to_bgl(both);
  std::vector<std::int32_t> raw(static_cast<std::size_t>(graph.num_nodes()));
  const auto count = static_cast<std::int64_t>(boost::strong_components(
      bgl, boost::make_iterator_property_map(raw.begin(), boost::get(boost::vertex_index, bgl))));
  if (component != nullptr) {
    // Renumber in order of each component's smallest node, so ids do not depend on BGL's
    // traversal order.
    std::vector<std::int32_t> renamed(static_cast<std::size_t>(count), -1);
    std::int32_t next = 0;
    component->resize(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
      auto& id = renamed[static_cast<std::size_t>(raw[i])];
      if (id < 0) id = next++;
      (*component)[i] = id;
    }
  }
  return count;
}

}  // namespace maskgat
