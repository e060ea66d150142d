#pragma once
// Seeded random graphs, matrices and datasets for the unit tests.

#include <cstdint>
#include <initializer_list>

#include "maskgat/core/random.hpp"
#include "maskgat/core/tensor.hpp"
#include "maskgat/graph/graph.hpp"
#include "maskgat/io/dataset.hpp"
#include "maskgat/io/tu.hpp"

namespace maskgat::test {

// A graph on `num_nodes` nodes where each node draws up to `max_in_degree` distinct in-neighbours
// uniformly (self-loops included only when `self_loops`); some nodes draw none.
Graph random_graph(NodeId num_nodes, std::int64_t max_in_degree, std::uint64_t seed,
                   bool self_loops = false);

// A graph whose in-degrees are heavily skewed: node i has about `hub_degree / (i + 1)` plus a
// few random in-edges, so the first nodes hold a large share of all edges.
Graph skewed_graph(NodeId num_nodes, std::int64_t hub_degree, std::uint64_t seed);

// `graph` with every in-edge of `nodes` removed (they keep their out-edges).
Graph without_in_edges(const Graph& graph, std::initializer_list<NodeId> nodes);

// Entries uniform in [-scale, scale).
template <typename T>
RowMatrix<T> random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed,
                           double scale = 1.0);

// A sparse matrix whose entries are present with probability `density`, uniform in [-1, 1).
template <typename T>
RowSparse<T> random_sparse(std::int64_t rows, std::int64_t cols, double density,
                           std::uint64_t seed);

// A labelled synthetic dataset (`make_synthetic`, the generator's default homophily) with its
// seeded random split: `nodes` nodes of average in-degree `degree`.
Dataset synthetic_dataset(std::int64_t nodes, double degree, std::int64_t features,
                          std::int32_t classes, std::uint64_t seed);

// A collection of `graphs` random trees of 1 to 6 nodes (each edge in both directions), with
// features uniform in [-1, 1) and graph g labelled g % 3 (classes "0", "1", "2").
GraphCollection random_collection(std::int64_t graphs, std::int64_t features, std::uint64_t seed);

}  // namespace maskgat::test
