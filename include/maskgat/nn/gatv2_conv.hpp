#pragma once
/// @file
/// The dynamic graph attention layer of Brody et al. (2022), as PyG's `GATv2Conv`.

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

/// Options of `GatV2Conv`, with the defaults of PyG's `GATv2Conv`.
struct GatV2ConvOptions {
  std::int64_t in_features = 0;   ///< F (> 0)
  std::int64_t out_features = 0;  ///< C, channels per head (> 0)
  std::int64_t heads = 1;         ///< H (> 0)
  bool concat = true;             ///< concatenate heads (H * C outputs) or average them (C)
  double negative_slope = 0.2;    ///< LeakyReLU slope inside the score
  double dropout = 0.0;           ///< attention dropout in training, in [0, 1)
  bool add_self_loops = true;     ///< every node also attends to itself
  bool bias = true;               ///< biases of both projections and of the output
  /// D, the width of the edge features in the score (PyG's `edge_dim`); 0: none
  std::int64_t edge_features = 0;
  bool residual = false;       ///< add `x R` to the output
  bool share_weights = false;  ///< one projection for sources and destinations (W_s = W_d)
  Schedule schedule{};         ///< task sizes of the kernels (speed only)
};

/// Dynamic (GATv2) graph attention:
///
///     s = x W_s + b_s,  d = x W_d + b_d                                 (N x H*C each)
///     e_ij = sum_c a_hc LeakyReLU(s_jhc + d_ihc [+ (f_ij W_e)_hc])   per head, for j in N(i)
///     alpha_ij = softmax_j(e_ij);  out_i = concat_h or mean_h ( sum_j alpha_ij s_j ) [+ x_i R] [+
///     b]
///
/// The per-edge sum `s_j + d_i` is formed channel by channel inside the kernel (forward and
/// backward), never stored as an E x H*C tensor.
///
/// With `edge_features` D > 0, f_ij is the D features of edge j -> i (PyG's `edge_dim`, with
/// self-loops filled as in `BasicGatConv`); `f W_e` is formed once per forward (E x H*C).
///
/// Parameters under `name`: `name.lin_l.weight`/`.bias` (W_s, b_s), `name.lin_r.weight`/`.bias`
/// (W_d, b_d; absent with `share_weights`), `name.att` H x C, `name.lin_edge.weight` D x H*C (with
/// edge features), `name.res.weight`, `name.bias`.
/// Threading, determinism, caching and self-loop handling as `BasicGatConv`.
template <typename T>
class MASKGAT_EXPORT BasicGatV2Conv {
 public:
  /// Per-call state for `backward` and `attention`, and scratch buffers.
  struct Cache {
    Graph looped;  ///< the mask with the added self-loops, when they were added
    /// @{
    RowMatrix<T> src, dst;  ///< x W_s + b_s (also the values) and x W_d + b_d, N x H*C
    /// @}
    RowMatrix<T> alpha;      ///< E x H, before dropout
    RowMatrix<T> heads_out;  ///< per-head output before averaging (a mean over several heads only)
    RowMatrix<T> projected;  ///< the residual or root projection, forward scratch
    /// With edge features: those of the added self-loops' mask (when loops were added) and
    /// `f W_e` of every mask entry (E x H*C).
    /// @{
    RowMatrix<T> looped_edge_features, edge;
    /// @}
    /// Backward scratch, kept so repeated steps reuse their memory.
    /// @{
    RowMatrix<T> grad_heads, grad_src, grad_dst, grad_att, grad_values, grad_edge, workspace;
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
  /// @throws InvalidArgument on a non-positive size, a dropout outside [0, 1), a non-finite
  ///         `negative_slope`, a non-positive `schedule.grain`, or a name in use.
  BasicGatV2Conv(ParameterStore<T>& store, std::string_view name, const GatV2ConvOptions& options,
                 Rng& rng);

  /// Computes `out` (N x output_features()). Same contract as `BasicGatConv::forward`.
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
  /// @param edge_features null, or (a layer with `edge_features` D) E x D, a row per edge of
  ///              `graph` in its order; must stay alive until `backward`
  /// @throws InvalidArgument when x's shape does not match the graph or `in_features`, `rows` is
  ///         neither empty nor of N bytes, or edge features are missing, not E x D or given to a
  ///         layer without them.
  void forward(const Graph& graph, InputRef<T> x, Mode mode, Rng& rng, Cache& cache,
               RowMatrix<T>& out, std::span<const std::uint8_t> rows = {},
               BasicHalo<T>* halo = nullptr, const RowMatrix<T>* edge_features = nullptr) const;
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
  /// @param edge_features the forward's
  /// @throws InvalidArgument when `grad_out` is not N x output_features(), or `grad_x` is asked
  ///         for a sparse `x`.
  void backward(const Graph& graph, InputRef<T> x, Cache& cache, const RowMatrix<T>& grad_out,
                RowMatrix<T>* grad_x, BasicHalo<T>* halo = nullptr,
                const RowMatrix<T>* edge_features = nullptr) const;
  /// The attention of the last forward run with `cache` on `graph`.
  /// @param graph the forward's graph
  /// @param cache the forward's cache
  /// @return alpha (E x H, before dropout) with the edges of the mask it ran on, added
  ///         self-loops included
  [[nodiscard]] AttentionWeights<T> attention(const Graph& graph, const Cache& cache) const;

  /// The options the layer was built with.
  /// @return the options as given to the constructor
  [[nodiscard]] const GatV2ConvOptions& options() const noexcept { return options_; }
  /// The width of the output.
  /// @return H * C with `concat`, else C
  [[nodiscard]] std::int64_t output_features() const noexcept;

 private:
  ParameterStore<T>* store_;
  GatV2ConvOptions options_;
  Projection src_;
  std::optional<Projection> dst_;
  Parameter att_;
  std::optional<Parameter> lin_edge_;
  std::optional<Parameter> bias_;
  std::optional<Projection> residual_;
};

/// The GATv2 layer in single precision, as models use it.
using GatV2Conv = BasicGatV2Conv<float>;

}  // namespace maskgat::nn
