#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/nn/dropout.hpp"
#include "maskgat/nn/loss.hpp"
#include "support/dense_attention.hpp"
#include "support/random_data.hpp"

using maskgat::DropoutKey;
using maskgat::NodeId;
using maskgat::RowMatrix;
namespace nn = maskgat::nn;
namespace test = maskgat::test;

TEST_SUITE("unit") {
  TEST_CASE("dense dropout keeps about 1 - p of the entries, scales them, and backward agrees") {
    const RowMatrix<double> x = RowMatrix<double>::Ones(300, 100);
    RowMatrix<double> out;
    nn::dropout(x, DropoutKey{0.75, 11, 2}, out);
    const double kept = static_cast<double>((out.array() != 0.0).count()) / 30000.0;
    CHECK(kept == doctest::Approx(0.25).epsilon(0.05));
    CHECK(((out.array() == 0.0) || (out.array() == 4.0)).all());
    RowMatrix<double> grad;
    nn::dropout_backward(x, DropoutKey{0.75, 11, 2}, grad);
    CHECK(grad == out);
    RowMatrix<double> in_place = x;
    nn::dropout(in_place, DropoutKey{0.75, 11, 2}, in_place);
    CHECK(in_place == out);
    RowMatrix<double> none;
    nn::dropout(x, DropoutKey{}, none);
    CHECK(none == x);
    CHECK_THROWS_WITH_AS(nn::dropout(x, DropoutKey{1.0, 0, 0}, out),
                         "dropout: dropout probability 1.000000 is outside [0, 1)",
                         maskgat::InvalidArgument);
  }

  TEST_CASE(
      "sparse dropout keeps about 1 - p of the stored entries, scaled, and leaves out the rest") {
    // 1000 rows: several of the parallel passes' row blocks.
    const auto x = test::random_sparse<double>(1000, 50, 0.1, 3);
    maskgat::RowSparse<double> out;
    nn::dropout(x, DropoutKey{0.5, 4, 0}, out);
    REQUIRE(out.isCompressed());
    REQUIRE(out.rows() == x.rows());
    REQUIRE(out.cols() == x.cols());
    // Every kept entry is 2x the entry of x at the same place; the densified result is x with
    // some entries zeroed.
    const RowMatrix<double> dense_x = RowMatrix<double>(x);
    const RowMatrix<double> dense_out = RowMatrix<double>(out);
    CHECK(((dense_out.array() == 0.0) || (dense_out.array() == 2.0 * dense_x.array())).all());
    CHECK((dense_out.array() != 0.0).count() == out.nonZeros());
    const double kept = static_cast<double>(out.nonZeros()) / static_cast<double>(x.nonZeros());
    CHECK(kept == doctest::Approx(0.5).epsilon(0.1));
    // Reusing the output for another key gives that key's mask, not a mix.
    maskgat::RowSparse<double> fresh;
    nn::dropout(x, DropoutKey{0.3, 5, 0}, fresh);
    nn::dropout(x, DropoutKey{0.3, 5, 0}, out);
    CHECK(RowMatrix<double>(fresh) == RowMatrix<double>(out));
    nn::dropout(x, DropoutKey{}, out);
    CHECK(RowMatrix<double>(out) == dense_x);
    CHECK_THROWS_WITH_AS(nn::dropout(out, DropoutKey{0.5, 1, 0}, out),
                         "dropout: the sparse output must not be the input",
                         maskgat::InvalidArgument);
  }

  TEST_CASE("sparse float dropout keeps the same entries as the double one, packed in order") {
    // Rows of about 60 entries: float inputs pack their kept entries 16 at a time where AVX-512
    // is compiled in, double ones one by one. Scales of 2 and 4 are exact in both types.
    const auto x = test::random_sparse<double>(1000, 200, 0.3, 7);
    const maskgat::RowSparse<float> x_float = x.cast<float>();
    for (const double p : {0.5, 0.75}) {
      CAPTURE(p);
      maskgat::RowSparse<double> out;
      maskgat::RowSparse<float> out_float;
      nn::dropout(x, DropoutKey{p, 8, 1}, out);
      nn::dropout(x_float, DropoutKey{p, 8, 1}, out_float);
      REQUIRE(out_float.nonZeros() == out.nonZeros());
      CHECK(RowMatrix<float>(out_float) == RowMatrix<double>(out).cast<float>());
      CHECK(std::equal(out.outerIndexPtr(), out.outerIndexPtr() + out.rows() + 1,
                       out_float.outerIndexPtr()));
    }
  }

  TEST_CASE("dropout probabilities are rounded to multiples of 2^-16 and the scale follows") {
    const RowMatrix<double> x = RowMatrix<double>::Ones(1, 4096);
    RowMatrix<double> out;
    nn::dropout(x, DropoutKey{1e-6, 1, 0}, out);
    CHECK(out == x);  // below 2^-17: rounds to 0, nothing dropped
    nn::dropout(x, DropoutKey{0.25, 1, 0}, out);
    CHECK(((out.array() == 0.0) || (out.array() == 4.0 / 3.0)).all());
    nn::dropout(x, DropoutKey{0.6, 1, 0}, out);
    const double scale = 65536.0 / (65536.0 - 39322.0);  // round(0.6 * 2^16) = 39322
    CHECK(((out.array() == 0.0) || (out.array() == scale)).all());
  }

  TEST_CASE("softmax and nll_loss match the closed form and their gradient") {
    RowMatrix<double> logits(3, 3);
    logits << 1.0, 2.0, 3.0, 1000.0, 0.0, -1000.0, 0.5, 0.5, 0.5;
    RowMatrix<double> probabilities;
    nn::softmax(logits, probabilities);
    const double z = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
    CHECK(probabilities(0, 2) == doctest::Approx(std::exp(3.0 - z)).epsilon(1e-15));
    CHECK(probabilities(1, 0) == 1.0);
    CHECK(probabilities(1, 1) == doctest::Approx(std::exp(-1000.0)).epsilon(1e-15));
    CHECK(probabilities(1, 2) < 1e-300);
    CHECK(probabilities(2, 1) == doctest::Approx(1.0 / 3.0).epsilon(1e-15));
    // Several row blocks of a few classes each, against the closed form in double.
    const RowMatrix<float> many = RowMatrix<float>::Random(600, 7) * 20.0F;
    RowMatrix<float> many_probabilities;
    nn::softmax(many, many_probabilities);
    REQUIRE(many_probabilities.rows() == 600);
    REQUIRE(many_probabilities.cols() == 7);
    for (std::int64_t i = 0; i < many.rows(); ++i) {
      const Eigen::ArrayXd row = many.row(i).cast<double>().transpose().array();
      const Eigen::ArrayXd expected =
          (row - row.maxCoeff()).exp() / (row - row.maxCoeff()).exp().sum();
      for (std::int64_t k = 0; k < many.cols(); ++k) {
        CHECK(many_probabilities(i, k) == doctest::Approx(expected(k)).epsilon(1e-5));
      }
    }

    const std::vector<std::int32_t> labels{2, 1, 0};
    const std::vector<NodeId> nodes{0, 2};
    RowMatrix<double> grad;
    const double loss = nn::nll_loss(logits, labels, nodes, &grad);
    CHECK(loss == doctest::Approx(((z - 3.0) + std::log(3.0)) / 2.0).epsilon(1e-15));
    CHECK(grad.row(1).isZero());
    // Central differences of the loss in every logit.
    for (std::int64_t i = 0; i < 3; ++i) {
      for (std::int64_t k = 0; k < 3; ++k) {
        RowMatrix<double> shifted = logits;
        shifted(i, k) += 1e-6;
        const double plus = nn::nll_loss<double>(shifted, labels, nodes);
        shifted(i, k) -= 2e-6;
        const double minus = nn::nll_loss<double>(shifted, labels, nodes);
        CHECK(grad(i, k) == doctest::Approx((plus - minus) / 2e-6).epsilon(1e-7));
      }
    }
    const std::vector<std::int32_t> bad_labels{2, 1, 7};
    CHECK_THROWS_WITH_AS(nn::nll_loss<double>(logits, bad_labels, nodes),
                         "nll_loss: node 2 has label 7, expected a class in [0, 3)",
                         maskgat::InvalidArgument);
    CHECK_THROWS_AS(nn::nll_loss<double>(logits, labels, {}), maskgat::InvalidArgument);
  }
}
