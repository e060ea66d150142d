#pragma once
/// @file
/// GraphML reader through Boost.Graph's `read_graphml`.

#include <filesystem>

#include "maskgat/export.hpp"
#include "maskgat/io/edge_list.hpp"

namespace maskgat {

/// Reads a GraphML file. A bounded pre-scan first checks the file size (`max_file_bytes`) and the
/// element nesting depth (`max_nesting_depth`), since Boost's parser recurses and reports no line
/// numbers; Boost's exceptions become `ParseError` with the file and the parser's message.
/// Node tokens: the value of a node data key named `name` when the file declares one, otherwise
/// the node's position in the file (Boost 1.74 does not expose GraphML node ids). An edge data
/// key named `weight` gives edge weights. Edges are directed as written (`undirected` adds
/// reverses); duplicates merge as in the edge list.
/// @param path    the file
/// @param nodes   maps node tokens to ids; new nodes are added unless it is frozen
/// @param options `undirected`, limits and strictness
/// @return the graph over `nodes.size()` nodes, with what was merged or added
/// @throws IoError (cannot open or read), ParseError (malformed XML, no `<graph>`, Boost's
///         message, a bad weight, unknown node, duplicates when `strict`), LimitError (file
///         size, nesting, node or edge limit).
[[nodiscard]] MASKGAT_EXPORT LoadedGraph read_graphml(const std::filesystem::path& path,
                                                      NodeIndex& nodes,
                                                      const EdgeListOptions& options);

}  // namespace maskgat
