#pragma once
/// @file
/// Graphviz DOT reader through Boost.Graph's `read_graphviz`.

#include <filesystem>

#include "maskgat/io/edge_list.hpp"

namespace maskgat {

/// Reads a DOT `digraph` or `graph` (an undirected graph gives both directions of every edge).
/// A bounded pre-scan checks the file size (`max_file_bytes`) and brace/bracket nesting
/// (`max_nesting_depth`) before Boost's recursive parser runs; its exceptions become
/// `ParseError` with the file and the parser's message (Boost reports no line numbers).
/// Node tokens are DOT node ids (`node_id`); an edge attribute `weight` gives edge weights.
/// @throws IoError, ParseError, LimitError.
[[nodiscard]] LoadedGraph read_dot(const std::filesystem::path& path, NodeIndex& nodes,
                                   const EdgeListOptions& options);

}  // namespace maskgat
