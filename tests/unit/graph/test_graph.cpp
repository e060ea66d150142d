#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/graph/graph.hpp"

using maskgat::EdgeId;
using maskgat::Graph;
using maskgat::NodeId;

TEST_SUITE("unit") {
  TEST_CASE("Graph builds the transpose and the edge permutation") {
    // Edges (src -> dst): 1->0, 2->0, 0->1, 2->2.
    const Graph graph(3, {0, 2, 3, 4}, {1, 2, 0, 2});
    CHECK(graph.num_nodes() == 3);
    CHECK(graph.num_edges() == 4);
    CHECK(std::vector<EdgeId>(graph.out_offsets().begin(), graph.out_offsets().end()) ==
          std::vector<EdgeId>{0, 1, 2, 4});
    CHECK(std::vector<NodeId>(graph.out_targets().begin(), graph.out_targets().end()) ==
          std::vector<NodeId>{1, 0, 0, 2});
    CHECK(std::vector<EdgeId>(graph.out_edge_ids().begin(), graph.out_edge_ids().end()) ==
          std::vector<EdgeId>{2, 0, 1, 3});
    CHECK(graph.num_self_loops() == 1);
    CHECK(graph.edge_destinations() == std::vector<NodeId>{0, 0, 1, 2});
    CHECK(graph.in_degree(0) == 2);
    CHECK(graph.out_degree(2) == 2);
    CHECK(graph.has_edge(1, 0));
    CHECK(graph.has_edge(0, 1));
    CHECK(graph.has_edge(2, 2));
    CHECK_FALSE(graph.has_edge(1, 2));
    CHECK_FALSE(graph.has_edge(0, 0));
    // Every source-major slot points at a destination-major edge with the same endpoints.
    const auto destinations = graph.edge_destinations();
    for (NodeId src = 0; src < graph.num_nodes(); ++src) {
      for (EdgeId slot = graph.out_offsets()[static_cast<std::size_t>(src)];
           slot < graph.out_offsets()[static_cast<std::size_t>(src) + 1]; ++slot) {
        const auto edge =
            static_cast<std::size_t>(graph.out_edge_ids()[static_cast<std::size_t>(slot)]);
        CHECK(graph.in_sources()[edge] == src);
        CHECK(destinations[edge] == graph.out_targets()[static_cast<std::size_t>(slot)]);
      }
    }
  }

  TEST_CASE("Graph rejects broken CSR invariants with precise messages") {
    CHECK_THROWS_WITH_AS(Graph(2, {0, 1}, {0}),
                         "graph: in_offsets has 2 entries, expected 3 (num_nodes + 1)",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(Graph(2, {0, 1, 1}, {5}),
                         "graph: edge 0 has source 5, expected a node id in [0, 2)",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(Graph(2, {0, 2, 2}, {1, 1}),
                         "graph: sources of node 0 are not strictly increasing at edge 1 "
                         "(duplicate or unsorted)",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(Graph(2, {0, 1, 2}, {0}),
                         "graph: in_offsets must start at 0 and end at 1 (the number of edges), "
                         "got 0 and 2",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(Graph(2, {0, 2, 1}, {0}),
                         "graph: in_offsets decreases at node 1: 2 then 1",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(Graph(1, {0, 1}, {0}, {1.0F, 2.0F}),
                         "graph: weights has 2 entries, expected 1 (one per edge)",
                         maskgat::InvalidArgument);
    CHECK_THROWS_AS(Graph(-1, {0}, {}), maskgat::InvalidArgument);
  }

  TEST_CASE("Graph over arrays held elsewhere checks every index it will read") {
    // 0 -> 1, 1 -> 0, 1 -> 1: rows by destination and their transpose.
    const std::vector<EdgeId> in_offsets{0, 1, 3};
    const std::vector<NodeId> in_sources{1, 0, 1};
    const std::vector<EdgeId> out_offsets{0, 1, 3};
    const std::vector<NodeId> out_targets{1, 0, 1};
    const std::vector<EdgeId> out_edge_ids{1, 0, 2};
    const auto owner = std::make_shared<int>(0);
    const auto graph_of = [&](Graph::Arrays arrays) { return Graph(2, arrays, owner); };
    const Graph::Arrays good{in_offsets, in_sources, {}, out_offsets, out_targets, out_edge_ids};
    const Graph graph = graph_of(good);
    CHECK(graph.num_edges() == 3);
    CHECK(graph.num_self_loops() == 1);
    CHECK(graph.in_neighbors(1).size() == 2);
    const Graph copy = graph;  // shares the arrays
    CHECK(copy.in_sources().data() == in_sources.data());

    Graph::Arrays arrays = good;
    const std::vector<NodeId> far_targets{1, 0, 2};
    arrays.out_targets = far_targets;
    CHECK_THROWS_WITH_AS(graph_of(arrays),
                         "graph: edge 2 has target 2, expected a node id in [0, 2)",
                         maskgat::InvalidArgument);
    const std::vector<NodeId> unsorted_targets{1, 1, 0};
    arrays.out_targets = unsorted_targets;
    CHECK_THROWS_WITH_AS(graph_of(arrays),
                         "graph: targets of node 1 are not strictly increasing at edge 2 "
                         "(duplicate or unsorted)",
                         maskgat::InvalidArgument);
    arrays = good;
    const std::vector<EdgeId> far_edges{1, 3, 2};
    arrays.out_edge_ids = far_edges;
    CHECK_THROWS_WITH_AS(graph_of(arrays),
                         "graph: transpose slot 1 has edge id 3, expected one in [0, 3)",
                         maskgat::InvalidArgument);
    arrays = good;
    const std::vector<EdgeId> short_edges{1, 0};
    arrays.out_edge_ids = short_edges;
    CHECK_THROWS_WITH_AS(graph_of(arrays),
                         "graph: the transpose holds 3 targets and 2 edge ids, expected 3 (one "
                         "per edge)",
                         maskgat::InvalidArgument);
    arrays = good;
    const std::vector<EdgeId> decreasing{0, 3, 2};
    arrays.out_offsets = decreasing;
    CHECK_THROWS_WITH_AS(graph_of(arrays),
                         "graph: out_offsets must start at 0 and end at 3 (the number of edges), "
                         "got 0 and 2",
                         maskgat::InvalidArgument);
    const std::vector<float> nan_weights{1.0F, std::nanf(""), 1.0F};
    arrays = good;
    arrays.weights = nan_weights;
    CHECK_THROWS_WITH_AS(graph_of(arrays), "graph: edge weights must be finite",
                         maskgat::InvalidArgument);
  }

  TEST_CASE("Graph default is empty") {
    const Graph graph;
    CHECK(graph.num_nodes() == 0);
    CHECK(graph.num_edges() == 0);
    CHECK(graph.in_offsets().size() == 1);
  }
}
