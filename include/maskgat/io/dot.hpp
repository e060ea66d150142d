#pragma once
/// @file
/// Graphviz DOT reader through Boost.Graph's `read_graphviz`.

#include <filesystem>

#include "maskgat/export.hpp"
#include "maskgat/io/edge_list.hpp"

namespace maskgat {

/// Reads a DOT `digraph` or `graph` (an undirected graph gives both directions of every edge).
/// A bounded pre-scan checks the file size (`max_file_bytes`) and brace/bracket nesting
/// (`max_nesting_depth`) before Boost's recursive parser runs; its exceptions become
/// `ParseError` with the file and the parser's message (Boost reports no line numbers).
/// Node tokens are DOT node ids (`node_id`); an edge attribute `weight` gives edge weights (the
/// graph is weighted when any edge has one; an edge without one then weighs 1). Duplicates merge
/// as in the edge list.
/// @param path    the file
/// @param nodes   maps node tokens to ids; new nodes are added unless it is frozen
/// @param options `undirected`, limits and strictness
/// @return the graph over `nodes.size()` nodes, with what was merged or added
/// @throws IoError (cannot open or read), ParseError (unbalanced or unclosed syntax, no
///         `graph`/`digraph` header, Boost's message, a weight that is not a finite number,
///         unknown node, duplicates when `strict`), LimitError (file size, nesting, node or edge
///         limit).
[[nodiscard]] MASKGAT_EXPORT LoadedGraph read_dot(const std::filesystem::path& path,
                                                  NodeIndex& nodes, const EdgeListOptions& options);

}  // namespace maskgat
