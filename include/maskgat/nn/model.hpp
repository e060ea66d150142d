#pragma once
/// @file
/// A node classifier built from a spec of modules: by default the GAT paper's stack of attention
/// layers.

#include <cstdint>
#include <memory>
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
#include "maskgat/nn/spec.hpp"

namespace maskgat::nn {

/// Which attention layer the model stacks.
enum class AttentionKind { kGat, kGatV2, kDot };

/// The name of an attention kind, as the CLI and checkpoints spell it.
/// @param kind any kind
/// @return `gat`, `gatv2` or `dot` (a static string)
[[nodiscard]] MASKGAT_EXPORT const char* attention_kind_name(AttentionKind kind) noexcept;
/// Parses `gat`, `gatv2` or `dot`.
/// @param name the exact, lower-case name
/// @return the kind `attention_kind_name` names so
/// @throws InvalidArgument naming the accepted values.
[[nodiscard]] MASKGAT_EXPORT AttentionKind parse_attention_kind(std::string_view name);

/// The most attention layers a model may have (deep GNNs use tens; this bounds what a model file
/// or an option can make a model build).
inline constexpr std::int64_t kMaxLayers = 1024;

/// The shape and regularisation of a `Model`; the defaults are the GAT paper's (Cora, CiteSeer).
struct ModelOptions {
  AttentionKind attention = AttentionKind::kGat;  ///< the layer every level uses
  std::int64_t in_features = 0;                   ///< F (> 0)
  std::int64_t classes = 0;                       ///< K (> 0)
  std::int64_t layers = 2;  ///< attention layers, 1 to `kMaxLayers`; all but the last are hidden
  std::int64_t heads = 8;   ///< heads of every hidden layer, concatenated
  std::int64_t hidden = 8;  ///< features per head of every hidden layer
  std::int64_t output_heads = 1;   ///< heads of the output layer, averaged
  double dropout = 0.6;            ///< dropout on every layer's input, in [0, 1)
  double attention_dropout = 0.6;  ///< dropout on the attention coefficients, in [0, 1)
  Schedule schedule{};             ///< task sizes of every layer's kernels (speed only)
};

/// The most modules a model spec may hold, residual blocks and their bodies counted.
inline constexpr std::int64_t kMaxModules = 4096;

/// The GAT paper's model as a spec: `dropout, conv1, elu, dropout, conv2, ...` with the sizes of
/// `options` (no dropout modules when `options.dropout` is 0).
/// @param options the paper model's shape, `in_features` and `classes` set
/// @return a spec that `BasicModel(spec, rng)` builds into the same model as
///         `BasicModel(options, rng)`
[[nodiscard]] MASKGAT_EXPORT ModelSpec paper_spec(const ModelOptions& options);

/// A node classifier: the modules of a spec in order. By default the GAT paper's transductive
/// model (Veličković et al. 2018), with any of the three attention layers:
///
///     x -> dropout -> conv1 (heads x hidden, concat) -> ELU -> dropout -> ... -> conv_L
///          (output_heads x classes, mean) -> logits (N x K)
///
/// and any other stack of attention layers, linear layers, normalisations, activations, dropout
/// and residual blocks a `ModelSpec` lists (docs/model-specs.md). Parameters are named by module
/// (`conv1.weight`, `lin1.bias`, `block1.skip.weight`). GAT and GATv2 layers add the self-loops
/// the mask lacks; pass `masks::from_graph(graph)` so that happens once. Dropout on a sparse input
/// drops stored entries only. All randomness comes from the `Rng` given to `forward` (one key per
/// dropout, in module order).
///
/// The attention layers split the modules into levels (each attention layer with the modules up
/// to the next one; those before the first belong to the first): the per-layer masks and rows of
/// sampled and receptive-field steps, and `forward_layer`, are per level. Batch normalisation
/// needs every row of its batch, so a model with one refuses row sets and parts of a graph.
///
/// `forward` keeps what `backward` needs, so a model runs one pass at a time (not re-entrant).
template <typename T>
class MASKGAT_EXPORT BasicModel {
 public:
  /// Builds the layers and initialises them (Glorot) from `rng`.
  /// @param options the model's shape; `in_features` and `classes` must be set
  /// @param rng     draws the initial weights, layer by layer
  /// @throws InvalidArgument on a non-positive size, more than `kMaxLayers` layers, a dropout or
  ///         attention dropout outside [0, 1), or a non-positive `schedule.grain`.
  BasicModel(const ModelOptions& options, Rng& rng);
  /// Builds the modules of `spec` in order and initialises them from `rng`, after checking the
  /// whole spec: widths (inferred from the module before, declared ones must match), names
  /// (unique; missing ones given by kind and position), at least one attention layer, at most one
  /// in a residual block, the output `spec.classes` wide.
  /// @param spec the modules, with `in_features` and `classes` set
  /// @param rng  draws the initial weights, module by module
  /// @throws InvalidArgument naming the module (its position and name) and the field.
  BasicModel(const ModelSpec& spec, Rng& rng);
  ~BasicModel();
  /// Takes over another model; the moved-from model may only be assigned to or destroyed.
  BasicModel(BasicModel&&) noexcept;
  /// Takes over another model; the moved-from model may only be assigned to or destroyed.
  /// @return `*this`
  BasicModel& operator=(BasicModel&&) noexcept;
  BasicModel(const BasicModel&) = delete;
  BasicModel& operator=(const BasicModel&) = delete;

