#pragma once
/// @file
/// Graphs in numpy's `.npz` archives, as Shchur et al. (2018) published them (Amazon Computers,
/// Amazon Photo, Coauthor CS, and the `SparseGraph` files of Cora, CiteSeer and Cora-ML), and as
/// Platonov et al. (2023) published the heterophily benchmark (with ten fixed splits).

#include <filesystem>
#include <string>

#include "maskgat/export.hpp"
#include "maskgat/io/dataset.hpp"

namespace maskgat {

/// Reads a graph from an npz archive of any of three layouts found in the field, the first two
/// as PyTorch Geometric's `read_npz`:
/// - plain arrays: the adjacency as `adj_data`, `adj_indices`, `adj_indptr`, `adj_shape` (or the
///   dotted `adj_matrix.data`, ...), the features likewise (`attr_*`, or a dense `attr_matrix`),
///   `labels`, and `class_names` when present;
/// - 0-d object arrays holding a pickled `scipy.sparse.csr_matrix` (`adj_matrix`, `node_attr`),
///   beside a plain `node_label` and a `metadata` dict whose `class_names` name the classes;
/// - the heterophily benchmark's (Platonov et al. 2023): dense `node_features` [N, F],
///   `node_labels` [N], `edges` [E, 2] (node pairs in [0, N), each undirected edge once) and the
///   bool `train_masks`, `val_masks`, `test_masks` [K, N]: K fixed splits, a node in at most one
///   set of each (`Dataset::fixed_splits`).
/// The graph is made undirected, duplicates merged and self-loops removed (notes say how many);
/// the features are as stored, then normalised by `options.normalize_features`; nodes are named
/// by their row (`0`, `1`, ...), so a split file can name them. The split is fixed split
/// `options.fixed_split` (default 0) of a file that has them, unless `options.split_sizes` asks
/// for a random one; otherwise it is drawn at random (`options.seed`, `options.split_sizes`); on
/// the largest component with `options.largest_component`. The archive goes through libzip, the
/// members through bounded `.npy` and pickle readers that accept only what these files hold (numpy
/// arrays and dtypes, scipy's CSR class under both module names, dicts, lists and strings);
/// anything else is a `ParseError`, nothing is ever executed. Serial.
/// @param path    the `.npz` file
/// @param name    the dataset's name (`Dataset::name`), e.g. `amazon-computers`
/// @param options normalisation, split, limits and strictness
/// @return the dataset, with sparse features
/// @throws IoError (missing file), ParseError (not an npz graph, or a hostile one: the message
///         names the member and what it expected, e.g. ``member 'train_masks.npy' has shape (10,
///         7), expected (K, 5): ...``), LimitError, InvalidArgument (`options.fixed_split` out of
///         range, for a file without fixed splits, or together with `options.split_sizes`).
[[nodiscard]] MASKGAT_EXPORT Dataset read_npz(const std::filesystem::path& path,
                                              const std::string& name,
                                              const DatasetOptions& options);

}  // namespace maskgat
