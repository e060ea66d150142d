#pragma once
/// @file
/// The Adam optimizer (Kingma and Ba 2015) with PyTorch's L2 weight decay.

#include <cstdint>
#include <span>
#include <vector>

namespace maskgat::optim {

/// Hyper-parameters of `Adam`; the defaults are PyTorch's, with the GAT paper's rate and decay.
struct AdamOptions {
  double learning_rate = 0.005;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double weight_decay = 5e-4;  ///< added to every gradient as `weight_decay * value`
};

/// Adam over one flat parameter buffer, step for step as PyTorch's `torch.optim.Adam`:
///
///     g = grad + weight_decay * value
///     m = beta1 m + (1 - beta1) g;   v = beta2 v + (1 - beta2) g^2
///     value -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + epsilon)
///
/// Its state (t, m, v) is what a checkpoint stores to resume training exactly. Serial.
class Adam {
 public:
  /// @throws InvalidArgument on a negative size, a non-positive rate, betas outside [0, 1), a
  ///         negative epsilon or weight decay.
  Adam(std::int64_t size, const AdamOptions& options);

  /// One update of `values` from `grads` (both of the size given at construction).
  /// @throws InvalidArgument on a size mismatch.
  void step(std::span<float> values, std::span<const float> grads);

  [[nodiscard]] const AdamOptions& options() const noexcept { return options_; }
  /// Steps taken (t).
  [[nodiscard]] std::int64_t steps() const noexcept { return steps_; }
  /// First moments (m).
  [[nodiscard]] std::span<const float> first_moments() const noexcept { return first_; }
  /// Second moments (v).
  [[nodiscard]] std::span<const float> second_moments() const noexcept { return second_; }

  /// Replaces the state, as read from a checkpoint.
  /// @throws InvalidArgument when a size differs or `steps` is negative.
  void restore(std::int64_t steps, std::span<const float> first, std::span<const float> second);

 private:
  AdamOptions options_;
  std::int64_t steps_ = 0;
  std::vector<float> first_;
  std::vector<float> second_;
};

}  // namespace maskgat::optim
