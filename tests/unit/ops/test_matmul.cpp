#include <doctest/doctest.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <array>
#include <cstdint>
#include <utility>

#include "maskgat/core/error.hpp"
#include "maskgat/ops/matmul.hpp"
#include "support/random_data.hpp"

using maskgat::RowMatrix;
using maskgat::RowSparse;
namespace ops = maskgat::ops;
namespace test = maskgat::test;

namespace {

// 3000 rows span several of the weight gradient's row blocks; 37 input columns and 70 output
// columns leave partial register blocks; the density leaves some rows empty.
constexpr std::int64_t kRows = 3000;
constexpr std::int64_t kCols = 37;
constexpr std::int64_t kOut = 70;

RowMatrix<double> weight_gradient(const RowSparse<double>& x, const RowMatrix<double>& grad_out,
                                  const RowMatrix<double>& start) {
  RowMatrix<double> grad_weight = start;
  ops::matmul_backward_weight<double>(x, grad_out, grad_weight);
  return grad_weight;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("sparse projections equal the dense products, and the weight gradient accumulates") {
    const RowSparse<double> x = test::random_sparse<double>(kRows, kCols, 0.05, 1);
    const RowMatrix<double> dense_x = RowMatrix<double>(x);
    REQUIRE((dense_x.rowwise().squaredNorm().array() == 0.0).any());
    const RowMatrix<double> weight = test::random_matrix<double>(kCols, kOut, 2);
    // Some rows of grad_out are zero, which the sparse weight gradient skips.
    RowMatrix<double> grad_out = test::random_matrix<double>(kRows, kOut, 3);
    for (std::int64_t i = 0; i < kRows; i += 4) grad_out.row(i).setZero();
    const RowMatrix<double> start = test::random_matrix<double>(kCols, kOut, 4);

    RowMatrix<double> out;
    ops::matmul<double>(x, weight, out);
    const RowMatrix<double> expected_out = dense_x * weight;
    CHECK((out - expected_out).norm() <= 1e-13 * expected_out.norm());

    const RowMatrix<double> grad_weight = weight_gradient(x, grad_out, start);
    const RowMatrix<double> expected = start + dense_x.transpose() * grad_out;
    CHECK((grad_weight - expected).norm() <= 1e-13 * expected.norm());

    const tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    CHECK(weight_gradient(x, grad_out, start) == grad_weight);
  }

  TEST_CASE("the sparse weight gradient of 64 columns over blocks of features is the product") {
    // 150,000 entries over 500 features of 64 columns: several blocks, each formed in scratch
    // rows of its own, and rows of grad_out held in registers.
    const RowSparse<double> x = test::random_sparse<double>(kRows, 500, 0.1, 6);
    RowMatrix<double> grad_out = test::random_matrix<double>(kRows, 64, 7);
    for (std::int64_t i = 0; i < kRows; i += 5) grad_out.row(i).setZero();
    const RowMatrix<double> start = test::random_matrix<double>(500, 64, 8);
    const RowMatrix<double> grad_weight = weight_gradient(x, grad_out, start);
    const RowMatrix<double> expected = start + RowMatrix<double>(x).transpose() * grad_out;
    CHECK((grad_weight - expected).norm() <= 1e-13 * expected.norm());
    const tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    CHECK(weight_gradient(x, grad_out, start) == grad_weight);
  }

  TEST_CASE("uncompressed sparse inputs project and scatter as their compressed copies") {
    // Rows with unused slots after their entries (as Eigen leaves them after `reserve`), the slots
    // filled with an index and a value that would change every result if read: one block of
    // features (37 of 70 columns) and several (500 of 64 columns).
    for (const auto& [cols, out_cols] : {std::pair<std::int64_t, std::int64_t>{kCols, kOut},
                                         std::pair<std::int64_t, std::int64_t>{500, 64}}) {
      CAPTURE(cols);
      const RowSparse<double> x = test::random_sparse<double>(kRows, cols, 0.1, 9);
      RowSparse<double> slack = x;
      slack.reserve(Eigen::VectorXi::Constant(kRows, 3));
      REQUIRE(!slack.isCompressed());
      for (std::int64_t i = 0; i < kRows; ++i) {
        const int used = slack.outerIndexPtr()[i] + slack.innerNonZeroPtr()[i];
        REQUIRE(slack.outerIndexPtr()[i + 1] - used == 3);
        for (int k = used; k < slack.outerIndexPtr()[i + 1]; ++k) {
          slack.innerIndexPtr()[k] = 0;
          slack.valuePtr()[k] = 1e30;
        }
      }
      REQUIRE(RowMatrix<double>(slack) == RowMatrix<double>(x));
      const RowMatrix<double> weight = test::random_matrix<double>(cols, out_cols, 10);
      RowMatrix<double> out;
      RowMatrix<double> out_slack;
      ops::matmul<double>(x, weight, out);
      ops::matmul<double>(slack, weight, out_slack);
      CHECK(out_slack == out);
      const RowMatrix<double> grad_out = test::random_matrix<double>(kRows, out_cols, 11);
      const RowMatrix<double> start = test::random_matrix<double>(cols, out_cols, 12);
      CHECK(weight_gradient(slack, grad_out, start) == weight_gradient(x, grad_out, start));
    }
  }

  TEST_CASE("the sparse weight gradient refuses rows whose column indices are not ascending") {
    // 90,000 entries over 300 features make blocks of features, one task each; row 0's first
    // and last entries, swapped, lie in the wrong blocks.
    RowSparse<double> x = test::random_sparse<double>(kRows, 300, 0.1, 5);
    const int first = x.outerIndexPtr()[0];
    const int last = x.outerIndexPtr()[1] - 1;
    REQUIRE(x.innerIndexPtr()[first] < 100);
    REQUIRE(x.innerIndexPtr()[last] >= 200);
    std::swap(x.innerIndexPtr()[first], x.innerIndexPtr()[last]);
    std::swap(x.valuePtr()[first], x.valuePtr()[last]);
    const RowMatrix<double> grad_out = test::random_matrix<double>(kRows, kOut, 3);
    RowMatrix<double> grad_weight = RowMatrix<double>::Zero(300, kOut);
    CHECK_THROWS_WITH_AS(
        ops::matmul_backward_weight<double>(x, grad_out, grad_weight),
        "ops::matmul_backward_weight: the column indices of x's row 0 are not ascending",
        maskgat::InvalidArgument);
  }

  TEST_CASE("sparse weight gradients computed inside parallel tasks are those computed alone") {
    // A thread that waits for a call's tasks may run another task's call meanwhile; each call
    // must still give what it gives alone.
    constexpr std::size_t kCalls = 16;
    constexpr std::int64_t kWide = 1000;
    std::array<RowSparse<double>, kCalls> xs;
    std::array<RowMatrix<double>, kCalls> alone;
    const RowMatrix<double> grad_out = test::random_matrix<double>(kRows, kOut, 3);
    const RowMatrix<double> start = RowMatrix<double>::Zero(kWide, kOut);
    for (std::size_t k = 0; k < kCalls; ++k) {
      xs[k] = test::random_sparse<double>(kRows, kWide, 0.01, 10 + k);
      alone[k] = weight_gradient(xs[k], grad_out, start);
    }
    for (int repeat = 0; repeat < 20; ++repeat) {
      std::array<RowMatrix<double>, kCalls> nested;
      tbb::parallel_for(std::size_t{0}, kCalls, [&](std::size_t k) {
        nested[k] = weight_gradient(xs[k], grad_out, start);
      });
      for (std::size_t k = 0; k < kCalls; ++k) CHECK(nested[k] == alone[k]);
    }
  }
}
