#include <doctest/doctest.h>

#include <boost/graph/breadth_first_search.hpp>
#include <boost/range/iterator_range.hpp>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/graph/bgl.hpp"
#include "maskgat/graph/build.hpp"

TEST_SUITE("unit") {
  TEST_CASE("to_bgl and from_bgl round-trip edges - weights and edge ids") {
    const auto graph = maskgat::build_graph(
        4, maskgat::EdgeList{{0, 1, 2, 3}, {1, 2, 1, 3}, {1.0F, 2.0F, 3.0F, 4.0F}}).graph;
    const maskgat::BglGraph bgl = maskgat::to_bgl(graph);
    CHECK(boost::num_vertices(bgl) == 4);
    CHECK(boost::num_edges(bgl) == 4);
    CHECK(boost::in_degree(1U, bgl) == 2);
    for (const auto edge : boost::make_iterator_range(boost::edges(bgl))) {
      const auto id = static_cast<std::size_t>(bgl[edge].id);
      CHECK(graph.in_sources()[id] == static_cast<maskgat::NodeId>(boost::source(edge, bgl)));
      CHECK(graph.weights()[id] == bgl[edge].weight);
    }
    const maskgat::Graph back = maskgat::from_bgl(bgl, true);
    CHECK(std::vector<maskgat::NodeId>(back.in_sources().begin(), back.in_sources().end()) ==
          std::vector<maskgat::NodeId>(graph.in_sources().begin(), graph.in_sources().end()));
    CHECK(std::vector<float>(back.weights().begin(), back.weights().end()) ==
          std::vector<float>(graph.weights().begin(), graph.weights().end()));
  }

  TEST_CASE("BGL algorithms run on a converted graph") {
    const auto graph = maskgat::build_graph(4, maskgat::EdgeList{{0, 1, 2}, {1, 2, 3}, {}}).graph;
    const auto bgl = maskgat::to_bgl(graph);
    std::vector<std::uint32_t> distance(4, 0);
    boost::breadth_first_search(
        bgl, 0,
        boost::visitor(boost::make_bfs_visitor(boost::record_distances(
            boost::make_iterator_property_map(distance.begin(), boost::get(boost::vertex_index, bgl)),
            boost::on_tree_edge()))));
    CHECK(distance == std::vector<std::uint32_t>{0, 1, 2, 3});
  }

  TEST_CASE("weak_components ignores direction and numbers by smallest node") {
    // 0 -> 1 <- 2, 3 alone, 5 -> 4.
    const auto graph = maskgat::build_graph(6, maskgat::EdgeList{{0, 2, 5}, {1, 1, 4}, {}}).graph;
    std::vector<std::int32_t> component;
    CHECK(maskgat::weak_components(graph, &component) == 3);
    CHECK(component == std::vector<std::int32_t>{0, 0, 0, 1, 2, 2});
  }

  TEST_CASE("from_bgl rejects parallel edges") {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs{{0, 1}, {0, 1}};
    std::vector<maskgat::BglEdge> bundles(2);
    const maskgat::BglGraph bgl(boost::edges_are_unsorted_multi_pass, pairs.begin(), pairs.end(),
                                bundles.begin(), 2U);
    CHECK_THROWS_WITH_AS(maskgat::from_bgl(bgl, false),
                         "from_bgl: the BGL graph has 1 parallel edge(s); a MaskGAT graph has at "
                         "most one edge per pair",
                         maskgat::InvalidArgument);
  }
}
