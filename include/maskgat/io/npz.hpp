#pragma once
/// @file
/// Graphs in numpy's `.npz` archives, as Shchur et al. (2018) published them: Amazon Computers,
/// Amazon Photo, Coauthor CS, and the `SparseGraph` files of Cora, CiteSeer and Cora-ML.

#include <filesystem>
#include <string>

#include "maskgat/export.hpp"
#include "maskgat/io/dataset.hpp"

namespace maskgat {

/// Reads a graph from an npz archive of either layout found in the field, reproducing PyTorch
/// Geometric's `read_npz`:
/// - plain arrays: the adjacency as `adj_data`, `adj_indices`, `adj_indptr`, `adj_shape` (or the
///   dotted `adj_matrix.data`, ...), the features likewise (`attr_*`, or a dense `attr_matrix`),
///   `labels`, and `class_names` when present;
/// - 0-d object arrays holding a pickled `scipy.sparse.csr_matrix` (`adj_matrix`, `node_attr`),
///   beside a plain `node_label` and a `metadata` dict whose `class_names` name the classes.
/// The graph is made undirected, duplicates merged and self-loops removed (notes say how many);
/// the features are as stored, then normalised by `options.normalize_features`; nodes are named
/// by their row (`0`, `1`, ...), so a split file can name them; the split is drawn at random
/// (`options.seed`, `options.split_sizes`), on the largest component with
/// `options.largest_component`. The archive goes through libzip, the members through
/// bounded `.npy` and pickle readers that accept only what these files hold (numpy arrays and
/// dtypes, scipy's CSR class under both module names, dicts, lists and strings); anything else is
/// a `ParseError`, nothing is ever executed. Serial.
/// @param path    the `.npz` file
/// @param name    the dataset's name (`Dataset::name`), e.g. `amazon-computers`
/// @param options normalisation, split, limits and strictness
/// @return the dataset, with sparse features
/// @throws IoError (missing file), ParseError (not an npz graph, or a hostile one: the message
///         names the member), LimitError.
[[nodiscard]] MASKGAT_EXPORT Dataset read_npz(const std::filesystem::path& path,
                                              const std::string& name,
                                              const DatasetOptions& options);

}  // namespace maskgat
