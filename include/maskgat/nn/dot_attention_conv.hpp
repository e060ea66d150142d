#pragma once
/// @file
/// Scaled dot-product attention under a mask (the lecture's q·k), as PyG's `TransformerConv`.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "maskgat/core/random.hpp"
#include "maskgat/core/schedule.hpp"
#include "maskgat/core/tensor.hpp"
#include "maskgat/export.hpp"
#include "maskgat/graph/graph.hpp"
#include "maskgat/nn/layer.hpp"
#include "maskgat/nn/parameters.hpp"
#include "maskgat/ops/spmm.hpp"

namespace maskgat::nn {

/// Options of `DotAttentionConv`, with the defaults of PyG's `TransformerConv`.
struct DotAttentionConvOptions {
  std::int64_t in_features = 0;   ///< F (> 0)
  std::int64_t out_features = 0;  ///< C, channels per head (> 0)
  std::int64_t heads = 1;         ///< H (> 0)
  bool concat = true;             ///< concatenate heads (H * C outputs) or average them (C)
  double dropout = 0.0;           ///< attention dropout in training, in [0, 1)
  bool root_weight = true;        ///< add the skip projection `x W_r + b_r` to the output
  bool bias = true;               ///< bias of the skip projection
  Schedule schedule{};            ///< task sizes of the kernels (speed only)
};

/// Masked multi-head dot-product attention:
///
///     q = x W_q + b_q,  k = x W_k + b_k,  v = x W_v + b_v                 (N x H*C each)
///     e_ij = <q_i, k_j> / sqrt(C)   per head, for j in N(i) only
///     alpha_ij = softmax_j(e_ij);  out_i = concat_h or mean_h ( sum_j alpha_ij v_j ) [+ x_i W_r +
///     b_r]
///
/// With `masks::full(n)` this is ordinary transformer self-attention, `softmax(Q K^T / sqrt(C)) V`;
/// with a graph it scores only connected pairs. Like `TransformerConv` it adds no self-loops (use
/// `masks::from_graph` for them): a node with no in-edges outputs its skip projection only.
///
/// Parameters under `name`: `name.query`, `name.key`, `name.value` (`.weight` F x H*C, `.bias`),
/// `name.skip.weight` F x out and `name.skip.bias` (with `root_weight`).
/// Threading, determinism and caching as `BasicGatConv`.
template <typename T>
class MASKGAT_EXPORT BasicDotAttentionConv {
 public:
  /// Per-call state for `backward` and `attention`, and scratch buffers.
  struct Cache {
    /// @{
    RowMatrix<T> query, key, value;  ///< N x H*C each
    /// @}
    RowMatrix<T> alpha;      ///< E x H, before dropout
    RowMatrix<T> heads_out;  ///< per-head output before averaging (a mean over several heads only)
    RowMatrix<T> projected;  ///< the residual or root projection, forward scratch
    /// Backward scratch, kept so repeated steps reuse their memory.
    /// @{
    RowMatrix<T> grad_heads, grad_query, grad_key, grad_value, workspace;
    /// @}
    /// The attention-dropout key of the forward. Set its `numbers` (one per row of the mask)
    /// before `forward` to draw the mask a whole graph draws on a part of it.
    DropoutKey dropout;
  };

  /// Registers and initialises the parameters in `store` under `name`, drawing from `rng`.
  /// @param store   receives the parameters; must outlive the layer
  /// @param name    prefix of the parameter names, e.g. `conv1`
  /// @param options sizes and options
  /// @param rng     draws the Glorot-uniform weights
  /// @throws InvalidArgument on a non-positive size, a dropout outside [0, 1), a non-positive
  ///         `schedule.grain`, or a name in use.
  BasicDotAttentionConv(ParameterStore<T>& store, std::string_view name,
                        const DotAttentionConvOptions& options, Rng& rng);

  /// Computes `out` (N x output_features()). Same contract as `BasicGatConv::forward`, except
  /// that `graph` is used as it is (no self-loops are added).
  /// @param graph N nodes; its in-edges are the attention mask
  /// @param x     N x F, dense or sparse
  /// @param mode  `Mode::kTrain` applies attention dropout, `Mode::kEval` does not
  /// @param rng   draws the attention-dropout key in training mode (untouched in evaluation)
  /// @param cache receives what `backward` and `attention` need; one per concurrent call
  /// @param out   resized to N x output_features()
  /// @param rows  empty (every row), or a byte per node: only the rows with a nonzero byte are
  ///              formed, each bitwise as over every row; the others are unspecified (as are
  ///              their attention coefficients), so `backward` must see zero gradients there
  /// @param halo  null, or on a part of a graph its exchange: the halo rows of the source-side
  ///              projections come from their owners (collective; `rows` names own rows only)
  /// @throws InvalidArgument when x's shape does not match the graph or `in_features`, or
  ///         `rows` is neither empty nor of N bytes.
  void forward(const Graph& graph, InputRef<T> x, Mode mode, Rng& rng, Cache& cache,
               RowMatrix<T>& out, std::span<const std::uint8_t> rows = {},
               BasicHalo<T>* halo = nullptr) const;
  /// Adds the parameter gradients into the store and, when asked, writes dL/dx. Same contract
  /// as `BasicGatConv::backward`.
  /// @param graph    the forward's graph
  /// @param x        the forward's input
  /// @param cache    the forward's cache; its scratch buffers are reused
  /// @param grad_out dL/dout, N x output_features()
  /// @param grad_x   null, or resized to N x F and overwritten with dL/dx (with a halo, zero at
  ///                 its rows)
  /// @param halo     the forward's: the gradients of the halo rows of the source-side projections
  ///                 go to their owners and are summed there (collective)
  /// @throws InvalidArgument when `grad_out` is not N x output_features(), or `grad_x` is asked
  ///         for a sparse `x`.
  void backward(const Graph& graph, InputRef<T> x, Cache& cache, const RowMatrix<T>& grad_out,
                RowMatrix<T>* grad_x, BasicHalo<T>* halo = nullptr) const;
  /// The attention of the last forward run with `cache` on `graph`.
  /// @param graph the forward's graph
  /// @param cache the forward's cache
  /// @return alpha (E x H, before dropout) with the edges of `graph`
  [[nodiscard]] AttentionWeights<T> attention(const Graph& graph, const Cache& cache) const;

  /// The options the layer was built with.
  /// @return the options as given to the constructor
  [[nodiscard]] const DotAttentionConvOptions& options() const noexcept { return options_; }
  /// The width of the output.
  /// @return H * C with `concat`, else C
  [[nodiscard]] std::int64_t output_features() const noexcept;

 private:
  ParameterStore<T>* store_;
  DotAttentionConvOptions options_;
  Projection query_;
  Projection key_;
  Projection value_;
  std::optional<Projection> skip_;
};

/// The dot-product attention layer in single precision, as models use it.
using DotAttentionConv = BasicDotAttentionConv<float>;

}  // namespace maskgat::nn
