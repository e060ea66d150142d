#pragma once
/// @file
/// GraphML reader.

#include <filesystem>

#include "maskgat/export.hpp"
#include "maskgat/io/edge_list.hpp"

namespace maskgat {

/// Reads a GraphML file in one pass, in constant stack space whatever its nesting (expat, a
/// streaming XML parser: comments, processing instructions, `<!DOCTYPE>` and CDATA as XML defines
/// them; the predefined entities and character references decoded; entity declarations refused,
/// so nothing is expanded or fetched; text in UTF-8 unless the file declares another encoding).
/// Node tokens: the value
/// of a node key named `name` (attr.type string, int or long) when the file declares one,
/// otherwise the node's `id`; an edge key named `weight` gives edge weights; a key's `<default>`
/// applies to the nodes or edges without a value. The first `<graph>` of the root is read, with
/// the graphs nested directly in it; hyperedges, graphs inside nodes and further top-level graphs
/// are not read and are counted in notes (errors when `strict`). Edges are directed as the graph's
/// `edgedefault` says (undirected: both directions; `undirected` adds reverses); duplicates merge
/// as in the edge list. Keys are declared before the graph. Serial.
/// @param path    the file
/// @param nodes   maps node tokens to ids; new nodes are added unless it is frozen
/// @param options `undirected`, limits and strictness
/// @return the graph over `nodes.size()` nodes, with what was merged, added or not read
/// @throws IoError (cannot open or read), ParseError at the offending line (malformed XML, an
///         entity declaration, an undeclared entity, text not in its encoding, a
///         root other than `<graphml>`, no `<graph>`, a missing or duplicate id, an edge to an
///         undeclared node, an edge whose direction differs from the graph's, a missing or bad
///         name or weight, unknown node, duplicates when `strict`, zero bytes or a UTF-16/UTF-32
///         byte-order mark), LimitError (file size, nesting, node or edge limit).
[[nodiscard]] MASKGAT_EXPORT LoadedGraph read_graphml(const std::filesystem::path& path,
                                                      NodeIndex& nodes,
                                                      const EdgeListOptions& options);

}  // namespace maskgat
