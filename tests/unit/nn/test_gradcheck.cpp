#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "support/central_differences.hpp"
#include "support/layer_harness.hpp"
#include "support/random_data.hpp"

using maskgat::Graph;
using maskgat::RowMatrix;
namespace nn = maskgat::nn;
namespace test = maskgat::test;

namespace {

constexpr std::int64_t kNodes = 10;
constexpr std::int64_t kIn = 4;
constexpr double kStep = 1e-6;
constexpr double kTolerance = 1e-6;
// Float gradients against double differences: sums of a few dozen terms rounded at 6e-8 each.
constexpr double kFloatTolerance = 1e-5;
constexpr std::uint64_t kDropoutSeed = 5;

// The smallest |pre-activation| of any LeakyReLU in the layer's scores: central differences are
// only meaningful when it is well above the step.
template <typename Layer>
double distance_to_kink(const test::Harness<Layer>& harness, const Graph& graph) {
  double closest = std::numeric_limits<double>::infinity();
  const auto weights = harness.layer.attention(graph, harness.cache);
  for (std::size_t e = 0; e < weights.sources.size(); ++e) {
    const auto j = weights.sources[e];
    const auto i = weights.destinations[e];
    const auto index = static_cast<std::int64_t>(e);
    // The edge features' term of entry e and column c, when the layer has them.
    const auto edge = [&](std::int64_t c) {
      if constexpr (test::Harness<Layer>::kHasEdgeFeatures) {
        if (harness.edges() != nullptr) return harness.cache.edge(index, c);
      }
      return 0.0;
    };
    if constexpr (std::is_same_v<Layer, nn::BasicGatConv<double>>) {
      for (std::int64_t h = 0; h < harness.cache.src.cols(); ++h) {
        closest = std::min(closest,
                           std::abs(harness.cache.src(j, h) + harness.cache.dst(i, h) + edge(h)));
      }
    } else if constexpr (std::is_same_v<Layer, nn::BasicGatV2Conv<double>>) {
      const RowMatrix<double>& dst =
          harness.options.share_weights ? harness.cache.src : harness.cache.dst;
      for (std::int64_t c = 0; c < harness.cache.src.cols(); ++c) {
        closest = std::min(closest, std::abs(harness.cache.src(j, c) + dst(i, c) + edge(c)));
      }
    }
  }
  return closest;
}

// Compares backward with central differences of L = sum(out .* R), for every parameter tensor
// and for the input, in double, on a graph where nodes 2 and 6 have no in-edges (with random edge
// features when the options take them); and the backward
// of `FloatLayer` (the same layer in float) from the same parameters, whose kernels may take paths
// of their own, with the same differences, within float's rounding (`kFloatTolerance`).
template <typename Layer, typename FloatLayer>
void check_gradients(const typename test::LayerTraits<Layer>::Options& options, nn::Mode mode) {
  CAPTURE(options.heads);
  CAPTURE(options.out_features);
  const Graph graph = test::without_in_edges(test::random_graph(kNodes, 4, 31), {2, 6});
  RowMatrix<double> x = test::random_matrix<double>(kNodes, kIn, 32);
  std::int64_t edge_width = 0;
  if constexpr (requires { options.edge_features; }) edge_width = options.edge_features;
  const RowMatrix<double> edge_features =
      test::random_matrix<double>(graph.num_edges(), edge_width, 34);
  // Central differences are only meaningful away from the LeakyReLU's kink: the first
  // initialisation (by seed) whose scores all keep their distance from it.
  std::optional<test::Harness<Layer>> initialised;
  for (std::uint64_t seed = 7; seed < 207; ++seed) {
    initialised.emplace(options, seed);
    initialised->edge_features = edge_features;
    initialised->forward(graph, x, mode, kDropoutSeed);
    if (distance_to_kink(*initialised, graph) > 1e3 * kStep) break;
  }
  test::Harness<Layer>& harness = *initialised;
  const RowMatrix<double> out = harness.forward(graph, x, mode, kDropoutSeed);
  const RowMatrix<double> weights = test::random_matrix<double>(out.rows(), out.cols(), 33);
  const auto loss = [&] {
    return (harness.forward(graph, x, mode, kDropoutSeed).array() * weights.array()).sum();
  };

  harness.store.zero_grad();
  harness.forward(graph, x, mode, kDropoutSeed);
  REQUIRE(distance_to_kink(harness, graph) > 1e3 * kStep);
  RowMatrix<double> grad_x;
  harness.backward(graph, x, weights, &grad_x);
  const std::vector<double> analytic(harness.store.grads().begin(), harness.store.grads().end());
  // The float layer's gradients, from the double layer's parameters and input.
  test::Harness<FloatLayer> single(options, 1);
  single.edge_features = edge_features.cast<float>();
  REQUIRE(single.store.values().size() == harness.store.values().size());
  std::transform(harness.store.values().begin(), harness.store.values().end(),
                 single.store.values().begin(), [](double v) { return static_cast<float>(v); });
  const RowMatrix<float> x_float = x.cast<float>();
  single.store.zero_grad();
  single.forward(graph, x_float, mode, kDropoutSeed);
  RowMatrix<float> grad_x_single;
  single.backward(graph, x_float, weights.cast<float>(), &grad_x_single);
  const std::vector<double> analytic_float(single.store.grads().begin(),
                                           single.store.grads().end());

  auto values = harness.store.values();
  for (const auto& entry : harness.store.entries()) {
    CAPTURE(entry.name);
    const RowMatrix<double> numeric =
        test::central_differences(values, entry.parameter, loss, kStep);
    const auto tensor = [&](const std::vector<double>& all) -> RowMatrix<double> {
      return Eigen::Map<const RowMatrix<double>>(all.data() + entry.parameter.offset,
                                                 entry.parameter.rows, entry.parameter.cols);
    };
    const RowMatrix<double> backward = tensor(analytic);
    if (numeric.norm() < 1e-8) {
      // A gradient that is zero by construction: the key bias of dot-product attention adds
      // <q_i, b> to every score of row i, which the softmax cancels.
      CHECK(backward.norm() < 1e-12);
    } else {
      CHECK(test::relative_error(backward, numeric) < kTolerance);
      CHECK(test::relative_error(tensor(analytic_float), numeric) < kFloatTolerance);
    }
  }

  const RowMatrix<double> numeric_x = test::central_differences(
      std::span(x.data(), static_cast<std::size_t>(x.size())), x.rows(), x.cols(), loss, kStep);
  CHECK(test::relative_error(grad_x, numeric_x) < kTolerance);
  CHECK(test::relative_error(RowMatrix<double>(grad_x_single.cast<double>()), numeric_x) <
        kFloatTolerance);
}

// `check_gradients` for every shape with a kernel path of its own, in double and in float (whose
// paths differ: 8 heads x 8 channels has its own vector kernel in float).
template <typename Layer, typename FloatLayer>
void check_gradients_of_shapes(typename test::LayerTraits<Layer>::Options options, nn::Mode mode) {
  for (const test::HeadShape shape : test::kKernelShapes) {
    options.heads = shape.heads;
    options.out_features = shape.channels;
    check_gradients<Layer, FloatLayer>(options, mode);
  }
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("GatConv backward matches central differences - double and float") {
    using Layer = nn::BasicGatConv<double>;
    auto options = test::layer_options<Layer>(kIn, 3, 2, true);
    options.residual = true;
    options.dropout = 0.3;
    SUBCASE("concat - residual - attention dropout - self-loops") {
      check_gradients_of_shapes<Layer, nn::BasicGatConv<float>>(options, nn::Mode::kTrain);
    }
    SUBCASE("mean - no self-loops") {
      options.concat = false;
      options.residual = false;
      options.add_self_loops = false;
      check_gradients_of_shapes<Layer, nn::BasicGatConv<float>>(options, nn::Mode::kEval);
    }
    SUBCASE("edge features - self-loops filled with the mean - attention dropout") {
      options.edge_features = 3;
      check_gradients_of_shapes<Layer, nn::BasicGatConv<float>>(options, nn::Mode::kTrain);
    }
    SUBCASE("aggregate first - concat - residual - attention dropout - edge features") {
      options.order = nn::ProjectionOrder::kAggregateFirst;
      options.edge_features = 3;
      check_gradients_of_shapes<Layer, nn::BasicGatConv<float>>(options, nn::Mode::kTrain);
    }
    SUBCASE("aggregate first - mean - no self-loops") {
      options.order = nn::ProjectionOrder::kAggregateFirst;
      options.concat = false;
      options.add_self_loops = false;
      check_gradients_of_shapes<Layer, nn::BasicGatConv<float>>(options, nn::Mode::kEval);
    }
    SUBCASE("edge features - mean - no self-loops") {
      options.edge_features = 2;
      options.concat = false;
      options.add_self_loops = false;
      check_gradients_of_shapes<Layer, nn::BasicGatConv<float>>(options, nn::Mode::kEval);
    }
  }

  TEST_CASE("GatV2Conv backward matches central differences - double and float") {
    using Layer = nn::BasicGatV2Conv<double>;
    auto options = test::layer_options<Layer>(kIn, 3, 2, true);
    options.residual = true;
    options.dropout = 0.3;
    SUBCASE("concat - residual - attention dropout - self-loops") {
      check_gradients_of_shapes<Layer, nn::BasicGatV2Conv<float>>(options, nn::Mode::kTrain);
    }
    SUBCASE("mean - shared weights - no self-loops") {
      options.concat = false;
      options.share_weights = true;
      options.add_self_loops = false;
      check_gradients_of_shapes<Layer, nn::BasicGatV2Conv<float>>(options, nn::Mode::kEval);
    }
    SUBCASE("edge features - self-loops filled with the mean - attention dropout") {
      options.edge_features = 3;
      check_gradients_of_shapes<Layer, nn::BasicGatV2Conv<float>>(options, nn::Mode::kTrain);
    }
    SUBCASE("edge features - mean - shared weights - no self-loops") {
      options.edge_features = 2;
      options.concat = false;
      options.share_weights = true;
      options.add_self_loops = false;
      check_gradients_of_shapes<Layer, nn::BasicGatV2Conv<float>>(options, nn::Mode::kEval);
    }
  }

  TEST_CASE("DotAttentionConv backward matches central differences - double and float") {
    using Layer = nn::BasicDotAttentionConv<double>;
    auto options = test::layer_options<Layer>(kIn, 3, 2, true);
    options.dropout = 0.3;
    SUBCASE("concat - root weight - attention dropout") {
      check_gradients_of_shapes<Layer, nn::BasicDotAttentionConv<float>>(options, nn::Mode::kTrain);
    }
    SUBCASE("mean - no root weight") {
      options.concat = false;
      options.root_weight = false;
      check_gradients_of_shapes<Layer, nn::BasicDotAttentionConv<float>>(options, nn::Mode::kEval);
    }
  }
}
