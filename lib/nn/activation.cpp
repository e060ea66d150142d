#include "maskgat/nn/activation.hpp"

#include <array>
#include <cmath>
#include <string>
#include <utility>

#include <unsupported/Eigen/SpecialFunctions>

#include "core/detail/parallel.hpp"
#include "maskgat/core/error.hpp"
#include "ops/detail/buffer.hpp"
#include "ops/detail/shape_checks.hpp"

namespace maskgat::nn {
namespace {

constexpr std::array<std::pair<ActivationKind, const char*>, 5> kNames{{
    {ActivationKind::kIdentity, "identity"},
    {ActivationKind::kRelu, "relu"},
    {ActivationKind::kElu, "elu"},
    {ActivationKind::kLeakyRelu, "leaky_relu"},
    {ActivationKind::kGelu, "gelu"},
}};

// Runs `fn(in_block, out_block)` on the same fixed row blocks of two N x F arrays.
template <typename T, typename Fn>
void for_row_blocks(const Eigen::Ref<const RowMatrix<T>>& in, RowMatrix<T>& out, Fn&& fn) {
  maskgat::detail::for_each_block(
      in.rows(), maskgat::detail::kRowBlock, [&](std::int64_t begin, std::int64_t end) {
        fn(in.middleRows(begin, end - begin).array(), out.middleRows(begin, end - begin).array());
      });
}

// The standard normal CDF and density of an Eigen array, coefficient-wise. Eigen's erf of floats
// is a rational approximation within a few ulp, vectorised (libm's erff is scalar: it took 6 % of
// a residual GELU model's epoch); of doubles, std::erf.
template <typename Array>
auto normal_cdf(const Array& x) {
  using T = typename Array::Scalar;
  return T(0.5) * (T(1) + (x * T(M_SQRT1_2)).erf());
}
template <typename Array>
auto normal_density(const Array& x) {
  using T = typename Array::Scalar;
  return T(M_2_SQRTPI * M_SQRT1_2 * 0.5) * (T(-0.5) * x.square()).exp();
}

}  // namespace

const char* activation_kind_name(ActivationKind kind) noexcept {
  for (const auto& [known, name] : kNames) {
    if (known == kind) return name;
  }
  return "identity";
}

ActivationKind parse_activation_kind(std::string_view name) {
  for (const auto& [kind, known] : kNames) {
    if (name == known) return kind;
  }
  throw InvalidArgument("activation: unknown activation '" + std::string(name) +
                        "', expected identity, relu, elu, leaky_relu or gelu");
}

template <typename T>
BasicActivation<T>::BasicActivation(const ActivationOptions& options) : options_(options) {
  for (const auto& [name, value] :
       {std::pair{"negative_slope", options.negative_slope}, std::pair{"alpha", options.alpha}}) {
    if (!std::isfinite(value)) {
      throw InvalidArgument(std::string("activation: ") + name + " " + std::to_string(value) +
                            " is not finite");
    }
  }
}

// ELU is computed as max(z, 0) + alpha (exp(min(z, 0)) - 1), branch-free so that Eigen
// vectorises the exp (its expm1 is several times slower; exp - 1 loses relative precision only
// where ELU(z) is tiny, an absolute error of an ulp of 1).
template <typename T>
void BasicActivation<T>::forward(const Eigen::Ref<const RowMatrix<T>>& x, RowMatrix<T>& out) const {
  ops::detail::resize_buffer(out, x.rows(), x.cols());
  const T slope = static_cast<T>(options_.negative_slope);
  const T alpha = static_cast<T>(options_.alpha);
  for_row_blocks<T>(x, out, [&](auto in, auto result) {
    switch (options_.kind) {
      case ActivationKind::kIdentity:
        result = in;
        break;
      case ActivationKind::kRelu:
        result = in.max(T(0));
        break;
      case ActivationKind::kElu:
        result = in.max(T(0)) + alpha * (in.min(T(0)).exp() - T(1));
        break;
      case ActivationKind::kLeakyRelu:
        result = (in > T(0)).select(in, slope * in);
        break;
      case ActivationKind::kGelu:
        result = in * normal_cdf(in);
        break;
    }
  });
}

template <typename T>
void BasicActivation<T>::backward(const Eigen::Ref<const RowMatrix<T>>& x,
                                  const RowMatrix<T>& grad_out, RowMatrix<T>& grad_x) const {
  ops::detail::check_shape("activation.backward", "grad_out", grad_out, x.rows(), x.cols(),
                           "the input's rows");
  if (&grad_x != &grad_out) {
    ops::detail::resize_buffer(grad_x, x.rows(), x.cols());
    grad_x = grad_out;
  }
  const T slope = static_cast<T>(options_.negative_slope);
  const T alpha = static_cast<T>(options_.alpha);
  for_row_blocks<T>(x, grad_x, [&](auto in, auto grad) {
    switch (options_.kind) {
      case ActivationKind::kIdentity:
        break;
      case ActivationKind::kRelu:
        grad *= (in > T(0)).template cast<T>();
        break;
      case ActivationKind::kElu:
        // With alpha 1, ELU'(z) = exp(min(z, 0)) through Eigen's vectorised exp (a `select`
        // would evaluate it with the scalar exp, whose last bits differ).
        if (alpha == T(1)) {
          grad *= in.min(T(0)).exp();
        } else {
          grad *= (in > T(0)).select(T(1), alpha * in.min(T(0)).exp());
        }
        break;
      case ActivationKind::kLeakyRelu:
        grad *= in.unaryExpr([slope](T v) { return v > T(0) ? T(1) : slope; });
        break;
      case ActivationKind::kGelu:
        grad *= normal_cdf(in) + in * normal_density(in);
        break;
    }
  });
}

template class BasicActivation<float>;
template class BasicActivation<double>;

}  // namespace maskgat::nn
