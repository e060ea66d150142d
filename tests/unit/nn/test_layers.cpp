#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/graph/build.hpp"
#include "maskgat/graph/masks.hpp"
#include "support/layer_harness.hpp"
#include "support/random_data.hpp"

using maskgat::Graph;
using maskgat::NodeId;
using maskgat::RowMatrix;
namespace nn = maskgat::nn;
namespace test = maskgat::test;

namespace {

constexpr std::int64_t kNodes = 12;
constexpr std::int64_t kIn = 5;
constexpr std::int64_t kOut = 3;
constexpr std::int64_t kHeads = 2;

struct NamedMask {
  std::string name;
  Graph graph;
};

// The four masks of the self-attention family on 12 positions. The graph has nodes without
// in-edges.
std::vector<NamedMask> all_masks() {
  return {{"graph", test::random_graph(kNodes, 4, 21)},
          {"window", maskgat::masks::window(kNodes, 2)},
          {"grid", maskgat::masks::grid(3, 4, 1)},
          {"full", maskgat::masks::full(kNodes)}};
}

template <typename Layer>
constexpr bool kHasSelfLoopOption =
    !std::is_same_v<typename test::LayerTraits<Layer>::Options, nn::DotAttentionConvOptions>;

// Sets the self-loop option where the layer has one, and the additive term (residual or root).
template <typename Layer>
void set_options(typename test::LayerTraits<Layer>::Options& options, bool self_loops,
                 bool additive_term) {
  if constexpr (kHasSelfLoopOption<Layer>) {
    options.add_self_loops = self_loops;
    options.residual = additive_term;
  } else {
    options.root_weight = additive_term;
  }
}

// Every mask, every shape with a kernel path of its own, concatenated and averaged heads, with and
// without self-loops, and (GAT, GATv2) with and without edge features: the layer's sparse kernels
// against the dense reference.
// With `aggregate_first`, a GAT layer takes that order (`nn::ProjectionOrder`).
template <typename Layer>
void check_against_dense_reference(double tolerance, bool aggregate_first = false) {
  using T = typename test::LayerTraits<Layer>::Scalar;
  const RowMatrix<T> x = test::random_matrix<T>(kNodes, kIn, 5);
  for (const auto& mask : all_masks()) {
    for (const test::HeadShape shape : test::kKernelShapes) {
      for (const bool concat : {true, false}) {
        for (const bool self_loops : {true, false}) {
          for (const std::int64_t edge_width : {0, 3}) {
            if (!kHasSelfLoopOption<Layer> && (!self_loops || edge_width > 0)) continue;
            CAPTURE(mask.name);
            CAPTURE(shape.heads);
            CAPTURE(shape.channels);
            CAPTURE(concat);
            CAPTURE(self_loops);
            CAPTURE(edge_width);
            auto options = test::layer_options<Layer>(kIn, shape.channels, shape.heads, concat);
            set_options<Layer>(options, self_loops, concat);
            if constexpr (kHasSelfLoopOption<Layer>) options.edge_features = edge_width;
            if constexpr (requires { options.order; }) {
              if (aggregate_first) options.order = nn::ProjectionOrder::kAggregateFirst;
            }
            test::Harness<Layer> harness(options, 3);
            harness.edge_features = test::random_matrix<T>(mask.graph.num_edges(), edge_width, 9);
            const RowMatrix<T> out = harness.forward(mask.graph, x);
            CHECK(out.allFinite());
            CHECK(test::relative_error(out, harness.reference(mask.graph, x)) <= tolerance);
          }
        }
      }
    }
  }
}

// Scores around 1e4, on every shape with a kernel path of its own: each path's softmax subtracts
// its row's maximum, so nothing overflows (exp(88) already does in float) and the result is the
// dense reference's. Rounding in a score of 1e4 moves alpha by about 1e4 times the unit roundoff
// (1e-12 in double, 1e-3 in float), which bounds `tolerance`.
template <typename Layer>
void check_extreme_scores(double tolerance) {
  using T = typename test::LayerTraits<Layer>::Scalar;
  const Graph graph = test::random_graph(kNodes, 4, 8);
  // Scores are linear in x for the additive layers, quadratic for dot-product attention.
  const RowMatrix<T> big =
      test::random_matrix<T>(kNodes, kIn, 9) * T(kHasSelfLoopOption<Layer> ? 1e4 : 1e2);
  for (const test::HeadShape shape : test::kKernelShapes) {
    CAPTURE(shape.heads);
    CAPTURE(shape.channels);
    auto options = test::layer_options<Layer>(kIn, shape.channels, shape.heads, true);
    set_options<Layer>(options, true, false);
    test::Harness<Layer> harness(options, 4);
    const RowMatrix<T> out = harness.forward(graph, big);
    REQUIRE(out.allFinite());
    REQUIRE(harness.cache.alpha.allFinite());
    // The scores really are extreme: some weight vanishes (below 1e-100 in double, to 0 in float).
    CHECK(harness.cache.alpha.minCoeff() < T(std::is_same_v<T, float> ? 1e-30 : 1e-100));
    CHECK(test::relative_error(out, harness.reference(graph, big)) <= tolerance);
  }
}

// A random graph in which nodes 3 and 7 have no in-edges.
Graph graph_with_isolated_nodes() {
  return test::without_in_edges(test::random_graph(kNodes, 4, 8), {3, 7});
}

template <typename Layer>
void check_invariants() {
  using T = double;
  const Graph graph = graph_with_isolated_nodes();
  const RowMatrix<T> x = test::random_matrix<T>(kNodes, kIn, 9);
  auto options = test::layer_options<Layer>(kIn, kOut, kHeads, true);
  set_options<Layer>(options, true, true);
  test::Harness<Layer> harness(options, 4);

  SUBCASE("alpha sums to one per destination and head, the edge list names every edge") {
    harness.forward(graph, x);
    const auto weights = harness.layer.attention(graph, harness.cache);
    REQUIRE(weights.sources.size() == weights.destinations.size());
    REQUIRE(static_cast<std::int64_t>(weights.sources.size()) == weights.alpha.rows());
    RowMatrix<T> sums = RowMatrix<T>::Zero(kNodes, kHeads);
    for (std::size_t e = 0; e < weights.sources.size(); ++e) {
      sums.row(weights.destinations[e]) += weights.alpha.row(static_cast<std::int64_t>(e));
    }
    for (NodeId i = 0; i < kNodes; ++i) {
      const bool has_edges =
          std::count(weights.destinations.begin(), weights.destinations.end(), i) > 0;
      for (std::int64_t h = 0; h < kHeads; ++h) {
        CHECK(sums(i, h) == doctest::Approx(has_edges ? 1.0 : 0.0).epsilon(1e-14));
      }
      if constexpr (kHasSelfLoopOption<Layer>) {
        // Every node got its self-loop, placed at the position of source i in its row.
        CHECK(has_edges);
      }
    }
  }

  SUBCASE("a node with no in-edges outputs only the non-attention terms") {
    REQUIRE(graph.in_degree(3) == 0);
    if constexpr (kHasSelfLoopOption<Layer>) {
      harness.options.add_self_loops = false;
      harness.options.residual = false;
      test::Harness<Layer> plain(harness.options, 4);
      const RowMatrix<T> out = plain.forward(graph, x);
      REQUIRE(out.allFinite());
      const auto bias = plain.store.value(*plain.store.find("conv.bias"));
      for (NodeId i = 0; i < kNodes; ++i) {
        if (graph.in_degree(i) == 0) CHECK(out.row(i) == bias.row(0));
      }
    } else {
      const RowMatrix<T> out = harness.forward(graph, x);
      REQUIRE(out.allFinite());
      const RowMatrix<T> skip = x * harness.store.value(*harness.store.find("conv.skip.weight"));
      const auto bias = harness.store.value(*harness.store.find("conv.skip.bias"));
      for (NodeId i = 0; i < kNodes; ++i) {
        if (graph.in_degree(i) == 0) {
          CHECK(test::relative_error<T>(out.row(i), skip.row(i) + bias.row(0)) <= 1e-14);
        }
      }
    }
  }

  SUBCASE("relabelling nodes permutes the output") {
    std::vector<NodeId> permutation(kNodes);
    std::iota(permutation.begin(), permutation.end(), 0);
    maskgat::Rng rng(17);
    for (std::size_t i = permutation.size() - 1; i > 0; --i) {
      std::swap(permutation[i], permutation[rng.uniform_int(i + 1)]);
    }
    maskgat::EdgeList edges;
    for (NodeId i = 0; i < kNodes; ++i) {
      for (const NodeId j : graph.in_neighbors(i)) {
        edges.sources.push_back(permutation[static_cast<std::size_t>(j)]);
        edges.targets.push_back(permutation[static_cast<std::size_t>(i)]);
      }
    }
    const Graph relabelled = maskgat::build_graph(kNodes, edges).graph;
    RowMatrix<T> x_relabelled(kNodes, kIn);
    for (NodeId i = 0; i < kNodes; ++i)
      x_relabelled.row(permutation[static_cast<std::size_t>(i)]) = x.row(i);
    const RowMatrix<T> out = harness.forward(graph, x);
    const RowMatrix<T> out_relabelled = harness.forward(relabelled, x_relabelled);
    RowMatrix<T> expected(out.rows(), out.cols());
    for (NodeId i = 0; i < kNodes; ++i)
      expected.row(permutation[static_cast<std::size_t>(i)]) = out.row(i);
    CHECK(test::relative_error(out_relabelled, expected) <= 1e-14);
  }

  SUBCASE("a graph without edges and a graph with one node") {
    const Graph empty(kNodes, std::vector<maskgat::EdgeId>(kNodes + 1, 0), {});
    const RowMatrix<T> out = harness.forward(empty, x);
    REQUIRE(out.allFinite());
    CHECK(test::relative_error(out, harness.reference(empty, x)) <= 1e-14);
    const Graph single(1, {0, 0}, {});
    const RowMatrix<T> one = x.topRows(1);
    const RowMatrix<T> single_out = harness.forward(single, one);
    REQUIRE(single_out.allFinite());
    CHECK(test::relative_error(single_out, harness.reference(single, one)) <= 1e-14);
    RowMatrix<T> grad_x;
    harness.store.zero_grad();
    harness.layer.backward(single, one, harness.cache, RowMatrix<T>::Ones(1, single_out.cols()),
                           &grad_x);
    CHECK(grad_x.allFinite());
    CHECK(std::all_of(harness.store.grads().begin(), harness.store.grads().end(),
                      [](T g) { return std::isfinite(g); }));
  }

  SUBCASE("sparse input gives the dense input's result") {
    const auto sparse = test::random_sparse<T>(kNodes, kIn, 0.3, 10);
    const RowMatrix<T> dense = RowMatrix<T>(sparse);
    const RowMatrix<T> from_sparse = harness.forward(graph, sparse);
    const RowMatrix<T> from_dense = harness.forward(graph, dense);
    CHECK(test::relative_error(from_sparse, from_dense) <= 1e-14);
    harness.store.zero_grad();
    harness.forward(graph, sparse);
    harness.layer.backward(graph, sparse, harness.cache, from_dense, nullptr);
    const std::vector<T> sparse_grads(harness.store.grads().begin(), harness.store.grads().end());
    harness.store.zero_grad();
    harness.forward(graph, dense);
    harness.layer.backward(graph, dense, harness.cache, from_dense, nullptr);
    const std::vector<T> dense_grads(harness.store.grads().begin(), harness.store.grads().end());
    const Eigen::Map<const Eigen::VectorX<T>> a(sparse_grads.data(),
                                                static_cast<std::int64_t>(sparse_grads.size()));
    const Eigen::Map<const Eigen::VectorX<T>> b(dense_grads.data(),
                                                static_cast<std::int64_t>(dense_grads.size()));
    CHECK((a - b).norm() <= 1e-13 * b.norm());
    RowMatrix<T> grad_x;
    CHECK_THROWS_AS(harness.layer.backward(graph, sparse, harness.cache, from_dense, &grad_x),
                    maskgat::InvalidArgument);
  }
}

template <typename Layer>
void check_invalid_arguments() {
  using T = float;
  const std::string name = test::LayerTraits<Layer>::kName;
  auto options = test::layer_options<Layer>(kIn, kOut, kHeads, true);
  const Graph graph = test::random_graph(kNodes, 3, 1);
  test::Harness<Layer> harness(options, 1);
  RowMatrix<T> out;
  maskgat::Rng rng(0);
  const RowMatrix<T> narrow = RowMatrix<T>::Zero(kNodes, kIn - 1);
  const RowMatrix<T> short_x = RowMatrix<T>::Zero(kNodes - 1, kIn);
  CHECK_THROWS_WITH_AS(
      harness.layer.forward(graph, narrow, nn::Mode::kEval, rng, harness.cache, out),
      (name + ".forward: x has 4 columns, expected 5").c_str(), maskgat::InvalidArgument);
  CHECK_THROWS_WITH_AS(
      harness.layer.forward(graph, short_x, nn::Mode::kEval, rng, harness.cache, out),
      (name + ".forward: x has 11 rows, the graph has 12 nodes").c_str(), maskgat::InvalidArgument);
  const RowMatrix<T> x = RowMatrix<T>::Zero(kNodes, kIn);
  harness.forward(graph, x);
  CHECK_THROWS_WITH_AS(
      harness.layer.backward(graph, x, harness.cache, RowMatrix<T>::Zero(kNodes, 5), nullptr),
      (name + ".backward: grad_out is 12 x 5, expected 12 x 6").c_str(), maskgat::InvalidArgument);

  nn::ParameterStore<T> store;
  maskgat::Rng init(0);
  auto bad = options;
  bad.heads = 0;
  CHECK_THROWS_WITH_AS(Layer(store, "a", bad, init),
                       (name + ": heads is 0, expected a positive count").c_str(),
                       maskgat::InvalidArgument);
  bad = options;
  bad.in_features = -2;
  CHECK_THROWS_WITH_AS(Layer(store, "b", bad, init),
                       (name + ": in_features is -2, expected a positive count").c_str(),
                       maskgat::InvalidArgument);
  bad = options;
  bad.dropout = 1.0;
  CHECK_THROWS_WITH_AS(Layer(store, "c", bad, init),
                       (name + ": dropout 1.000000 is outside [0, 1)").c_str(),
                       maskgat::InvalidArgument);
  Layer first(store, "d", options, init);
  CHECK_THROWS_AS(Layer(store, "d", options, init), maskgat::InvalidArgument);
}

nn::GatConvOptions gat_options(std::int64_t in_features, std::int64_t out_features,
                               std::int64_t heads) {
  nn::GatConvOptions options;
  options.in_features = in_features;
  options.out_features = out_features;
  options.heads = heads;
  return options;
}

// A GatConv of 8 heads x 8 channels (in float, on AVX builds, their own vector kernel) on 300
// nodes (two row blocks): its per-node score terms are, bit for bit, each head's dot product with
// att_src and att_dst summed in channel order.
template <typename T>
void check_head_scores() {
  nn::ParameterStore<T> store;
  maskgat::Rng rng(3);
  const nn::BasicGatConv<T> conv(store, "conv", gat_options(6, 8, 8), rng);
  const Graph mask = test::random_graph(300, 4, 8);
  const RowMatrix<T> x = test::random_matrix<T>(300, 6, 9);
  typename nn::BasicGatConv<T>::Cache cache;
  RowMatrix<T> out;
  conv.forward(mask, x, nn::Mode::kEval, rng, cache, out);
  const auto att_src = store.value(*store.find("conv.att_src"));
  const auto att_dst = store.value(*store.find("conv.att_dst"));
  RowMatrix<T> src(300, 8);
  RowMatrix<T> dst(300, 8);
  for (std::int64_t n = 0; n < 300; ++n) {
    for (std::int64_t k = 0; k < 8; ++k) {
      T src_sum = T(0);
      T dst_sum = T(0);
      for (std::int64_t c = 0; c < 8; ++c) {
        src_sum += cache.h(n, k * 8 + c) * att_src(k, c);
        dst_sum += cache.h(n, k * 8 + c) * att_dst(k, c);
      }
      src(n, k) = src_sum;
      dst(n, k) = dst_sum;
    }
  }
  CHECK(cache.src == src);
  CHECK(cache.dst == dst);
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("GatConv equals the dense reference on every mask - float and double") {
    for (const bool aggregate_first : {false, true}) {
      CAPTURE(aggregate_first);
      check_against_dense_reference<nn::BasicGatConv<float>>(1e-5, aggregate_first);
      check_against_dense_reference<nn::BasicGatConv<double>>(1e-12, aggregate_first);
    }
  }
  TEST_CASE("GatConv projects first or aggregates first to the same result - rows, dropout") {
    constexpr NodeId kRows = 40;
    constexpr std::int64_t kWide = 16;
    const Graph graph = maskgat::masks::from_graph(test::random_graph(kRows, 6, 41), true);
    const RowMatrix<float> x = test::random_matrix<float>(kRows, kWide, 42);
    std::vector<std::uint8_t> some(kRows, 0);
    for (NodeId i = 0; i < kRows; i += 3) some[static_cast<std::size_t>(i)] = 1;
    for (const test::HeadShape shape : {test::HeadShape{1, 4}, test::HeadShape{8, 8}}) {
      for (const bool concat : {true, false}) {
        for (const bool subset : {false, true}) {
          CAPTURE(shape.heads);
          CAPTURE(concat);
          CAPTURE(subset);
          const std::span<const std::uint8_t> rows =
              subset ? std::span<const std::uint8_t>(some) : std::span<const std::uint8_t>();
          auto options =
              test::layer_options<nn::GatConv>(kWide, shape.channels, shape.heads, concat);
          options.dropout = 0.3;
          RowMatrix<float> outs[2];
          RowMatrix<float> grad_xs[2];
          std::vector<float> grads[2];
          RowMatrix<float> grad_out;
          for (const int order : {0, 1}) {
            options.order = order == 0 ? nn::ProjectionOrder::kProjectFirst
                                       : nn::ProjectionOrder::kAggregateFirst;
            test::Harness<nn::GatConv> harness(options, 43);
            maskgat::Rng rng(44);
            harness.layer.forward(graph, x, nn::Mode::kTrain, rng, harness.cache, outs[order],
                                  rows);
            CHECK(harness.cache.aggregated_first == (order == 1));
            grad_out = test::random_matrix<float>(outs[order].rows(), outs[order].cols(), 45);
            for (NodeId i = 0; i < kRows; ++i) {
              if (subset && some[static_cast<std::size_t>(i)] == 0) {
                grad_out.row(i).setZero();
                outs[order].row(i).setZero();  // unspecified
              }
            }
            harness.store.zero_grad();
            harness.layer.backward(graph, x, harness.cache, grad_out, &grad_xs[order]);
            grads[order].assign(harness.store.grads().begin(), harness.store.grads().end());
          }
          CHECK(outs[0].allFinite());
          CHECK(test::relative_error(outs[1], outs[0]) < 1e-5);
          CHECK(test::relative_error(grad_xs[1], grad_xs[0]) < 1e-5);
          const auto as_matrix = [](const std::vector<float>& all) {
            return RowMatrix<float>(Eigen::Map<const RowMatrix<float>>(
                all.data(), 1, static_cast<std::int64_t>(all.size())));
          };
          CHECK(test::relative_error(as_matrix(grads[1]), as_matrix(grads[0])) < 1e-5);
        }
      }
    }
  }
  TEST_CASE("GatConv's projection order - the cost model and its refusals") {
    // A sampled batch's input layer (10^6 nodes, fanouts 10,10, batches of 1024): 76,825 rows
    // read, 11,264 formed with 11 entries each, 128 features, 8 heads x 8.
    const nn::ProjectionCosts batch = nn::projection_costs(76825, 11264, 123904, 128, 8, 8);
    CHECK(batch.project_first == 2.0 * 76825 * 128 * 64 + 3.0 * 123904 * 64);
    CHECK(batch.aggregate_first ==
          4.0 * 76825 * 128 * 8 + 2.0 * 123904 * 8 * 128 + 3.0 * 11264 * 8 * 128 * 8);
    CHECK(batch.aggregate_first < 0.7 * batch.project_first);
    // Every row formed, inputs wider than a head: projecting first costs less.
    const nn::ProjectionCosts whole = nn::projection_costs(76825, 76825, 845075, 128, 8, 8);
    CHECK(whole.project_first < whole.aggregate_first);
    constexpr std::int64_t kWide = 32;
    const Graph graph = maskgat::masks::from_graph(test::random_graph(kNodes, 4, 46), true);
    const RowMatrix<float> x = test::random_matrix<float>(kNodes, kWide, 47);
    std::vector<std::uint8_t> one(kNodes, 0);
    one[0] = 1;
    auto options = test::layer_options<nn::GatConv>(kWide, 8, 8, true);
    test::Harness<nn::GatConv> automatic(options, 48);
    maskgat::Rng rng(49);
    RowMatrix<float> out;
    automatic.layer.forward(graph, x, nn::Mode::kEval, rng, automatic.cache, out);
    CHECK_FALSE(automatic.cache.aggregated_first);
    automatic.layer.forward(graph, x, nn::Mode::kEval, rng, automatic.cache, out, one);
    CHECK(automatic.cache.aggregated_first);
    const maskgat::RowSparse<float> sparse = x.sparseView();
    automatic.layer.forward(graph, sparse, nn::Mode::kEval, rng, automatic.cache, out, one);
    CHECK_FALSE(automatic.cache.aggregated_first);
    options.order = nn::ProjectionOrder::kAggregateFirst;
    test::Harness<nn::GatConv> forced(options, 48);
    CHECK_THROWS_WITH_AS(
        forced.layer.forward(graph, sparse, nn::Mode::kEval, rng, forced.cache, out),
        "gat_conv.forward: the aggregate-first order needs a dense x and no halo, got a sparse x",
        maskgat::InvalidArgument);
  }
  TEST_CASE("GatV2Conv equals the dense reference on every mask - float and double") {
    check_against_dense_reference<nn::BasicGatV2Conv<float>>(1e-5);
    check_against_dense_reference<nn::BasicGatV2Conv<double>>(1e-12);
    auto options = test::layer_options<nn::BasicGatV2Conv<double>>(kIn, kOut, kHeads, true);
    options.share_weights = true;
    test::Harness<nn::BasicGatV2Conv<double>> shared(options, 2);
    CHECK_FALSE(shared.store.find("conv.lin_r.weight"));
    const Graph graph = test::random_graph(kNodes, 4, 3);
    const RowMatrix<double> x = test::random_matrix<double>(kNodes, kIn, 4);
    CHECK(test::relative_error(shared.forward(graph, x), shared.reference(graph, x)) <= 1e-12);
  }
  TEST_CASE("DotAttentionConv equals the dense reference on every mask - float and double") {
    check_against_dense_reference<nn::BasicDotAttentionConv<float>>(1e-5);
    check_against_dense_reference<nn::BasicDotAttentionConv<double>>(1e-12);
  }

  TEST_CASE("extreme scores stay finite on every kernel path - float and double") {
    check_extreme_scores<nn::BasicGatConv<float>>(1e-2);
    check_extreme_scores<nn::BasicGatConv<double>>(1e-10);
    check_extreme_scores<nn::BasicGatV2Conv<float>>(1e-2);
    check_extreme_scores<nn::BasicGatV2Conv<double>>(1e-10);
    check_extreme_scores<nn::BasicDotAttentionConv<float>>(1e-2);
    check_extreme_scores<nn::BasicDotAttentionConv<double>>(1e-10);
  }
  TEST_CASE("GatConv invariants") { check_invariants<nn::BasicGatConv<double>>(); }
  TEST_CASE("GatV2Conv invariants") { check_invariants<nn::BasicGatV2Conv<double>>(); }
  TEST_CASE("DotAttentionConv invariants") {
    check_invariants<nn::BasicDotAttentionConv<double>>();
  }

  TEST_CASE("GatConv rejects invalid arguments") { check_invalid_arguments<nn::GatConv>(); }
  TEST_CASE("GatV2Conv rejects invalid arguments") { check_invalid_arguments<nn::GatV2Conv>(); }
  TEST_CASE("DotAttentionConv rejects invalid arguments") {
    check_invalid_arguments<nn::DotAttentionConv>();
  }

  TEST_CASE("GatConv head scores are each head's dot product summed in channel order, exactly") {
    check_head_scores<float>();
    check_head_scores<double>();
  }

  TEST_CASE("layers register their parameters under PyG's names and sizes") {
    nn::ParameterStore<float> store;
    maskgat::Rng rng(0);
    const nn::GatConv conv1(store, "conv1", gat_options(1433, 8, 8), rng);
    // PyG's GATConv(1433, 8, heads=8): 91,712 + 64 + 64 + 64 parameters.
    CHECK(store.size() == 91904);
    std::vector<std::string> names;
    for (const auto& entry : store.entries()) names.push_back(entry.name);
    CHECK(names ==
          std::vector<std::string>{"conv1.weight", "conv1.att_src", "conv1.att_dst", "conv1.bias"});
    nn::GatV2ConvOptions v2;
    v2.in_features = 4;
    v2.out_features = 2;
    v2.heads = 3;
    v2.concat = false;
    v2.residual = true;
    const nn::GatV2Conv conv2(store, "conv2", v2, rng);
    nn::DotAttentionConvOptions dot;
    dot.in_features = 4;
    dot.out_features = 2;
    dot.heads = 3;
    const nn::DotAttentionConv conv3(store, "conv3", dot, rng);
    names.clear();
    for (const auto& entry : store.entries()) {
      if (entry.name.rfind("conv1", 0) != 0) names.push_back(entry.name);
    }
    CHECK(names ==
          std::vector<std::string>{"conv2.lin_l.weight", "conv2.lin_l.bias", "conv2.lin_r.weight",
                                   "conv2.lin_r.bias", "conv2.att", "conv2.res.weight",
                                   "conv2.bias", "conv3.query.weight", "conv3.query.bias",
                                   "conv3.key.weight", "conv3.key.bias", "conv3.value.weight",
                                   "conv3.value.bias", "conv3.skip.weight", "conv3.skip.bias"});
    CHECK(store.value(*store.find("conv2.res.weight")).cols() == 2);
    CHECK(store.value(*store.find("conv3.skip.weight")).cols() == 6);
    // Glorot bound for conv1.weight: sqrt(6 / (1433 + 64)).
    const auto weight = store.value(*store.find("conv1.weight"));
    CHECK(weight.cwiseAbs().maxCoeff() <= std::sqrt(6.0F / 1497.0F));
    CHECK(weight.cwiseAbs().maxCoeff() > 0.9F * std::sqrt(6.0F / 1497.0F));
    CHECK(store.value(*store.find("conv1.bias")).isZero());
  }
}
