#pragma once
/// @file
/// The reader of per-edge features, one row per edge of an edge list (PyG's `edge_attr`).

#include <filesystem>

#include "maskgat/core/tensor.hpp"
#include "maskgat/export.hpp"
#include "maskgat/io/limits.hpp"

namespace maskgat {

/// Reads edge features, one row of D numbers per edge, in the order the edge list gives its
/// edges (duplicates included):
/// - a text file (any extension but `.npz`): one line per edge, the numbers separated by runs of
///   spaces, tabs or commas; `#` and `%` start comment lines, blank lines are skipped, and a
///   first line whose fields are all names (a CSV header) is skipped;
/// - an `.npz` archive holding a numeric 2-D array [E, D] named `edge_features`, or its only
///   array.
/// Serial.
/// @param path    the file
/// @param options limits (`max_features` bounds D) and strictness
/// @return E x D features, as floats
/// @throws IoError (cannot open), ParseError (`<path>:<line>`: a field that is not a number or not
///         finite, a row of another width than the first, no rows; an npz without such an array
///         or of another shape), LimitError (more than `max_features` columns or `max_edges` rows).
[[nodiscard]] MASKGAT_EXPORT RowMatrix<float> read_edge_features(const std::filesystem::path& path,
                                                                 const ReadOptions& options);

}  // namespace maskgat
