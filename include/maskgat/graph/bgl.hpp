#pragma once
/// @file
/// Optional bridge to Boost.Graph: convert a MaskGAT `Graph` to and from a
/// `boost::compressed_sparse_row_graph` to run BGL algorithms on it. The only public header that
/// includes Boost.

#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <cstdint>
#include <vector>

#include "maskgat/graph/graph.hpp"

namespace maskgat {

/// Edge bundle of `BglGraph`: the edge's weight (1 when unweighted) and its MaskGAT edge id
/// (destination-major position), so BGL results map back to attention arrays.
struct BglEdge {
  float weight = 1.0F;
  EdgeId id = 0;
};

/// A bidirectional BGL CSR graph (out-edges by source, in-edges by destination), one vertex per
/// node, vertex descriptors equal to MaskGAT node ids.
using BglGraph = boost::compressed_sparse_row_graph<boost::bidirectionalS, boost::no_property,
                                                    BglEdge, boost::no_property, std::uint32_t,
                                                    std::uint64_t>;

/// Copies `graph` into a `BglGraph` (every edge `src -> dst` an out-edge of `src`). O(N + E).
[[nodiscard]] BglGraph to_bgl(const Graph& graph);

/// Copies a `BglGraph` back; edge weights are kept when `weighted`. Parallel edges are an
/// `InvalidArgument` (a `Graph` is simple). O(N + E log d).
[[nodiscard]] Graph from_bgl(const BglGraph& bgl, bool weighted);

/// Weakly connected components through Boost.Graph (`strong_components` of the symmetrised
/// graph). Returns the number of components; fills `component` (N entries, ids from 0 in order
/// of the smallest node) when given. O(N + E), serial.
std::int64_t weak_components(const Graph& graph, std::vector<std::int32_t>* component = nullptr);

}  // namespace maskgat
