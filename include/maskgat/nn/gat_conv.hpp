#pragma once
/// @file
/// The graph attention layer of Veličković et al. (2018), as PyG's `GATConv`.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "maskgat/core/random.hpp"
#include "maskgat/core/schedule.hpp"
#include "maskgat/core/tensor.hpp"
#include "maskgat/export.hpp"
#include "maskgat/graph/graph.hpp"
#include "maskgat/nn/layer.hpp"
#include "maskgat/nn/parameters.hpp"
#include "maskgat/ops/spmm.hpp"

namespace maskgat::nn {

/// Where a GAT layer projects its input: both orders give the same output and gradients up to
/// float rounding.
enum class ProjectionOrder {
  kAuto,          ///< per call, the order of fewer multiply-adds (`projection_costs`)
  kProjectFirst,  ///< h = x W on every row, then attention over h
  /// scores from x (W_h a) and per-head sums of x's rows (`ops::attention_shared_values`), then
  /// W on the formed rows only; dense x without a halo
  kAggregateFirst,
};

/// The multiply-adds of a GAT layer's forward and backward (without the edge term, residual and
/// bias, which both orders share) in each order, from the sizes of one call.
struct ProjectionCosts {
  double project_first = 0.0;    ///< 2 N F H C (x W and its weight gradient) + 3 E H C
  double aggregate_first = 0.0;  ///< 4 N F H (scores) + 2 E H F (sums) + 3 R H F C (W on R rows)
};

/// The costs of both orders for a call that reads `nodes` rows of `in_features`, forms `formed`
/// rows with `edges` mask entries between them, with `heads` x `channels` outputs.
/// @param nodes       N, the rows of x
/// @param formed      R, the rows formed
/// @param edges       E, the mask entries of the formed rows
/// @param in_features F
/// @param heads       H
/// @param channels    C
/// @return the multiply-adds of each order
MASKGAT_EXPORT ProjectionCosts projection_costs(std::int64_t nodes, std::int64_t formed,
                                                std::int64_t edges, std::int64_t in_features,
                                                std::int64_t heads, std::int64_t channels);

/// Options of `GatConv`, with the defaults of PyG's `GATConv`.
struct GatConvOptions {
  std::int64_t in_features = 0;   ///< F, the input width (> 0)
  std::int64_t out_features = 0;  ///< C, channels per head (> 0)
  std::int64_t heads = 1;         ///< H (> 0)
  bool concat = true;             ///< concatenate heads (H * C outputs) or average them (C)
  double negative_slope = 0.2;    ///< LeakyReLU slope of the scores
  double dropout = 0.0;           ///< attention dropout in training, in [0, 1)
  bool add_self_loops = true;     ///< every node also attends to itself
  bool bias = true;               ///< learnable output bias
  /// D, the width of the edge features in the score (PyG's `edge_dim`); 0: none
  std::int64_t edge_features = 0;
  bool residual = false;  ///< add a projection of the input, `x R`, to the output
  Schedule schedule{};    ///< task sizes of the kernels (speed only)
  /// the order of projection and aggregation (rounding only); `kAuto` aggregates first where it
  /// takes fewer multiply-adds, as in a sampled batch's input layer
  ProjectionOrder order = ProjectionOrder::kAuto;
};

/// Additive graph attention:
///
///     h = x W                                         (N x H*C)
///     e_ij = LeakyReLU(<a_src, h_j> + <a_dst, h_i> [+ <a_edge, f_ij W_e>])
///                                                     per head, for j in N(i) only
///     alpha_ij = softmax_j(e_ij)                      over the mask row of i
///     out_i = concat_h or mean_h ( sum_j alpha_ij h_j ) [+ x_i R] [+ b]
///
/// N(i) are i's in-neighbours in the graph, plus i itself with `add_self_loops`; every other
/// pair has attention exactly zero and is never computed. A node with no in-edges outputs only the
/// residual and bias terms.
///
/// With `edge_features` D > 0, f_ij is the D features of edge j -> i (PyG's `edge_dim`); a
/// self-loop the layer adds takes the mean of node i's in-edges' features (PyG's
/// `fill_value="mean"`). The term is formed as `f_ij (W_e a_edge)`, one number per edge and head.
///
/// Parameters (registered under `name`): `name.weight` F x H*C (note: `x W`, the transpose of
/// PyTorch's layout), `name.att_src` and `name.att_dst` H x C, `name.lin_edge.weight` D x H*C and
/// `name.att_edge` H x C (with edge features), `name.res.weight` F x out, `name.bias` 1 x out;
/// Glorot-uniform weights, zero bias.
///
/// `forward` is const and re-entrant: all per-call state lives in the caller's `Cache`.
/// Work is split over oneTBB (edge-balanced destination ranges, fixed row blocks for products);
/// outputs and gradients are bitwise the same for any thread count and grain.
template <typename T>
class MASKGAT_EXPORT BasicGatConv {
 public:
  /// What `forward` keeps for `backward` and `attention`, and the backward's scratch buffers.
  struct Cache {
    Graph looped;    ///< the mask with the added self-loops, when they were added
    RowMatrix<T> h;  ///< x W, N x H*C (the values)
    /// @{
    RowMatrix<T> src, dst;  ///< <a_src, h_j> and <a_dst, h_i>, N x H
    /// @}
    RowMatrix<T> alpha;      ///< E x H, before dropout
    RowMatrix<T> heads_out;  ///< per-head output before averaging (a mean over several heads only)
    RowMatrix<T> projected;  ///< the residual or root projection, forward scratch
    /// With edge features: those of the added self-loops' mask (when loops were added), W_e a_edge
    /// (D x H) and the edge term of every mask entry (E x H).
    /// @{
    RowMatrix<T> looped_edge_features, edge_att, edge;
    /// @}
    /// Backward scratch, kept so repeated steps reuse their memory.
    /// @{
    RowMatrix<T> grad_heads, grad_src, grad_dst, grad_h, grad_edge, grad_edge_att, workspace;
    /// @}
    /// Aggregate-first (`ProjectionOrder::kAggregateFirst`): whether the last forward took that
    /// order, W a_src and W a_dst side by side (F x 2H), its `rows` and the formed rows' ids,
    /// their per-head sums of x ((H * R) x F), those sums projected (R x H*C), and the backward's
    /// gradients of them and its per-block partial sums.
    /// @{
    bool aggregated_first = false;
    RowMatrix<T> folded;
    std::vector<std::uint8_t> rows;
    std::vector<NodeId> formed;
    RowMatrix<T> sums, formed_heads, grad_sums, grad_formed, grad_folded, grad_partials;
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
  BasicGatConv(ParameterStore<T>& store, std::string_view name, const GatConvOptions& options,
               Rng& rng);

