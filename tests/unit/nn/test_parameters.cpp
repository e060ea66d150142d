#include <doctest/doctest.h>

#include "maskgat/core/error.hpp"
#include "maskgat/nn/parameters.hpp"

namespace nn = maskgat::nn;

TEST_SUITE("unit") {
  TEST_CASE("ParameterStore keeps values and gradients contiguous and named") {
    nn::ParameterStore<float> store;
    const nn::Parameter weight = store.add("conv1.weight", 3, 2);
    const nn::Parameter bias = store.add("conv1.bias", 1, 2);
    CHECK(store.size() == 8);
    CHECK(bias.offset == 6);
    store.value(weight)(2, 1) = 5.0F;
    store.value(bias)(0, 0) = 7.0F;
    CHECK(store.values()[5] == 5.0F);
    CHECK(store.values()[6] == 7.0F);
    store.grad(bias).setConstant(2.0F);
    CHECK(store.grads()[7] == 2.0F);
    // Handles survive growth of the buffers.
    const nn::Parameter more = store.add("conv2.weight", 100, 100);
    CHECK(store.value(weight)(2, 1) == 5.0F);
    CHECK(store.value(more).isZero());
    store.zero_grad();
    CHECK(store.grad(bias).isZero());
    REQUIRE(store.find("conv1.bias"));
    CHECK(store.find("conv1.bias")->offset == 6);
    CHECK_FALSE(store.find("conv3.weight"));
    CHECK_THROWS_WITH_AS(store.add("conv1.bias", 1, 2),
                         "ParameterStore::add: a parameter named 'conv1.bias' already exists",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(store.add("x", -1, 2),
                         "ParameterStore::add: 'x' has shape -1 x 2, expected sizes >= 0",
                         maskgat::InvalidArgument);
    CHECK_THROWS_AS(store.add("", 1, 1), maskgat::InvalidArgument);
  }

  TEST_CASE("glorot_uniform draws within the bound from the seed") {
    nn::ParameterStore<double> store;
    const nn::Parameter weight = store.add("w", 40, 60);
    maskgat::Rng rng(3);
    nn::glorot_uniform<double>(store.value(weight), 40, 60, rng);
    const double bound = std::sqrt(6.0 / 100.0);
    CHECK(store.value(weight).cwiseAbs().maxCoeff() <= bound);
    CHECK(store.value(weight).cwiseAbs().maxCoeff() > 0.99 * bound);
    CHECK(std::abs(store.value(weight).mean()) < 0.02);
    nn::ParameterStore<double> again;
    const nn::Parameter same = again.add("w", 40, 60);
    maskgat::Rng rng_again(3);
    nn::glorot_uniform<double>(again.value(same), 40, 60, rng_again);
    CHECK(again.value(same) == store.value(weight));
  }
}
