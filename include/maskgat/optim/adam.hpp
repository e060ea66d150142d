#pragma once
/// @file
/// The Adam optimizer (Kingma and Ba 2015) with PyTorch's L2 weight decay.

#include <cstdint>
#include <span>
#include <vector>

#include "maskgat/export.hpp"

namespace maskgat::optim {

/// Hyper-parameters of `Adam`; the defaults are PyTorch's, with the GAT paper's rate and decay.
struct AdamOptions {
  double learning_rate = 0.005;  ///< lr (> 0)
  double beta1 = 0.9;            ///< decay of the first moment, in [0, 1)
  double beta2 = 0.999;          ///< decay of the second moment, in [0, 1)
  double epsilon = 1e-8;         ///< added to the denominator (>= 0)
  double weight_decay = 5e-4;    ///< added to every gradient as `weight_decay * value` (>= 0)
};

/// Adam over one flat parameter buffer, step for step as PyTorch's `torch.optim.Adam`:
///
///     g = grad + weight_decay * value
///     m = beta1 m + (1 - beta1) g;   v = beta2 v + (1 - beta2) g^2
///     value -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + epsilon)
///
/// Its state (t, m, v) is what a checkpoint stores to resume training exactly. The update is
/// element-wise, split over fixed blocks (bitwise the same for any thread count); the arithmetic
/// is in single precision.
class MASKGAT_EXPORT Adam {
 public:
  /// An optimizer at step 0 with zero moments.
  /// @param size    the number of parameters it updates
  /// @param options the hyper-parameters
  /// @throws InvalidArgument on a negative size, a non-positive or non-finite rate, betas outside
  ///         [0, 1), a negative epsilon, or a negative or non-finite weight decay.
  Adam(std::int64_t size, const AdamOptions& options);

  /// One update of `values` from `grads` (both of the size given at construction).
  /// @param values updated in place, e.g. `ParameterStore::values()`
  /// @param grads  dL/dvalues
  /// @throws InvalidArgument on a size mismatch.
  void step(std::span<float> values, std::span<const float> grads);

  /// The hyper-parameters.
  /// @return the options as given to the constructor
  [[nodiscard]] const AdamOptions& options() const noexcept { return options_; }
  /// Steps taken (t).
  /// @return the number of `step` calls, counted on from a `restore`
  [[nodiscard]] std::int64_t steps() const noexcept { return steps_; }
  /// First moments (m).
  /// @return one per parameter
  [[nodiscard]] std::span<const float> first_moments() const noexcept { return first_; }
  /// Second moments (v).
  /// @return one per parameter
  [[nodiscard]] std::span<const float> second_moments() const noexcept { return second_; }

  /// Replaces the state, as read from a checkpoint.
  /// @param steps  t (>= 0)
  /// @param first  m, one per parameter
  /// @param second v, one per parameter
  /// @throws InvalidArgument when a size differs or `steps` is negative.
  void restore(std::int64_t steps, std::span<const float> first, std::span<const float> second);

 private:
  AdamOptions options_;
  std::int64_t steps_ = 0;
  std::vector<float> first_;
  std::vector<float> second_;
};

}  // namespace maskgat::optim
