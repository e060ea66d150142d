#pragma once
// The steps every graph reader shares once it has parsed its edges: node tokens to ids with the
// standard messages, then building, merging duplicates, symmetrising and reporting.

#include <cstdint>
#include <string>
#include <string_view>

#include "maskgat/io/edge_list.hpp"
#include "maskgat/io/limits.hpp"

namespace maskgat::detail {

// The id of `token` in `nodes`, inserting it when the index allows. Throws ParseError (or
// LimitError for the node limit) at `<reader>: <path>:<line>` with the standard message for
// each `NodeIndex::Status`. `line` 0 means the format has no line numbers.
NodeId node_id_or_throw(NodeIndex& nodes, std::string_view token, std::string_view reader,
                        const std::string& path, std::int64_t line);

// Builds the graph of `edges` over `nodes.size()` nodes: merges duplicates (first weight kept;
// a note, or a ParseError when strict), adds the reverse of every edge when
// `options.undirected`, and checks `max_edges`.
LoadedGraph assemble_graph(const EdgeList& edges, const NodeIndex& nodes,
                           const EdgeListOptions& options, std::string_view reader,
                           const std::string& path);

// `edge 'source' -> 'target'` (`--` when undirected), to start a message about one edge.
std::string describe_edge(std::string_view source, std::string_view target, bool undirected);

// Throws LimitError if `count` edges would exceed `options.read.limits.max_edges`.
void check_edge_limit(std::int64_t count, const EdgeListOptions& options, std::string_view reader,
                      const std::string& path, std::int64_t line);

// The graph of `edges` as PyG builds the published datasets: duplicates merged, every edge also
// reversed, self-loops removed; a note starting with `note_prefix` for each step that changed
// something (they are known properties of the published files, so notes even when strict).
Graph published_graph(std::int64_t num_nodes, EdgeList edges, const std::string& note_prefix,
                      Notes& notes);

}  // namespace maskgat::detail
