#pragma once
/// @file
/// Normalisation between layers: over each node's features (`LayerNorm`) or over the nodes of
/// each feature (`BatchNorm`), as `torch.nn.LayerNorm` and `torch.nn.BatchNorm1d`.

#include <cstdint>
#include <optional>
#include <string_view>

#include "maskgat/core/tensor.hpp"
#include "maskgat/export.hpp"
#include "maskgat/nn/layer.hpp"
#include "maskgat/nn/parameters.hpp"

namespace maskgat::nn {

/// Options of `LayerNorm`, with the defaults of `torch.nn.LayerNorm`.
struct LayerNormOptions {
  std::int64_t features = 0;       ///< F, the normalised width (> 0)
  double eps = 1e-5;               ///< added to the variance (> 0)
  bool elementwise_affine = true;  ///< learnable per-feature scale (and shift, with `bias`)
  bool bias = true;                ///< learnable shift (only with `elementwise_affine`)
};

/// Normalises every row over its F features:
///
///     out_i = (x_i - mean(x_i)) / sqrt(var(x_i) + eps) * gamma + beta
///
/// with the biased variance (over F), as `torch.nn.LayerNorm(F)`. Row statistics are summed in
/// double. Parameters (under `name`): `name.weight` (gamma, 1 x F, ones) and `name.bias` (beta,
/// 1 x F, zeros). Parallel over fixed row blocks: bitwise the same for any thread count.
template <typename T>
class MASKGAT_EXPORT BasicLayerNorm {
 public:
  /// What `forward` keeps for `backward`.
  struct Cache {
    RowMatrix<T> normalized;  ///< (x - mean) / std, N x F
    RowMatrix<T> inv_std;     ///< 1 / sqrt(var + eps), N x 1
    RowMatrix<T> scratch;     ///< backward scratch, kept so repeated steps reuse its memory
  };
  /// Registers the parameters in `store` under `name` (no draws: ones and zeros).
  /// @param store   receives the parameters; must outlive the layer
  /// @param name    prefix of the parameter names, e.g. `norm1`
  /// @param options width, eps and affine terms
  /// @throws InvalidArgument on a non-positive width or eps, or a name in use.
  BasicLayerNorm(ParameterStore<T>& store, std::string_view name, const LayerNormOptions& options);
  /// Normalises every row of `x`.
  /// @param x     N x F
  /// @param cache receives what `backward` needs
  /// @param out   resized to N x F; may be `x`
  /// @throws InvalidArgument when x has not F columns.
  void forward(const Eigen::Ref<const RowMatrix<T>>& x, Cache& cache, RowMatrix<T>& out) const;
  /// Adds the parameter gradients into the store and writes dL/dx into `grad_x`.
  /// @param cache    the forward's
  /// @param grad_out dL/dout, N x F
  /// @param grad_x   resized to N x F and overwritten with dL/dx; may be `grad_out`
  /// @throws InvalidArgument when `grad_out` is not shaped as the forward's input.
  void backward(Cache& cache, const RowMatrix<T>& grad_out, RowMatrix<T>& grad_x) const;
  /// The options the layer was built with.
  /// @return the options as given to the constructor
  [[nodiscard]] const LayerNormOptions& options() const noexcept { return options_; }

