#include <doctest/doctest.h>

#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/graph/build.hpp"

using maskgat::EdgeList;
using maskgat::NodeId;

namespace {

std::vector<NodeId> sources_of(const maskgat::Graph& graph, NodeId node) {
  const auto span = graph.in_neighbors(node);
  return {span.begin(), span.end()};
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("build_graph groups by destination - sorts and merges duplicates keeping the first weight") {
    const EdgeList edges{{2, 0, 1, 2, 0}, {0, 0, 0, 0, 1}, {5.0F, 1.0F, 3.0F, 7.0F, 2.0F}};
    const auto built = maskgat::build_graph(3, edges);
    CHECK(built.removed == 1);
    CHECK(built.graph.num_edges() == 4);
    CHECK(sources_of(built.graph, 0) == std::vector<NodeId>{0, 1, 2});
    CHECK(sources_of(built.graph, 1) == std::vector<NodeId>{0});
    const auto weights = built.graph.weights();
    CHECK(std::vector<float>(weights.begin(), weights.end()) ==
          std::vector<float>{1.0F, 3.0F, 5.0F, 2.0F});
  }

  TEST_CASE("build_graph rejects bad input") {
    CHECK_THROWS_WITH_AS(maskgat::build_graph(2, EdgeList{{0}, {2}, {}}),
                         "build_graph: edge 0 (0 -> 2) has a node id outside [0, 2)",
                         maskgat::IndexError);
    CHECK_THROWS_AS(maskgat::build_graph(2, EdgeList{{0, 1}, {1}, {}}), maskgat::InvalidArgument);
    CHECK_THROWS_AS(maskgat::build_graph(-5, EdgeList{}), maskgat::InvalidArgument);
  }

  TEST_CASE("self-loop editing is idempotent and reports what it changed") {
    const auto graph = maskgat::build_graph(3, EdgeList{{1, 1, 0}, {0, 1, 2}, {}}).graph;
    const auto with_loops = maskgat::add_self_loops(graph);
    CHECK(with_loops.added == 2);
    CHECK(with_loops.graph.num_self_loops() == 3);
    CHECK(sources_of(with_loops.graph, 0) == std::vector<NodeId>{0, 1});
    CHECK(sources_of(with_loops.graph, 2) == std::vector<NodeId>{0, 2});
    const auto again = maskgat::add_self_loops(with_loops.graph);
    CHECK(again.added == 0);
    CHECK(again.graph.num_edges() == with_loops.graph.num_edges());
    const auto without = maskgat::remove_self_loops(again.graph);
    CHECK(without.removed == 3);
    CHECK(without.graph.num_self_loops() == 0);
    CHECK(maskgat::remove_self_loops(without.graph).removed == 0);
  }

  TEST_CASE("add_self_loops gives new loops the fill weight") {
    const auto graph = maskgat::build_graph(2, EdgeList{{0}, {1}, {4.0F}}).graph;
    const auto looped = maskgat::add_self_loops(graph, 0.5F).graph;
    const auto weights = looped.weights();
    // Row 0: loop 0; row 1: 0 -> 1 (4.0), loop 1.
    CHECK(std::vector<float>(weights.begin(), weights.end()) == std::vector<float>{0.5F, 4.0F, 0.5F});
  }

  TEST_CASE("symmetrize adds only missing reverses and copies weights") {
    const auto graph =
        maskgat::build_graph(3, EdgeList{{0, 1, 2, 2}, {1, 0, 0, 2}, {1.0F, 2.0F, 3.0F, 4.0F}}).graph;
    const auto both = maskgat::symmetrize(graph);
    CHECK(both.added == 1);
    CHECK(sources_of(both.graph, 0) == std::vector<NodeId>{1, 2});
    CHECK(sources_of(both.graph, 2) == std::vector<NodeId>{0, 2});
    // The new edge 0 -> 2 copies the weight of 2 -> 0.
    const auto edges = maskgat::to_edge_list(both.graph);
    bool found = false;
    for (std::size_t k = 0; k < edges.sources.size(); ++k) {
      if (edges.sources[k] == 0 && edges.targets[k] == 2) {
        CHECK(edges.weights[k] == 3.0F);
        found = true;
      }
    }
    CHECK(found);
    CHECK(maskgat::symmetrize(both.graph).added == 0);
  }

  TEST_CASE("to_edge_list round-trips through build_graph") {
    const EdgeList edges{{3, 1, 0, 2, 3}, {0, 2, 3, 1, 1}, {}};
    const auto graph = maskgat::build_graph(4, edges).graph;
    const auto again = maskgat::build_graph(4, maskgat::to_edge_list(graph));
    CHECK(again.removed == 0);
    const auto a = graph.in_sources();
    const auto b = again.graph.in_sources();
    CHECK(std::vector<NodeId>(a.begin(), a.end()) == std::vector<NodeId>(b.begin(), b.end()));
  }
}
