#pragma once
/// @file
/// A node classifier: a stack of attention layers, as in the GAT paper.

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "maskgat/core/random.hpp"
#include "maskgat/core/schedule.hpp"
#include "maskgat/core/tensor.hpp"
#include "maskgat/graph/graph.hpp"
#include "maskgat/nn/layer.hpp"
#include "maskgat/nn/parameters.hpp"

namespace maskgat::nn {

/// Which attention layer the model stacks.
enum class AttentionKind { kGat, kGatv2, kDot };

/// `gat`, `gatv2` or `dot`.
[[nodiscard]] const char* attention_kind_name(AttentionKind kind) noexcept;
/// Parses `gat`, `gatv2` or `dot`.
/// @throws InvalidArgument naming the accepted values.
[[nodiscard]] AttentionKind parse_attention_kind(std::string_view name);

/// The shape and regularisation of a `Model`; the defaults are the GAT paper's (Cora, CiteSeer).
struct ModelOptions {
  AttentionKind attention = AttentionKind::kGat;
  std::int64_t in_features = 0;    ///< F (> 0)
  std::int64_t classes = 0;        ///< K (> 0)
  std::int64_t layers = 2;         ///< attention layers (>= 1); all but the last are hidden
  std::int64_t heads = 8;          ///< heads of every hidden layer, concatenated
  std::int64_t hidden = 8;         ///< features per head of every hidden layer
  std::int64_t output_heads = 1;   ///< heads of the output layer, averaged
  double dropout = 0.6;            ///< dropout on every layer's input, in [0, 1)
  double attention_dropout = 0.6;  ///< dropout on the attention coefficients, in [0, 1)
  Schedule schedule{};
};

/// The GAT paper's transductive model (Veličković et al. 2018), with any of the three attention
/// layers:
///
///     x -> dropout -> conv1 (heads x hidden, concat) -> ELU -> dropout -> ... -> conv_L
///          (output_heads x classes, mean) -> logits (N x K)
///
/// Layers are named `conv1` ... `convL` in the `ParameterStore`; hidden layers concatenate their
/// heads, the output layer averages them. GAT and GATv2 layers add the self-loops the mask lacks;
/// pass `masks::from_graph(graph)` so that happens once. Dropout on a sparse input drops stored
/// entries only. All randomness comes from the `Rng` given to `forward` (one key per dropout).
///
/// `forward` keeps what `backward` needs, so a model runs one pass at a time (not re-entrant).
template <typename T>
class BasicModel {
 public:
  /// Builds the layers and initialises them (Glorot) from `rng`.
  /// @throws InvalidArgument on a non-positive size or a dropout outside [0, 1).
  BasicModel(const ModelOptions& options, Rng& rng);
  ~BasicModel();
  BasicModel(BasicModel&&) noexcept;
  BasicModel& operator=(BasicModel&&) noexcept;
  BasicModel(const BasicModel&) = delete;
  BasicModel& operator=(const BasicModel&) = delete;

  /// The logits (N x K) of every node; valid until the next `forward`.
  /// @throws InvalidArgument when x's shape does not match the mask or `in_features`.
  const RowMatrix<T>& forward(const Graph& mask, InputRef<T> x, Mode mode, Rng& rng);

  /// Adds dL/dparameters into `parameters().grads()`, from dL/dlogits (N x K). `mask` and `x`
  /// must be those of the last `forward`.
  void backward(const Graph& mask, InputRef<T> x, const RowMatrix<T>& grad_logits);

  /// The attention of every layer in the last forward, `conv1` first.
  [[nodiscard]] std::vector<AttentionWeights<T>> attention(const Graph& mask) const;

  [[nodiscard]] ParameterStore<T>& parameters() noexcept;
  [[nodiscard]] const ParameterStore<T>& parameters() const noexcept;
  [[nodiscard]] const ModelOptions& options() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

using Model = BasicModel<float>;

}  // namespace maskgat::nn
