// The modules between attention layers: Linear, LayerNorm, BatchNorm and the activations, each
// against a dense reference, with exact gradients (central differences in double, the float
// backward beside them) and bitwise the same results on any thread count.

#include <doctest/doctest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/nn/activation.hpp"
#include "maskgat/nn/linear.hpp"
#include "maskgat/nn/normalization.hpp"
#include "support/central_differences.hpp"
#include "support/dense_attention.hpp"
#include "support/random_data.hpp"

using maskgat::InvalidArgument;
using maskgat::Rng;
using maskgat::RowMatrix;
namespace nn = maskgat::nn;
namespace test = maskgat::test;

namespace {

constexpr double kStep = 1e-6;
constexpr double kTolerance = 1e-6;
// Float gradients against double differences: sums of a few dozen terms rounded at 6e-8 each.
constexpr double kFloatTolerance = 1e-5;

// One module with its stores, in T, behind one interface: `forward(x)` returns the output and
// `backward(x, grad_out)` adds the parameter gradients and returns dL/dx.
template <typename T>
struct LinearCase {
  nn::ParameterStore<T> store, buffers;
  Rng rng{3};
  nn::BasicLinear<T> module;
  RowMatrix<T> out;
  explicit LinearCase(std::int64_t features, bool bias = true)
      : module(store, "lin", {features, 3, bias}, rng) {}
  RowMatrix<T> forward(const RowMatrix<T>& x) {
    module.forward(x, out);
    return out;
  }
  RowMatrix<T> backward(const RowMatrix<T>& x, const RowMatrix<T>& grad_out) {
    RowMatrix<T> grad_x;
    module.backward(x, grad_out, &grad_x);
    return grad_x;
  }
  // x W + b, entry by entry.
  static RowMatrix<double> reference(const nn::ParameterStore<double>& store,
                                     const RowMatrix<double>& x) {
    const auto weight = store.value(*store.find("lin.weight"));
    RowMatrix<double> out = x * weight;
    if (const auto bias = store.find("lin.bias")) out.rowwise() += store.value(*bias).row(0);
    return out;
  }
};

// Parameters drawn away from their initial ones and zeros, so that gamma and beta take part.
template <typename T>
void perturb(nn::ParameterStore<T>& store, std::uint64_t seed) {
  const RowMatrix<double> noise = test::random_matrix<double>(1, store.size(), seed, 0.5);
  for (std::int64_t k = 0; k < store.size(); ++k) {
    store.values()[static_cast<std::size_t>(k)] += static_cast<T>(noise(0, k));
  }
}

template <typename T>
struct LayerNormCase {
  nn::ParameterStore<T> store, buffers;
  nn::BasicLayerNorm<T> module;
  typename nn::BasicLayerNorm<T>::Cache cache;
  RowMatrix<T> out;
  explicit LayerNormCase(std::int64_t features, bool affine = true)
      : module(store, "norm", {.features = features, .elementwise_affine = affine}) {
    perturb(store, 4);
  }
  RowMatrix<T> forward(const RowMatrix<T>& x) {
    module.forward(x, cache, out);
    return out;
  }
  RowMatrix<T> backward(const RowMatrix<T>& /*x*/, const RowMatrix<T>& grad_out) {
    RowMatrix<T> grad_x;
    module.backward(cache, grad_out, grad_x);
    return grad_x;
  }
  static RowMatrix<double> reference(const nn::ParameterStore<double>& store,
                                     const RowMatrix<double>& x) {
    RowMatrix<double> out(x.rows(), x.cols());
    for (std::int64_t i = 0; i < x.rows(); ++i) {
      const double mean = x.row(i).mean();
      const double variance = (x.row(i).array() - mean).square().mean();
      out.row(i) = (x.row(i).array() - mean) / std::sqrt(variance + 1e-5);
    }
    if (const auto weight = store.find("norm.weight")) {
      out.array().rowwise() *= store.value(*weight).row(0).array();
    }
    if (const auto bias = store.find("norm.bias")) out.rowwise() += store.value(*bias).row(0);
    return out;
  }
};

template <typename T>
struct BatchNormCase {
  nn::ParameterStore<T> store, buffers;
  nn::BasicBatchNorm<T> module;
  nn::Mode mode;
  typename nn::BasicBatchNorm<T>::Cache cache;
  RowMatrix<T> out;
  explicit BatchNormCase(std::int64_t features, nn::Mode forward_mode = nn::Mode::kTrain)
      : module(store, buffers, "bn", {.features = features}), mode(forward_mode) {
    perturb(store, 5);
    perturb(buffers, 6);  // running variance in [0.5, 1.5), away from zero
  }
  RowMatrix<T> forward(const RowMatrix<T>& x) {
    module.forward(x, mode, cache, out);
    return out;
  }
  RowMatrix<T> backward(const RowMatrix<T>& /*x*/, const RowMatrix<T>& grad_out) {
    RowMatrix<T> grad_x;
    module.backward(cache, grad_out, grad_x);
    return grad_x;
  }
};

template <typename T>
struct ActivationCase {
  nn::ParameterStore<T> store, buffers;
  nn::BasicActivation<T> module;
  RowMatrix<T> out;
  explicit ActivationCase(nn::ActivationOptions options) : module(options) {}
  RowMatrix<T> forward(const RowMatrix<T>& x) {
    module.forward(x, out);
    return out;
  }
  RowMatrix<T> backward(const RowMatrix<T>& x, const RowMatrix<T>& grad_out) {
    RowMatrix<T> grad_x;
    module.backward(x, grad_out, grad_x);
    return grad_x;
  }
};

// Compares backward with central differences of L = sum(out .* R), for every parameter and for
// the input, in double; and the float module's backward, from the same parameters, with the
// same differences within float's rounding.
template <template <typename> class Case, typename... Args>
void check_gradients(const RowMatrix<double>& x, const Args&... args) {
  Case<double> exact(args...);
  const RowMatrix<double> weights =
      test::random_matrix<double>(x.rows(), exact.forward(x).cols(), 9);
  RowMatrix<double> input = x;
  const auto loss = [&] { return (exact.forward(input).array() * weights.array()).sum(); };

  exact.store.zero_grad();
  exact.forward(x);
  const RowMatrix<double> grad_x = exact.backward(x, weights);
  Case<float> single(args...);
  REQUIRE(single.store.size() == exact.store.size());
  std::transform(exact.store.values().begin(), exact.store.values().end(),
                 single.store.values().begin(), [](double v) { return static_cast<float>(v); });
  std::transform(exact.buffers.values().begin(), exact.buffers.values().end(),
                 single.buffers.values().begin(), [](double v) { return static_cast<float>(v); });
  single.store.zero_grad();
  const RowMatrix<float> x_float = x.cast<float>();
  single.forward(x_float);
  const RowMatrix<double> grad_x_float =
      single.backward(x_float, weights.cast<float>()).template cast<double>();

  auto values = exact.store.values();
  for (const auto& entry : exact.store.entries()) {
    CAPTURE(entry.name);
    const RowMatrix<double> numeric =
        test::central_differences(values, entry.parameter, loss, kStep);
    const RowMatrix<double> analytic = exact.store.grad(entry.parameter);
    const RowMatrix<double> analytic_float =
        single.store.grad(entry.parameter).template cast<double>();
    CHECK(test::relative_error(analytic, numeric) < kTolerance);
    CHECK(test::relative_error(analytic_float, numeric) < kFloatTolerance);
  }
  const RowMatrix<double> numeric =
      test::central_differences(std::span(input.data(), static_cast<std::size_t>(input.size())),
                                x.rows(), x.cols(), loss, kStep);
  CHECK(test::relative_error(grad_x, numeric) < kTolerance);
  CHECK(test::relative_error(grad_x_float, numeric) < kFloatTolerance);
}

// The forward output, the input gradient and every parameter gradient of a float module on
// `threads` threads.
template <typename Case, typename... Args>
std::vector<RowMatrix<float>> run_on_threads(std::size_t threads, const RowMatrix<float>& x,
                                             const Args&... args) {
  const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
  Case module(args...);
  module.store.zero_grad();
  std::vector<RowMatrix<float>> results{module.forward(x)};
  results.push_back(module.backward(x, results.front()));
  results.emplace_back(
      Eigen::Map<const RowMatrix<float>>(module.store.grads().data(), 1, module.store.size()));
  results.emplace_back(
      Eigen::Map<const RowMatrix<float>>(module.buffers.values().data(), 1, module.buffers.size()));
  return results;
}

template <typename Case, typename... Args>
void check_thread_invariance(const Args&... args) {
  // Enough rows for several row blocks and several blocks of every column reduction.
  const RowMatrix<float> x = test::random_matrix<float>(9000, 24, 11);
  const auto baseline = run_on_threads<Case>(1, x, args...);
  for (const std::size_t threads : {2, 3, 8}) {
    CAPTURE(threads);
    CHECK(run_on_threads<Case>(threads, x, args...) == baseline);
  }
}

std::string message_of(const auto& action) {
  try {
    action();
  } catch (const InvalidArgument& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("linear: forward is x W + b; gradients exact, with and without bias, dense and sparse") {
  const RowMatrix<double> x = test::random_matrix<double>(7, 5, 1);
  LinearCase<double> linear(5);
  CHECK(test::relative_error(linear.forward(x), LinearCase<double>::reference(linear.store, x)) <
        1e-14);
  check_gradients<LinearCase>(x, std::int64_t{5});
  check_gradients<LinearCase>(x, std::int64_t{5}, false);

  // Sparse input: the same output and weight gradient as its dense copy.
  const auto sparse = test::random_sparse<float>(40, 6, 0.3, 2);
  const RowMatrix<float> dense = RowMatrix<float>(sparse);
  LinearCase<float> a(6);
  LinearCase<float> b(6);
  RowMatrix<float> out_sparse;
  a.module.forward(sparse, out_sparse);
  CHECK(out_sparse.isApprox(b.forward(dense), 1e-6F));
  const RowMatrix<float> grad = test::random_matrix<float>(40, 3, 3);
  a.store.zero_grad();
  b.store.zero_grad();
  a.module.backward(sparse, grad, nullptr);
  b.module.backward(dense, grad, nullptr);
  for (std::size_t k = 0; k < a.store.grads().size(); ++k) {
    CHECK(a.store.grads()[k] == doctest::Approx(b.store.grads()[k]).epsilon(1e-5));
  }
}

TEST_CASE(
    "layer norm: each row normalised over its features as torch.nn.LayerNorm; exact "
    "gradients") {
  const RowMatrix<double> x = test::random_matrix<double>(6, 7, 12, 3.0);
  LayerNormCase<double> norm(7);
  CHECK(test::relative_error(norm.forward(x), LayerNormCase<double>::reference(norm.store, x)) <
        1e-13);
  check_gradients<LayerNormCase>(x, std::int64_t{7});
  check_gradients<LayerNormCase>(x, std::int64_t{7}, false);
  // Without affine terms it has no parameters, and every row has mean 0 and variance ~1.
  LayerNormCase<double> plain(7, false);
  CHECK(plain.store.size() == 0);
  const RowMatrix<double> out = plain.forward(x);
  for (std::int64_t i = 0; i < out.rows(); ++i) {
    CHECK(std::abs(out.row(i).mean()) < 1e-14);
    CHECK(out.row(i).array().square().mean() == doctest::Approx(1.0).epsilon(1e-4));
  }
}

TEST_CASE(
    "batch norm: batch statistics in training, running ones (momentum 0.1, unbiased "
    "variance) in evaluation, as torch.nn.BatchNorm1d") {
  const RowMatrix<double> x = test::random_matrix<double>(5, 3, 13, 2.0);
  nn::ParameterStore<double> store;
  nn::ParameterStore<double> buffers;
  const nn::BasicBatchNorm<double> bn(store, buffers, "bn", {.features = 3});
  REQUIRE(buffers.entries().size() == 2);
  CHECK(buffers.entries()[0].name == "bn.running_mean");
  CHECK(buffers.entries()[1].name == "bn.running_var");
  CHECK(store.entries()[0].name == "bn.weight");
  CHECK(store.entries()[1].name == "bn.bias");
  nn::BasicBatchNorm<double>::Cache cache;
  RowMatrix<double> out;
  bn.forward(x, nn::Mode::kTrain, cache, out);
  const RowMatrix<double> mean = x.colwise().mean();
  const RowMatrix<double> variance = (x.rowwise() - mean.row(0)).array().square().colwise().mean();
  for (std::int64_t c = 0; c < 3; ++c) {
    CAPTURE(c);
    for (std::int64_t i = 0; i < 5; ++i) {
      CHECK(out(i, c) ==
            doctest::Approx((x(i, c) - mean(0, c)) / std::sqrt(variance(0, c) + 1e-5)));
    }
    CHECK(buffers.value(*buffers.find("bn.running_mean"))(0, c) ==
          doctest::Approx(0.1 * mean(0, c)));
    CHECK(buffers.value(*buffers.find("bn.running_var"))(0, c) ==
          doctest::Approx(0.9 + 0.1 * variance(0, c) * 5.0 / 4.0));
  }
  // Evaluation reads the running statistics and leaves them as they are.
  const RowMatrix<double> running_mean = buffers.value(*buffers.find("bn.running_mean"));
  const RowMatrix<double> running_var = buffers.value(*buffers.find("bn.running_var"));
  bn.forward(x, nn::Mode::kEval, cache, out);
  CHECK(out(2, 1) ==
        doctest::Approx((x(2, 1) - running_mean(0, 1)) / std::sqrt(running_var(0, 1) + 1e-5)));
  CHECK(RowMatrix<double>(buffers.value(*buffers.find("bn.running_mean"))) == running_mean);

  check_gradients<BatchNormCase>(x, std::int64_t{3}, nn::Mode::kTrain);
  check_gradients<BatchNormCase>(x, std::int64_t{3}, nn::Mode::kEval);

  // One row has no batch variance: refused in training, as PyTorch does.
  CHECK(message_of([&] { bn.forward(x.topRows(1), nn::Mode::kTrain, cache, out); }) ==
        "batch_norm.forward: 1 row(s) in training, expected at least 2 (the batch variance of one "
        "row is undefined)");
}

TEST_CASE("activations: values and exact gradients of identity, ReLU, ELU, LeakyReLU and GELU") {
  // Entries kept away from 0, where ReLU and LeakyReLU have their kink.
  RowMatrix<double> x = test::random_matrix<double>(6, 5, 14, 3.0);
  x = (x.array().abs() < 0.01).select(0.5, x);
  for (const auto kind :
       {nn::ActivationKind::kIdentity, nn::ActivationKind::kRelu, nn::ActivationKind::kElu,
        nn::ActivationKind::kLeakyRelu, nn::ActivationKind::kGelu}) {
    CAPTURE(nn::activation_kind_name(kind));
    CHECK(nn::parse_activation_kind(nn::activation_kind_name(kind)) == kind);
    check_gradients<ActivationCase>(x, nn::ActivationOptions{kind, 0.3, 1.7});
  }
  const RowMatrix<double> points{{-2.0, -0.5, 0.0, 1.5}};
  const auto apply = [&](nn::ActivationOptions options) {
    RowMatrix<double> out;
    nn::BasicActivation<double>(options).forward(points, out);
    return out;
  };
  CHECK(apply({nn::ActivationKind::kRelu}) == RowMatrix<double>{{0.0, 0.0, 0.0, 1.5}});
  CHECK(apply({nn::ActivationKind::kLeakyRelu}) == RowMatrix<double>{{-0.02, -0.005, 0.0, 1.5}});
  const RowMatrix<double> elu = apply({nn::ActivationKind::kElu, 0.01, 2.0});
  CHECK(elu(0, 0) == doctest::Approx(2.0 * std::expm1(-2.0)));
  CHECK(elu(0, 3) == 1.5);
  const RowMatrix<double> gelu = apply({nn::ActivationKind::kGelu});
  CHECK(gelu(0, 0) == doctest::Approx(-0.04550026389635842));  // torch.nn.GELU()(-2.0)
  CHECK(gelu(0, 3) == doctest::Approx(1.3997845941024478));    // torch.nn.GELU()(1.5)
  // PyTorch's derivatives at 0: ReLU 0, LeakyReLU its slope.
  const RowMatrix<double> zero{{0.0}};
  const RowMatrix<double> one{{1.0}};
  RowMatrix<double> grad;
  nn::BasicActivation<double>({nn::ActivationKind::kRelu}).backward(zero, one, grad);
  CHECK(grad(0, 0) == 0.0);
  nn::BasicActivation<double>({nn::ActivationKind::kLeakyRelu, 0.25}).backward(zero, one, grad);
  CHECK(grad(0, 0) == 0.25);
}

TEST_CASE("modules: outputs and gradients are bitwise the same on 1, 2, 3 and 8 threads") {
  check_thread_invariance<LinearCase<float>>(std::int64_t{24});
  check_thread_invariance<LayerNormCase<float>>(std::int64_t{24});
  check_thread_invariance<BatchNormCase<float>>(std::int64_t{24}, nn::Mode::kTrain);
  check_thread_invariance<ActivationCase<float>>(nn::ActivationOptions{nn::ActivationKind::kGelu});
}

TEST_CASE("modules: bad options and shapes are refused, naming the module and the value") {
  nn::ParameterStore<float> store;
  nn::ParameterStore<float> buffers;
  Rng rng(1);
  CHECK(message_of([&] {
          nn::Linear(store, "lin", {0, 3}, rng);
        }) == "linear: in_features is 0, expected a positive count");
  CHECK(message_of([&] { nn::LayerNorm(store, "norm", {.features = 4, .eps = 0.0}); }) ==
        "layer_norm: eps 0.000000 is not a positive number");
  CHECK(message_of([&] {
          nn::BatchNorm(store, buffers, "bn", {.features = 4, .momentum = 1.5});
        }) == "batch_norm: momentum 1.500000 is outside (0, 1]");
  CHECK(message_of([&] { (void)nn::parse_activation_kind("tanh"); }) ==
        "activation: unknown activation 'tanh', expected identity, relu, elu, leaky_relu or gelu");
  CHECK(message_of([&] {
          nn::Activation({nn::ActivationKind::kLeakyRelu, std::nan("")});
        }) == "activation: negative_slope nan is not finite");
  const nn::Linear linear(store, "lin", {4, 3}, rng);
  RowMatrix<float> out;
  const RowMatrix<float> five = RowMatrix<float>::Zero(2, 5);
  const RowMatrix<float> four = RowMatrix<float>::Zero(2, 4);
  CHECK(message_of([&] { linear.forward(five, out); }) ==
        "linear.forward: x has 5 columns, expected 4");
  CHECK(message_of([&] { linear.backward(four, RowMatrix<float>::Zero(2, 2), nullptr); }) ==
        "linear.backward: grad_out is 2 x 2, expected 2 x 3");
  const nn::LayerNorm norm(store, "norm", {.features = 4});
  nn::LayerNorm::Cache cache;
  CHECK(message_of([&] { norm.forward(RowMatrix<float>::Zero(2, 3), cache, out); }) ==
        "layer_norm.forward: x has 3 columns, expected 4");
}
