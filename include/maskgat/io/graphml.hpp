#pragma once
/// @file
/// GraphML reader through Boost.Graph's `read_graphml`.

#include <filesystem>

#include "maskgat/io/edge_list.hpp"

namespace maskgat {

/// Reads a GraphML file. A bounded pre-scan first checks the file size (`max_file_bytes`) and the
/// element nesting depth (`max_nesting_depth`), since Boost's parser recurses and reports no line
/// numbers; Boost's exceptions become `ParseError` with the file and the parser's message.
/// Node tokens: the value of a node data key named `name` when the file declares one, otherwise
/// the node's position in the file (Boost 1.74 does not expose GraphML node ids). An edge data
/// key named `weight` gives edge weights. Edges are directed as written (`undirected` adds
/// reverses); duplicates merge as in the edge list.
/// @throws IoError, ParseError, LimitError.
[[nodiscard]] LoadedGraph read_graphml(const std::filesystem::path& path, NodeIndex& nodes,
                                       const EdgeListOptions& options);

}  // namespace maskgat
