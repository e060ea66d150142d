// Positional encodings against their closed forms: sinusoids by formula, random-walk return
// probabilities against dense matrix powers.
#include <doctest/doctest.h>
#include <tbb/global_control.h>

#include <Eigen/Dense>
#include <cmath>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/graph/build.hpp"
#include "maskgat/transforms/positional.hpp"
#include "support/random_data.hpp"

using maskgat::Graph;
using maskgat::NodeId;

namespace {

// [(D^-1 A)^t]_ii for t = 1..steps, from the dense walk matrix P(j, i) = #(j -> i) / outdeg(j).
Eigen::MatrixXd dense_return_probabilities(const Graph& graph, std::int64_t steps) {
  const NodeId n = graph.num_nodes();
  Eigen::MatrixXd step = Eigen::MatrixXd::Zero(n, n);
  for (NodeId i = 0; i < n; ++i) {
    for (const NodeId j : graph.in_neighbors(i)) {
      step(j, i) += 1.0 / static_cast<double>(graph.out_degree(j));
    }
  }
  Eigen::MatrixXd power = Eigen::MatrixXd::Identity(n, n);
  Eigen::MatrixXd out(n, steps);
  for (std::int64_t t = 0; t < steps; ++t) {
    power = power * step;
    out.col(t) = power.diagonal();
  }
  return out;
}

void check_against_dense(const Graph& graph, std::int64_t steps) {
  const auto encoded = maskgat::transforms::random_walk_encoding(graph, steps);
  const Eigen::MatrixXd expected = dense_return_probabilities(graph, steps);
  REQUIRE(encoded.rows() == graph.num_nodes());
  REQUIRE(encoded.cols() == steps);
  CHECK((encoded.cast<double>() - expected).cwiseAbs().maxCoeff() <= 1e-6);
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("sinusoidal_encoding matches sin(p / base^(2k/d)) and cos(p / base^(2k/d))") {
    for (const std::int64_t dims : {1, 6, 7, 16}) {
      const auto encoded = maskgat::transforms::sinusoidal_encoding(50, dims, 100.0);
      REQUIRE(encoded.rows() == 50);
      REQUIRE(encoded.cols() == dims);
      for (std::int64_t p = 0; p < 50; ++p) {
        for (std::int64_t c = 0; c < dims; ++c) {
          const double k = static_cast<double>(c / 2);
          const double angle =
              static_cast<double>(p) / std::pow(100.0, 2.0 * k / static_cast<double>(dims));
          const double expected = c % 2 == 0 ? std::sin(angle) : std::cos(angle);
          CHECK(std::abs(encoded(p, c) - expected) <= 1e-7);
        }
      }
    }
    const auto paper = maskgat::transforms::sinusoidal_encoding(3, 4);
    CHECK(paper(0, 0) == 0.0F);
    CHECK(paper(0, 1) == 1.0F);
    CHECK(paper(2, 0) == static_cast<float>(std::sin(2.0)));
    CHECK(paper(2, 3) == static_cast<float>(std::cos(2.0 / 100.0)));
    CHECK(maskgat::transforms::sinusoidal_encoding(0, 4).rows() == 0);
  }

  TEST_CASE("random_walk_encoding matches dense matrix powers") {
    SUBCASE("an undirected path: walks return only after even steps") {
      const Graph path =
          maskgat::build_graph(4, maskgat::EdgeList{{0, 1, 1, 2, 2, 3}, {1, 0, 2, 1, 3, 2}, {}})
              .graph;
      check_against_dense(path, 6);
      const auto encoded = maskgat::transforms::random_walk_encoding(path, 2);
      CHECK(encoded(0, 0) == 0.0F);
      CHECK(encoded(0, 1) == 0.5F);  // 0 -> 1 -> 0 with probability 1 * 1/2
    }
    SUBCASE("a directed graph with a sink and a self-loop") {
      // 0 -> 1, 0 -> 2, 1 -> 0, 2 -> 2, 2 -> 3; node 3 has no out-edges.
      const Graph graph =
          maskgat::build_graph(4, maskgat::EdgeList{{0, 0, 1, 2, 2}, {1, 2, 0, 2, 3}, {}}).graph;
      check_against_dense(graph, 5);
    }
    SUBCASE("random graphs over several blocks of 64 start nodes") {
      check_against_dense(maskgat::test::random_graph(150, 4, 3, true), 8);
      check_against_dense(maskgat::test::random_graph(70, 6, 4, false), 3);
    }
  }

  TEST_CASE("random_walk_encoding is the same on 1 and 2 threads, bit for bit") {
    const Graph graph = maskgat::test::random_graph(300, 5, 9, true);
    maskgat::RowMatrix<float> one;
    {
      const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
      one = maskgat::transforms::random_walk_encoding(graph, 6);
    }
    CHECK(maskgat::transforms::random_walk_encoding(graph, 6) == one);
  }

  TEST_CASE("positional encodings reject bad arguments") {
    CHECK_THROWS_WITH_AS(maskgat::transforms::sinusoidal_encoding(-1, 4),
                         "sinusoidal_encoding: positions -1 is negative", maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(maskgat::transforms::sinusoidal_encoding(3, 0),
                         "sinusoidal_encoding: dims 0, expected a positive width",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(maskgat::transforms::sinusoidal_encoding(3, 4, 1.0),
                         "sinusoidal_encoding: base 1.000000, expected a finite number greater "
                         "than 1",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(maskgat::transforms::random_walk_encoding(Graph(), 0),
                         "random_walk_encoding: steps 0, expected a positive count",
                         maskgat::InvalidArgument);
  }
}
