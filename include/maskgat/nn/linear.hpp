#pragma once
/// @file
/// A dense layer `x W + b`, as `torch.nn.Linear` (PyG's `Linear` with Glorot weights).

#include <cstdint>
#include <optional>
#include <string_view>

#include "maskgat/core/random.hpp"
#include "maskgat/core/tensor.hpp"
#include "maskgat/export.hpp"
#include "maskgat/nn/layer.hpp"
#include "maskgat/nn/parameters.hpp"

namespace maskgat::nn {

/// Options of `Linear`, with the defaults of `torch.nn.Linear`.
struct LinearOptions {
  std::int64_t in_features = 0;   ///< F_in (> 0)
  std::int64_t out_features = 0;  ///< F_out (> 0)
  bool bias = true;               ///< learnable bias
};

/// `out = x W + b` on every row, for dense or sparse `x` (sparse input is never densified).
///
/// Parameters (registered under `name`): `name.weight` F_in x F_out (`x W`, the transpose of
/// PyTorch's layout) and `name.bias` 1 x F_out; Glorot-uniform weight and zero bias, as PyG's
/// `Linear(weight_initializer='glorot', bias_initializer='zeros')`.
///
/// Parallel over fixed blocks (of rows, or of rows of W for its gradient): outputs and gradients
/// are bitwise the same for any thread count.
template <typename T>
class MASKGAT_EXPORT BasicLinear {
 public:
  /// Registers and initialises the parameters in `store` under `name`, drawing from `rng`.
  /// @param store   receives the parameters; must outlive the layer
  /// @param name    prefix of the parameter names, e.g. `encoder`
  /// @param options sizes and bias
  /// @param rng     draws the Glorot-uniform weight
  /// @throws InvalidArgument on a non-positive size or a name in use.
  BasicLinear(ParameterStore<T>& store, std::string_view name, const LinearOptions& options,
              Rng& rng);
  /// `out = x W + b`.
  /// @param x   N x F_in, dense or sparse
  /// @param out resized to N x F_out; must not be `x`
  /// @throws InvalidArgument when x has not F_in columns.
  void forward(InputRef<T> x, RowMatrix<T>& out) const;
  /// Adds dL/dW and dL/db into the store and, when `grad_x` is not null, writes dL/dx into it.
  /// @param x        the forward's input
  /// @param grad_out dL/dout, N x F_out
  /// @param grad_x   null, or resized to N x F_in and overwritten with dL/dx (dense `x` only)
  /// @throws InvalidArgument when `grad_out` is not N x F_out, or `grad_x` is asked for a sparse
  ///         `x`.
  void backward(InputRef<T> x, const RowMatrix<T>& grad_out, RowMatrix<T>* grad_x) const;
  /// The options the layer was built with.
  /// @return the options as given to the constructor
  [[nodiscard]] const LinearOptions& options() const noexcept { return options_; }

 private:
  ParameterStore<T>* store_;
  LinearOptions options_;
  Projection projection_;
};

/// The dense layer in single precision, as models use it.
using Linear = BasicLinear<float>;

}  // namespace maskgat::nn