  /// Computes `out` (resized to N x output_features()). Graphs that already hold every self-loop
  /// are used as they are; otherwise the loops are added into `cache` on each call (O(N + E)), so
  /// pass `masks::from_graph(graph)` when calling often.
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

  /// Adds the parameter gradients of the loss into the store and, when `grad_x` is not null,
  /// writes dL/dx into it (N x F; dense `x` only). `graph`, `x` and `cache` must be those of the
  /// matching forward.
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
  [[nodiscard]] const GatConvOptions& options() const noexcept { return options_; }
  /// The width of the output.
  /// @return H * C with `concat`, else C
  [[nodiscard]] std::int64_t output_features() const noexcept;

 private:
  // Whether a forward on `mask` and x (with `halo`) forming `rows` aggregates first; if so,
  // `formed` holds the formed rows' ids (empty: every row).
  [[nodiscard]] bool aggregates_first(const Graph& mask, InputRef<T> x,
                                      std::span<const std::uint8_t> rows, const BasicHalo<T>* halo,
                                      std::vector<NodeId>& formed) const;

  ParameterStore<T>* store_;
  GatConvOptions options_;
  Projection lin_;
  Parameter att_src_;
  Parameter att_dst_;
  std::optional<Parameter> lin_edge_;
  std::optional<Parameter> att_edge_;
  std::optional<Parameter> bias_;
  std::optional<Projection> residual_;
};

/// The GAT layer in single precision, as models use it.
using GatConv = BasicGatConv<float>;

}  // namespace maskgat::nn
