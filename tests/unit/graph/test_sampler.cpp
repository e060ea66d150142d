#include <doctest/doctest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/graph/sampler.hpp"
#include "support/random_data.hpp"

using maskgat::Graph;
using maskgat::MiniBatch;
using maskgat::NeighborSampler;
using maskgat::NodeId;

namespace {

// The in-neighbours of `node` other than itself.
std::vector<NodeId> neighbours(const Graph& graph, NodeId node) {
  std::vector<NodeId> row;
  for (const NodeId source : graph.in_neighbors(node)) {
    if (source != node) row.push_back(source);
  }
  return row;
}

std::vector<NodeId> row_of(const Graph& mask, NodeId node) {
  const auto row = mask.in_neighbors(node);
  return {row.begin(), row.end()};
}

// Two batches are the same: nodes, outputs, destination counts and every mask's rows.
void check_same(const MiniBatch& a, const MiniBatch& b) {
  REQUIRE(a.nodes == b.nodes);
  CHECK(a.outputs == b.outputs);
  CHECK(a.destinations == b.destinations);
  REQUIRE(a.masks.size() == b.masks.size());
  for (std::size_t l = 0; l < a.masks.size(); ++l) {
    const auto sa = a.masks[l].in_sources();
    const auto sb = b.masks[l].in_sources();
    CHECK(std::vector<NodeId>(sa.begin(), sa.end()) == std::vector<NodeId>(sb.begin(), sb.end()));
    const auto oa = a.masks[l].in_offsets();
    const auto ob = b.masks[l].in_offsets();
    CHECK(std::vector<maskgat::EdgeId>(oa.begin(), oa.end()) ==
          std::vector<maskgat::EdgeId>(ob.begin(), ob.end()));
  }
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("sampler: each node draws min(F, in-degree) distinct in-neighbours of its row") {
    // Self-loops in the graph, which are never drawn, and degrees from 0 to 40.
    const Graph graph = maskgat::test::random_graph(300, 40, 11, /*self_loops=*/true);
    for (const std::int64_t fanout : {0, 1, 5, 25, -1}) {
      NeighborSampler sampler(graph, {fanout, 3}, 7);
      for (NodeId node = 0; node < graph.num_nodes(); ++node) {
        const std::vector<NodeId> row = neighbours(graph, node);
        for (const std::uint64_t epoch : {0U, 1U, 9U}) {
          CAPTURE(fanout);
          CAPTURE(node);
          const std::vector<NodeId> drawn = sampler.sample_row(node, 0, epoch);
          const auto expected =
              fanout < 0 ? row.size() : std::min<std::size_t>(row.size(), fanout);
          REQUIRE(drawn.size() == expected);
          CHECK(std::is_sorted(drawn.begin(), drawn.end()));
          CHECK(std::adjacent_find(drawn.begin(), drawn.end()) == drawn.end());
          for (const NodeId source : drawn) {
            CHECK(std::binary_search(row.begin(), row.end(), source));
          }
        }
      }
    }
  }

  TEST_CASE("sampler: draws are uniform over a row and differ by epoch and layer") {
    // A node with 40 in-neighbours, fanout 10: each is drawn with probability 1/4. Over 4000
    // epochs a count is Binomial(4000, 1/4), mean 1000, sd 27.4; 5 sd either side.
    const std::int64_t degree = 40;
    std::vector<maskgat::EdgeId> offsets{0, 0};
    std::vector<NodeId> sources;
    for (NodeId j = 1; j <= degree; ++j) sources.push_back(j);
    offsets[1] = degree;
    for (NodeId j = 1; j <= degree; ++j) offsets.push_back(degree);
    const Graph star(degree + 1, offsets, sources);
    const NeighborSampler sampler(star, {10, 10}, 3);
    std::vector<int> counts(degree + 1, 0);
    const int epochs = 4000;
    int same_layers = 0;
    for (int epoch = 0; epoch < epochs; ++epoch) {
      const auto drawn = sampler.sample_row(0, 0, static_cast<std::uint64_t>(epoch));
      for (const NodeId source : drawn) ++counts[static_cast<std::size_t>(source)];
      same_layers += drawn == sampler.sample_row(0, 1, static_cast<std::uint64_t>(epoch)) ? 1 : 0;
    }
    for (NodeId j = 1; j <= degree; ++j) {
      CAPTURE(j);
      CHECK(std::abs(counts[static_cast<std::size_t>(j)] - epochs / 4) <= 137);
    }
    // Two layers draw the same 10 of 40 with probability 1 / C(40, 10), about 1e-9.
    CHECK(same_layers == 0);
    CHECK(sampler.sample_row(0, 0, 1) != sampler.sample_row(0, 0, 2));
  }

  TEST_CASE("sampler: a batch's masks hold each destination's draw and its self-loop") {
    const Graph graph = maskgat::test::random_graph(500, 12, 5);
    NeighborSampler sampler(graph, {4, 6}, 21);
    const std::vector<NodeId> outputs{17, 3, 250, 3, 499};
    const MiniBatch batch = sampler.sample(outputs, 2);
    const auto n = static_cast<NodeId>(batch.nodes.size());
    REQUIRE(batch.masks.size() == 2);
    // The outputs come first, a repeated one shares its local node.
    REQUIRE(batch.outputs.size() == outputs.size());
    CHECK(batch.outputs == std::vector<NodeId>{0, 1, 2, 1, 3});
    for (std::size_t b = 0; b < outputs.size(); ++b) {
      CHECK(batch.nodes[static_cast<std::size_t>(batch.outputs[b])] == outputs[b]);
    }
    CHECK(std::set<NodeId>(batch.nodes.begin(), batch.nodes.end()).size() == batch.nodes.size());
    CHECK(batch.destinations == std::vector<std::int64_t>{batch.destinations[0], 4});
    CHECK(batch.destinations[0] >= 4);
    for (std::size_t l = 0; l < 2; ++l) {
      const Graph& mask = batch.masks[l];
      const auto read = static_cast<NodeId>(l == 0 ? n : batch.destinations[l - 1]);
      REQUIRE(mask.num_nodes() == read);
      CHECK(mask.num_self_loops() == read);
      for (NodeId r = 0; r < read; ++r) {
        CAPTURE(l);
        CAPTURE(r);
        std::vector<NodeId> expected{r};
        if (r < batch.destinations[l]) {
          for (const NodeId source :
               sampler.sample_row(batch.nodes[static_cast<std::size_t>(r)],
                                  static_cast<std::int64_t>(l), 2)) {
            const auto at = std::find(batch.nodes.begin(), batch.nodes.end(), source);
            REQUIRE(at != batch.nodes.end());
            expected.push_back(static_cast<NodeId>(at - batch.nodes.begin()));
          }
        }
        std::sort(expected.begin(), expected.end());
        CHECK(row_of(mask, r) == expected);
      }
    }
    // The input layer's destinations are every node the output layer reads.
    std::set<NodeId> read;
    for (NodeId r = 0; r < batch.destinations[1]; ++r) {
      for (const NodeId source : batch.masks[1].in_neighbors(r)) read.insert(source);
    }
    CHECK(static_cast<std::int64_t>(read.size()) == batch.destinations[0]);
    CHECK(*read.rbegin() == batch.destinations[0] - 1);
  }

  TEST_CASE("sampler: a batch is bitwise identical on 1 and 2 threads and after other batches") {
    const Graph graph = maskgat::test::random_graph(20000, 30, 9);
    std::vector<NodeId> outputs;
    for (NodeId node = 0; node < 20000; node += 7) outputs.push_back(node);
    const auto run = [&](int threads, bool other_first) {
      const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      NeighborSampler sampler(graph, {10, -1, 5}, 4);
      if (other_first) (void)sampler.sample(std::vector<NodeId>{1, 2, 3}, 5);
      return sampler.sample(outputs, 5);
    };
    const MiniBatch one = run(1, false);
    check_same(one, run(2, false));
    check_same(one, run(2, true));
  }

  TEST_CASE("sampler: bad fanouts and nodes are refused with what was expected") {
    const Graph graph = maskgat::test::random_graph(10, 3, 1);
    CHECK_THROWS_WITH_AS(NeighborSampler(graph, {}, 0),
                         "sampler: no fanouts, expected one per layer",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(NeighborSampler(graph, {5, -2}, 0),
                         "sampler: fanout -2 of layer 2, expected -1 (all) or a count >= 0",
                         maskgat::InvalidArgument);
    NeighborSampler sampler(graph, {2, 2}, 0);
    CHECK_THROWS_WITH_AS((void)sampler.sample(std::vector<NodeId>{3, 10}, 0),
                         "sampler.sample: node 10 is outside [0, 10)", maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS((void)sampler.sample_row(-1, 0, 0),
                         "sampler.sample_row: node -1 is outside [0, 10)",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS((void)sampler.sample_row(0, 2, 0),
                         "sampler.sample_row: layer 2 is outside [0, 2)", maskgat::InvalidArgument);
  }
}
