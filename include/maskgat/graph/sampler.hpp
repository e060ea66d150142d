#pragma once
/// @file
/// Neighbour sampling: the masks of a mini-batch, as DGL's `MultiLayerNeighborSampler` and PyG's
/// `NeighborLoader` build them, on which the attention layers run unchanged.

#include <cstdint>
#include <span>
#include <vector>

#include "maskgat/export.hpp"
#include "maskgat/graph/graph.hpp"

namespace maskgat {

/// What a stack of attention layers reads to compute its outputs at a batch of nodes: the nodes
/// involved, numbered locally, and one mask per layer on them (DGL's "blocks", on one numbering).
///
/// Local node k stands for `nodes[k]`. The outputs come first (`nodes[outputs[b]]` is the b-th
/// output), then the nodes each layer adds, in the order they were reached, so layer l's
/// destination rows, the nodes whose layer-l output the next layer reads, are the first
/// `destinations[l]` local nodes, and the nodes layer l reads are the first `destinations[l - 1]`
/// (all of `nodes` for the input layer). `masks[l]` is on those nodes: each destination row holds
/// its sampled in-edges and its self-loop, every other row only its self-loop (a GAT layer then
/// needs no loops of its own, and those rows cost one coefficient each). Sources are ascending
/// local ids within a row. `BasicModel::forward(masks, ...)` on the rows of the input at `nodes`
/// gives the outputs' logits at `outputs`.
struct MiniBatch {
  std::vector<NodeId> nodes;               ///< the original id of every local node
  std::vector<NodeId> outputs;             ///< local id of each output, in the order given
  std::vector<std::int64_t> destinations;  ///< per layer, input layer first: its row count
  /// Per layer, input layer first: `masks[0]` on every node, `masks[l]` on the first
  /// `destinations[l - 1]`.
  std::vector<Graph> masks;
};

/// Samples the in-neighbourhoods a mini-batch's outputs need, one layer at a time from the output
/// layer down: layer l's destination nodes (the outputs for the last layer, else every node the
/// layer above reads) each keep up to `fanouts[l]` of their in-neighbours, drawn uniformly
/// without replacement (all of them when they are fewer, or when the fanout is -1), and attend to
/// those and to themselves. Self-loops of the graph are never drawn: a node always attends to
/// itself, once.
///
/// The draw of node v's in-neighbours in layer l depends only on (`seed`, `epoch`, v, l): Floyd's
/// algorithm over the positions of v's row, its random numbers `counter_hash` values keyed so. A
/// batch is therefore the same on any number of threads, in any order of batches, and after a
/// resume. Destinations are sampled in parallel (oneTBB); local ids are given in one serial pass
/// in a fixed order.
///
/// A sampler keeps two arrays of N 32-bit words to number a batch's nodes, reused from batch to
/// batch, so `sample` is not re-entrant: use one sampler per batch sampled at the same time.
class MASKGAT_EXPORT NeighborSampler {
 public:
  /// @param graph   the graph whose in-edges are sampled (its sources ascending per row, as
  ///                every `Graph`'s); must outlive the sampler
  /// @param fanouts one per layer, the input layer's first (as DGL orders them; PyG's
  ///                `num_neighbors` lists the hops from the outputs, the reverse): each >= 0, or
  ///                -1 for every in-neighbour
  /// @param seed    the run's seed
  /// @throws InvalidArgument when `fanouts` is empty or holds a value below -1.
  NeighborSampler(const Graph& graph, std::vector<std::int64_t> fanouts, std::uint64_t seed);

  /// The masks of the batch whose outputs are `outputs`, drawn for `epoch`. Cost O(N) on the
  /// first call (the numbering arrays), then O(sampled edges) plus, per layer, O(rows) to build
  /// each mask.
  /// @param outputs the batch's nodes, each in [0, N); repeats share one local node
  /// @param epoch   with the seed, keys the draws
  /// @return the batch: its nodes, masks and the outputs' local ids
  /// @throws InvalidArgument when an output is outside [0, N).
  [[nodiscard]] MiniBatch sample(std::span<const NodeId> outputs, std::uint64_t epoch);

  /// The in-neighbours layer `layer` draws for `node` at `epoch`, as `sample` keeps them:
  /// min(fanout, in-degree) distinct sources of its row, its self-loop excluded, ascending.
  /// @param node  in [0, N)
  /// @param layer in [0, layers)
  /// @param epoch the epoch
  /// @return the sampled sources
  /// @throws InvalidArgument when `node` or `layer` is out of range.
  [[nodiscard]] std::vector<NodeId> sample_row(NodeId node, std::int64_t layer,
                                               std::uint64_t epoch) const;

  /// The fanouts, the input layer's first.
  /// @return one per layer
  [[nodiscard]] std::span<const std::int64_t> fanouts() const noexcept { return fanouts_; }

 private:
  const Graph* graph_;
  std::vector<std::int64_t> fanouts_;
  std::uint64_t seed_;
  std::vector<std::uint32_t> stamps_;  // per node: the batch that numbered it last
  std::vector<NodeId> local_;          // per node: its local id in that batch
  std::uint32_t batch_ = 0;
};

}  // namespace maskgat
