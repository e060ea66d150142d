#include "support/random_data.hpp"

#include <algorithm>
#include <vector>

#include "maskgat/graph/build.hpp"
#include "maskgat/io/synthetic.hpp"

namespace maskgat::test {
namespace {

Graph graph_from_degrees(NodeId num_nodes, const std::vector<std::int64_t>& degrees,
                         bool self_loops, Rng& rng) {
  EdgeList edges;
  for (NodeId i = 0; i < num_nodes; ++i) {
    for (std::int64_t k = 0; k < degrees[static_cast<std::size_t>(i)]; ++k) {
      const auto j = static_cast<NodeId>(rng.uniform_int(static_cast<std::uint64_t>(num_nodes)));
      if (j == i && !self_loops) continue;
      edges.sources.push_back(j);
      edges.targets.push_back(i);
    }
  }
  return build_graph(num_nodes, edges).graph;
}

}  // namespace

Graph random_graph(NodeId num_nodes, std::int64_t max_in_degree, std::uint64_t seed,
                   bool self_loops) {
  Rng rng(seed);
  std::vector<std::int64_t> degrees(static_cast<std::size_t>(num_nodes));
  for (auto& degree : degrees) {
    degree =
        static_cast<std::int64_t>(rng.uniform_int(static_cast<std::uint64_t>(max_in_degree) + 1));
  }
  return graph_from_degrees(num_nodes, degrees, self_loops, rng);
}

Graph skewed_graph(NodeId num_nodes, std::int64_t hub_degree, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::int64_t> degrees(static_cast<std::size_t>(num_nodes));
  for (std::size_t i = 0; i < degrees.size(); ++i) {
    degrees[i] =
        std::min<std::int64_t>(num_nodes - 1, hub_degree / static_cast<std::int64_t>(i + 1) +
                                                  static_cast<std::int64_t>(rng.uniform_int(8)));
  }
  return graph_from_degrees(num_nodes, degrees, false, rng);
}

Graph without_in_edges(const Graph& graph, std::initializer_list<NodeId> nodes) {
  EdgeList edges;
  for (NodeId i = 0; i < graph.num_nodes(); ++i) {
    if (std::find(nodes.begin(), nodes.end(), i) != nodes.end()) continue;
    for (const NodeId j : graph.in_neighbors(i)) {
      edges.sources.push_back(j);
      edges.targets.push_back(i);
    }
  }
  return build_graph(graph.num_nodes(), edges).graph;
}

template <typename T>
RowMatrix<T> random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed, double scale) {
  Rng rng(seed);
  RowMatrix<T> matrix(rows, cols);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      matrix(r, c) = static_cast<T>((2.0 * rng.uniform() - 1.0) * scale);
    }
  }
  return matrix;
}

template <typename T>
RowSparse<T> random_sparse(std::int64_t rows, std::int64_t cols, double density,
                           std::uint64_t seed) {
  Rng rng(seed);
  std::vector<Eigen::Triplet<T>> entries;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      if (rng.uniform() < density) {
        entries.emplace_back(static_cast<int>(r), static_cast<int>(c),
                             static_cast<T>(2.0 * rng.uniform() - 1.0));
      }
    }
  }
  RowSparse<T> matrix(rows, cols);
  matrix.setFromTriplets(entries.begin(), entries.end());
  return matrix;
}

template RowMatrix<float> random_matrix<float>(std::int64_t, std::int64_t, std::uint64_t, double);
template RowMatrix<double> random_matrix<double>(std::int64_t, std::int64_t, std::uint64_t, double);
template RowSparse<float> random_sparse<float>(std::int64_t, std::int64_t, double, std::uint64_t);
template RowSparse<double> random_sparse<double>(std::int64_t, std::int64_t, double, std::uint64_t);

Dataset synthetic_dataset(std::int64_t nodes, double degree, std::int64_t features,
                          std::int32_t classes, std::uint64_t seed) {
  SyntheticOptions options;
  options.nodes = nodes;
  options.degree = degree;
  options.features = features;
  options.classes = classes;
  options.seed = seed;
  return make_synthetic(options, {});
}

GraphCollection random_collection(std::int64_t graphs, std::int64_t features, std::uint64_t seed) {
  Rng rng(seed);
  GraphCollection c;
  c.name = "random";
  c.offsets.push_back(0);
  EdgeList edges;
  for (std::int64_t g = 0; g < graphs; ++g) {
    const std::int64_t first = c.offsets.back();
    const auto n = static_cast<std::int64_t>(1 + rng.uniform_int(6));
    for (std::int64_t i = 1; i < n; ++i) {
      const auto j = static_cast<std::int64_t>(rng.uniform_int(static_cast<std::uint64_t>(i)));
      for (const auto& [s, t] : {std::pair{i, j}, std::pair{j, i}}) {
        edges.sources.push_back(static_cast<NodeId>(first + s));
        edges.targets.push_back(static_cast<NodeId>(first + t));
      }
    }
    c.offsets.push_back(first + n);
    c.labels.push_back(static_cast<std::int32_t>(g % 3));
  }
  c.graph = build_graph(c.offsets.back(), edges).graph;
  c.features = random_matrix<float>(c.offsets.back(), features, seed + 1);
  c.class_names = {"0", "1", "2"};
  return c;
}

}  // namespace maskgat::test