  /// Runs every layer on every node.
  /// @param mask the attention mask (N nodes), typically `masks::from_graph(graph)`
  /// @param x    N x F features, dense or sparse
  /// @param mode `Mode::kTrain` applies input and attention dropout, `Mode::kEval` neither
  /// @param rng  draws one key per dropout in training mode (untouched in evaluation)
  /// @return the logits (N x K) of every node; valid until the next `forward`
  /// @throws InvalidArgument when x's shape does not match the mask or `in_features`, or when
  ///         input dropout in training meets a sparse `x` that is not compressed.
  const RowMatrix<T>& forward(const Graph& mask, InputRef<T> x, Mode mode, Rng& rng);

  /// As `forward(mask, ...)`, forming layer l only at the rows where `rows[l]` is nonzero, as
  /// `masks::receptive_rows` gives for the nodes whose logits are wanted: those logits are
  /// the same as over every row, with the same dropout draws, at the cost of the rows formed
  /// (the projections still run on every row): bitwise, except where a GAT layer on dense
  /// input aggregates before it projects on the rows and not on every row (`ProjectionOrder`),
  /// which changes float rounding only. The other rows of the logits, and of every
  /// layer's attention coefficients, are unspecified, so `backward`'s `grad_logits` must be zero
  /// on them (as a loss over the wanted nodes gives).
  /// @param mask the attention mask (N nodes)
  /// @param rows one vector of N bytes per layer, `conv1`'s first
  /// @param x    N x F features, dense or sparse
  /// @param mode as in `forward(mask, ...)`
  /// @param rng  as in `forward(mask, ...)`
  /// @return the logits (N x K), valid at the last layer's rows until the next `forward`
  /// @throws InvalidArgument as `forward(mask, ...)`, and when `rows` does not hold one vector of
  ///         N bytes per layer.
  const RowMatrix<T>& forward(const Graph& mask, std::span<const std::vector<std::uint8_t>> rows,
                              InputRef<T> x, Mode mode, Rng& rng);

  /// Adds dL/dparameters into `parameters().grads()`, from dL/dlogits (N x K). `mask` and `x`
  /// must be those of the last `forward`. The caller zeroes the gradients between steps.
  /// @param mask        the last forward's mask
  /// @param x           the last forward's input
  /// @param grad_logits dL/dlogits, N x K
  /// @throws InvalidArgument when `grad_logits` is not N x K.
  void backward(const Graph& mask, InputRef<T> x, const RowMatrix<T>& grad_logits);

  /// As `forward(mask, ...)`, with layer l attending over `masks[l]`: how a training step runs
  /// over the receptive field of the training nodes (`masks::receptive_subgraph`) or a sampled
  /// mini-batch (`NeighborSampler`), where each layer needs its outputs on fewer rows than the one
  /// before. A mask may hold fewer nodes than the one before: layer l + 1 then reads the first
  /// `masks[l + 1].num_nodes()` rows of layer l's output (a mini-batch's nodes are numbered so
  /// that each layer's are the first), and layer l forms only those rows (without batch
  /// normalisation or a readout, which read every row).
  /// @param masks one mask per layer, `conv1`'s first, each on at most the nodes of the one before
  /// @param x    N x F features, dense or sparse, N the first mask's nodes
  /// @param mode as in `forward(mask, ...)`
  /// @param rng  as in `forward(mask, ...)`
  /// @return the logits of every node of the last mask (its N' x K); valid until the next
  ///         `forward`
  /// @throws InvalidArgument as `forward(mask, ...)`, and when `masks` does not hold one mask per
  ///         layer or a mask holds more nodes than the one before.
  const RowMatrix<T>& forward(std::span<const Graph> masks, InputRef<T> x, Mode mode, Rng& rng);

  /// `backward` after `forward(masks, ...)`.
  /// @param masks       the last forward's masks
  /// @param x           the last forward's input
  /// @param grad_logits dL/dlogits, N' x K (the last mask's nodes)
  /// @throws InvalidArgument when `grad_logits` is not N x K or `masks` is not as in `forward`.
  void backward(std::span<const Graph> masks, InputRef<T> x, const RowMatrix<T>& grad_logits);

