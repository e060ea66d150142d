#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <utility>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/graph/build.hpp"
#include "maskgat/graph/masks.hpp"

using maskgat::Graph;
using maskgat::NodeId;

namespace {

// 0 -> 1 -> 2 -> 3 and 4 -> 3, self-loops everywhere but on 4; 5 apart, with its loop.
Graph chain_graph() {
  return maskgat::build_graph(
             6, maskgat::EdgeList{{0, 1, 2, 4, 0, 1, 2, 3, 5}, {1, 2, 3, 3, 0, 1, 2, 3, 5}, {}})
      .graph;
}

// A mask's CSR arrays (row offsets, sources), for comparing masks whole.
std::pair<std::vector<maskgat::EdgeId>, std::vector<NodeId>> csr_of(const Graph& mask) {
  return {std::vector<maskgat::EdgeId>(mask.in_offsets().begin(), mask.in_offsets().end()),
          std::vector<NodeId>(mask.in_sources().begin(), mask.in_sources().end())};
}

// The mask's rows as sets of sources, compared with `allowed(i, j)` for every pair.
template <typename Allowed>
void check_mask(const Graph& mask, std::int64_t n, Allowed&& allowed) {
  REQUIRE(mask.num_nodes() == n);
  std::int64_t expected_edges = 0;
  for (NodeId i = 0; i < n; ++i) {
    std::vector<NodeId> expected;
    for (NodeId j = 0; j < n; ++j) {
      if (allowed(i, j)) expected.push_back(j);
    }
    expected_edges += static_cast<std::int64_t>(expected.size());
    const auto row = mask.in_neighbors(i);
    CHECK(std::vector<NodeId>(row.begin(), row.end()) == expected);
  }
  CHECK(mask.num_edges() == expected_edges);
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("masks::window is a band of half-width w clipped to the sequence") {
    for (const std::int64_t n : {0, 1, 2, 7, 20}) {
      for (const std::int64_t w : {0, 1, 3, 25}) {
        CAPTURE(n);
        CAPTURE(w);
        check_mask(maskgat::masks::window(n, w), n,
                   [&](NodeId i, NodeId j) { return std::abs(i - j) <= w; });
      }
    }
  }

  TEST_CASE("masks::grid is a Chebyshev neighbourhood of row-major pixels") {
    for (const auto& [height, width, radius] : std::vector<std::array<std::int64_t, 3>>{
             {1, 1, 0}, {3, 4, 1}, {5, 2, 2}, {4, 6, 0}, {2, 3, 9}}) {
      CAPTURE(height);
      CAPTURE(width);
      CAPTURE(radius);
      check_mask(maskgat::masks::grid(height, width, radius), height * width,
                 [&](NodeId i, NodeId j) {
                   const std::int64_t dr = std::abs(i / width - j / width);
                   const std::int64_t dc = std::abs(i % width - j % width);
                   return dr <= radius && dc <= radius;
                 });
    }
    // An interior pixel of a radius-1 grid sees its 3 x 3 block, a corner its 2 x 2 block.
    const Graph mask = maskgat::masks::grid(5, 5, 1);
    CHECK(mask.in_degree(12) == 9);
    CHECK(mask.in_degree(0) == 4);
  }

  TEST_CASE("masks::full lets every position attend to every position") {
    for (const std::int64_t n : {0, 1, 6}) {
      check_mask(maskgat::masks::full(n), n, [](NodeId, NodeId) { return true; });
    }
  }

  TEST_CASE("masks::from_graph adds missing self-loops once and drops weights") {
    const maskgat::EdgeList edges{{1, 2, 0, 2}, {0, 0, 1, 2}, {2.0F, 3.0F, 4.0F, 5.0F}};
    const Graph graph = maskgat::build_graph(4, edges).graph;
    REQUIRE(graph.num_self_loops() == 1);
    const Graph looped = maskgat::masks::from_graph(graph);
    check_mask(looped, 4, [&](NodeId i, NodeId j) {
      return i == j || (j == 1 && i == 0) || (j == 2 && i == 0) || (j == 0 && i == 1);
    });
    CHECK(looped.num_self_loops() == 4);
    CHECK_FALSE(looped.has_weights());
    CHECK(maskgat::masks::from_graph(looped).num_edges() == looped.num_edges());
    const Graph plain = maskgat::masks::from_graph(graph, false);
    CHECK(plain.num_edges() == graph.num_edges());
    CHECK(plain.num_self_loops() == 1);
  }

  TEST_CASE("masks reject negative and oversized arguments") {
    CHECK_THROWS_WITH_AS(maskgat::masks::window(-1, 2),
                         "masks::window: -1 positions, expected a count in [0, 2147483647]",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(maskgat::masks::window(5, -2), "masks::window: half_width -2 is negative",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(maskgat::masks::grid(3, -1, 1),
                         "masks::grid: height 3, width -1 and radius 1 must not be negative",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(maskgat::masks::grid(100000, 100000, 0),
                         "masks::grid: 100000 x 100000 pixels exceed 2147483647 nodes",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(maskgat::masks::full(-3), "masks::full: length -3 is negative",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(
        maskgat::masks::full(std::int64_t{1} << 32),
        "masks::full: 4294967296 rows of up to 4294967296 entries exceed 2^62 entries",
        maskgat::InvalidArgument);
  }

  TEST_CASE("masks::receptive_field of a grid is the (2 L r + 1)^2 window clipped at the border") {
    for (const auto& [height, width, radius] :
         {std::array<std::int64_t, 3>{7, 9, 1}, {6, 6, 2}, {1, 5, 1}, {8, 3, 0}}) {
      const Graph grid = maskgat::masks::grid(height, width, radius);
      for (std::int64_t layers = 0; layers <= 4; ++layers) {
        for (std::int64_t pixel = 0; pixel < height * width; ++pixel) {
          const std::int64_t r = pixel / width;
          const std::int64_t c = pixel % width;
          const std::int64_t reach = layers * radius;
          const std::int64_t rows =
              std::min(height - 1, r + reach) - std::max<std::int64_t>(0, r - reach) + 1;
          const std::int64_t cols =
              std::min(width - 1, c + reach) - std::max<std::int64_t>(0, c - reach) + 1;
          const auto field =
              maskgat::masks::receptive_field(grid, static_cast<maskgat::NodeId>(pixel), layers);
          INFO(height, "x", width, " r=", radius, " L=", layers, " pixel ", pixel);
          REQUIRE(static_cast<std::int64_t>(field.size()) == rows * cols);
          for (const maskgat::NodeId node : field) {
            CHECK(std::abs(node / width - r) <= reach);
            CHECK(std::abs(node % width - c) <= reach);
          }
        }
      }
    }
  }

  TEST_CASE("masks::receptive_field follows in-edges only, and checks its arguments") {
    // 0 -> 1 -> 2 -> 3: node 3 hears 2 after one layer, 0 after three; node 0 only itself.
    const Graph chain = maskgat::build_graph(4, maskgat::EdgeList{{0, 1, 2}, {1, 2, 3}, {}}).graph;
    CHECK(maskgat::masks::receptive_field(chain, 3, 1) == std::vector<maskgat::NodeId>{2, 3});
    CHECK(maskgat::masks::receptive_field(chain, 3, 3) == std::vector<maskgat::NodeId>{0, 1, 2, 3});
    CHECK(maskgat::masks::receptive_field(chain, 0, 5) == std::vector<maskgat::NodeId>{0});
    CHECK_THROWS_WITH_AS(maskgat::masks::receptive_field(chain, 4, 1),
                         "masks::receptive_field: node 4 is outside [0, 4)",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(maskgat::masks::receptive_field(chain, 0, -1),
                         "masks::receptive_field: layers -1 is negative", maskgat::InvalidArgument);
  }

  TEST_CASE("masks::receptive_subgraph keeps the rows each layer needs whole, the others' loops") {
    const Graph chain = chain_graph();  // 0 -> 1 -> 2 -> 3 and 4 -> 3, 5 apart
    const std::vector<maskgat::NodeId> outputs{3, 3};
    const auto two = maskgat::masks::receptive_subgraph(chain, outputs, 2);
    // Within 2 hops of 3: 1, 2, 3, 4 (renumbered 0-3); within 1 hop: 2, 3, 4.
    CHECK(two.nodes == std::vector<maskgat::NodeId>{1, 2, 3, 4});
    REQUIRE(two.masks.size() == 2);
    CHECK(two.masks[0].num_nodes() == 4);
    // Layer 0 is needed at 2, 3, 4: rows of 1 (its loop only), 2 (1, 2), 3 (2, 3, 4), 4 (none).
    CHECK(csr_of(two.masks[0]) == std::make_pair(std::vector<maskgat::EdgeId>{0, 1, 3, 6, 6},
                                                 std::vector<maskgat::NodeId>{0, 0, 1, 1, 2, 3}));
    // Layer 1 only at 3: the others keep their loops.
    CHECK(csr_of(two.masks[1]) == std::make_pair(std::vector<maskgat::EdgeId>{0, 1, 2, 5, 5},
                                                 std::vector<maskgat::NodeId>{0, 1, 1, 2, 3}));
    const auto zero = maskgat::masks::receptive_subgraph(chain, outputs, 0);
    CHECK(zero.nodes == std::vector<maskgat::NodeId>{3});
    CHECK(zero.masks.empty());
    const auto far = maskgat::masks::receptive_subgraph(chain, outputs, 5);
    CHECK(far.nodes == std::vector<maskgat::NodeId>{0, 1, 2, 3, 4});
    REQUIRE(far.masks.size() == 5);
    CHECK(far.masks[0].num_edges() == 8);  // every edge of those nodes
    CHECK(far.masks[4].num_edges() == 6);  // 3's three in-edges, the loops of 0, 1, 2
    const std::vector<maskgat::NodeId> outside{6};
    CHECK_THROWS_WITH_AS(maskgat::masks::receptive_subgraph(chain, outside, 1),
                         "masks::receptive_subgraph: node 6 is outside [0, 6)",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(maskgat::masks::receptive_subgraph(chain, outputs, -1),
                         "masks::receptive_subgraph: layers -1 is negative",
                         maskgat::InvalidArgument);
  }

  TEST_CASE("masks::receptive_rows marks the rows each layer needs on the whole graph") {
    const Graph chain = chain_graph();  // 0 -> 1 -> 2 -> 3 and 4 -> 3, 5 apart
    const std::vector<maskgat::NodeId> outputs{3, 3};
    const auto two = maskgat::masks::receptive_rows(chain, outputs, 2);
    REQUIRE(two.size() == 2);
    // Layer 0 within 1 hop of 3 (2, 3, 4), layer 1 at 3 alone: the rows receptive_subgraph keeps
    // whole.
    CHECK(two[0] == std::vector<std::uint8_t>{0, 0, 1, 1, 1, 0});
    CHECK(two[1] == std::vector<std::uint8_t>{0, 0, 0, 1, 0, 0});
    const auto three = maskgat::masks::receptive_rows(chain, outputs, 3);
    REQUIRE(three.size() == 3);
    CHECK(three[0] == std::vector<std::uint8_t>{0, 1, 1, 1, 1, 0});
    CHECK(three[2] == two[1]);
    CHECK(maskgat::masks::receptive_rows(chain, outputs, 0).empty());
    const std::vector<maskgat::NodeId> outside{-1};
    CHECK_THROWS_WITH_AS(maskgat::masks::receptive_rows(chain, outside, 1),
                         "masks::receptive_rows: node -1 is outside [0, 6)",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(maskgat::masks::receptive_rows(chain, outputs, -2),
                         "masks::receptive_rows: layers -2 is negative", maskgat::InvalidArgument);
  }

  TEST_CASE("masks::rows_subgraph keeps the marked rows whole and their sources' loops") {
    const Graph chain = chain_graph();  // 0 -> 1 -> 2 -> 3 and 4 -> 3, 5 apart
    // The subgraph of receptive_rows is receptive_subgraph's.
    const std::vector<maskgat::NodeId> outputs{3};
    for (const std::int64_t layers : {1, 2, 3}) {
      CAPTURE(layers);
      const auto marked = maskgat::masks::receptive_rows(chain, outputs, layers);
      const auto of_rows = maskgat::masks::rows_subgraph(chain, marked);
      const auto expected = maskgat::masks::receptive_subgraph(chain, outputs, layers);
      CHECK(of_rows.nodes == expected.nodes);
      REQUIRE(of_rows.masks.size() == expected.masks.size());
      for (std::size_t l = 0; l < of_rows.masks.size(); ++l) {
        CHECK(csr_of(of_rows.masks[l]) == csr_of(expected.masks[l]));
      }
    }
    // Any marks: layer 0 at 1 and 5, layer 1 at 4 (no in-edges, no loop): nodes 0, 1, 4, 5.
    const std::vector<std::vector<std::uint8_t>> marks{{0, 1, 0, 0, 0, 1}, {0, 0, 0, 0, 1, 0}};
    const auto any = maskgat::masks::rows_subgraph(chain, marks);
    CHECK(any.nodes == std::vector<maskgat::NodeId>{0, 1, 4, 5});
    REQUIRE(any.masks.size() == 2);
    CHECK(csr_of(any.masks[0]) == std::make_pair(std::vector<maskgat::EdgeId>{0, 1, 3, 3, 4},
                                                 std::vector<maskgat::NodeId>{0, 0, 1, 3}));
    CHECK(csr_of(any.masks[1]) == std::make_pair(std::vector<maskgat::EdgeId>{0, 1, 2, 2, 3},
                                                 std::vector<maskgat::NodeId>{0, 1, 3}));
    const std::vector<std::vector<std::uint8_t>> short_marks{{1, 0}};
    CHECK_THROWS_WITH_AS(maskgat::masks::rows_subgraph(chain, short_marks),
                         "masks::rows_subgraph: layer 0 gives 2 bytes, expected one per node (6)",
                         maskgat::InvalidArgument);
  }

  TEST_CASE("masks: edge features follow the mask's entries, added loops take the mean") {
    // Edges 1 -> 0, 2 -> 0 and 0 -> 2; node 1 has no in-edge, node 2 a loop of its own.
    const Graph graph =
        maskgat::build_graph(3, maskgat::EdgeList{{1, 2, 0, 2}, {0, 0, 2, 2}, {}}).graph;
    // The graph's edges in its order: 1 -> 0, 2 -> 0, 0 -> 2, 2 -> 2.
    maskgat::RowMatrix<double> features(4, 2);
    features << 1, 10, 3, 30, 5, 50, 7, 70;
    const Graph mask = maskgat::masks::from_graph(graph);
    const auto on_mask = maskgat::masks::edge_features(graph, features, mask);
    // Mask rows: 0 <- {0, 1, 2}, 1 <- {1}, 2 <- {0, 2}.
    maskgat::RowMatrix<double> expected(6, 2);
    expected << 2, 20, 1, 10, 3, 30, 0, 0, 5, 50, 7, 70;
    CHECK(on_mask == expected);
    // Without added loops the features are the graph's own.
    CHECK(maskgat::masks::edge_features(graph, features,
                                        maskgat::masks::from_graph(graph, false)) == features);
    // An entry that is no edge of the graph has no features.
    CHECK_THROWS_WITH_AS(maskgat::masks::edge_features(graph, features, maskgat::masks::full(3)),
                         "masks::edge_features: the mask's entry 0 -> 1 is not an edge of the "
                         "graph, so it has no features",
                         maskgat::InvalidArgument);
    CHECK_THROWS_AS(maskgat::masks::edge_features(graph, features.topRows(3).eval(), mask),
                    maskgat::InvalidArgument);
  }

  TEST_CASE("edge_origins: the first listed edge, or the edge a reverse was added for") {
    const maskgat::EdgeList listed{{0, 1, 0, 2}, {1, 2, 1, 2}, {}};  // 0->1 twice, a loop 2->2
    const Graph both = maskgat::symmetrize(maskgat::build_graph(3, listed).graph).graph;
    const auto origins = maskgat::edge_origins(both, listed);
    // Destination-major: 1 -> 0 (reverse of 0), 0 -> 1 (0), 2 -> 1 (reverse of 1), 1 -> 2 (1),
    // 2 -> 2 (3).
    CHECK(origins == std::vector<maskgat::EdgeId>{0, 0, 1, 1, 3});
    const Graph looped = maskgat::add_self_loops(both).graph;
    CHECK(maskgat::edge_origins(looped, listed)[0] == -1);  // the added loop 0 -> 0
  }
}
