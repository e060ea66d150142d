#pragma once
/// @file
/// Files of node pairs: the pairs a link model scores (`maskgat predict --pairs`) and an edge
/// split written by one run and read by another (`--split-out`, `--edge-split`).

#include <filesystem>
#include <span>
#include <string>

#include "maskgat/export.hpp"
#include "maskgat/graph/edge_split.hpp"
#include "maskgat/io/limits.hpp"

namespace maskgat {

/// Reads `source target` lines (fields split at spaces, tabs or commas; blank lines and lines
/// starting with `#` or `%` skipped), each naming two nodes by the names of `node_names`, in file
/// order (repeats kept).
/// @param path       the file
/// @param node_names the name of every node of the graph, in id order
/// @param options    the line limit
/// @return the pairs
/// @throws IoError when the file cannot be read; ParseError naming the line for a line without
///         exactly two fields or naming a node the graph does not have (a header line is such a
///         line); LimitError for a line over the limit.
[[nodiscard]] MASKGAT_EXPORT NodePairs read_node_pairs(const std::filesystem::path& path,
                                                       std::span<const std::string> node_names,
                                                       const ReadOptions& options = {});

/// Writes an edge split as `part source target` lines with the nodes' names, the parts `train`,
/// `val`, `test`, `val_negative` and `test_negative` in that order, with `write_file_atomically`.
/// @param path       the file
/// @param node_names the name of every node (as many as the split's graph has)
/// @param split      the split
/// @param overwrite  replace an existing file
/// @throws InvalidArgument when a node's name cannot be read back (empty, holding a space, tab,
///         comma or line end, or starting with `#` or `%`); IoError when `path` exists and
///         `overwrite` is false, or writing fails.
MASKGAT_EXPORT void write_edge_split(const std::filesystem::path& path,
                                     std::span<const std::string> node_names,
                                     const EdgeSplit& split, bool overwrite);

/// Reads an edge split `write_edge_split` wrote (any order of lines) for `graph`: the training
/// graph is `graph` without the validation and test pairs (`remove_pairs`).
/// @param path       the file
/// @param graph      the graph the split was drawn from
/// @param node_names the name of every node of `graph`
/// @param undirected pairs are unordered (as `EdgeSplitOptions::undirected`)
/// @param options    the line limit
/// @return the split
/// @throws IoError when the file cannot be read; ParseError naming the line for a bad line, an
///         unknown part or node, a positive that is not an edge of `graph`, a negative that is,
///         a self-loop, or a positive pair listed twice; InvalidArgument when there are no
///         training pairs, or the validation (test) negatives are not as many as its positives.
[[nodiscard]] MASKGAT_EXPORT EdgeSplit read_edge_split(const std::filesystem::path& path,
                                                       const Graph& graph,
                                                       std::span<const std::string> node_names,
                                                       bool undirected,
                                                       const ReadOptions& options = {});

}  // namespace maskgat
