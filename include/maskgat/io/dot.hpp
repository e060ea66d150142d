#pragma once
/// @file
/// Graphviz DOT reader.

#include <filesystem>

#include "maskgat/export.hpp"
#include "maskgat/io/edge_list.hpp"

namespace maskgat {

/// Reads a DOT `digraph` or `graph` (an undirected graph gives both directions of every edge) in
/// one pass: a lexer and a parser with an explicit stack of open braces, so any nesting costs
/// heap, bounded by `max_nesting_depth`, never stack. Node tokens are DOT IDs (names, numerals,
/// quoted strings, HTML strings), numbered in order of first appearance; ports are ignored; a
/// subgraph may be an edge's end (`a -> {b c}` is two edges; the bodies of one named subgraph
/// add up, and `subgraph NAME` alone stands for its members so far). An edge attribute `weight`, or
/// an `edge [weight=...]` default in scope, gives edge weights (the graph is weighted when any edge
/// has one; an edge without one then weighs 1). A `strict` graph keeps the first of repeated
/// edges and drops self-loops; otherwise duplicates merge as in the edge list (an error with
/// `options.read.strict`). Serial.
/// @param path    the file
/// @param nodes   maps node tokens to ids; new nodes are added unless it is frozen
/// @param options `undirected`, limits and strictness
/// @return the graph over `nodes.size()` nodes, with what was merged or added
/// @throws IoError (cannot open or read), ParseError at the offending line (a syntax error, an
///         unterminated comment or string, no `graph`/`digraph` header, an edge operator of the
///         other kind of graph, a numeral run into letters such as `1e400`, a weight that is not a
///         finite number, unknown node, duplicates with `options.read.strict`, zero bytes or a
///         UTF-16/UTF-32
///         byte-order mark), LimitError (file size, nesting, node or edge limit).
[[nodiscard]] MASKGAT_EXPORT LoadedGraph read_dot(const std::filesystem::path& path,
                                                  NodeIndex& nodes, const EdgeListOptions& options);

}  // namespace maskgat
