#include "maskgat/transforms/positional.hpp"

#include <Eigen/Core>
#include <cmath>
#include <string>

#include "detail/parallel.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat::transforms {
namespace {

// Walks propagated together: a row of the N x kWalks distributions is a few vector registers.
constexpr std::int64_t kWalks = 64;

}  // namespace

RowMatrix<float> sinusoidal_encoding(std::int64_t positions, std::int64_t dims, double base) {
  if (positions < 0) {
    throw InvalidArgument("sinusoidal_encoding: positions " + std::to_string(positions) +
                          " is negative");
  }
  if (dims <= 0) {
    throw InvalidArgument("sinusoidal_encoding: dims " + std::to_string(dims) +
                          ", expected a positive width");
  }
  if (!(base > 1.0) || !std::isfinite(base)) {
    throw InvalidArgument("sinusoidal_encoding: base " + std::to_string(base) +
                          ", expected a finite number greater than 1");
  }
  RowMatrix<float> out(positions, dims);
  detail::for_each_block(positions, detail::kRowBlock, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t p = begin; p < end; ++p) {
      for (std::int64_t c = 0; c < dims; ++c) {
        const double angle =
            static_cast<double>(p) /
            std::pow(base, static_cast<double>(c - c % 2) / static_cast<double>(dims));
        out(p, c) = static_cast<float>(c % 2 == 0 ? std::sin(angle) : std::cos(angle));
      }
    }
  });
  return out;
}

RowMatrix<float> random_walk_encoding(const Graph& graph, std::int64_t steps) {
  if (steps <= 0) {
    throw InvalidArgument("random_walk_encoding: steps " + std::to_string(steps) +
                          ", expected a positive count");
  }
  const NodeId n = graph.num_nodes();
  RowMatrix<float> out(n, steps);
  using Walks = Eigen::Matrix<double, Eigen::Dynamic, kWalks, Eigen::RowMajor>;
  detail::for_each_block(n, kWalks, [&](std::int64_t first, std::int64_t last) {
    // Column c is the distribution of the walk started at node first + c; moving one step,
    // node i collects from each in-neighbour j its probability divided by j's out-degree.
    Walks now = Walks::Zero(n, kWalks);
    Walks next(n, kWalks);
    for (std::int64_t c = 0; c < last - first; ++c) now(first + c, c) = 1.0;
    for (std::int64_t t = 0; t < steps; ++t) {
      for (NodeId i = 0; i < n; ++i) {
        auto row = next.row(i);
        row.setZero();
        for (const NodeId j : graph.in_neighbors(i)) {
          row += now.row(j) / static_cast<double>(graph.out_degree(j));
        }
      }
      now.swap(next);
      for (std::int64_t c = 0; c < last - first; ++c) {
        out(first + c, t) = static_cast<float>(now(first + c, c));
      }
    }
  });
  return out;
}

}  // namespace maskgat::transforms