 private:
  ParameterStore<T>* store_;
  LayerNormOptions options_;
  std::optional<Parameter> weight_;
  std::optional<Parameter> bias_;
};

/// Options of `BatchNorm`, with the defaults of `torch.nn.BatchNorm1d`.
struct BatchNormOptions {
  std::int64_t features = 0;        ///< F, the number of normalised columns (> 0)
  double eps = 1e-5;                ///< added to the variance (> 0)
  double momentum = 0.1;            ///< weight of a batch in the running statistics, in (0, 1]
  bool affine = true;               ///< learnable per-feature scale and shift
  bool track_running_stats = true;  ///< keep running statistics and use them in evaluation
};

/// Normalises every feature over the nodes of the batch:
///
///     out_i = (x_i - mu) / sqrt(sigma^2 + eps) * gamma + beta
///
/// In training, mu and sigma^2 are the batch's column mean and biased variance, and the running
/// statistics move towards them: `running_mean = (1 - momentum) running_mean + momentum mu`, and
/// the same for `running_var` with the unbiased variance (N / (N - 1) sigma^2), as
/// `torch.nn.BatchNorm1d(F)`. In evaluation the running statistics replace the batch's (without
/// `track_running_stats`, the batch's are used in both modes). Column statistics are summed in
/// double over fixed row blocks, in order: bitwise the same for any thread count.
///
/// Parameters (under `name`): `name.weight` (gamma, ones) and `name.bias` (beta, zeros), 1 x F.
/// Buffers, in a store of their own that the optimizer never updates: `name.running_mean`
/// (zeros) and `name.running_var` (ones), 1 x F. A training-mode forward updates the buffers, so
/// it is not re-entrant.
template <typename T>
class MASKGAT_EXPORT BasicBatchNorm {
 public:
  /// What `forward` keeps for `backward`.
  struct Cache {
    RowMatrix<T> normalized;        ///< (x - mu) / sqrt(sigma^2 + eps), N x F
    RowMatrix<T> inv_std;           ///< 1 / sqrt(sigma^2 + eps), 1 x F
    bool batch_statistics = false;  ///< whether mu and sigma^2 were the batch's
    /// Backward scratch, kept so repeated steps reuse their memory.
    /// @{
    RowMatrix<T> column_sums, scratch;
    /// @}
  };
  /// Registers the parameters in `store` and the running statistics in `buffers`, under `name`
  /// (no draws).
  /// @param store   receives the parameters; must outlive the layer
  /// @param buffers receives the running statistics; must outlive the layer
  /// @param name    prefix of the names, e.g. `norm1`
  /// @param options width, eps, momentum, affine terms, running statistics
  /// @throws InvalidArgument on a non-positive width or eps, a momentum outside (0, 1], or a name
  ///         in use.
  BasicBatchNorm(ParameterStore<T>& store, ParameterStore<T>& buffers, std::string_view name,
                 const BatchNormOptions& options);
  /// Normalises every column of `x`; in training, also updates the running statistics.
  /// @param x     N x F
  /// @param mode  `Mode::kTrain` uses (and records) the batch's statistics, `Mode::kEval` the
  ///              running ones
  /// @param cache receives what `backward` needs
  /// @param out   resized to N x F; may be `x`
  /// @throws InvalidArgument when x has not F columns, or has a single row in training (its
  ///         variance is undefined; PyTorch refuses it too).
  void forward(const Eigen::Ref<const RowMatrix<T>>& x, Mode mode, Cache& cache,
               RowMatrix<T>& out) const;
  /// Adds the parameter gradients into the store and writes dL/dx into `grad_x`.
  /// @param cache    the forward's
  /// @param grad_out dL/dout, N x F
  /// @param grad_x   resized to N x F and overwritten with dL/dx; may be `grad_out`
  /// @throws InvalidArgument when `grad_out` is not shaped as the forward's input.
  void backward(Cache& cache, const RowMatrix<T>& grad_out, RowMatrix<T>& grad_x) const;
  /// The options the layer was built with.
  /// @return the options as given to the constructor
  [[nodiscard]] const BatchNormOptions& options() const noexcept { return options_; }

 private:
  ParameterStore<T>* store_;
  ParameterStore<T>* buffers_;
  BatchNormOptions options_;
  std::optional<Parameter> weight_;
  std::optional<Parameter> bias_;
  std::optional<Parameter> running_mean_;
  std::optional<Parameter> running_var_;
};

/// Layer normalisation in single precision, as models use it.
using LayerNorm = BasicLayerNorm<float>;
/// Batch normalisation in single precision, as models use it.
using BatchNorm = BasicBatchNorm<float>;

}  // namespace maskgat::nn
