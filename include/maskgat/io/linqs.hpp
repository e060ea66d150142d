#pragma once
/// @file
/// LINQS citation datasets (Sen et al. 2008) from `<name>.content` and `<name>.cites`.

#include <filesystem>
#include <string_view>

#include "maskgat/export.hpp"
#include "maskgat/io/dataset.hpp"

namespace maskgat {

/// Reads `dir/<name>.content` (`paper_id word... label` per line, binary word features) and
/// `dir/<name>.cites` (`cited citing` per line) for `cora` or `citeseer`.
/// Nodes are the papers in `.content` order; the graph is the citations symmetrised,
/// deduplicated and without self-loops (as the Planetoid version); citations naming a paper
/// absent from `.content` are dropped and reported as a note (an error when `strict`); merged
/// duplicate citations and removed self-loops are properties of the published files and stay
/// notes even when `strict`. Class ids follow `sort_class_names`; the split is stratified random
/// with `options.seed`. A missing file's error names the fetch command. Serial.
/// @param dir     the directory holding both files (e.g. `<data>/linqs/cora`)
/// @param name    `cora` or `citeseer`
/// @param options feature normalisation, split seed and sizes, limits and strictness
/// @return the dataset, with binary word features stored sparse
/// @throws InvalidArgument (unknown name, negative split sizes), IoError (missing file, naming
///         `datasets/fetch.sh`), ParseError, LimitError.
[[nodiscard]] MASKGAT_EXPORT Dataset read_linqs(const std::filesystem::path& dir,
                                                std::string_view name,
                                                const DatasetOptions& options);

}  // namespace maskgat
