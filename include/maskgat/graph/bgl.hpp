#pragma once
/// @file
/// Optional bridge to Boost.Graph: convert a MaskGAT `Graph` to and from a
/// `boost::compressed_sparse_row_graph` to run BGL algorithms on it. The only public header that
/// includes Boost.

#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <cstdint>
#include <vector>

#include "maskgat/export.hpp"
#include "maskgat/graph/graph.hpp"

namespace maskgat {

/// Edge bundle of `BglGraph`: the edge's weight (1 when unweighted) and its MaskGAT edge id
/// (destination-major position), so BGL results map back to attention arrays.
struct BglEdge {
  float weight = 1.0F;  ///< the edge's weight; 1 when the graph is unweighted
  EdgeId id = 0;        ///< the edge's position in the destination-major order
};

/// A bidirectional BGL CSR graph (out-edges by source, in-edges by destination), one vertex per
/// node, vertex descriptors equal to MaskGAT node ids.
using BglGraph =
    boost::compressed_sparse_row_graph<boost::bidirectionalS, boost::no_property, BglEdge,
                                       boost::no_property, std::uint32_t, std::uint64_t>;

/// Copies `graph` into a `BglGraph` (every edge `src -> dst` an out-edge of `src`). O(N + E).
/// @param graph any graph
/// @return N vertices and E edges, each bundled with its weight and MaskGAT edge id
[[nodiscard]] MASKGAT_EXPORT BglGraph to_bgl(const Graph& graph);

/// Copies a `BglGraph` back (through `build_graph`). O(N + E log d).
/// @param bgl      one vertex per node; at most one edge per (source, target) pair
/// @param weighted keep the bundled edge weights; otherwise the graph is unweighted
/// @return the graph with `bgl`'s vertices as nodes and its edges in destination-major order
/// @throws InvalidArgument on parallel edges (a `Graph` is simple), more than 2^31 - 1
///         vertices or, when `weighted`, a non-finite weight.
[[nodiscard]] MASKGAT_EXPORT Graph from_bgl(const BglGraph& bgl, bool weighted);

/// Weakly connected components through Boost.Graph (`strong_components` of the symmetrised
/// graph). O(N + E), serial.
/// @param graph     edge directions are ignored
/// @param component when not null, resized to N and given each node's component id, numbered
///                  from 0 in order of each component's smallest node
/// @return the number of components (0 for an empty graph)
MASKGAT_EXPORT std::int64_t weak_components(const Graph& graph,
                                            std::vector<std::int32_t>* component = nullptr);

}  // namespace maskgat
