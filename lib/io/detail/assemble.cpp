#include "io/detail/assemble.hpp"

#include <utility>

#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/graph/build.hpp"

namespace maskgat::detail {

NodeId node_id_or_throw(NodeIndex& nodes, std::string_view token, std::string_view reader,
                        const std::string& path, std::int64_t line) {
  NodeIndex::Status status{};
  if (const auto id = nodes.insert(token, status)) return *id;
  const std::string shown(token);
  switch (status) {
    case NodeIndex::Status::kUnknown:
      throw ParseError(reader, path, line,
                       "unknown node '" + shown + "': it has no row in the features file");
    case NodeIndex::Status::kNotInteger:
      throw ParseError(reader, path, line,
                       "node id '" + shown + "' is not an integer (--numeric-ids)");
    case NodeIndex::Status::kNegative:
      throw ParseError(reader, path, line, "node id " + shown + " is negative");
    case NodeIndex::Status::kOutOfRange:
      throw ParseError(reader, path, line,
                       "node id " + shown + " is out of range: expected an id below " +
                           std::to_string(nodes.size()) + " (the number of nodes)");
    case NodeIndex::Status::kOverLimit:
      if (nodes.is_numeric()) {
        throw LimitError(reader, path, line,
                         "node id " + shown + " exceeds the node limit of " +
                             std::to_string(nodes.max_nodes()) +
                             " nodes (raise it with --max-nodes)");
      }
      throw LimitError(reader, path, line,
                       "more than " + std::to_string(nodes.max_nodes()) +
                           " nodes: over the node limit (raise it with --max-nodes)");
    case NodeIndex::Status::kOk:
      break;
  }
  throw ParseError(reader, path, line, "node '" + shown + "' cannot be mapped");
}

std::string describe_edge(std::string_view source, std::string_view target, bool undirected) {
  return "edge " + quoted(source) + (undirected ? " -- " : " -> ") + quoted(target);
}

void check_edge_limit(std::int64_t count, const EdgeListOptions& options, std::string_view reader,
                      const std::string& path, std::int64_t line) {
  const std::int64_t limit = options.read.limits.max_edges;
  if (count > limit) {
    throw LimitError(reader, path, line,
                     "more than " + std::to_string(limit) +
                         " edges: over the edge limit (raise it with --max-edges)");
  }
}

LoadedGraph assemble_graph(const EdgeList& edges, const NodeIndex& nodes,
                           const EdgeListOptions& options, std::string_view reader,
                           const std::string& path) {
  GraphEdit built = build_graph(nodes.size(), edges);
  LoadedGraph loaded;
  loaded.duplicates_merged = built.removed;
  if (built.removed > 0) {
    const std::string text =
        std::to_string(built.removed) + " duplicate edge(s) merged, the first weight kept";
    if (options.read.strict) throw ParseError(reader, path, 0, text + " (--strict)");
    loaded.notes.push_back(std::string(reader) + ": " + path + ": " + text);
  }
  if (options.undirected) {
    check_edge_limit(2 * built.graph.num_edges(), options, reader, path, 0);
    GraphEdit both = symmetrize(built.graph);
    loaded.reverse_edges_added = both.added;
    built.graph = std::move(both.graph);
  }
  loaded.graph = std::move(built.graph);
  loaded.undirected = options.undirected;
  loaded.edges_read = static_cast<EdgeId>(edges.sources.size());
  if (options.keep_origins) loaded.origins = edge_origins(loaded.graph, edges);
  return loaded;
}

Graph published_graph(std::int64_t num_nodes, EdgeList edges, const std::string& note_prefix,
                      Notes& notes) {
  GraphEdit built = build_graph(num_nodes, edges);
  edges = EdgeList();
  const std::int64_t merged = built.removed;
  GraphEdit symmetric = symmetrize(built.graph);
  built = GraphEdit();
  GraphEdit simple = remove_self_loops(symmetric.graph);
  if (merged > 0)
    notes.push_back(note_prefix + std::to_string(merged) + " duplicate edge(s) merged");
  if (symmetric.added > 0) {
    notes.push_back(note_prefix + std::to_string(symmetric.added) + " reverse edge(s) added");
  }
  if (simple.removed > 0) {
    notes.push_back(note_prefix + std::to_string(simple.removed) + " self-loop(s) removed");
  }
  return std::move(simple.graph);
}

}  // namespace maskgat::detail
