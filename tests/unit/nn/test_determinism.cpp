#include <doctest/doctest.h>
#include <tbb/global_control.h>

#include <vector>

#include "maskgat/graph/masks.hpp"
#include "support/layer_harness.hpp"
#include "support/random_data.hpp"

using maskgat::Graph;
using maskgat::RowMatrix;
namespace nn = maskgat::nn;
namespace test = maskgat::test;

namespace {

constexpr std::int64_t kNodes = 10000;
constexpr std::int64_t kIn = 16;

// Everything a forward and backward pass produce.
struct Results {
  RowMatrix<float> out, alpha, grad_x;
  std::vector<float> grads;
  bool operator==(const Results& other) const {
    return out == other.out && alpha == other.alpha && grad_x == other.grad_x &&
           grads == other.grads;
  }
};

// One forward and backward; with `edge_features` (a row per edge of `graph`, or empty) when not
// empty.
template <typename Layer>
Results run(const Graph& graph, const RowMatrix<float>& x, const RowMatrix<float>& edge_features,
            std::size_t threads, std::int64_t grain, bool aggregate_first) {
  const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
  auto options = test::layer_options<Layer>(kIn, 8, 4, true);
  options.dropout = 0.5;
  options.schedule.grain = grain;
  if constexpr (requires { options.edge_features; }) options.edge_features = edge_features.cols();
  if constexpr (requires { options.order; }) {
    if (aggregate_first) options.order = nn::ProjectionOrder::kAggregateFirst;
  }
  test::Harness<Layer> harness(options, 1);
  harness.edge_features = edge_features;
  Results results;
  results.out = harness.forward(graph, x, nn::Mode::kTrain, 2);
  results.alpha = harness.cache.alpha;
  harness.backward(graph, x, results.out, &results.grad_x);
  results.grads.assign(harness.store.grads().begin(), harness.store.grads().end());
  return results;
}

// With `aggregate_first`, a GAT layer takes that order (`nn::ProjectionOrder`).
template <typename Layer>
void check_thread_invariance(std::int64_t edge_width = 0, bool aggregate_first = false) {
  // Node 0 has ~3000 in-edges, node 1 ~1500, ...: ranges must be split by edges, not nodes.
  const Graph graph = test::skewed_graph(kNodes, 3000, 3);
  REQUIRE(graph.num_edges() > 50000);
  const RowMatrix<float> x = test::random_matrix<float>(kNodes, kIn, 4);
  const RowMatrix<float> edges = test::random_matrix<float>(graph.num_edges(), edge_width, 5);
  const Results baseline =
      run<Layer>(graph, x, edges, 1, maskgat::Schedule{}.grain, aggregate_first);
  REQUIRE(baseline.out.allFinite());
  for (const std::size_t threads : {1, 2, 3, 8}) {
    for (const std::int64_t grain : {std::int64_t{64}, maskgat::Schedule{}.grain}) {
      CAPTURE(threads);
      CAPTURE(grain);
      CHECK(run<Layer>(graph, x, edges, threads, grain, aggregate_first) == baseline);
    }
  }
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("GatConv is bitwise identical for 1 2 3 and 8 threads and two grains") {
    check_thread_invariance<nn::GatConv>();
  }
  TEST_CASE("GatConv aggregating first is bitwise identical for 1 2 3 and 8 threads") {
    check_thread_invariance<nn::GatConv>(3, true);
  }
  TEST_CASE("GatV2Conv is bitwise identical for 1 2 3 and 8 threads and two grains") {
    check_thread_invariance<nn::GatV2Conv>();
  }
  TEST_CASE("GatConv with edge features is bitwise identical for 1 2 3 and 8 threads") {
    check_thread_invariance<nn::GatConv>(3);
  }
  TEST_CASE("GatV2Conv with edge features is bitwise identical for 1 2 3 and 8 threads") {
    check_thread_invariance<nn::GatV2Conv>(3);
  }
  TEST_CASE("DotAttentionConv is bitwise identical for 1 2 3 and 8 threads and two grains") {
    check_thread_invariance<nn::DotAttentionConv>();
  }
}
