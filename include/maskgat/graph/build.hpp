#pragma once
/// @file
/// Building a `Graph` from edge pairs and editing it: self-loops, symmetrisation, duplicate
/// merging. Every operation returns the new graph together with what it changed.

#include <cstdint>
#include <string>
#include <vector>

#include "maskgat/core/types.hpp"
#include "maskgat/export.hpp"
#include "maskgat/graph/graph.hpp"

namespace maskgat {

/// Edges as parallel arrays, in any order, possibly with duplicates: edge `k` is
/// `sources[k] -> targets[k]` with weight `weights[k]` (weights empty for an unweighted graph).
struct MASKGAT_EXPORT EdgeList {
  std::vector<NodeId> sources;  ///< source of every edge
  std::vector<NodeId> targets;  ///< destination of every edge, as many as `sources`
  std::vector<float> weights;   ///< weight of every edge, or empty for an unweighted graph
};

/// A built or edited graph and the number of edges the operation added and removed.
struct GraphEdit {
  Graph graph;         ///< the result
  EdgeId added = 0;    ///< edges inserted (self-loops, reverse edges)
  EdgeId removed = 0;  ///< edges dropped (duplicates merged, self-loops removed)
};

/// Builds a simple graph on `num_nodes` nodes from `edges`, grouping by destination through
/// `boost::compressed_sparse_row_graph`. Duplicate edges are merged, keeping the weight of the
/// first occurrence in input order; `removed` counts the merged copies.
/// Cost O(N + E log d_max), serial.
/// @param num_nodes N, in [0, 2^31 - 1]
/// @param edges     E edges with ids in [0, N); weighted when `edges.weights` is not empty
/// @return the graph (weighted as `edges` is), `added` 0 and `removed` the merged duplicates
/// @throws InvalidArgument if the arrays differ in length, a weight is not finite, or
///         `num_nodes` is outside [0, 2^31 - 1]; IndexError for an id outside [0, num_nodes).
[[nodiscard]] MASKGAT_EXPORT GraphEdit build_graph(std::int64_t num_nodes, const EdgeList& edges);

/// Adds the loop `i -> i` to every node that lacks one (idempotent, as PyG's
/// `add_remaining_self_loops`). O(N + E), serial.
/// @param graph       any graph
/// @param loop_weight weight of the new loops in a weighted graph (unused when unweighted)
/// @return the graph with every loop, and `added` the loops that were missing
[[nodiscard]] MASKGAT_EXPORT GraphEdit add_self_loops(const Graph& graph, float loop_weight = 1.0F);

/// Removes every self-loop. O(N + E), serial.
/// @param graph any graph
/// @return the graph without loops, and `removed` the loops there were
[[nodiscard]] MASKGAT_EXPORT GraphEdit remove_self_loops(const Graph& graph);

/// Adds `j -> i` for every edge `i -> j` that has no reverse; a new reverse edge copies the
/// weight of its forward edge. Existing reverse pairs keep their own weights. O(N + E), serial.
/// @param graph any graph
/// @return the symmetric graph, and `added` the reverse edges that were missing
[[nodiscard]] MASKGAT_EXPORT GraphEdit symmetrize(const Graph& graph);

/// Where every edge of a graph built from `edges` came from: for the graph's edge e (in
/// destination-major order), the index in `edges` of the first `j -> i` listed, or, for a reverse
/// edge `symmetrize` added, of the first `i -> j`; -1 for an edge in neither direction (a loop
/// `add_self_loops` added). What a value carried per listed edge (edge features) needs to follow
/// the graph. O(E log E), serial.
/// @param graph the graph
/// @param edges the list it was built from
/// @return one index per edge of `graph`
[[nodiscard]] MASKGAT_EXPORT std::vector<EdgeId> edge_origins(const Graph& graph,
                                                              const EdgeList& edges);

/// The edges of `graph` in destination-major order (the inverse of `build_graph`).
/// @param graph any graph
/// @return E edges, with the weights when the graph has them
[[nodiscard]] MASKGAT_EXPORT EdgeList to_edge_list(const Graph& graph);

}  // namespace maskgat
