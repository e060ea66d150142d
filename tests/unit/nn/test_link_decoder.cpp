// The dot-product decoder and the binary cross-entropy of link prediction: values against direct
// formulas, exact gradients (central differences in double), and the refusals.

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
