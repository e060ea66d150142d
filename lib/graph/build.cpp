#include "maskgat/graph/build.hpp"

#include <algorithm>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/range/iterator_range.hpp>
#include <cmath>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>

#include "maskgat/core/error.hpp"

namespace maskgat {
namespace {

// Position of an edge in the caller's input, carried through Boost's grouping so duplicates
// keep the first occurrence whatever order the grouping leaves them in.
struct InputPosition {
  EdgeId value = 0;
};

using ByDestination =
    boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, InputPosition,
                                       boost::no_property, std::uint32_t, std::uint64_t>;

// Accumulates rows of a destination-major CSR.
class CsrBuilder {
 public:
  CsrBuilder(std::size_t num_nodes, std::size_t capacity, bool weighted) : weighted_(weighted) {
    offsets_.reserve(num_nodes + 1);
    offsets_.push_back(0);
    sources_.reserve(capacity);
    if (weighted) weights_.reserve(capacity);
  }
  void push(NodeId source, float weight) {
    sources_.push_back(source);
    if (weighted_) weights_.push_back(weight);
  }
  void end_row() { offsets_.push_back(static_cast<EdgeId>(sources_.size())); }
  Graph finish(std::int64_t num_nodes) {
    return {num_nodes, std::move(offsets_), std::move(sources_), std::move(weights_)};
  }

