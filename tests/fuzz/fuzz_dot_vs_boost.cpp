// Differential fuzz target: the same bytes to MaskGAT's DOT reader and to Boost.Graph's
// read_graphviz. When both accept them, they must give the same graph: the same node names, the
// same edges and weights (Boost numbers nodes in byte order of their names, MaskGAT in order of
// appearance, so the names are compared as sets). Boost only sees inputs MaskGAT accepted, so
// their nesting is within MaskGAT's limit. Not compared: files with a subgraph as an edge's end
// or a subgraph name used twice, whose members Boost 1.74 counts differently from Graphviz (it
// leaves out the ends of the subgraph's own edges), which MaskGAT follows.

#include <algorithm>
#include <set>

#include "fuzz/boost_reference.hpp"
#include "io/detail/dot_lexer.hpp"
#include "maskgat/io/dot.hpp"

namespace {

using maskgat::detail::DotToken;

bool is_edge_operator(DotToken token) {
  return token == DotToken::kDirectedEdge || token == DotToken::kUndirectedEdge;
}

// Whether `text` joins a subgraph by an edge or names one subgraph twice (or refers to one).
bool subgraph_members_matter(const std::string& text) {
  try {
    maskgat::detail::DotLexer lexer(text, "reference", "dot");
    std::set<std::string> names;
    DotToken previous = DotToken::kEnd;
    for (DotToken token = lexer.next(); token != DotToken::kEnd; token = lexer.next()) {
      if ((is_edge_operator(previous) &&
           (token == DotToken::kOpenBrace || token == DotToken::kSubgraph)) ||
          (previous == DotToken::kCloseBrace && is_edge_operator(token))) {
        return true;
      }
      if (previous == DotToken::kSubgraph && token == DotToken::kId &&
          !names.insert(lexer.text()).second) {
        return true;
      }
      previous = token;
    }
  } catch (const maskgat::Error&) {
    return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(maskgat::fuzz::as_text(data, size));
  auto ours = maskgat::fuzz::maskgat_graph(text, "graph.dot", maskgat::read_dot);
  if (!ours || subgraph_members_matter(text)) return 0;
  std::sort(ours->nodes.begin(), ours->nodes.end());
  // Boost's graph type must match the file's kind: `[strict] digraph` or `[strict] graph`.
  maskgat::detail::DotLexer lexer(text, "reference", "dot");
  auto token = lexer.next();
  if (token == maskgat::detail::DotToken::kStrict) token = lexer.next();
  const bool directed = token == maskgat::detail::DotToken::kDigraph;
  using Directed = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS,
                                         maskgat::fuzz::DotVertex, maskgat::fuzz::DotEdge>;
  using Undirected = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS,
                                           maskgat::fuzz::DotVertex, maskgat::fuzz::DotEdge>;
  const auto boost = directed ? maskgat::fuzz::boost_dot<Directed>(text)
                              : maskgat::fuzz::boost_dot<Undirected>(text);
  if (!boost) return 0;
  maskgat::fuzz::require_same(*ours, *boost, "dot");
  return 0;
}
