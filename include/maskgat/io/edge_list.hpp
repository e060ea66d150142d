#pragma once
/// @file
/// The edge-list reader.

#include <filesystem>
#include <vector>

#include "maskgat/export.hpp"
#include "maskgat/graph/build.hpp"
#include "maskgat/io/limits.hpp"
#include "maskgat/io/node_index.hpp"

namespace maskgat {

/// Options of `read_edge_list` beyond the node index.
struct EdgeListOptions {
  bool undirected = false;    ///< add the reverse of every edge
  ReadOptions read;           ///< limits and strictness
  bool keep_origins = false;  ///< fill `LoadedGraph::origins`
};

/// A graph read from a file and what the reader merged or added.
struct LoadedGraph {
  Graph graph;                     ///< weighted when the file gives weights
  EdgeId duplicates_merged = 0;    ///< repeated edges dropped (first weight kept)
  EdgeId reverse_edges_added = 0;  ///< with `undirected`: reverse edges that were not in the file
  Notes notes;                     ///< what was merged, one line each
  /// Every edge was read both ways (`undirected`, or a GraphML or DOT file declaring an
  /// undirected graph).
  bool undirected = false;
  EdgeId edges_read = 0;  ///< the edges the file lists, duplicates included
  /// With `EdgeListOptions::keep_origins`: for every edge of `graph`, the place in the file of
  /// the edge it came from (`edge_origins`), counting listed edges from 0.
  std::vector<EdgeId> origins{};
};

/// Reads one edge per line: `src dst` or `src dst weight` (a finite number), fields separated by
/// runs of spaces, tabs or commas. `#` and `%` start comment lines; blank lines, CRLF line ends
/// and a UTF-8 byte-order mark are accepted. Tokens map to ids through `nodes` (names in order of
/// first appearance, or numeric ids; a frozen index rejects unknown nodes). Directed as written.
/// Duplicate edges are merged (first weight kept) and reported as a note, or an error when
/// `strict`. The graph has `nodes.size()` nodes after reading. One pass, serial.
/// @param path    the file
/// @param nodes   maps node tokens to ids; new nodes are added unless it is frozen
/// @param options `undirected`, limits and strictness
/// @return the graph, with what was merged or added
/// @throws IoError (cannot open), ParseError (`<path>:<line>`: column count, weights on some
///         lines only, bad weight, unknown or invalid node id, no edges, duplicates when
///         `strict`, zero bytes or a UTF-16/UTF-32 byte-order mark), LimitError (node or edge
///         limit, a line over `max_line_bytes`).
[[nodiscard]] MASKGAT_EXPORT LoadedGraph read_edge_list(const std::filesystem::path& path,
                                                        NodeIndex& nodes,
                                                        const EdgeListOptions& options);

}  // namespace maskgat
