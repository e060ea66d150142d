#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/optim/adam.hpp"

namespace optim = maskgat::optim;

TEST_SUITE("unit") {
  TEST_CASE("Adam follows PyTorch's update with L2 weight decay") {
    optim::AdamOptions options;
    options.learning_rate = 0.1;
    options.weight_decay = 0.5;
    optim::Adam adam(2, options);
    std::vector<float> values{1.0F, -2.0F};
    const std::vector<float> grads{0.5F, 0.0F};
    // Reference in double: the same recurrence as torch.optim.Adam.
    double p[2] = {1.0, -2.0};
    double m[2] = {0.0, 0.0};
    double v[2] = {0.0, 0.0};
    for (int t = 1; t <= 3; ++t) {
      adam.step(values, grads);
      for (int k = 0; k < 2; ++k) {
        const double g = grads[static_cast<std::size_t>(k)] + 0.5 * p[k];
        m[k] = 0.9 * m[k] + 0.1 * g;
        v[k] = 0.999 * v[k] + 0.001 * g * g;
        const double step = 0.1 / (1.0 - std::pow(0.9, t));
        p[k] -= step * m[k] / (std::sqrt(v[k]) / std::sqrt(1.0 - std::pow(0.999, t)) + 1e-8);
      }
    }
    CHECK(adam.steps() == 3);
    // Float against a double reference: a few float roundings per step.
    CHECK(values[0] == doctest::Approx(p[0]).epsilon(1e-5));
    CHECK(values[1] == doctest::Approx(p[1]).epsilon(1e-5));
    // The first step moves every parameter by about the learning rate.
    CHECK(std::abs(p[0] - 1.0) > 0.25);

    optim::Adam copy(2, options);
    copy.restore(adam.steps(), adam.first_moments(), adam.second_moments());
    std::vector<float> a = values;
    std::vector<float> b = values;
    adam.step(a, grads);
    copy.step(b, grads);
    CHECK(a == b);
  }

  TEST_CASE("Adam rejects bad options and sizes") {
    optim::AdamOptions options;
    options.learning_rate = 0.0;
    CHECK_THROWS_AS(optim::Adam(1, options), maskgat::InvalidArgument);
    options = {};
    options.beta2 = 1.0;
    CHECK_THROWS_WITH_AS(optim::Adam(1, options), "adam: beta2 1.000000 is outside [0, 1)",
                         maskgat::InvalidArgument);
    optim::Adam adam(2, {});
    std::vector<float> values(3);
    const std::vector<float> grads(3);
    CHECK_THROWS_WITH_AS(adam.step(values, grads),
                         "adam: step got 3 values and 3 gradients, expected 2",
                         maskgat::InvalidArgument);
  }
}
