#pragma once
/// @file
/// Splitting a graph's edges for link prediction (the GAE protocol, as PyG's `RandomLinkSplit`)
/// and drawing negative node pairs (as PyG's `negative_sampling`).

#include <cstdint>
#include <vector>

#include "maskgat/core/types.hpp"
#include "maskgat/export.hpp"
#include "maskgat/graph/graph.hpp"

namespace maskgat {

/// Node pairs as parallel arrays: pair k is `sources[k] -> targets[k]`.
struct NodePairs {
  std::vector<NodeId> sources;  ///< the first node of every pair
  std::vector<NodeId> targets;  ///< the second, as many as `sources`

  /// The number of pairs.
  /// @return `sources.size()`
  [[nodiscard]] std::int64_t size() const noexcept {
    return static_cast<std::int64_t>(sources.size());
  }
};

/// Options of `split_edges`, with the GAE protocol's defaults (Kipf and Welling 2016: 85 / 5 / 10).
struct EdgeSplitOptions {
  double val_fraction = 0.05;   ///< share of the edges held out for validation, in [0, 1)
  double test_fraction = 0.10;  ///< share held out for test; with `val_fraction` below 1
  /// Each edge is an undirected pair listed both ways: a held-out edge leaves the training graph
  /// in both directions, and every pair is counted and listed once (source < target). Otherwise
  /// every directed edge is a pair of its own and keeps its direction.
  bool undirected = true;
  std::uint64_t seed = 0;  ///< the only source of randomness
};

/// A graph's edges split for link prediction.
struct EdgeSplit {
  /// The graph message passing may see: every edge but the held-out ones (self-loops kept).
  Graph train;
  NodePairs train_edges;     ///< the training positives (undirected: each pair once)
  NodePairs val;             ///< held-out validation positives
  NodePairs test;            ///< held-out test positives
  NodePairs val_negatives;   ///< as many pairs as `val`, joined by no edge of the graph
  NodePairs test_negatives;  ///< as many pairs as `test`, joined by no edge of the graph
};

/// Holds out a seeded share of a graph's edges (self-loops are never held out): the edges are
/// shuffled from `options.seed`, the first round(val_fraction x E) validate, the next
/// round(test_fraction x E) test, the others train. The negatives of validation and test are
/// drawn once, from the seed, among the pairs that are edges of the graph in neither direction
/// (undirected) or not edges (directed), never self-loops, each pair at most once per set.
/// O(E log E + N), serial.
/// @param graph   any graph (for `undirected`, each edge listed both ways, as a symmetrised
///                graph has them; an edge listed one way only counts as the same pair)
/// @param options the shares, the direction and the seed
/// @return the training graph, the positives of each part and the fixed negatives
/// @throws InvalidArgument for shares outside [0, 1) or summing to 1 or more, or when the graph
///         has fewer pairs that are not edges than the negatives needed.
[[nodiscard]] MASKGAT_EXPORT EdgeSplit split_edges(const Graph& graph,
                                                   const EdgeSplitOptions& options);

/// The graph message passing may see when `first` and `second` are held out: every edge of
/// `graph` (self-loops included) but those of the pairs, in both directions for `undirected`.
/// O(E log H) for H held-out pairs, serial.
/// @param graph      any graph
/// @param first      pairs to remove (validation, say)
/// @param second     more pairs to remove (test, say)
/// @param undirected a pair removes both directions
/// @return the graph without them
/// @throws InvalidArgument when a pair list's sources and targets differ in number.
[[nodiscard]] MASKGAT_EXPORT Graph remove_pairs(const Graph& graph, const NodePairs& first,
                                                const NodePairs& second, bool undirected);

/// Draws `count` distinct node pairs that are not edges of `graph` (for `undirected`, in neither
/// direction, and each pair once with source < target) and no self-loops, uniformly by
/// rejection, from (`seed`, `stream`): the same pairs on any thread count, a fresh set per
/// stream (an epoch, say). O(count log d) expected while the graph is sparse, serial.
/// @param graph      the graph whose edges are excluded
/// @param count      the pairs to draw (0 or more)
/// @param undirected pairs are unordered
/// @param seed       the run's seed
/// @param stream     which set: different streams give independent draws (`split_edges` draws
///                   its validation negatives from stream 0 and its test negatives from 1)
/// @return `count` pairs
/// @throws InvalidArgument when the graph has fewer than `count` such pairs.
[[nodiscard]] MASKGAT_EXPORT NodePairs sample_negatives(const Graph& graph, std::int64_t count,
                                                        bool undirected, std::uint64_t seed,
                                                        std::uint64_t stream);

}  // namespace maskgat
