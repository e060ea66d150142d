#include "maskgat/optim/adam.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "detail/parallel.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat::optim {
namespace {

constexpr std::int64_t kBlock = 16384;

void check(bool ok, const std::string& message) {
  if (!ok) throw InvalidArgument("adam: " + message);
}

}  // namespace

Adam::Adam(std::int64_t size, const AdamOptions& options) : options_(options) {
  check(size >= 0, "size " + std::to_string(size) + " is negative");
  check(options.learning_rate > 0.0 && std::isfinite(options.learning_rate),
        "learning rate " + std::to_string(options.learning_rate) + " is not positive");
  check(options.beta1 >= 0.0 && options.beta1 < 1.0,
        "beta1 " + std::to_string(options.beta1) + " is outside [0, 1)");
  check(options.beta2 >= 0.0 && options.beta2 < 1.0,
        "beta2 " + std::to_string(options.beta2) + " is outside [0, 1)");
  check(options.epsilon >= 0.0, "epsilon " + std::to_string(options.epsilon) + " is negative");
  check(options.weight_decay >= 0.0 && std::isfinite(options.weight_decay),
        "weight decay " + std::to_string(options.weight_decay) + " is negative");
  first_.assign(static_cast<std::size_t>(size), 0.0F);
  second_.assign(static_cast<std::size_t>(size), 0.0F);
}

void Adam::step(std::span<float> values, std::span<const float> grads) {
  check(values.size() == first_.size() && grads.size() == first_.size(),
        "step got " + std::to_string(values.size()) + " values and " +
            std::to_string(grads.size()) + " gradients, expected " + std::to_string(first_.size()));
  ++steps_;
  const auto t = static_cast<double>(steps_);
  const auto beta1 = static_cast<float>(options_.beta1);
  const auto beta2 = static_cast<float>(options_.beta2);
  const auto decay = static_cast<float>(options_.weight_decay);
  const auto step_size =
      static_cast<float>(options_.learning_rate / (1.0 - std::pow(options_.beta1, t)));
  const auto correction2 = static_cast<float>(std::sqrt(1.0 - std::pow(options_.beta2, t)));
  const auto epsilon = static_cast<float>(options_.epsilon);
  // Element-wise, so fixed blocks in parallel give the same result as one serial loop.
  float* first = first_.data();
  float* second = second_.data();
  detail::for_each_block(
      static_cast<std::int64_t>(values.size()), kBlock, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t k = begin; k < end; ++k) {
          const auto i = static_cast<std::size_t>(k);
          const float g = grads[i] + decay * values[i];
          first[i] += (g - first[i]) * (1.0F - beta1);
          second[i] = beta2 * second[i] + (1.0F - beta2) * g * g;
          values[i] -= step_size * first[i] / (std::sqrt(second[i]) / correction2 + epsilon);
        }
      });
}

void Adam::restore(std::int64_t steps, std::span<const float> first,
                   std::span<const float> second) {
  check(steps >= 0, "restored step count " + std::to_string(steps) + " is negative");
  check(first.size() == first_.size() && second.size() == second_.size(),
        "restored state has " + std::to_string(first.size()) + " and " +
            std::to_string(second.size()) + " moments, expected " + std::to_string(first_.size()));
  steps_ = steps;
  std::copy(first.begin(), first.end(), first_.begin());
  std::copy(second.begin(), second.end(), second_.begin());
}

}  // namespace maskgat::optim
