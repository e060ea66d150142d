#include "maskgat/optim/adam.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/detail/parallel.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat::optim {
namespace {

constexpr std::int64_t kBlock = 16384;

void check(bool ok, const std::string& message) {
  if (!ok) throw InvalidArgument("adam: " + message);
}

struct StepCoefficients {
  float beta1;
  float beta2;
  float decay;
  float step_size;
  float correction2;
  float epsilon;
};

// The update of elements [begin, end). The arrays are declared not to overlap, so the loop
// vectorises; it is element-wise, so fixed blocks in parallel give the same result as one serial
// loop.
void update(std::int64_t begin, std::int64_t end, float* __restrict values,
            const float* __restrict grads, float* __restrict first, float* __restrict second,
            const StepCoefficients& c) {
  for (std::int64_t i = begin; i < end; ++i) {
    const float g = grads[i] + c.decay * values[i];
    first[i] += (g - first[i]) * (1.0F - c.beta1);
    second[i] = c.beta2 * second[i] + (1.0F - c.beta2) * g * g;
    values[i] -= c.step_size * first[i] / (std::sqrt(second[i]) / c.correction2 + c.epsilon);
  }
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
  const StepCoefficients coefficients{
      static_cast<float>(options_.beta1),
      static_cast<float>(options_.beta2),
      static_cast<float>(options_.weight_decay),
      static_cast<float>(options_.learning_rate / (1.0 - std::pow(options_.beta1, t))),
      static_cast<float>(std::sqrt(1.0 - std::pow(options_.beta2, t))),
      static_cast<float>(options_.epsilon)};
  detail::for_each_block(static_cast<std::int64_t>(values.size()), kBlock,
                         [&](std::int64_t begin, std::int64_t end) {
                           update(begin, end, values.data(), grads.data(), first_.data(),
                                  second_.data(), coefficients);
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