 private:
  bool weighted_;
  std::vector<EdgeId> offsets_;
  std::vector<NodeId> sources_;
  std::vector<float> weights_;
};

float weight_of(const Graph& graph, EdgeId edge) {
  return graph.has_weights() ? graph.weights()[static_cast<std::size_t>(edge)] : 1.0F;
}

}  // namespace

GraphEdit build_graph(std::int64_t num_nodes, const EdgeList& edges) {
  if (num_nodes < 0 || num_nodes > kMaxNodeCount) {
    throw InvalidArgument("build_graph: num_nodes " + std::to_string(num_nodes) +
                          " is outside [0, " + std::to_string(kMaxNodeCount) + "]");
  }
  const std::size_t count = edges.sources.size();
  if (edges.targets.size() != count || (!edges.weights.empty() && edges.weights.size() != count)) {
    throw InvalidArgument("build_graph: sources, targets and weights have " +
                          std::to_string(count) + ", " + std::to_string(edges.targets.size()) +
                          " and " + std::to_string(edges.weights.size()) +
                          " entries, expected equal lengths (weights may be empty)");
  }
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs(count);
  std::vector<InputPosition> positions(count);
  for (std::size_t k = 0; k < count; ++k) {
    const NodeId src = edges.sources[k];
    const NodeId dst = edges.targets[k];
    if (src < 0 || src >= num_nodes || dst < 0 || dst >= num_nodes) {
      throw IndexError("build_graph: edge " + std::to_string(k) + " (" + std::to_string(src) +
                       " -> " + std::to_string(dst) + ") has a node id outside [0, " +
                       std::to_string(num_nodes) + ")");
    }
    if (!edges.weights.empty() && !std::isfinite(edges.weights[k])) {
      throw InvalidArgument("build_graph: edge " + std::to_string(k) + " has a non-finite weight");
    }
    // Keyed by destination: Boost's out-edges of a vertex are then our in-edges.
    pairs[k] = {static_cast<std::uint32_t>(dst), static_cast<std::uint32_t>(src)};
    positions[k].value = static_cast<EdgeId>(k);
  }
  const ByDestination grouped(boost::edges_are_unsorted_multi_pass, pairs.begin(), pairs.end(),
                              positions.begin(), static_cast<std::uint32_t>(num_nodes));
  pairs = {};
  positions = {};

  const bool weighted = !edges.weights.empty();
  CsrBuilder csr(static_cast<std::size_t>(num_nodes), count, weighted);
  std::vector<std::pair<NodeId, EdgeId>> row;
  GraphEdit result;
  for (const auto dst : boost::make_iterator_range(boost::vertices(grouped))) {
    row.clear();
    for (const auto edge : boost::make_iterator_range(boost::out_edges(dst, grouped))) {
      row.emplace_back(static_cast<NodeId>(boost::target(edge, grouped)), grouped[edge].value);
    }
    std::sort(row.begin(), row.end());
    for (std::size_t k = 0; k < row.size(); ++k) {
      if (k > 0 && row[k].first == row[k - 1].first) {
        ++result.removed;
        continue;
      }
      const auto input = static_cast<std::size_t>(row[k].second);
      csr.push(row[k].first, weighted ? edges.weights[input] : 1.0F);
    }
    csr.end_row();
  }
  result.graph = csr.finish(num_nodes);
  return result;
}

GraphEdit add_self_loops(const Graph& graph, float loop_weight) {
  CsrBuilder csr(static_cast<std::size_t>(graph.num_nodes()),
                 static_cast<std::size_t>(graph.num_edges() + graph.num_nodes()),
                 graph.has_weights());
  GraphEdit result;
  for (NodeId node = 0; node < graph.num_nodes(); ++node) {
    const EdgeId begin = graph.in_offsets()[static_cast<std::size_t>(node)];
    bool placed = false;
    for (EdgeId e = begin; e < graph.in_offsets()[static_cast<std::size_t>(node) + 1]; ++e) {
      const NodeId src = graph.in_sources()[static_cast<std::size_t>(e)];
      if (!placed && src >= node) {
        placed = true;
        if (src != node) {
          csr.push(node, loop_weight);
          ++result.added;
        }
      }
      csr.push(src, weight_of(graph, e));
    }
    if (!placed) {
      csr.push(node, loop_weight);
      ++result.added;
    }
    csr.end_row();
  }
  result.graph = csr.finish(graph.num_nodes());
  return result;
}

GraphEdit remove_self_loops(const Graph& graph) {
  CsrBuilder csr(static_cast<std::size_t>(graph.num_nodes()),
                 static_cast<std::size_t>(graph.num_edges()), graph.has_weights());
  GraphEdit result;
  for (NodeId node = 0; node < graph.num_nodes(); ++node) {
    for (EdgeId e = graph.in_offsets()[static_cast<std::size_t>(node)];
         e < graph.in_offsets()[static_cast<std::size_t>(node) + 1]; ++e) {
      const NodeId src = graph.in_sources()[static_cast<std::size_t>(e)];
      if (src == node) {
        ++result.removed;
      } else {
        csr.push(src, weight_of(graph, e));
      }
    }
    csr.end_row();
  }
  result.graph = csr.finish(graph.num_nodes());
  return result;
}

GraphEdit symmetrize(const Graph& graph) {
  CsrBuilder csr(static_cast<std::size_t>(graph.num_nodes()),
                 static_cast<std::size_t>(2 * graph.num_edges()), graph.has_weights());
  GraphEdit result;
  // Row `node` of the result merges its in-neighbours with its out-neighbours (each an edge
  // `target -> node` after reversal); both lists are sorted ascending.
  for (NodeId node = 0; node < graph.num_nodes(); ++node) {
    const auto i = static_cast<std::size_t>(node);
    EdgeId in = graph.in_offsets()[i];
    const EdgeId in_end = graph.in_offsets()[i + 1];
    EdgeId out = graph.out_offsets()[i];
    const EdgeId out_end = graph.out_offsets()[i + 1];
    while (in < in_end || out < out_end) {
      const NodeId in_src = in < in_end ? graph.in_sources()[static_cast<std::size_t>(in)] : -1;
      const NodeId out_dst =
          out < out_end ? graph.out_targets()[static_cast<std::size_t>(out)] : -1;
      if (out >= out_end || (in < in_end && in_src <= out_dst)) {
        csr.push(in_src, weight_of(graph, in));
        if (out < out_end && out_dst == in_src) ++out;
        ++in;
      } else {
        csr.push(out_dst, weight_of(graph, graph.out_edge_ids()[static_cast<std::size_t>(out)]));
        ++result.added;
        ++out;
      }
    }
    csr.end_row();
  }
  result.graph = csr.finish(graph.num_nodes());
  return result;
}

EdgeList to_edge_list(const Graph& graph) {
  EdgeList edges;
  edges.sources.assign(graph.in_sources().begin(), graph.in_sources().end());
  edges.targets = graph.edge_destinations();
  edges.weights.assign(graph.weights().begin(), graph.weights().end());
  return edges;
}

std::vector<EdgeId> edge_origins(const Graph& graph, const EdgeList& edges) {
  // The listed edges ordered by (target, source, place in the list): the first of equal pairs is
  // the first listed.
  std::vector<EdgeId> order(edges.sources.size());
  std::iota(order.begin(), order.end(), EdgeId{0});
  const auto key = [&](EdgeId k) {
    const auto index = static_cast<std::size_t>(k);
    return std::tuple(edges.targets[index], edges.sources[index], k);
  };
  std::sort(order.begin(), order.end(), [&](EdgeId a, EdgeId b) { return key(a) < key(b); });
  const auto first_listed = [&](NodeId source, NodeId target) -> EdgeId {
    const auto found =
        std::lower_bound(order.begin(), order.end(), std::tuple(target, source, EdgeId{0}),
                         [&](EdgeId k, const std::tuple<NodeId, NodeId, EdgeId>& wanted) {
                           return key(k) < wanted;
                         });
    if (found == order.end()) return -1;
    const auto index = static_cast<std::size_t>(*found);
    return edges.targets[index] == target && edges.sources[index] == source ? *found : -1;
  };
  std::vector<EdgeId> origins(static_cast<std::size_t>(graph.num_edges()));
  const auto offsets = graph.in_offsets();
  const auto sources = graph.in_sources();
  for (NodeId i = 0; i < graph.num_nodes(); ++i) {
    for (EdgeId e = offsets[static_cast<std::size_t>(i)];
         e < offsets[static_cast<std::size_t>(i) + 1]; ++e) {
      const NodeId j = sources[static_cast<std::size_t>(e)];
      const EdgeId listed = first_listed(j, i);
      origins[static_cast<std::size_t>(e)] = listed >= 0 ? listed : first_listed(i, j);
    }
  }
  return origins;
}

}  // namespace maskgat
