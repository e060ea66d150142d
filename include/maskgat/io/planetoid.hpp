#pragma once
/// @file
/// Planetoid citation datasets (Yang et al. 2016) from their raw `ind.<name>.*` files.

#include <filesystem>
#include <string_view>

#include "maskgat/export.hpp"
#include "maskgat/io/dataset.hpp"

namespace maskgat {

/// Reads `cora`, `citeseer` or `pubmed` from its Planetoid files in `dir`, reproducing PyTorch
/// Geometric's `read_planetoid_data`. The files are
/// `ind.<name>.{x,tx,allx,y,ty,ally,graph,test.index}`; as in PyG:
/// - nodes: allx rows, then the test range `[min(test.index), max(test.index)]`, with tx/ty rows
///   placed at their test.index positions; test-range ids without a row (CiteSeer's 15) get zero
///   features and stay unlabelled;
/// - labels: argmax of the one-hot rows; split: train = rows of x, val = the next 500 rows,
///   test = test.index;
/// - graph: the adjacency dict symmetrised, deduplicated, self-loops removed.
/// The pickles are Python-2 protocol-2 files read by a bounded reader that accepts only the
/// opcodes and classes these files use (scipy CSR matrices, numpy arrays, a defaultdict of
/// lists); anything else is a `ParseError`, nothing is ever executed.
/// When `ind.<name>.allx` is missing and `options.require_features` is false, features are left
/// empty and `Dataset::missing_features` says why (PubMed's allx is not in the local mirror).
/// Serial.
/// @param dir     the directory of the files, e.g. `<data>/planetoid`
/// @param name    `cora`, `citeseer` or `pubmed`
/// @param options `require_features`, feature normalisation and limits (the split is the
///                published one and the files' known duplicates stay notes, so `seed`,
///                `split_sizes` and `strict` are not used)
/// @return the dataset, with sparse features
/// @throws InvalidArgument (unknown name), IoError (missing file: names it and
///         `datasets/fetch.sh`), ParseError, LimitError.
[[nodiscard]] MASKGAT_EXPORT Dataset read_planetoid(const std::filesystem::path& dir,
                                                    std::string_view name,
                                                    const DatasetOptions& options);

}  // namespace maskgat
