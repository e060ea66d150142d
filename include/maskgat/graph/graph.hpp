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
/// Optional per-edge weights are stored in destination-major order. Copies share nothing and are
/// cheap to move; a `Graph` never changes after construction.
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

  /// The number of nodes.
  /// @return N
  [[nodiscard]] NodeId num_nodes() const noexcept { return num_nodes_; }
  /// The number of edges, self-loops included.
  /// @return E
  [[nodiscard]] EdgeId num_edges() const noexcept {
    return static_cast<EdgeId>(in_sources_.size());
  }
  /// Whether the graph carries edge weights.
  /// @return true when `weights()` has E entries, false when it is empty
  [[nodiscard]] bool has_weights() const noexcept { return !weights_.empty(); }

  /// Destination-major offsets.
  /// @return N+1 entries; row i is the edge ids `[in_offsets()[i], in_offsets()[i+1])`
  [[nodiscard]] std::span<const EdgeId> in_offsets() const noexcept { return in_offsets_; }
  /// Source of every edge, destination-major.
  /// @return E entries, ascending within each destination row
  [[nodiscard]] std::span<const NodeId> in_sources() const noexcept { return in_sources_; }
  /// Edge weights in destination-major order.
  /// @return E entries, or none for an unweighted graph
  [[nodiscard]] std::span<const float> weights() const noexcept { return weights_; }
  /// Source-major offsets.
  /// @return N+1 entries; source j's slots are `[out_offsets()[j], out_offsets()[j+1])`
  [[nodiscard]] std::span<const EdgeId> out_offsets() const noexcept { return out_offsets_; }
  /// Destination of every edge, source-major.
  /// @return E entries, destinations ascending within each source
  [[nodiscard]] std::span<const NodeId> out_targets() const noexcept { return out_targets_; }
  /// Destination-major edge id of each source-major slot.
  /// @return E entries, a permutation of [0, E)
  [[nodiscard]] std::span<const EdgeId> out_edge_ids() const noexcept { return out_edge_ids_; }

  /// Sources of the in-edges of `node`.
  /// @param node in [0, N) (not checked)
  /// @return the sources, ascending; edge ids follow from `in_offsets()[node]`
  [[nodiscard]] std::span<const NodeId> in_neighbors(NodeId node) const noexcept;
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
  std::vector<EdgeId> in_offsets_;
  std::vector<NodeId> in_sources_;
  std::vector<float> weights_;
  std::vector<EdgeId> out_offsets_;
  std::vector<NodeId> out_targets_;
  std::vector<EdgeId> out_edge_ids_;
  EdgeId num_self_loops_ = 0;
};

}  // namespace maskgat
