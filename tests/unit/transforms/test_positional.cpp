// Positional encodings against their closed forms: sinusoids by formula, random-walk return
// probabilities against dense matrix powers, Laplacian eigenvectors against the eigenvector
// equation, orthonormality and a dense eigensolve per component (and the cycle's cos spectrum).
#include <doctest/doctest.h>
#include <tbb/global_control.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/core/random.hpp"
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

// The dense L = I - D^-1/2 A D^-1/2 of the undirected simple version of `graph` (edges both
// ways, self-loops dropped); an isolated node's row and column are zero.
Eigen::MatrixXd dense_laplacian(const Graph& graph) {
  const NodeId n = graph.num_nodes();
  Eigen::MatrixXd adjacency = Eigen::MatrixXd::Zero(n, n);
  for (NodeId i = 0; i < n; ++i) {
    for (const NodeId j : graph.in_neighbors(i)) {
      if (j != i) adjacency(i, j) = adjacency(j, i) = 1.0;
    }
  }
  const Eigen::VectorXd degree = adjacency.rowwise().sum();
  Eigen::MatrixXd laplacian = Eigen::MatrixXd::Zero(n, n);
  for (NodeId i = 0; i < n; ++i) {
    if (degree[i] == 0.0) continue;
    laplacian(i, i) = 1.0;
    for (NodeId j = 0; j < n; ++j) {
      if (adjacency(i, j) != 0.0) laplacian(i, j) = -1.0 / std::sqrt(degree[i] * degree[j]);
    }
  }
  return laplacian;
}

// The connected components of the undirected version, each a list of nodes, by flood fill over
// the dense adjacency pattern of `laplacian` (independent of the library's weak_components).
std::vector<std::vector<NodeId>> components_of(const Eigen::MatrixXd& laplacian) {
  const auto n = static_cast<NodeId>(laplacian.rows());
  std::vector<bool> seen(static_cast<std::size_t>(n), false);
  std::vector<std::vector<NodeId>> components;
  for (NodeId start = 0; start < n; ++start) {
    if (seen[static_cast<std::size_t>(start)]) continue;
    std::vector<NodeId> nodes{start};
    seen[static_cast<std::size_t>(start)] = true;
    for (std::size_t next = 0; next < nodes.size(); ++next) {
      for (NodeId j = 0; j < n; ++j) {
        if (j != nodes[next] && laplacian(nodes[next], j) != 0.0 &&
            !seen[static_cast<std::size_t>(j)]) {
          seen[static_cast<std::size_t>(j)] = true;
          nodes.push_back(j);
        }
      }
    }
    std::sort(nodes.begin(), nodes.end());
    components.push_back(std::move(nodes));
  }
  return components;
}

// What check_laplacian_encoding saw, for tests that pin more than the generic properties.
struct EncodingCheck {
  std::vector<std::vector<NodeId>> components;
  std::vector<Eigen::VectorXd> eigenvalues;  // per component, λ = vᵀ L v of its columns
};

// Checks laplacian_encoding(graph, k) component by component, in double from the float output:
// - each non-padded column v with λ = vᵀ L_c v satisfies ||L_c v - λ v||_2 <= 1e-5 (Euclidean
//   norm over the component's nodes);
// - the non-padded columns V are orthonormal: max |VᵀV - I| <= 1e-5 (entrywise);
// - λ_j matches eigenvalue j + 1 (ascending, 0 being the null one) of a dense eigensolve of L_c
//   within 1e-5;
// - the largest-magnitude entry of each column is positive (up to ties), the sign convention;
// - columns n_c - 1 .. k - 1 are exactly zero, so isolated nodes get zero rows.
EncodingCheck check_laplacian_encoding(const Graph& graph, std::int64_t k) {
  const auto encoded = maskgat::transforms::laplacian_encoding(graph, k);
  REQUIRE(encoded.rows() == graph.num_nodes());
  REQUIRE(encoded.cols() == k);
  const Eigen::MatrixXd laplacian = dense_laplacian(graph);
  EncodingCheck seen{components_of(laplacian), {}};
  for (const auto& nodes : seen.components) {
    const auto size = static_cast<Eigen::Index>(nodes.size());
    CAPTURE(nodes.front());
    CAPTURE(size);
    Eigen::MatrixXd block(size, size);
    Eigen::MatrixXd vectors(size, k);
    for (Eigen::Index r = 0; r < size; ++r) {
      for (Eigen::Index c = 0; c < size; ++c) block(r, c) = laplacian(nodes[r], nodes[c]);
      vectors.row(r) = encoded.row(nodes[r]).cast<double>();
    }
    const Eigen::Index kept = std::min<Eigen::Index>(k, size - 1);
    CHECK((vectors.rightCols(k - kept).array() == 0.0).all());
    const Eigen::MatrixXd v = vectors.leftCols(kept);
    const Eigen::VectorXd exact =
        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(block, Eigen::EigenvaluesOnly).eigenvalues();
    Eigen::VectorXd lambdas(kept);
    for (Eigen::Index j = 0; j < kept; ++j) {
      CAPTURE(j);
      const Eigen::VectorXd column = v.col(j);
      lambdas[j] = column.dot(block * column);
      CHECK((block * column - lambdas[j] * column).norm() <= 1e-5);
      CHECK(std::abs(lambdas[j] - exact[j + 1]) <= 1e-5);
      CHECK(column.maxCoeff() >= (1.0 - 1e-5) * column.cwiseAbs().maxCoeff());
    }
    if (kept > 0) {
      const Eigen::MatrixXd gram = v.transpose() * v;
      CHECK((gram - Eigen::MatrixXd::Identity(kept, kept)).cwiseAbs().maxCoeff() <= 1e-5);
    }
    seen.eigenvalues.push_back(lambdas);
  }
  return seen;
}

