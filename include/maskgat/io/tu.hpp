#pragma once
/// @file
/// The TU graph-classification datasets (Morris et al., TUDataset): many small graphs, one label
/// each, read natively from the collection's zip or folder.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "maskgat/core/tensor.hpp"
#include "maskgat/export.hpp"
#include "maskgat/graph/graph.hpp"
#include "maskgat/io/limits.hpp"

namespace maskgat {

/// A collection of graphs as one graph of disjoint parts: graph g holds the nodes
/// [offsets[g], offsets[g + 1]) and every edge joins two nodes of one graph.
struct GraphCollection {
  std::string name;  ///< the collection's name, e.g. `MUTAG`
  /// Every graph's edges as the files list them (each undirected edge in both directions),
  /// 0-based, duplicates merged (the first kept) and self-loops dropped, as PyG does.
  Graph graph;
  /// N x F: the one-hot node labels (one block per label column, each from its smallest value,
  /// PyG's `TUDataset` rule), then the node attributes; for a collection with neither, the
  /// one-hot in-degree (PyG's `OneHotDegree`), capped at `kMaxDegreeColumns` - 1.
  RowMatrix<float> features;
  /// E x D on the edges of `graph` (its destination-major order): the one-hot edge labels, then
  /// the edge attributes; 0 columns without either.
  RowMatrix<float> edge_features;
  std::vector<std::int64_t> offsets;     ///< G + 1 node offsets, offsets[0] = 0
  std::vector<std::int32_t> labels;      ///< G class ids
  std::vector<std::string> class_names;  ///< K names: the labels as written, in numeric order
  Notes notes;                           ///< what was merged, dropped or made up, for the user

  /// The number of graphs.
  /// @return G
  [[nodiscard]] std::int64_t num_graphs() const noexcept {
    return static_cast<std::int64_t>(labels.size());
  }
};

/// The most one-hot in-degree columns made for a collection without node labels or attributes:
/// degrees from this value minus one up share the last column.
inline constexpr std::int64_t kMaxDegreeColumns = 64;

/// Reads a TU collection: a zip holding `<NAME>_A.txt`, `<NAME>_graph_indicator.txt`,
/// `<NAME>_graph_labels.txt` and, where present, `<NAME>_node_labels.txt`,
/// `<NAME>_node_attributes.txt`, `<NAME>_edge_labels.txt` and `<NAME>_edge_attributes.txt`, under
/// any one folder (doubled slashes in member names read as one), or a folder holding those files.
/// Node ids are 1-based over the whole collection; graph ids are 1 .. G, non-decreasing over the
/// nodes, every one with nodes. Graph labels are integers, mapped to classes in numeric order (as
/// PyG's `unique`): MUTAG's -1 and 1 become classes 0 and 1. Serial.
/// @param path    the zip or the folder
/// @param options limits (nodes, edges, features, classes, file and line bytes)
/// @return the collection
/// @throws IoError (cannot open), ParseError naming the file and line (a node of `_A` beyond the
///         indicator's nodes, an edge between two graphs, an indicator that decreases or skips a
///         graph, a count of labels or attributes that is not the count of nodes, edges or
///         graphs, a field that is not a number, no `_A.txt` or two of them, a path-like member
///         name), LimitError.
[[nodiscard]] MASKGAT_EXPORT GraphCollection read_tu(const std::filesystem::path& path,
                                                     const ReadOptions& options);

/// Some graphs of a collection as one block-diagonal graph: graph b of the batch holds the nodes
/// [offsets[b], offsets[b + 1]), and the attention layers run on it unchanged (every edge stays
/// within its graph, so each graph is masked to itself by construction).
struct GraphBatch {
  Graph graph;                        ///< the graphs' nodes in batch order, each graph's edges
  RowMatrix<float> features;          ///< their nodes' feature rows
  RowMatrix<float> edge_features;     ///< their edges' rows, on `graph`'s edges
  std::vector<std::int64_t> offsets;  ///< B + 1 node offsets, offsets[0] = 0
  std::vector<std::int32_t> labels;   ///< B class ids
  std::vector<std::int64_t> graphs;   ///< the collection's id of each graph, in batch order
};

/// The batch of `graphs` (in that order, repeats allowed): its CSR is the graphs' rows of the
/// collection's CSR, ids shifted, and only their features and edge features are copied. O(nodes
/// + edges of the batch), serial.
/// @param collection e.g. from `read_tu`
/// @param graphs     ids in [0, G)
/// @return the batch
/// @throws IndexError for an id outside [0, G).
[[nodiscard]] MASKGAT_EXPORT GraphBatch make_batch(const GraphCollection& collection,
                                                   std::span<const std::int64_t> graphs);

/// Some graphs of a collection as a collection of their own (as if read from a file of just
/// them): `graphs` in that order, their features, edge features, labels and the class names;
/// no notes. O(nodes + edges of the graphs), serial.
/// @param collection e.g. from `read_tu`
/// @param graphs     ids in [0, G) (repeats allowed)
/// @return the collection, named as `collection`
/// @throws IndexError for an id outside [0, G).
[[nodiscard]] MASKGAT_EXPORT GraphCollection collection_of(const GraphCollection& collection,
                                                           std::span<const std::int64_t> graphs);

}  // namespace maskgat
