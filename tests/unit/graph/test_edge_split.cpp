// Link prediction's edge split: no held-out edge reaches the training graph (either direction),
// the parts cover every edge once, negatives are never edges, and everything follows the seed.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/graph/build.hpp"
#include "maskgat/graph/edge_split.hpp"
#include "support/random_data.hpp"

namespace {

using maskgat::Graph;
using maskgat::NodeId;
using maskgat::NodePairs;

bool has_edge(const Graph& graph, NodeId source, NodeId target) {
  const auto row = graph.in_neighbors(target);
  return std::find(row.begin(), row.end(), source) != row.end();
}

std::set<std::pair<NodeId, NodeId>> as_set(const NodePairs& pairs) {
  std::set<std::pair<NodeId, NodeId>> set;
  for (std::int64_t k = 0; k < pairs.size(); ++k) {
    set.emplace(pairs.sources[static_cast<std::size_t>(k)],
                pairs.targets[static_cast<std::size_t>(k)]);
  }
  return set;
}

// A random graph with every edge listed both ways.
Graph undirected_graph(NodeId nodes, std::uint64_t seed) {
  return maskgat::symmetrize(maskgat::test::random_graph(nodes, 4, seed)).graph;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("edge split: held-out edges leave the training graph both ways; parts cover all") {
    const Graph graph = undirected_graph(200, 3);
    const maskgat::EdgeSplit split = maskgat::split_edges(graph, {});
    const auto pairs = static_cast<std::int64_t>(graph.num_edges() / 2);
    CHECK(split.val.size() == std::llround(0.05 * static_cast<double>(pairs)));
    CHECK(split.test.size() == std::llround(0.10 * static_cast<double>(pairs)));
    CHECK(split.val.size() + split.test.size() + split.train_edges.size() == pairs);
    for (const NodePairs* held : {&split.val, &split.test}) {
      for (std::int64_t k = 0; k < held->size(); ++k) {
        const NodeId s = held->sources[static_cast<std::size_t>(k)];
        const NodeId t = held->targets[static_cast<std::size_t>(k)];
        CHECK(s < t);
        CHECK(has_edge(graph, s, t));
        CHECK_FALSE(has_edge(split.train, s, t));
        CHECK_FALSE(has_edge(split.train, t, s));
      }
    }
    CHECK(split.train.num_edges() == 2 * split.train_edges.size());
    // The parts are disjoint.
    const auto val = as_set(split.val);
    const auto test = as_set(split.test);
    for (const auto& pair : test) CHECK(val.count(pair) == 0);
    // Negatives: as many as the positives, distinct, never edges either way, never self-loops.
    for (const auto& [negatives, positives] : {std::pair{&split.val_negatives, &split.val},
                                               std::pair{&split.test_negatives, &split.test}}) {
      CHECK(negatives->size() == positives->size());
      CHECK(as_set(*negatives).size() == static_cast<std::size_t>(negatives->size()));
      for (std::int64_t k = 0; k < negatives->size(); ++k) {
        const NodeId s = negatives->sources[static_cast<std::size_t>(k)];
        const NodeId t = negatives->targets[static_cast<std::size_t>(k)];
        CHECK(s != t);
        CHECK_FALSE(has_edge(graph, s, t));
        CHECK_FALSE(has_edge(graph, t, s));
      }
    }
  }

  TEST_CASE("edge split: the same seed gives the same split, another seed another") {
    const Graph graph = undirected_graph(150, 4);
    maskgat::EdgeSplitOptions options;
    options.seed = 7;
    const maskgat::EdgeSplit a = maskgat::split_edges(graph, options);
    const maskgat::EdgeSplit b = maskgat::split_edges(graph, options);
    CHECK(a.val.sources == b.val.sources);
    CHECK(a.test.targets == b.test.targets);
    CHECK(a.val_negatives.sources == b.val_negatives.sources);
    options.seed = 8;
    CHECK(maskgat::split_edges(graph, options).val.sources != a.val.sources);
    // Training negatives per epoch: a fresh set per stream, the same set for the same stream.
    const NodePairs one = maskgat::sample_negatives(graph, 50, true, 7, 10);
    CHECK(maskgat::sample_negatives(graph, 50, true, 7, 10).targets == one.targets);
    CHECK(maskgat::sample_negatives(graph, 50, true, 7, 11).targets != one.targets);
  }

  TEST_CASE("edge split: a directed graph keeps direction") {
    const Graph graph = maskgat::test::random_graph(120, 3, 5);
    maskgat::EdgeSplitOptions options;
    options.undirected = false;
    const maskgat::EdgeSplit split = maskgat::split_edges(graph, options);
    CHECK(split.val.size() + split.test.size() + split.train_edges.size() ==
          graph.num_edges() - graph.num_self_loops());
    for (std::int64_t k = 0; k < split.test.size(); ++k) {
      const NodeId s = split.test.sources[static_cast<std::size_t>(k)];
      const NodeId t = split.test.targets[static_cast<std::size_t>(k)];
      CHECK(has_edge(graph, s, t));
      CHECK_FALSE(has_edge(split.train, s, t));
      // Its reverse stays when the graph has it.
      CHECK(has_edge(split.train, t, s) == has_edge(graph, t, s));
    }
  }

  TEST_CASE("edge split: bad shares and too few non-edges are refused") {
    const Graph graph = undirected_graph(30, 1);
    maskgat::EdgeSplitOptions options;
    options.val_fraction = 0.6;
    options.test_fraction = 0.4;
    CHECK_THROWS_WITH_AS(static_cast<void>(maskgat::split_edges(graph, options)),
                         "split_edges: the validation and test shares sum to 1.000000, expected "
                         "below 1 (some edges must train)",
                         maskgat::InvalidArgument);
    options.val_fraction = -0.1;
    CHECK_THROWS_WITH_AS(static_cast<void>(maskgat::split_edges(graph, options)),
                         "split_edges: val_fraction is -0.100000, expected a share in [0, 1)",
                         maskgat::InvalidArgument);
    // A complete graph on 4 nodes has no pair left for a negative.
    maskgat::EdgeList all;
    for (NodeId s = 0; s < 4; ++s) {
      for (NodeId t = 0; t < 4; ++t) {
        if (s == t) continue;
        all.sources.push_back(s);
        all.targets.push_back(t);
      }
    }
    const Graph complete = maskgat::build_graph(4, all).graph;
    CHECK_THROWS_WITH_AS(static_cast<void>(maskgat::sample_negatives(complete, 1, true, 0, 0)),
                         "sample_negatives: 1 pairs asked for, but 4 nodes have only 0 pairs "
                         "that are not edges",
                         maskgat::InvalidArgument);
  }
}
