#pragma once
/// @file
/// Elementwise activations between layers: identity, ReLU, ELU, LeakyReLU and GELU.

#include <string_view>

#include "maskgat/core/tensor.hpp"
#include "maskgat/export.hpp"

namespace maskgat::nn {

/// Which function an `Activation` applies.
enum class ActivationKind {
  kIdentity,   ///< `x`
  kRelu,       ///< `max(x, 0)`, as `torch.nn.ReLU`
  kElu,        ///< `x` if positive, else `alpha (exp(x) - 1)`, as `torch.nn.ELU`
  kLeakyRelu,  ///< `x` if positive, else `negative_slope x`, as `torch.nn.LeakyReLU`
  kGelu,       ///< `x Phi(x)` with the exact normal CDF, as `torch.nn.GELU()`
};

/// The name of an activation, as model specs spell it.
/// @param kind any kind
/// @return `identity`, `relu`, `elu`, `leaky_relu` or `gelu` (a static string)
[[nodiscard]] MASKGAT_EXPORT const char* activation_kind_name(ActivationKind kind) noexcept;
/// Parses an activation's name.
/// @param name the exact, lower-case name `activation_kind_name` gives
/// @return its kind
/// @throws InvalidArgument naming the accepted values.
[[nodiscard]] MASKGAT_EXPORT ActivationKind parse_activation_kind(std::string_view name);

/// Options of `Activation`, with PyTorch's defaults.
struct ActivationOptions {
  ActivationKind kind = ActivationKind::kRelu;  ///< the function
  double negative_slope = 0.01;                 ///< LeakyReLU's slope (finite)
  double alpha = 1.0;                           ///< ELU's scale of the negative part (finite)
};

/// An elementwise activation with no parameters. Its derivative at 0 is PyTorch's: 0 for ReLU,
/// `negative_slope` for LeakyReLU, `alpha` for ELU. Parallel over fixed row blocks, so outputs
/// and gradients are bitwise the same for any thread count.
template <typename T>
class MASKGAT_EXPORT BasicActivation {
 public:
  /// @param options the function and its constants
  /// @throws InvalidArgument on a non-finite `negative_slope` or `alpha`.
  explicit BasicActivation(const ActivationOptions& options);
  /// `out = f(x)`; `out` may be `x`.
  /// @param x   N x F
  /// @param out resized to N x F
  void forward(const Eigen::Ref<const RowMatrix<T>>& x, RowMatrix<T>& out) const;
  /// `grad_x = grad_out .* f'(x)`; `grad_x` may be `grad_out`.
  /// @param x        the forward's input, N x F
  /// @param grad_out dL/dout, N x F
  /// @param grad_x   resized to N x F and overwritten with dL/dx
  /// @throws InvalidArgument when `grad_out` is not shaped as `x`.
  void backward(const Eigen::Ref<const RowMatrix<T>>& x, const RowMatrix<T>& grad_out,
                RowMatrix<T>& grad_x) const;
  /// The options the activation was built with.
  /// @return the options as given to the constructor
  [[nodiscard]] const ActivationOptions& options() const noexcept { return options_; }

 private:
  ActivationOptions options_;
};

/// The activation in single precision, as models use it.
using Activation = BasicActivation<float>;

}  // namespace maskgat::nn
