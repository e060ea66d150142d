// The dot-product and MLP decoders and the binary cross-entropy of link prediction: values
// against direct formulas, exact gradients (central differences in double), and the refusals.

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/nn/link_decoder.hpp"
#include "support/central_differences.hpp"
#include "support/dense_attention.hpp"
#include "support/random_data.hpp"

namespace nn = maskgat::nn;
using maskgat::NodeId;
using maskgat::RowMatrix;

TEST_SUITE("unit") {
  TEST_CASE("link decoder: dot-product logits and the binary cross-entropy, exact gradients") {
    RowMatrix<double> z = maskgat::test::random_matrix<double>(6, 4, 3);
    const std::vector<NodeId> sources{0, 2, 5, 1, 3};
    const std::vector<NodeId> targets{1, 2, 0, 4, 5};  // a self-pair and a repeated node
    const std::vector<std::int32_t> labels{1, 0, 1, 0, 1};
    const std::vector<double> scores = nn::dot_scores(z, sources, targets);
    CHECK(scores[0] == doctest::Approx(z.row(0).dot(z.row(1))));
    CHECK(scores[1] == doctest::Approx(z.row(2).squaredNorm()));
    // The loss against its formula, log(1 + e^-x) for y = 1 and log(1 + e^x) for y = 0.
    double expected = 0.0;
    for (std::size_t k = 0; k < scores.size(); ++k) {
      expected += std::log1p(std::exp(labels[k] == 1 ? -scores[k] : scores[k]));
    }
    std::vector<double> grad(scores.size());
    CHECK(nn::binary_cross_entropy<double>(scores, labels, grad) ==
          doctest::Approx(expected / 5.0));
    RowMatrix<double> grad_z = RowMatrix<double>::Zero(6, 4);
    nn::dot_scores_backward<double>(z, sources, targets, grad, grad_z);
    const auto loss = [&] {
      const std::vector<double> s = nn::dot_scores(z, sources, targets);
      return nn::binary_cross_entropy<double>(s, labels, {});
    };
    const RowMatrix<double> numeric = maskgat::test::central_differences(
        std::span(z.data(), static_cast<std::size_t>(z.size())), z.rows(), z.cols(), loss);
    CHECK(maskgat::test::relative_error(grad_z, numeric) < 1e-6);
    // Large logits stay finite.
    const std::vector<double> extreme{800.0, -800.0};
    const std::vector<std::int32_t> wrong{0, 1};
    CHECK(nn::binary_cross_entropy<double>(extreme, wrong, {}) == doctest::Approx(800.0));
  }

  TEST_CASE("link decoder: the MLP on the elementwise product, values and exact gradients") {
    RowMatrix<double> z = maskgat::test::random_matrix<double>(6, 4, 5);
    const std::vector<NodeId> sources{0, 2, 5, 1, 3, 4};
    const std::vector<NodeId> targets{1, 2, 0, 4, 5, 1};
    const std::vector<std::int32_t> labels{1, 0, 1, 0, 1, 0};
    nn::ParameterStore<double> store;
    static_cast<void>(store.add("conv1.weight", 2, 2));  // a model's parameters come first
    maskgat::Rng rng(2);
    const nn::MlpDecoder mlp = nn::add_mlp_decoder(store, 4, 3, rng);
    for (auto& value : store.values()) value += 0.1;  // biases off zero, fewer dead units
    REQUIRE(nn::find_mlp_decoder(store));
    CHECK(nn::find_mlp_decoder(store)->out_weight.offset == mlp.out_weight.offset);
    nn::ParameterStore<double> plain;
    CHECK_FALSE(nn::find_mlp_decoder(plain));
    // Pair 3 by hand.
    const std::vector<double> logits = nn::pair_logits(z, store, &mlp, sources, targets);
    const Eigen::RowVectorXd input = z.row(1).cwiseProduct(z.row(4));
    const Eigen::RowVectorXd hidden =
        (input * store.value(mlp.hidden_weight) + store.value(mlp.hidden_bias)).cwiseMax(0.0);
    CHECK(logits[3] == doctest::Approx((hidden * store.value(mlp.out_weight))(0, 0) +
                                       store.value(mlp.out_bias)(0, 0)));
    CHECK(nn::pair_logits(z, store, nullptr, sources, targets) ==
          nn::dot_scores(z, sources, targets));
    // Gradients of the loss: the states and the decoder's four tensors.
    const auto loss = [&] {
      const std::vector<double> s = nn::pair_logits(z, store, &mlp, sources, targets);
      return nn::binary_cross_entropy<double>(s, labels, {});
    };
    std::vector<double> grad(sources.size());
    static_cast<void>(nn::binary_cross_entropy<double>(logits, labels, grad));
    store.zero_grad();
    RowMatrix<double> grad_z = RowMatrix<double>::Zero(6, 4);
    nn::pair_logits_backward<double>(z, store, &mlp, sources, targets, grad, grad_z);
    CHECK(maskgat::test::relative_error(
              grad_z, maskgat::test::central_differences(
                          std::span(z.data(), static_cast<std::size_t>(z.size())), z.rows(),
                          z.cols(), loss)) < 1e-6);
    const std::vector<double> analytic(store.grads().begin(), store.grads().end());
    for (const nn::Parameter& p :
         {mlp.hidden_weight, mlp.hidden_bias, mlp.out_weight, mlp.out_bias}) {
      const RowMatrix<double> backward =
          Eigen::Map<const RowMatrix<double>>(analytic.data() + p.offset, p.rows, p.cols);
      CHECK(maskgat::test::relative_error(
                backward, maskgat::test::central_differences(store.values(), p, loss)) < 1e-6);
    }
    CHECK(store.grad(store.find("conv1.weight").value()).isZero());
    CHECK_THROWS_WITH_AS(
        static_cast<void>(nn::pair_logits(RowMatrix<double>(6, 3), store, &mlp, sources, targets)),
        "pair_logits: states of width 3, the MLP decoder takes 4", maskgat::InvalidArgument);
    nn::ParameterStore<double> broken;
    static_cast<void>(broken.add("decoder.lin1.weight", 4, 3));
    CHECK_THROWS_WITH_AS(static_cast<void>(nn::find_mlp_decoder(broken)),
                         "find_mlp_decoder: decoder.lin1.weight is 4 x 3; expected "
                         "decoder.lin1.bias 1 x H, decoder.lin2.weight H x 1 and "
                         "decoder.lin2.bias 1 x 1 beside it",
                         maskgat::InvalidArgument);
  }

  TEST_CASE("link decoder: bad pairs and labels are refused with the values") {
    const RowMatrix<float> z = RowMatrix<float>::Ones(3, 2);
    const std::vector<NodeId> sources{0, 3};
    const std::vector<NodeId> targets{1, 1};
    CHECK_THROWS_WITH_AS(static_cast<void>(nn::dot_scores(z, sources, targets)),
                         "dot_scores: pair 1 names node 3, outside [0, 3)", maskgat::IndexError);
    const std::vector<float> logits{0.5F};
    const std::vector<std::int32_t> labels{2};
    CHECK_THROWS_WITH_AS(static_cast<void>(nn::binary_cross_entropy<float>(logits, labels, {})),
                         "binary_cross_entropy: label 0 is 2, expected 0 or 1",
                         maskgat::InvalidArgument);
  }
}
