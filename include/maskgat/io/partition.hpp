#pragma once
/// @file
/// A graph split into parts that each own their nodes and the in-edges into them: nodes
/// renumbered so that each part's are contiguous, and one graph store per part holding its nodes,
/// the in-edges of its nodes and the remote sources those read (its halo), with their global ids.

#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "maskgat/export.hpp"
#include "maskgat/io/dataset.hpp"
#include "maskgat/io/store.hpp"

namespace maskgat {

/// What a partition costs: per part, the nodes it owns, the in-edges of those nodes, its training
/// nodes and its halo (the distinct sources of those in-edges that other parts own); and the
/// edges cut.
struct PartitionStats {
  std::vector<std::int64_t> nodes;        ///< per part
  std::vector<std::int64_t> in_edges;     ///< per part
  std::vector<std::int64_t> train_nodes;  ///< per part: its nodes in the training split
  std::vector<std::int64_t> halo;         ///< per part
  EdgeId cut_edges = 0;                   ///< edges whose source and destination parts differ

  /// The largest part's nodes over the mean (1 is perfect balance).
  /// @return max / mean, 0 for no nodes
  [[nodiscard]] MASKGAT_EXPORT double node_balance() const;
  /// The largest part's in-edges over the mean.
  /// @return max / mean, 0 for no edges
  [[nodiscard]] MASKGAT_EXPORT double edge_balance() const;
  /// The largest part's training nodes over the mean: how unevenly a step's loss work falls.
  /// @return max / mean, 0 for no training nodes
  [[nodiscard]] MASKGAT_EXPORT double train_balance() const;
};

/// Writes `dataset` split by `owner` into the directory `dir`, as the stores `part-0` ...
/// `part-<P-1>`. Nodes are renumbered globally by part, then by their id within it, so part q
/// owns the global ids [offsets[q], offsets[q+1]). Part q's store is a graph store (see
/// `write_store`) over its own nodes and its halo nodes (the other parts' nodes its in-edges
/// read), all in `dataset`'s order, so that a model runs on the store as it is and reads each
/// row's sources in the whole graph's order: its own nodes keep their features, labels, split,
/// names and every in-edge (weights included); its halo nodes keep their features and names, and
/// have no in-edges, no label and no split part. Beside the store's header, a file `part` records
/// the part's index, the part count, the global node count, every part's offsets, per node its
/// global id, and the checksum of the store's header it belongs to (magic `MGATPART`, version,
/// FNV-1a 64 of the payload), and per node its id in `dataset` and the numbers `dataset`'s
/// attention mask and sparse features give its first entries (`GraphPart::origins`,
/// `first_edges`, `first_entries`), and the fingerprints of `dataset` (`fingerprint`). The
/// directory is written beside `dir` and renamed into place.
/// @param dataset   any dataset
/// @param owner     the part of every node, each in [0, parts); every part must own a node
/// @param parts     P >= 1
/// @param dir       the directory; its parent must exist
/// @param overwrite replace an existing partition (a directory that is not one is never replaced)
/// @return the partition's statistics
/// @throws InvalidArgument (an owner out of range, a part without nodes), IoError (as
///         `write_store`).
MASKGAT_EXPORT PartitionStats write_partition(const Dataset& dataset,
                                              std::span<const std::int32_t> owner,
                                              std::int32_t parts, const std::filesystem::path& dir,
                                              bool overwrite);

/// One part of a partition, as `open_part` maps it. Its local nodes (the store's) are its own
/// nodes and its halo, in the order of their ids in the partitioned dataset.
struct GraphPart {
  /// The part's store: its own and halo nodes in the partitioned dataset's order (see
  /// `write_partition`).
  Dataset data;
  std::int32_t part = 0;          ///< its index
  std::int32_t parts = 0;         ///< P
  std::int64_t global_nodes = 0;  ///< the whole graph's nodes
  std::vector<NodeId> offsets;    ///< P+1: part q owns [offsets[q], offsets[q+1])
  /// Per local node, its global id: the own nodes' ascending in their order, [offsets[part],
  /// offsets[part+1]); the halo's outside that range.
  std::vector<NodeId> globals;
  /// Per local node, its id in the partitioned dataset (the whole graph's numbering), ascending.
  std::vector<NodeId> origins;
  /// Per own node (by global id less offsets[part]), the number the whole graph gives its first
  /// attention entry: its in-edges with the self-loop models add (`masks::from_graph`), counted
  /// over the nodes before it in the whole graph's order; with `first_entries`, what keeps
  /// dropout the same on any partition.
  std::vector<EdgeId> first_edges;
  /// Per local node, the position of its first stored feature entry in the whole graph's sparse
  /// features; empty when the features are dense.
  std::vector<std::int64_t> first_entries;
  /// The fingerprints of the partitioned dataset (its `global_nodes` nodes in its order), which a
  /// model trained on the parts records as its data.
  DatasetFingerprint whole;
  /// The nodes this part owns.
  /// @return offsets[part+1] - offsets[part]
  [[nodiscard]] NodeId own_nodes() const noexcept {
    return offsets[static_cast<std::size_t>(part) + 1] - offsets[static_cast<std::size_t>(part)];
  }
  /// Whether the part owns a local node (else it is in its halo).
  /// @param local in [0, globals.size())
  /// @return true for an own node
  [[nodiscard]] bool is_own(NodeId local) const noexcept {
    const NodeId global = globals[static_cast<std::size_t>(local)];
    return global >= offsets[static_cast<std::size_t>(part)] &&
           global < offsets[static_cast<std::size_t>(part) + 1];
  }
  /// The part that owns a global id.
  /// @param global in [0, global_nodes)
  /// @return q with offsets[q] <= global < offsets[q+1]
  [[nodiscard]] MASKGAT_EXPORT std::int32_t owner_of(NodeId global) const noexcept;
};

/// Opens one part of a partition (`dir` is its `part-<q>` directory): its store as `open_store`
/// opens it, and its `part` file, checked against the store and itself: the header checksum, the
/// part index below the count, offsets from 0 to the global node count without decreasing, a
/// global id and an origin per node of the store, origins ascending and below the global node
/// count, the own nodes holding the part's global ids in order, the halo's ids outside them,
/// distinct and below the global node count, the halo nodes without in-edges, a first edge per
/// own node, entry numbers not negative.
/// @param dir     the part's directory
/// @param options as for `open_store`
/// @return the part
/// @throws what `open_store` throws, and ParseError naming the `part` file for every check above.
[[nodiscard]] MASKGAT_EXPORT GraphPart open_part(const std::filesystem::path& dir,
                                                 const StoreOptions& options = {});

}  // namespace maskgat
