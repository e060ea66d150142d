#include <doctest/doctest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/graph/masks.hpp"
#include "maskgat/nn/model.hpp"
#include "maskgat/train/layerwise.hpp"
#include "support/random_data.hpp"

using maskgat::FeatureMatrix;
using maskgat::Graph;
using maskgat::NodeId;
using maskgat::RowMatrix;
namespace nn = maskgat::nn;
namespace train = maskgat::train;

namespace {

nn::ModelOptions model_options(nn::AttentionKind kind, std::int64_t layers, std::int64_t features) {
  nn::ModelOptions options;
  options.attention = kind;
  options.in_features = features;
  options.classes = 4;
  options.layers = layers;
  options.heads = 3;
  options.hidden = 4;
  options.output_heads = 2;
  return options;
}

// The largest difference of two logit matrices relative to 1 + the size of the whole graph's.
float largest_difference(const RowMatrix<float>& layerwise, const RowMatrix<float>& whole) {
  REQUIRE(layerwise.rows() == whole.rows());
  REQUIRE(layerwise.cols() == whole.cols());
  return ((layerwise - whole).array().abs() / (1.0F + whole.array().abs())).maxCoeff();
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("layer-wise inference equals the whole graph's forward to float rounding") {
    // Self-loops in some rows of the graph, nodes without in-edges, sparse and dense inputs.
    const Graph graph = maskgat::test::random_graph(700, 9, 3, /*self_loops=*/true);
    const Graph mask = maskgat::masks::from_graph(graph, true);
    const FeatureMatrix dense(maskgat::test::random_matrix<float>(700, 10, 4));
    const FeatureMatrix sparse(maskgat::test::random_sparse<float>(700, 10, 0.3, 5));
    const std::vector<NodeId> some{699, 3, 250, 3, 0, 41};
    for (const auto kind :
         {nn::AttentionKind::kGat, nn::AttentionKind::kGatV2, nn::AttentionKind::kDot}) {
      for (const std::int64_t layers : {1, 2, 3}) {
        for (const FeatureMatrix* input : {&dense, &sparse}) {
          INFO(nn::attention_kind_name(kind), " layers ", layers, " sparse ", input->is_sparse());
          maskgat::Rng rng(layers);
          nn::Model model(model_options(kind, layers, 10), rng);
          const RowMatrix<float> whole = model.forward(mask, input->view(), nn::Mode::kEval, rng);
          for (const std::int64_t chunk : {1, 64, 100000}) {
            CAPTURE(chunk);
            CHECK(largest_difference(train::layerwise_logits(model, graph, *input, {}, chunk),
                                     whole) < 1e-5F);
            RowMatrix<float> expected(static_cast<Eigen::Index>(some.size()), whole.cols());
            for (std::size_t r = 0; r < some.size(); ++r) {
              expected.row(static_cast<Eigen::Index>(r)) = whole.row(some[r]);
            }
            CHECK(largest_difference(train::layerwise_logits(model, graph, *input, some, chunk),
                                     expected) < 1e-5F);
          }
        }
      }
    }
  }

  TEST_CASE("layer-wise inference is bitwise identical on 1 and 2 threads") {
    const Graph graph = maskgat::test::random_graph(6000, 12, 8);
    const FeatureMatrix input(maskgat::test::random_matrix<float>(6000, 16, 9));
    maskgat::Rng rng(2);
    nn::Model model(model_options(nn::AttentionKind::kGat, 2, 16), rng);
    const auto run = [&](int threads) {
      const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      return train::layerwise_logits(model, graph, input, {}, 1000);
    };
    CHECK(run(1) == run(2));
  }

  TEST_CASE("layer-wise inference refuses what does not fit") {
    const Graph graph = maskgat::test::random_graph(50, 4, 1);
    const FeatureMatrix input(maskgat::test::random_matrix<float>(50, 6, 2));
    maskgat::Rng rng(0);
    nn::Model model(model_options(nn::AttentionKind::kGat, 2, 6), rng);
    CHECK_THROWS_WITH_AS((void)train::layerwise_logits(model, graph, input, {}, 0),
                         "layerwise_logits: chunk_rows is 0, expected a positive count",
                         maskgat::InvalidArgument);
    const std::vector<NodeId> outside{50};
    CHECK_THROWS_WITH_AS((void)train::layerwise_logits(model, graph, input, outside),
                         "layerwise_logits: node 50 is outside [0, 50)", maskgat::InvalidArgument);
    const FeatureMatrix short_input(maskgat::test::random_matrix<float>(49, 6, 2));
    CHECK_THROWS_WITH_AS((void)train::layerwise_logits(model, graph, short_input),
                         "layerwise_logits: input has 49 rows, the graph has 50 nodes",
                         maskgat::InvalidArgument);
  }
}
