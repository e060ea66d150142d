#pragma once
/// @file
/// What the attention layers share: the forward mode and exported attention weights.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "maskgat/core/tensor.hpp"
#include "maskgat/core/types.hpp"
#include "maskgat/export.hpp"
#include "maskgat/graph/graph.hpp"
#include "maskgat/nn/parameters.hpp"

namespace maskgat::nn {

/// A part of a graph that other processes hold the rest of (distributed training): how the
/// layers running on the part's mask (its own nodes' rows and its halo's, the remote sources its
/// rows read) get the halo's rows of their source-side projections from their owners, send them
/// the gradients of those rows, and number elements as the whole graph does so that they draw
/// the whole graph's dropout. `train::HaloExchange` implements it over a `Communicator`.
template <typename T>
class BasicHalo {
 public:
  virtual ~BasicHalo() = default;
  /// Overwrites the halo rows of a layer's source-side projection with the rows their owners
  /// computed. Collective: every part calls it at the same point.
  /// @param rows the part's rows, own and halo
  virtual void fill(RowMatrix<T>& rows) = 0;
  /// Adds the halo rows of `grad` into the owners' rows of the same nodes, adds what the other
  /// parts send into this part's own rows (in an order fixed by the partition), and zeroes the
  /// halo rows. Collective.
  /// @param grad the gradient of a layer's source-side projection, the part's rows
  virtual void reduce(RowMatrix<T>& grad) = 0;
  /// Per row of the part, its node's id in the whole graph.
  /// @return one id per row
  [[nodiscard]] virtual std::span<const NodeId> origins() const = 0;
  /// Per row, the whole graph's position of its first stored feature entry (sparse features).
  /// @return one number per row, or empty for dense features
  [[nodiscard]] virtual std::span<const std::int64_t> first_entries() const = 0;
  /// Per row of the part, the whole graph's number of its first attention entry, its other
  /// entries numbered on from it in order (any number on the halo rows, which are never formed).
  /// @return one number per row
  [[nodiscard]] virtual std::span<const std::int64_t> first_edges() const = 0;
};

/// Training applies attention dropout (drawing its key from the caller's `Rng`); evaluation
/// never does and leaves the `Rng` untouched.
enum class Mode { kTrain, kEval };

/// The attention coefficients of one forward pass, per edge and head, with the edge list they
/// refer to.
///
/// Edges are in the destination-major order of the mask the layer ran on: grouped by destination,
/// sources ascending. When the layer added self-loops (`add_self_loops`), the mask is the input
/// graph plus one loop `i -> i` for every node that had none, each loop placed among node i's
/// in-edges at the position of source i. Coefficients are the softmax output before attention
/// dropout, so every destination's column of each head sums to 1.
template <typename T>
struct MASKGAT_EXPORT AttentionWeights {
  std::vector<NodeId> sources;       ///< E source ids (j)
  std::vector<NodeId> destinations;  ///< E destination ids (i)
  RowMatrix<T> alpha;                ///< E x H

  /// The edges into `node` (its row of the mask), by binary search: rows `first` to `last - 1`
  /// of `sources` and `alpha`, sources ascending. O(log E).
  /// @param node a destination id
  /// @return `{first, last}`, empty (`first == last`) when `node` has no in-edge
  [[nodiscard]] std::pair<std::size_t, std::size_t> in_edges(NodeId node) const {
    const auto [first, last] = std::equal_range(destinations.begin(), destinations.end(), node);
    return {static_cast<std::size_t>(first - destinations.begin()),
            static_cast<std::size_t>(last - destinations.begin())};
  }
};

/// The parameters of a projection `x W + b` inside a layer: W is F_in x F_out (`x W`, the
/// transpose of PyTorch's `Linear.weight`), the bias 1 x F_out and optional.
struct Projection {
  Parameter weight;               ///< W, F_in x F_out
  std::optional<Parameter> bias;  ///< b, 1 x F_out, when the projection has one
};

/// Pairs the mask a forward ran on with its alpha (E x H) as `AttentionWeights`. O(N + E).
/// @param mask  the mask the forward attended over (with any self-loops the layer added)
/// @param alpha E x H, in the mask's destination-major edge order
/// @return the mask's E sources and destinations and a copy of `alpha`
template <typename T>
[[nodiscard]] MASKGAT_EXPORT AttentionWeights<T> attention_weights(const Graph& mask,
                                                                   const RowMatrix<T>& alpha);

}  // namespace maskgat::nn
