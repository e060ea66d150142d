#include <doctest/doctest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/graph/masks.hpp"
#include "maskgat/nn/loss.hpp"
#include "maskgat/nn/model.hpp"
#include "support/dense_attention.hpp"
#include "support/model_gradients.hpp"
#include "support/random_data.hpp"

using maskgat::Graph;
using maskgat::NodeId;
using maskgat::RowMatrix;
namespace nn = maskgat::nn;
namespace test = maskgat::test;

namespace {

constexpr std::int64_t kNodes = 12;

nn::ModelOptions small_options(nn::AttentionKind kind, std::int64_t layers) {
  nn::ModelOptions options;
  options.attention = kind;
  options.in_features = 5;
  options.classes = 3;
  options.layers = layers;
  options.heads = 2;
  options.hidden = 3;
  options.output_heads = 2;
  options.dropout = 0.4;
  options.attention_dropout = 0.3;
  return options;
}

// Labels 0, 1, 2, 0, 1, ... of `count` nodes.
std::vector<std::int32_t> cyclic_labels(std::size_t count) {
  std::vector<std::int32_t> labels(count);
  for (std::size_t i = 0; i < count; ++i) labels[i] = static_cast<std::int32_t>(i % 3);
  return labels;
}

// Calls fn(kind, layers) for each attention kind with 1, 2 and 3 layers, both named in failures.
template <typename Fn>
void for_each_kind_and_depth(Fn&& fn) {
  for (const auto kind :
       {nn::AttentionKind::kGat, nn::AttentionKind::kGatV2, nn::AttentionKind::kDot}) {
    for (const std::int64_t layers : {1, 2, 3}) {
      INFO(nn::attention_kind_name(kind), " layers ", layers);
      fn(kind, layers);
    }
  }
}

// The gradient check of the paper's model with `options`, on a 12-node graph.
template <typename Input>
void check_model_gradients(const nn::ModelOptions& options, const Input& x) {
  const Graph mask = maskgat::masks::from_graph(test::random_graph(kNodes, 4, 41));
  maskgat::Rng init(3);
  nn::BasicModel<double> model(options, init);
  for (auto& value : model.parameters().values()) value += 0.2 * (init.uniform() - 0.5);
  test::check_model_gradients(model, mask, x);
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("Model backward matches central differences through ELU and input dropout") {
    const RowMatrix<double> dense = test::random_matrix<double>(kNodes, 5, 42);
    const auto sparse = test::random_sparse<double>(kNodes, 5, 0.5, 43);
    SUBCASE("gat - 2 layers - dense input") {
      check_model_gradients(small_options(nn::AttentionKind::kGat, 2), dense);
    }
    SUBCASE("gat - 3 layers - sparse input") {
      check_model_gradients(small_options(nn::AttentionKind::kGat, 3), sparse);
    }
    SUBCASE("gatv2 - 2 layers") {
      check_model_gradients(small_options(nn::AttentionKind::kGatV2, 2), dense);
    }
    SUBCASE("dot - 2 layers") {
      check_model_gradients(small_options(nn::AttentionKind::kDot, 2), dense);
    }
    SUBCASE("gat - 1 layer") {
      check_model_gradients(small_options(nn::AttentionKind::kGat, 1), dense);
    }
  }

  TEST_CASE("Model names its layers conv1..convL with the paper's shapes") {
    maskgat::Rng rng(0);
    nn::ModelOptions options;
    options.in_features = 1433;
    options.classes = 7;
    const nn::Model model(options, rng);
    const auto& store = model.parameters();
    REQUIRE(store.find("conv1.weight"));
    CHECK(store.find("conv1.weight")->cols == 64);
    CHECK(store.find("conv2.weight")->rows == 64);
    CHECK(store.find("conv2.weight")->cols == 7);
    CHECK(store.find("conv2.bias")->cols == 7);
    // The GAT paper's Cora model: 91,904 + 64 * 7 + 7 + 7 + 7 parameters.
    CHECK(store.size() == 92373);
  }

  TEST_CASE("Model forward and backward are bitwise identical for 1 and 3 threads") {
    const Graph mask = maskgat::masks::from_graph(test::skewed_graph(10000, 3000, 5));
    const RowMatrix<float> x = test::random_matrix<float>(10000, 16, 6);
    std::vector<std::int32_t> labels(10000);
    for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<std::int32_t>(i % 4);
    std::vector<NodeId> nodes(500);
    for (std::size_t i = 0; i < nodes.size(); ++i) nodes[i] = static_cast<NodeId>(i * 17);
    const auto run = [&](std::size_t threads) {
      const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      auto options = small_options(nn::AttentionKind::kGat, 2);
      options.in_features = 16;
      options.classes = 4;
      maskgat::Rng rng(1);
      nn::Model model(options, rng);
      RowMatrix<float> grad;
      const RowMatrix<float> logits = model.forward(mask, x, nn::Mode::kTrain, rng);
      nn::nll_loss(logits, labels, nodes, &grad);
      model.backward(mask, x, grad);
      return std::make_pair(logits, std::vector<float>(model.parameters().grads().begin(),
                                                       model.parameters().grads().end()));
    };
    const auto one = run(1);
    CHECK(run(3) == one);
  }

  TEST_CASE("Model on a receptive subgraph's per-layer masks matches the whole graph's outputs") {
    const Graph mask = maskgat::masks::from_graph(test::random_graph(300, 2, 17));
    const RowMatrix<double> x = test::random_matrix<double>(300, 5, 18);
    const std::vector<NodeId> outputs{4, 40, 41, 250};
    const std::vector<std::int32_t> labels = cyclic_labels(300);
    for_each_kind_and_depth([&](nn::AttentionKind kind, std::int64_t layers) {
      auto options = small_options(kind, layers);
      options.dropout = 0.0;
      options.attention_dropout = 0.0;
      const auto field = maskgat::masks::receptive_subgraph(mask, outputs, layers);
      REQUIRE(field.nodes.size() < 300);
      RowMatrix<double> x_field(static_cast<std::int64_t>(field.nodes.size()), 5);
      std::vector<std::int32_t> labels_field;
      for (std::size_t k = 0; k < field.nodes.size(); ++k) {
        x_field.row(static_cast<std::int64_t>(k)) = x.row(field.nodes[k]);
        labels_field.push_back(labels[static_cast<std::size_t>(field.nodes[k])]);
      }
      std::vector<NodeId> outputs_field;
      for (const NodeId node : outputs) {
        const auto at = std::lower_bound(field.nodes.begin(), field.nodes.end(), node);
        outputs_field.push_back(static_cast<NodeId>(at - field.nodes.begin()));
      }
      maskgat::Rng init(5);
      nn::BasicModel<double> whole(options, init);
      maskgat::Rng init_again(5);
      nn::BasicModel<double> part(options, init_again);
      maskgat::Rng rng(1);
      RowMatrix<double> grad;
      const RowMatrix<double> logits = whole.forward(mask, x, nn::Mode::kTrain, rng);
      nn::nll_loss(logits, labels, outputs, &grad);
      whole.backward(mask, x, grad);
      RowMatrix<double> grad_field;
      const RowMatrix<double> logits_field =
          part.forward(field.masks, x_field, nn::Mode::kTrain, rng);
      nn::nll_loss(logits_field, labels_field, outputs_field, &grad_field);
      part.backward(field.masks, x_field, grad_field);
      for (std::size_t k = 0; k < outputs.size(); ++k) {
        CHECK((logits.row(outputs[k]) - logits_field.row(outputs_field[k])).norm() < 1e-12);
      }
      const auto a = whole.parameters().grads();
      const auto b = part.parameters().grads();
      REQUIRE(a.size() == b.size());
      double largest = 0.0;
      for (std::size_t k = 0; k < a.size(); ++k) largest = std::max(largest, std::abs(a[k] - b[k]));
      CHECK(largest < 1e-12);
    });
    maskgat::Rng rng(0);
    nn::BasicModel<double> model(small_options(nn::AttentionKind::kGat, 2), rng);
    const std::vector<Graph> one{mask};
    CHECK_THROWS_WITH_AS(model.forward(one, x, nn::Mode::kEval, rng),
                         "model.forward: 1 masks for a model of 2 layers",
                         maskgat::InvalidArgument);
    const std::vector<Graph> growing{maskgat::masks::from_graph(test::random_graph(20, 2, 1)),
                                     mask};
    CHECK_THROWS_WITH_AS(model.forward(growing, x, nn::Mode::kEval, rng),
                         "model.forward: mask 1 has 300 nodes, more than mask 0's 20",
                         maskgat::InvalidArgument);
  }

  TEST_CASE("Model forming only the receptive rows gives the outputs and gradients bitwise") {
    const Graph mask = maskgat::masks::from_graph(test::random_graph(300, 2, 23));
    const RowMatrix<float> dense = test::random_matrix<float>(300, 5, 24);
    const maskgat::RowSparse<float> sparse = dense.sparseView();
    const std::vector<NodeId> outputs{7, 70, 71, 299};
    const std::vector<std::int32_t> labels = cyclic_labels(300);
    for_each_kind_and_depth([&](nn::AttentionKind kind, std::int64_t layers) {
      for (const bool is_sparse : {true, false}) {
        CAPTURE(is_sparse);
        const maskgat::InputRef<float> x =
            is_sparse ? maskgat::InputRef<float>(sparse) : maskgat::InputRef<float>(dense);
        // A GAT layer on dense input, as every layer after the first, forming a few of its rows
        // may aggregate before it projects (`nn::ProjectionOrder`): the same values up to float
        // rounding. Layers that take the same order on the rows as on every row give the same bits.
        const bool reordered = kind == nn::AttentionKind::kGat && (!is_sparse || layers > 1);
        const auto same = [&](const auto& a, const auto& b) {
          if (!reordered) return a == b;
          return test::relative_error(RowMatrix<float>(a), RowMatrix<float>(b)) < 1e-5;
        };
        const auto options = small_options(kind, layers);  // with both dropouts
        const auto rows = maskgat::masks::receptive_rows(mask, outputs, layers);
        std::size_t formed = 0;
        for (const auto value : rows.front()) formed += value;
        REQUIRE(formed < 300);
        maskgat::Rng init(5);
        nn::Model all(options, init);
        maskgat::Rng init_again(5);
        nn::Model some(options, init_again);
        for (const auto mode : {nn::Mode::kTrain, nn::Mode::kEval}) {
          maskgat::Rng rng(2);
          RowMatrix<float> grad;
          const RowMatrix<float> logits = all.forward(mask, x, mode, rng);
          maskgat::Rng rng_again(2);
          RowMatrix<float> grad_some;
          const RowMatrix<float> logits_some = some.forward(mask, rows, x, mode, rng_again);
          for (const NodeId node : outputs) CHECK(same(logits_some.row(node), logits.row(node)));
          if (mode == nn::Mode::kEval) continue;
          all.parameters().zero_grad();
          some.parameters().zero_grad();
          nn::nll_loss(logits, labels, outputs, &grad);
          all.backward(mask, x, grad);
          nn::nll_loss(logits_some, labels, outputs, &grad_some);
          some.backward(mask, x, grad_some);
          const auto a = all.parameters().grads();
          const auto b = some.parameters().grads();
          const auto as_row = [](const auto& values) {
            return Eigen::Map<const RowMatrix<float>>(values.data(), 1,
                                                      static_cast<std::int64_t>(values.size()));
          };
          CHECK(same(as_row(a), as_row(b)));
        }
      }
    });
    maskgat::Rng rng(0);
    nn::Model model(small_options(nn::AttentionKind::kGat, 2), rng);
    const auto one = maskgat::masks::receptive_rows(mask, outputs, 1);
    CHECK_THROWS_WITH_AS(model.forward(mask, one, dense, nn::Mode::kEval, rng),
                         "model.forward: 1 row sets for a model of 2 layers",
                         maskgat::InvalidArgument);
    auto short_rows = maskgat::masks::receptive_rows(mask, outputs, 2);
    short_rows[1].pop_back();
    CHECK_THROWS_WITH_AS(model.forward(mask, short_rows, dense, nn::Mode::kEval, rng),
                         "model.forward: row set 1 has 299 bytes, expected the mask's 300 nodes",
                         maskgat::InvalidArgument);
  }

  TEST_CASE("Model rejects invalid options") {
    maskgat::Rng rng(0);
    auto options = small_options(nn::AttentionKind::kGat, 0);
    CHECK_THROWS_WITH_AS(nn::Model(options, rng), "model: layers is 0, expected a positive count",
                         maskgat::InvalidArgument);
    options = small_options(nn::AttentionKind::kGat, 2);
    options.dropout = 1.5;
    CHECK_THROWS_WITH_AS(nn::Model(options, rng), "model: dropout 1.500000 is outside [0, 1)",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(static_cast<void>(nn::parse_attention_kind("gcn")),
                         "attention must be gat, gatv2 or dot, got 'gcn'",
                         maskgat::InvalidArgument);
    CHECK(nn::parse_attention_kind("gatv2") == nn::AttentionKind::kGatV2);
  }
}
