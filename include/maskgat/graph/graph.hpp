#pragma once
/// @file
/// The immutable graph every MaskGAT kernel runs on: a CSR grouped by destination plus its
/// transpose grouped by source.
///
/// An edge `src -> dst` means that `dst` attends to `src` (messages flow from source to
/// destination, as in PyG's `edge_index`). Edge ids are positions in the destination-major order:
/// edges sorted by destination, then by source. That order is the one attention weights are
/// exported in.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "maskgat/core/types.hpp"
#include "maskgat/export.hpp"

namespace maskgat {

/// A directed simple graph (no duplicate edges; self-loops allowed) in two CSR views.
///
/// - by destination: `in_offsets()` (N+1), `in_sources()` (E); the in-edges of node `i` are the
///   edge ids `[in_offsets()[i], in_offsets()[i+1])`, their sources sorted ascending;
/// - by source: `out_offsets()` (N+1), `out_targets()` (E), and `out_edge_ids()` (E), the
///   destination-major edge id of each source-major slot, so a gather over out-edges can read
///   per-edge arrays stored in destination-major order without atomics.
///
/// Optional per-edge weights are stored in destination-major order. A `Graph` never changes after
/// construction, so copies share its arrays (a copy is cheap); the arrays are the graph's own or,
/// for a mapped store, memory someone else keeps alive.
class MASKGAT_EXPORT Graph {
 public:
  /// The empty graph (0 nodes, 0 edges).
  Graph();

  /// Builds both views from a destination-major CSR. Cost O(N + E), serial.
  /// @param num_nodes  N, in [0, 2^31 - 1]
  /// @param in_offsets N+1 non-decreasing offsets starting at 0 and ending at E
  /// @param in_sources E source ids in [0, N), strictly increasing within each destination row
  /// @param weights    empty, or E finite weights in the same order
  /// @throws InvalidArgument naming the first violated invariant.
  Graph(std::int64_t num_nodes, std::vector<EdgeId> in_offsets, std::vector<NodeId> in_sources,
        std::vector<float> weights = {});

  /// The arrays of both views, held elsewhere (see the class comment for their meaning).
  struct Arrays {
    std::span<const EdgeId> in_offsets;    ///< N+1
    std::span<const NodeId> in_sources;    ///< E
    std::span<const float> weights;        ///< E, or empty
    std::span<const EdgeId> out_offsets;   ///< N+1
    std::span<const NodeId> out_targets;   ///< E
    std::span<const EdgeId> out_edge_ids;  ///< E
  };

  /// A graph over both views held elsewhere (a mapped store), kept alive by `owner`. Every
  /// property the kernels index by is checked, in one parallel pass over each array, O(N + E):
  /// sizes, offsets non-decreasing from 0 to E, node ids in [0, N) and ascending within each row
  /// of both views, edge ids in [0, E), weights finite. That the transpose lists exactly the
  /// edges of the rows is not checked (it would take random reads of every edge; a store's
  /// checksums guard it): arrays that pass are safe to run on, if not consistent.
  /// @param num_nodes N, in [0, 2^31 - 1]
  /// @param arrays    the two views
  /// @param owner     keeps the arrays valid for the graph's lifetime and its copies'
  /// @throws InvalidArgument naming the first violated property.
  Graph(std::int64_t num_nodes, const Arrays& arrays, std::shared_ptr<const void> owner);

  /// The number of nodes.
  /// @return N
  [[nodiscard]] NodeId num_nodes() const noexcept { return num_nodes_; }
  /// The number of edges, self-loops included.
  /// @return E
  [[nodiscard]] EdgeId num_edges() const noexcept {
    return static_cast<EdgeId>(arrays_.in_sources.size());
  }
  /// Whether the graph carries edge weights.
  /// @return true when `weights()` has E entries, false when it is empty
  [[nodiscard]] bool has_weights() const noexcept { return !arrays_.weights.empty(); }

  /// Destination-major offsets.
  /// @return N+1 entries; row i is the edge ids `[in_offsets()[i], in_offsets()[i+1])`
  [[nodiscard]] std::span<const EdgeId> in_offsets() const noexcept { return arrays_.in_offsets; }
  /// Source of every edge, destination-major.
  /// @return E entries, ascending within each destination row
  [[nodiscard]] std::span<const NodeId> in_sources() const noexcept { return arrays_.in_sources; }
  /// Edge weights in destination-major order.
  /// @return E entries, or none for an unweighted graph
  [[nodiscard]] std::span<const float> weights() const noexcept { return arrays_.weights; }
  /// Source-major offsets.
  /// @return N+1 entries; source j's slots are `[out_offsets()[j], out_offsets()[j+1])`
  [[nodiscard]] std::span<const EdgeId> out_offsets() const noexcept { return arrays_.out_offsets; }
  /// Destination of every edge, source-major.
  /// @return E entries, destinations ascending within each source
  [[nodiscard]] std::span<const NodeId> out_targets() const noexcept { return arrays_.out_targets; }
  /// Destination-major edge id of each source-major slot.
  /// @return E entries, a permutation of [0, E)
  [[nodiscard]] std::span<const EdgeId> out_edge_ids() const noexcept {
    return arrays_.out_edge_ids;
  }

  /// Sources of the in-edges of `node`.
  /// @param node in [0, N) (not checked)
  /// @return the sources, ascending; edge ids follow from `in_offsets()[node]`
  [[nodiscard]] std::span<const NodeId> in_neighbors(NodeId node) const noexcept;
  /// Whether the graph holds the edge source -> target: a binary search in target's sources.
  /// @param source in [0, N) (not checked)
  /// @param target in [0, N) (not checked)
  /// @return true when `source` is among `in_neighbors(target)`
  [[nodiscard]] bool has_edge(NodeId source, NodeId target) const noexcept;
  /// Destinations of the out-edges of `node`.
  /// @param node in [0, N) (not checked)
  /// @return the destinations, ascending
  [[nodiscard]] std::span<const NodeId> out_neighbors(NodeId node) const noexcept;
  /// The number of in-edges of `node`, its self-loop included.
  /// @param node in [0, N) (not checked)
  /// @return the length of `in_neighbors(node)`
  [[nodiscard]] EdgeId in_degree(NodeId node) const noexcept;
  /// The number of out-edges of `node`, its self-loop included.
  /// @param node in [0, N) (not checked)
  /// @return the length of `out_neighbors(node)`
  [[nodiscard]] EdgeId out_degree(NodeId node) const noexcept;

  /// Number of edges `i -> i` (counted once at construction).
  /// @return between 0 and N
  [[nodiscard]] EdgeId num_self_loops() const noexcept { return num_self_loops_; }
  /// Destination of every edge in destination-major order, for exporting edge lists. O(N + E).
  /// @return E entries, the counterpart of `in_sources()`
  [[nodiscard]] std::vector<NodeId> edge_destinations() const;

 private:
  NodeId num_nodes_ = 0;
  Arrays arrays_;
  std::shared_ptr<const void> owner_;  // keeps `arrays_` valid
  EdgeId num_self_loops_ = 0;
};

}  // namespace maskgat
