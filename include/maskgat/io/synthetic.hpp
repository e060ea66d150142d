#pragma once
/// @file
/// Seeded synthetic node-classification graphs (a contextual stochastic block model).

#include <cstdint>
#include <string_view>
#include <vector>

#include "maskgat/export.hpp"
#include "maskgat/io/dataset.hpp"

namespace maskgat {

/// Parameters of `make_synthetic`; the spec string is
/// `synthetic:nodes=N,degree=D,features=F,classes=K[,seed=S][,homophily=H][,communities=C]
/// [,intra=I]`. Every key is optional (the defaults below apply), so `synthetic` or `synthetic:`
/// alone is the default graph.
struct SyntheticOptions {
  std::int64_t nodes = 1000;    ///< N (> 0)
  double degree = 10.0;         ///< expected average in-degree, in [0, nodes - 1]
  std::int64_t features = 128;  ///< F (> 0)
  std::int32_t classes = 10;    ///< in [1, nodes]
  std::uint64_t seed = 0;       ///< the graph, the features and the split all derive from it
  /// Probability that an edge's source is drawn from its destination's class (otherwise from all
  /// nodes), so about `homophily + (1 - homophily) / classes` of the edges stay inside a class.
  double homophily = 0.8;
  /// C: with more than one, every node belongs to one of C communities (uniform, independent of
  /// its class and of its id) and a share `intra` of the edges is drawn inside the destination's
  /// community, so about `intra + (1 - intra) / C` of the edges join nodes of one community:
  /// the locality of real graphs, which partitioners find. In [1, nodes]; 1 (no communities)
  /// gives the graph of the other keys alone, bitwise.
  std::int64_t communities = 1;
  /// The share of edges drawn inside the destination's community when `communities` > 1, in
  /// [0, 1].
  double intra = 0.9;
};

/// Parses `synthetic:key=value,...`; keys may come in any order, each at most once. Unknown or
/// repeated keys and bad values throw `InvalidArgument` naming the key, the value and what is
/// expected, e.g. ``synthetic: nodes must be a positive integer, got 'abc'`` or
/// ``synthetic: unknown key 'foo' in 'synthetic:foo=1': expected nodes, degree, features, classes,
/// seed, homophily, communities or intra``. Only each value's own range is checked here;
/// `make_synthetic` checks the rest (e.g. classes at most nodes, degree at most nodes - 1).
/// @param spec `synthetic`, `synthetic:` or `synthetic:` followed by `key=value` items
/// @return the options, with the defaults for keys the spec does not give
/// @throws InvalidArgument as described.
[[nodiscard]] MASKGAT_EXPORT SyntheticOptions parse_synthetic_spec(std::string_view spec);

/// A homophilous degree-corrected stochastic block model with class-dependent Gaussian features:
/// - classes: uniform over `[0, K)`;
/// - node weights: Pareto with tail index 2.5 (heavy-tailed degrees);
/// - edges: node `i`'s in-degree target is `N·D·w_i / sum(w)`, rounded up or down at random
///   (the expected total is N·D), capped at N - 1; each in-edge draws its source by weight: with
///   several communities, from `i`'s community with probability `intra` (there from `i`'s class
///   with probability `homophily`, else from the whole community), otherwise, and without
///   communities always, from `i`'s class with probability `homophily`, else from all nodes;
///   self-loops and repeated
///   sources are redrawn (a bounded number of times, so rows of tiny classes may fall short);
/// - features: N x F dense, the class mean plus unit Gaussian noise; class means have i.i.d.
///   N(0, 2/F) entries, so two means are about two noise standard deviations apart for any F.
/// The graph is directed, simple, without self-loops; `name` is the canonical spec with every
/// key; class names are `0`..`K-1`, node names the decimal ids; the split is stratified random
/// (`draw_split` with `options.seed`, not `load.seed`); `load.normalize_features` applies.
/// Every random quantity derives from `counter_hash(seed, stream, node id)` (rows of features and
/// in-edges each get their own generator keyed so), so the result is bitwise the same for any
/// thread count. Cost O(N·F + E), parallel over nodes (TBB); memory: the output plus
/// about 64 bytes per node and 4 per edge.
/// @param options the generator's parameters
/// @param load    `normalize_features`, `split_sizes` and `read.limits` (not `seed`)
/// @return the dataset, named by its canonical spec
/// @throws InvalidArgument (sizes out of range, negative split sizes), LimitError (nodes, edges,
///         features or N·F values over `load.read.limits`).
[[nodiscard]] MASKGAT_EXPORT Dataset make_synthetic(const SyntheticOptions& options,
                                                    const DatasetOptions& load);

/// The community of every node of the graph `make_synthetic(options, ...)` makes (all 0 with one
/// community): the ground truth a partition of it can be measured against.
/// @param options the generator's parameters (only nodes, communities and seed matter)
/// @return one community in [0, communities) per node
/// @throws InvalidArgument when communities is not in [1, nodes]
[[nodiscard]] MASKGAT_EXPORT std::vector<std::int64_t> synthetic_communities(
    const SyntheticOptions& options);

}  // namespace maskgat