// The cycle C_n as one-way edges i -> i + 1 (mod n), starting at node `first` of `edges`.
void add_cycle(maskgat::EdgeList& edges, NodeId first, NodeId n) {
  for (NodeId i = 0; i < n; ++i) {
    edges.sources.push_back(first + i);
    edges.targets.push_back(first + (i + 1) % n);
  }
}

// Several components of different sizes, stored every which way: a 5-path stored both ways and
// with a self-loop (4 non-trivial eigenvectors), a 10-cycle stored one way, a triangle, a single
// edge (eigenvalues 0 and 2), a 7-star, a 300-cycle (solved by Lanczos), an isolated node and
// an isolated node with a self-loop, interleaved in the node numbering.
Graph mixed_components() {
  maskgat::EdgeList edges;
  const auto edge = [&](NodeId a, NodeId b) {
    edges.sources.push_back(a);
    edges.targets.push_back(b);
  };
  // 5-path on 0, 2, 4, 6, 8, both ways, plus a self-loop at 4.
  for (NodeId i = 0; i < 8; i += 2) {
    edge(i, i + 2);
    edge(i + 2, i);
  }
  edge(4, 4);
  // Triangle 1, 3, 5; single edge 7 - 9; 10 isolated; 11 isolated with a self-loop.
  edge(1, 3);
  edge(5, 3);
  edge(1, 5);
  edge(9, 7);
  edge(11, 11);
  // 7-star: hub 12, leaves 13 .. 18 (edges towards the hub).
  for (NodeId leaf = 13; leaf <= 18; ++leaf) edge(leaf, 12);
  add_cycle(edges, 19, 10);
  add_cycle(edges, 29, 300);
  return maskgat::build_graph(329, edges).graph;
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

  TEST_CASE("laplacian_encoding: eigenvectors of each component, zero-padded") {
    const Graph graph = mixed_components();
    for (const std::int64_t k : {1, 3, 8, 12}) {
      CAPTURE(k);
      check_laplacian_encoding(graph, k);
    }
    const auto encoded = maskgat::transforms::laplacian_encoding(graph, 8);
    // Isolated nodes, with and without a self-loop, have no non-trivial eigenvector.
    CHECK((encoded.row(10).array() == 0.0F).all());
    CHECK((encoded.row(11).array() == 0.0F).all());
    // The single edge 7 - 9: eigenvalue 2 with eigenvector (1, -1) / sqrt(2), positive first.
    CHECK(std::abs(encoded(7, 0) - std::sqrt(0.5F)) <= 1e-6F);
    CHECK(std::abs(encoded(9, 0) + std::sqrt(0.5F)) <= 1e-6F);
    CHECK((encoded.row(7).tail(7).array() == 0.0F).all());
    // The triangle: L = I - (A / 2), eigenvalues 0, 3/2, 3/2.
    const auto seen = check_laplacian_encoding(graph, 8);
    REQUIRE(seen.components.size() == 8);
    CHECK(seen.components[1] == std::vector<NodeId>{1, 3, 5});
    CHECK(std::abs(seen.eigenvalues[1][0] - 1.5) <= 1e-6);
    CHECK(std::abs(seen.eigenvalues[1][1] - 1.5) <= 1e-6);
    const auto empty = maskgat::transforms::laplacian_encoding(Graph(), 3);
    CHECK(empty.rows() == 0);
    CHECK(empty.cols() == 3);
  }

  TEST_CASE("laplacian_encoding of a cycle matches 1 - cos(2 pi j / n), repeated eigenvalues") {
    // 40 nodes are solved densely, 600 by Lanczos; k = 7 cuts through a pair of equal
    // eigenvalues, k = 16 ends at one.
    for (const NodeId n : {40, 600}) {
      maskgat::EdgeList edges;
      add_cycle(edges, 0, n);
      const Graph cycle = maskgat::build_graph(n, edges).graph;
      std::vector<double> spectrum;
      for (NodeId j = 0; j < n; ++j) {
        spectrum.push_back(1.0 - std::cos(2.0 * std::numbers::pi * j / n));
      }
      std::sort(spectrum.begin(), spectrum.end());
      for (const std::int64_t k : {7, 16}) {
        CAPTURE(n);
        CAPTURE(k);
        const auto seen = check_laplacian_encoding(cycle, k);
        REQUIRE(seen.eigenvalues.size() == 1);
        for (std::int64_t j = 0; j < k; ++j) {
          CHECK(std::abs(seen.eigenvalues[0][j] - spectrum[static_cast<std::size_t>(j) + 1]) <=
                1e-6);
        }
      }
    }
  }

  TEST_CASE("laplacian_encoding of random graphs with a component solved by Lanczos") {
    const Graph graph = maskgat::test::random_graph(700, 2, 17, true);
    const auto seen = check_laplacian_encoding(graph, 10);
    const auto largest =
        std::max_element(seen.components.begin(), seen.components.end(),
                         [](const auto& a, const auto& b) { return a.size() < b.size(); });
    REQUIRE(largest->size() > 256);  // beyond the dense limit
    check_laplacian_encoding(maskgat::test::random_graph(400, 4, 5, false), 4);
  }

  TEST_CASE("laplacian_encoding is the same on 1 and 2 threads, bit for bit") {
    const Graph graph = mixed_components();
    const Graph random = maskgat::test::random_graph(700, 2, 17, true);
    maskgat::RowMatrix<float> one;
    maskgat::RowMatrix<float> one_random;
    {
      const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
      one = maskgat::transforms::laplacian_encoding(graph, 8);
      one_random = maskgat::transforms::laplacian_encoding(random, 8);
    }
    const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 2);
    CHECK(maskgat::transforms::laplacian_encoding(graph, 8) == one);
    CHECK(maskgat::transforms::laplacian_encoding(random, 8) == one_random);
  }

  TEST_CASE("flip_signs negates whole columns, the same way for the same seed and step") {
    const auto original = maskgat::test::random_matrix<float>(300, 64, 3);
    const auto flipped = [&](std::uint64_t seed, std::uint64_t step) {
      maskgat::RowMatrix<float> copy = original;
      maskgat::transforms::flip_signs(copy, seed, step);
      return copy;
    };
    // +1 or -1 per column.
    const auto signs = [&](const maskgat::RowMatrix<float>& copy) {
      std::vector<int> out;
      for (Eigen::Index c = 0; c < copy.cols(); ++c) {
        if (copy.col(c) == original.col(c)) {
          out.push_back(1);
        } else if (copy.col(c) == -original.col(c)) {
          out.push_back(-1);
        } else {
          out.push_back(0);  // not a sign flip of the whole column
        }
      }
      return out;
    };
    const auto step3 = signs(flipped(11, 3));
    CHECK(std::count(step3.begin(), step3.end(), 0) == 0);
    CHECK(std::count(step3.begin(), step3.end(), 1) > 0);
    CHECK(std::count(step3.begin(), step3.end(), -1) > 0);
    CHECK(flipped(11, 3) == flipped(11, 3));
    CHECK(signs(flipped(11, 4)) != step3);
    CHECK(signs(flipped(12, 3)) != step3);
    // The flips are tagged: they do not reuse the numbers of stream `step` of the seed, which
    // other draws of the same seed (the synthetic generator's streams 1..6) take.
    std::vector<int> untagged;
    for (std::size_t c = 0; c < step3.size(); ++c) {
      untagged.push_back((maskgat::counter_hash(11, 3, c) >> 63) != 0 ? -1 : 1);
    }
    CHECK(step3 != untagged);
    // Over many steps every column is flipped about half the time.
    std::vector<int> negated(64, 0);
    for (std::uint64_t step = 0; step < 200; ++step) {
      const auto drawn = signs(flipped(11, step));
      for (std::size_t c = 0; c < drawn.size(); ++c) negated[c] += drawn[c] < 0 ? 1 : 0;
    }
    for (const int count : negated) {
      CHECK(count > 50);
      CHECK(count < 150);
    }
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
    CHECK_THROWS_WITH_AS(maskgat::transforms::laplacian_encoding(Graph(), 0),
                         "laplacian_encoding: k 0, expected a positive number of eigenvectors",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(maskgat::transforms::laplacian_encoding(mixed_components(), -2),
                         "laplacian_encoding: k -2, expected a positive number of eigenvectors",
                         maskgat::InvalidArgument);
  }
}
