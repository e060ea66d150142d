#pragma once
/// @file
/// Readouts: one vector per graph from its nodes' rows (sum, mean, max, attention pooling), as
/// PyG's `global_add_pool`, `global_mean_pool`, `global_max_pool` and `AttentionalAggregation`.

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "maskgat/core/random.hpp"
#include "maskgat/core/tensor.hpp"
#include "maskgat/export.hpp"
#include "maskgat/nn/layer.hpp"
#include "maskgat/nn/parameters.hpp"

namespace maskgat::nn {

/// How a readout combines a graph's node rows.
enum class ReadoutKind {
  kSum,        ///< the sum of the rows
  kMean,       ///< their mean
  kMax,        ///< the elementwise maximum
  kAttention,  ///< a softmax-weighted sum, the weights from a learned gate
};

/// The name of a readout kind, as specs spell it.
/// @param kind any kind
/// @return `sum`, `mean`, `max` or `attention` (a static string)
[[nodiscard]] MASKGAT_EXPORT const char* readout_kind_name(ReadoutKind kind) noexcept;

/// Options of `Readout`.
struct ReadoutOptions {
  ReadoutKind kind = ReadoutKind::kSum;  ///< how the rows are combined
  std::int64_t features = 0;             ///< F, the width of the rows (> 0)
  /// Attention pooling's gates (> 0, dividing F): gate h scores every node on its whole row and
  /// weights the h-th of H equal column blocks. 1 is PyG's `AttentionalAggregation` with
  /// `gate_nn = Linear(F, 1)`, F its `Linear(F, F)`. The other kinds take 1.
  std::int64_t heads = 1;
};

/// One row per graph from the rows of its nodes: graph g of a batch holds the rows
/// [offsets[g], offsets[g + 1]) (the graphs of a batch are contiguous, `GraphBatch`).
///
/// Sum, mean and max have no parameters. Attention pooling scores node i for gate h as
/// `s_ih = x_i . w_h + b_h`, takes the softmax of each gate's scores over the nodes of the
/// graph (the graph is the mask: no node sees another graph's), and sums the nodes' h-th column
/// block weighted by it: `out_g[block h] = sum_i alpha_ih x_i[block h]`. Its one parameter is
/// `name.gate.weight` (F x H, `x W`, the transpose of PyTorch's layout; Glorot): a gate bias, as
/// PyG's `gate_nn` may have, adds the same to every score of a graph, which the softmax cancels.
/// A graph without nodes reads as zeros (as PyG's scatter).
/// The max's gradient goes to the first row that holds the maximum.
///
/// Parallel over fixed blocks of graphs (and of rows for the gate's products): outputs and
/// gradients are bitwise the same for any thread count.
template <typename T>
class MASKGAT_EXPORT BasicReadout {
 public:
  /// What `forward` keeps for `backward`.
  struct Cache {
    RowMatrix<T> alpha;                ///< attention: N x H weights
    std::vector<std::int64_t> argmax;  ///< max: B x F source rows (-1: empty graph)
    RowMatrix<T> scores_grad;          ///< attention: the backward's N x H buffer
  };

  /// Registers the gate's weight in `store` under `name` (attention only).
  /// @param store   receives the parameters; must outlive the readout
  /// @param name    prefix of the parameter names, e.g. `pool`
  /// @param options kind, width and gates
  /// @param rng     draws the gate's Glorot-uniform weight (attention only)
  /// @throws InvalidArgument on a non-positive width or gate count, gates that do not divide F,
  ///         more than one gate for a kind without them, or a name in use.
  BasicReadout(ParameterStore<T>& store, std::string_view name, const ReadoutOptions& options,
               Rng& rng);

  /// `out` row g from the rows of graph g.
  /// @param x       N x F node rows
  /// @param offsets B + 1 non-decreasing row offsets, from 0 to N
  /// @param cache   filled for `backward`
  /// @param out     resized to B x F; must not be `x`
  /// @throws InvalidArgument when x has not F columns or `offsets` does not run from 0 to N
  ///         without decreasing.
  void forward(const RowMatrix<T>& x, std::span<const std::int64_t> offsets, Cache& cache,
               RowMatrix<T>& out) const;
  /// Adds the gate's parameter gradients into the store and, when `grad_x` is not null, writes
  /// dL/dx into it.
  /// @param x        the forward's input
  /// @param offsets  the forward's offsets
  /// @param cache    the forward's cache
  /// @param grad_out dL/dout, B x F
  /// @param grad_x   null, or resized to N x F and overwritten with dL/dx
  /// @throws InvalidArgument when `grad_out` is not B x F.
  void backward(const RowMatrix<T>& x, std::span<const std::int64_t> offsets, Cache& cache,
                const RowMatrix<T>& grad_out, RowMatrix<T>* grad_x) const;
  /// The options the readout was built with.
  /// @return the options as given to the constructor
  [[nodiscard]] const ReadoutOptions& options() const noexcept { return options_; }

 private:
  ParameterStore<T>* store_;
  ReadoutOptions options_;
  Projection gate_;  // attention only
};

/// The readout in single precision, as models use it.
using Readout = BasicReadout<float>;

}  // namespace maskgat::nn
