#pragma once
// The steps the Boost.Graph-based readers (DOT, GraphML) share around Boost's parser: its
// exceptions reworded as ParseError, and the graph it read turned into a LoadedGraph.

#include <boost/graph/adjacency_list.hpp>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "detail/assemble.hpp"
#include "maskgat/io/edge_list.hpp"

namespace maskgat::detail {

// Throws ParseError `<reader>: <path>: Boost.Graph <function>: <what>`, without the trailing
// white space some Boost messages end with.
[[noreturn]] void throw_boost_error(const std::exception& error, std::string_view function,
                                    std::string_view reader, const std::string& path);

// Runs `read`, a call to the Boost.Graph reader `function`. Boost reports bad input with
// exceptions of its own, so any of them but bad_alloc becomes a ParseError.
template <typename Read>
void run_boost_reader(Read&& read, std::string_view function, std::string_view reader,
                      const std::string& path) {
  try {
    read();
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& error) {
    throw_boost_error(error, function, reader, path);
  }
}

// `edge 'source' -> 'target'` (`--` when undirected), to start a message about one edge.
std::string describe_edge(std::string_view source, std::string_view target, bool undirected);

// The LoadedGraph of a graph Boost has read. Vertex `v` has the token `token_of(v)`; tokens are
// mapped through `nodes` in vertex order. When `weighted`, each edge's weight is
// `weight_of(edge, describe)`, where `describe()` gives the edge's name for messages (built only
// when asked for, as most edges need none). An undirected graph gets both directions.
template <typename BglGraph, typename TokenOf, typename WeightOf>
LoadedGraph assemble_boost_graph(const BglGraph& graph, const TokenOf& token_of, bool weighted,
                                 const WeightOf& weight_of, NodeIndex& nodes,
                                 const EdgeListOptions& options, std::string_view reader,
                                 const std::string& path) {
  const std::size_t num_vertices = boost::num_vertices(graph);
  std::vector<NodeId> ids(num_vertices);
  for (std::size_t v = 0; v < num_vertices; ++v) {
    ids[v] = node_id_or_throw(nodes, token_of(v), reader, path, 0);
  }

  const auto num_edges = static_cast<std::int64_t>(boost::num_edges(graph));
  check_edge_limit(num_edges, options, reader, path, 0);
  constexpr bool kUndirected =
      std::is_same_v<typename boost::graph_traits<BglGraph>::directed_category,
                     boost::undirected_tag>;
  EdgeList edges;
  edges.sources.reserve(static_cast<std::size_t>(num_edges));
  edges.targets.reserve(static_cast<std::size_t>(num_edges));
  // Directed: by source, then in file order; undirected: in file order. Either way copies of
  // one edge stay in file order, so merging keeps the first weight.
  for (auto [edge, end] = boost::edges(graph); edge != end; ++edge) {
    const std::size_t source = boost::source(*edge, graph);
    const std::size_t target = boost::target(*edge, graph);
    edges.sources.push_back(ids[source]);
    edges.targets.push_back(ids[target]);
    if (!weighted) continue;
    const auto describe = [&] {
      return describe_edge(token_of(source), token_of(target), kUndirected);
    };
    edges.weights.push_back(weight_of(*edge, describe));
  }

  if constexpr (kUndirected) {
    EdgeListOptions both_ways = options;
    both_ways.undirected = true;
    return assemble_graph(edges, nodes, both_ways, reader, path);
  } else {
    return assemble_graph(edges, nodes, options, reader, path);
  }
}

}  // namespace maskgat::detail