  /// Evaluation-mode output of layer `layer` alone over `mask`, from that layer's input: what
  /// `forward` computes at each layer, for callers that run the layers one at a time over parts
  /// of a graph (`train::layerwise_logits`). Draws nothing.
  /// @param layer in [0, layers)
  /// @param mask  the attention mask (N nodes)
  /// @param x     N rows: the features for layer 0, else what this returned for layer - 1 (on the
  ///              same nodes, or any rows of it)
  /// @return for a hidden layer the next layer's input (ELU of its output), N x (heads x hidden);
  ///         for the last layer the logits, N x K; valid until the next call
  /// @throws InvalidArgument when `layer` is out of range or x's shape does not match the mask or
  ///         the layer's input width.
  const RowMatrix<T>& forward_layer(std::int64_t layer, const Graph& mask, InputRef<T> x);

  /// Runs the model on one part of a graph from here on (null: on a whole graph): in every forward
  /// each layer after the first gets the halo rows of its source-side projections from their
  /// owners (the first projects the halo's features, which the part holds), every backward
  /// returns their gradients to them, and dropout draws the whole graph's mask. Forward and
  /// backward then take the part's mask and input (its own and halo nodes) and are collective.
  /// @param halo the part's exchange; must outlive its use
  void set_halo(BasicHalo<T>* halo) noexcept;

  /// The attention of every layer in the last forward, `conv1` first.
  /// @param mask the last forward's mask
  /// @return one `AttentionWeights` per layer (E x H each, before dropout)
  [[nodiscard]] std::vector<AttentionWeights<T>> attention(const Graph& mask) const;

  /// The model's parameters and gradients, for the optimizer and checkpoints.
  /// @return the store, named `conv1.weight`, ...; it lives as long as the model
  [[nodiscard]] ParameterStore<T>& parameters() noexcept;
  /// The model's parameters and gradients, read-only.
  /// @return the store, named `conv1.weight`, ...; it lives as long as the model
  [[nodiscard]] const ParameterStore<T>& parameters() const noexcept;
  /// The running statistics of the model's batch normalisations (`norm1.running_mean`, ...),
  /// which training updates and the optimizer never does.
  /// @return the store; empty without batch normalisation
  [[nodiscard]] ParameterStore<T>& buffers() noexcept;
  /// The running statistics, read-only.
  /// @return the store; empty without batch normalisation
  [[nodiscard]] const ParameterStore<T>& buffers() const noexcept;
  /// The options the model was built with. A model built from a spec has `in_features`,
  /// `classes`, `layers` (its attention layers) and `schedule` set, the paper's other fields at
  /// their defaults.
  /// @return the options
  [[nodiscard]] const ModelOptions& options() const noexcept;
  /// Whether the mask to pass holds every self-loop (`masks::from_graph(graph)`): true unless an
  /// attention layer is built without `add_self_loops`, which must then see the graph's own
  /// in-edges (`masks::from_graph(graph, false)`; the layers that add loops add them on each call).
  /// @return true when `masks::from_graph(graph)` is the mask to pass
  [[nodiscard]] bool mask_self_loops() const noexcept;
  /// The width D of the edge features the model's attention layers read (their `edge_dim`; all
  /// layers that read them share it).
  /// @return D, or 0 when no layer reads edge features
  [[nodiscard]] std::int64_t edge_feature_width() const noexcept;
  /// The edge features of the forwards and backwards from here on: a row per entry of the mask
  /// they are given (`masks::edge_features` of a graph's own), D = `edge_feature_width()` wide.
  /// Every layer built with `edge_dim` reads them; the others do not. A forward over masks that
  /// differ per level (sampled and receptive-field steps) cannot use them.
  /// @param features E x D, alive while in use; null: none
  void set_edge_features(const RowMatrix<T>* features) noexcept;
  /// Whether the model ends in a readout (one row per graph of a batch: a graph classifier).
  /// @return true when the spec holds a readout
  [[nodiscard]] bool graph_level() const noexcept;
  /// The graphs of the batch the forwards and backwards from here on run on, for a model with a
  /// readout: graph b holds the mask's nodes [offsets[b], offsets[b + 1]) (`GraphBatch::offsets`).
  /// The forward's output then has a row per graph. A graph-level model runs on one mask for
  /// every layer and every row (not on row sets, per-layer masks, one layer at a time or parts).
  /// @param offsets B + 1 offsets from 0 to the mask's nodes, alive while in use
  void set_graph_offsets(std::span<const std::int64_t> offsets) noexcept;
  /// The spec the model was built from (`paper_spec(options)` for a model built from options),
  /// with every module named and every width resolved.
  /// @return the spec
  [[nodiscard]] const ModelSpec& spec() const noexcept;

 private:
  struct Impl;
  const RowMatrix<T>& run_forward(InputRef<T> x, Mode mode, Rng& rng);
  void run_backward(InputRef<T> x, const RowMatrix<T>& grad_logits);
  std::unique_ptr<Impl> impl_;
};

/// The node classifier in single precision, as training and checkpoints use it.
using Model = BasicModel<float>;

}  // namespace maskgat::nn
