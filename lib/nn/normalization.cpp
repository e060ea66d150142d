#include "maskgat/nn/normalization.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "core/detail/parallel.hpp"
#include "nn/detail/layer_common.hpp"

namespace maskgat::nn {
namespace {

using maskgat::detail::for_each_block;
using maskgat::detail::kRowBlock;

// Rows per block of a column reduction: each block sums its rows into its own partial sums, and
// the partial sums are added in block order, so the result does not depend on scheduling.
constexpr std::int64_t kReductionRows = 2048;

// Per column c, the sum over rows r of value(r, c), in double.
template <typename Value>
std::vector<double> column_sums(std::int64_t rows, std::int64_t cols, Value&& value) {
  const std::int64_t blocks = (rows + kReductionRows - 1) / kReductionRows;
  std::vector<double> partial(static_cast<std::size_t>(blocks * cols), 0.0);
  for_each_block(rows, kReductionRows, [&](std::int64_t begin, std::int64_t end) {
    double* sums = partial.data() + (begin / kReductionRows) * cols;
    for (std::int64_t r = begin; r < end; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) sums[c] += static_cast<double>(value(r, c));
    }
  });
  std::vector<double> sums(static_cast<std::size_t>(cols), 0.0);
  for (std::int64_t b = 0; b < blocks; ++b) {
    for (std::int64_t c = 0; c < cols; ++c) sums[c] += partial[b * cols + c];
  }
  return sums;
}

void check_eps(const char* where, double eps) {
  if (!(eps > 0.0) || !std::isfinite(eps)) {
    throw InvalidArgument(std::string(where) + ": eps " + std::to_string(eps) +
                          " is not a positive number");
  }
}

// gamma and beta of an affine normalisation: ones and zeros, registered as `prefix.weight` and
// `prefix.bias`.
template <typename T>
std::optional<Parameter> add_scale(ParameterStore<T>& store, const std::string& prefix,
                                   std::int64_t features) {
  const Parameter weight = store.add(prefix + ".weight", 1, features);
  store.value(weight).setOnes();
  return weight;
}

// out = normalized * gamma + beta, on fixed row blocks (out may be normalized).
template <typename T>
void scale_and_shift(const ParameterStore<T>& store, const std::optional<Parameter>& weight,
                     const std::optional<Parameter>& bias, const RowMatrix<T>& normalized,
                     RowMatrix<T>& out) {
  ops::detail::resize_buffer(out, normalized.rows(), normalized.cols());
  for_each_block(normalized.rows(), kRowBlock, [&](std::int64_t begin, std::int64_t end) {
    auto block = out.middleRows(begin, end - begin);
    block = normalized.middleRows(begin, end - begin);
    if (weight) block.array().rowwise() *= store.value(*weight).row(0).array();
    if (bias) block.rowwise() += store.value(*bias).row(0);
  });
}

// Adds dL/dgamma = sum_i grad_out_i .* normalized_i and dL/dbeta = sum_i grad_out_i.
template <typename T>
void add_scale_gradients(ParameterStore<T>& store, const std::optional<Parameter>& weight,
                         const std::optional<Parameter>& bias, const RowMatrix<T>& normalized,
                         const RowMatrix<T>& grad_out) {
  const std::int64_t cols = grad_out.cols();
  if (weight) {
    const auto sums = column_sums(grad_out.rows(), cols, [&](std::int64_t r, std::int64_t c) {
      return grad_out(r, c) * normalized(r, c);
    });
    auto grad = store.grad(*weight);
    for (std::int64_t c = 0; c < cols; ++c) grad(0, c) += static_cast<T>(sums[c]);
  }
  if (bias) {
    const auto sums = column_sums(grad_out.rows(), cols,
                                  [&](std::int64_t r, std::int64_t c) { return grad_out(r, c); });
    auto grad = store.grad(*bias);
    for (std::int64_t c = 0; c < cols; ++c) grad(0, c) += static_cast<T>(sums[c]);
  }
}

// grad_out scaled by gamma (or grad_out itself without it), written into `scaled`.
template <typename T>
const RowMatrix<T>& scaled_gradient(const ParameterStore<T>& store,
                                    const std::optional<Parameter>& weight,
                                    const RowMatrix<T>& grad_out, RowMatrix<T>& scaled) {
  if (!weight) return grad_out;
  ops::detail::resize_buffer(scaled, grad_out.rows(), grad_out.cols());
  for_each_block(grad_out.rows(), kRowBlock, [&](std::int64_t begin, std::int64_t end) {
    scaled.middleRows(begin, end - begin).array() =
        grad_out.middleRows(begin, end - begin).array().rowwise() *
        store.value(*weight).row(0).array();
  });
  return scaled;
}

}  // namespace

template <typename T>
BasicLayerNorm<T>::BasicLayerNorm(ParameterStore<T>& store, std::string_view name,
                                  const LayerNormOptions& options)
    : store_(&store), options_(options) {
  detail::check_positive("layer_norm", "features", options.features);
  check_eps("layer_norm", options.eps);
  const std::string prefix(name);
  if (options.elementwise_affine) {
    weight_ = add_scale(store, prefix, options.features);
    if (options.bias) bias_ = store.add(prefix + ".bias", 1, options.features);
  }
}

template <typename T>
void BasicLayerNorm<T>::forward(const Eigen::Ref<const RowMatrix<T>>& x, Cache& cache,
                                RowMatrix<T>& out) const {
  detail::check_columns("layer_norm.forward", x.cols(), options_.features);
  const std::int64_t cols = x.cols();
  ops::detail::resize_buffer(cache.normalized, x.rows(), cols);
  ops::detail::resize_buffer(cache.inv_std, x.rows(), 1);
  for_each_block(x.rows(), kRowBlock, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const T* row = x.data() + r * x.outerStride();
      double sum = 0.0;
      for (std::int64_t c = 0; c < cols; ++c) sum += row[c];
      const double mean = sum / static_cast<double>(cols);
      double squares = 0.0;
      for (std::int64_t c = 0; c < cols; ++c) squares += (row[c] - mean) * (row[c] - mean);
      const double inv_std = 1.0 / std::sqrt(squares / static_cast<double>(cols) + options_.eps);
      cache.inv_std(r, 0) = static_cast<T>(inv_std);
      T* normalized = cache.normalized.data() + r * cols;
      for (std::int64_t c = 0; c < cols; ++c) {
        normalized[c] = static_cast<T>((row[c] - mean) * inv_std);
      }
    }
  });
  scale_and_shift(*store_, weight_, bias_, cache.normalized, out);
}

// dL/dx_i = inv_std_i (g_i - mean(g_i) - normalized_i mean(g_i .* normalized_i)), with
// g_i = grad_out_i .* gamma.
template <typename T>
void BasicLayerNorm<T>::backward(Cache& cache, const RowMatrix<T>& grad_out,
                                 RowMatrix<T>& grad_x) const {
  const RowMatrix<T>& normalized = cache.normalized;
  detail::check_shape("layer_norm.backward", "grad_out", grad_out, normalized.rows(),
                      normalized.cols(), "the forward's rows");
  add_scale_gradients(*store_, weight_, bias_, normalized, grad_out);
  const RowMatrix<T>& g = scaled_gradient(*store_, weight_, grad_out, cache.scratch);
  const std::int64_t cols = normalized.cols();
  if (&grad_x != &g) ops::detail::resize_buffer(grad_x, normalized.rows(), cols);
  for_each_block(normalized.rows(), kRowBlock, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const T* g_row = g.data() + r * cols;
      const T* n_row = normalized.data() + r * cols;
      double g_sum = 0.0;
      double gn_sum = 0.0;
      for (std::int64_t c = 0; c < cols; ++c) {
        g_sum += g_row[c];
        gn_sum += static_cast<double>(g_row[c]) * n_row[c];
      }
      const double g_mean = g_sum / static_cast<double>(cols);
      const double gn_mean = gn_sum / static_cast<double>(cols);
      const double inv_std = cache.inv_std(r, 0);
      T* out = grad_x.data() + r * cols;
      for (std::int64_t c = 0; c < cols; ++c) {
        out[c] = static_cast<T>(inv_std * (g_row[c] - g_mean - n_row[c] * gn_mean));
      }
    }
  });
}

template <typename T>
BasicBatchNorm<T>::BasicBatchNorm(ParameterStore<T>& store, ParameterStore<T>& buffers,
                                  std::string_view name, const BatchNormOptions& options)
    : store_(&store), buffers_(&buffers), options_(options) {
  detail::check_positive("batch_norm", "features", options.features);
  check_eps("batch_norm", options.eps);
  if (!(options.momentum > 0.0 && options.momentum <= 1.0)) {
    throw InvalidArgument("batch_norm: momentum " + std::to_string(options.momentum) +
                          " is outside (0, 1]");
  }
  const std::string prefix(name);
  if (options.affine) {
    weight_ = add_scale(store, prefix, options.features);
    bias_ = store.add(prefix + ".bias", 1, options.features);
  }
  if (options.track_running_stats) {
    running_mean_ = buffers.add(prefix + ".running_mean", 1, options.features);
    running_var_ = buffers.add(prefix + ".running_var", 1, options.features);
    buffers.value(*running_var_).setOnes();
  }
}

template <typename T>
void BasicBatchNorm<T>::forward(const Eigen::Ref<const RowMatrix<T>>& x, Mode mode, Cache& cache,
                                RowMatrix<T>& out) const {
  detail::check_columns("batch_norm.forward", x.cols(), options_.features);
  const std::int64_t rows = x.rows();
  const std::int64_t cols = x.cols();
  cache.batch_statistics = mode == Mode::kTrain || !options_.track_running_stats;
  std::vector<double> mean(static_cast<std::size_t>(cols));
  std::vector<double> variance(static_cast<std::size_t>(cols));
  if (cache.batch_statistics) {
    if (rows < 2) {
      throw InvalidArgument("batch_norm.forward: " + std::to_string(rows) +
                            " row(s) in training, expected at least 2 (the batch variance of one "
                            "row is undefined)");
    }
    const double n = static_cast<double>(rows);
    mean = column_sums(rows, cols, [&](std::int64_t r, std::int64_t c) { return x(r, c); });
    for (double& m : mean) m /= n;
    variance = column_sums(rows, cols, [&](std::int64_t r, std::int64_t c) {
      const double d = x(r, c) - mean[c];
      return d * d;
    });
    for (double& v : variance) v /= n;
    if (mode == Mode::kTrain && options_.track_running_stats) {
      auto running_mean = buffers_->value(*running_mean_);
      auto running_var = buffers_->value(*running_var_);
      const double m = options_.momentum;
      for (std::int64_t c = 0; c < cols; ++c) {
        running_mean(0, c) = static_cast<T>((1.0 - m) * running_mean(0, c) + m * mean[c]);
        running_var(0, c) =
            static_cast<T>((1.0 - m) * running_var(0, c) + m * variance[c] * n / (n - 1.0));
      }
    }
  } else {
    for (std::int64_t c = 0; c < cols; ++c) {
      mean[c] = buffers_->value(*running_mean_)(0, c);
      variance[c] = buffers_->value(*running_var_)(0, c);
    }
  }
  ops::detail::resize_buffer(cache.inv_std, 1, cols);
  std::vector<double> inv_std(static_cast<std::size_t>(cols));
  for (std::int64_t c = 0; c < cols; ++c) {
    inv_std[c] = 1.0 / std::sqrt(variance[c] + options_.eps);
    cache.inv_std(0, c) = static_cast<T>(inv_std[c]);
  }
  ops::detail::resize_buffer(cache.normalized, rows, cols);
  for_each_block(rows, kRowBlock, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) {
        cache.normalized(r, c) = static_cast<T>((x(r, c) - mean[c]) * inv_std[c]);
      }
    }
  });
  scale_and_shift(*store_, weight_, bias_, cache.normalized, out);
}

// With the batch's statistics, dL/dx_i = gamma inv_std (g_i - mean_i(g) - normalized_i
// mean_i(g .* normalized)) per column, g = grad_out; with the running ones, gamma inv_std g_i.
template <typename T>
void BasicBatchNorm<T>::backward(Cache& cache, const RowMatrix<T>& grad_out,
                                 RowMatrix<T>& grad_x) const {
  const RowMatrix<T>& normalized = cache.normalized;
  const std::int64_t rows = normalized.rows();
  const std::int64_t cols = normalized.cols();
  detail::check_shape("batch_norm.backward", "grad_out", grad_out, rows, cols,
                      "the forward's rows");
  std::vector<double> g_mean(static_cast<std::size_t>(cols), 0.0);
  std::vector<double> gn_mean(static_cast<std::size_t>(cols), 0.0);
  if (cache.batch_statistics) {
    g_mean =
        column_sums(rows, cols, [&](std::int64_t r, std::int64_t c) { return grad_out(r, c); });
    gn_mean = column_sums(rows, cols, [&](std::int64_t r, std::int64_t c) {
      return static_cast<double>(grad_out(r, c)) * normalized(r, c);
    });
    for (std::int64_t c = 0; c < cols; ++c) {
      g_mean[c] /= static_cast<double>(rows);
      gn_mean[c] /= static_cast<double>(rows);
    }
  }
  add_scale_gradients(*store_, weight_, bias_, normalized, grad_out);
  std::vector<double> factor(static_cast<std::size_t>(cols));
  for (std::int64_t c = 0; c < cols; ++c) {
    factor[c] = static_cast<double>(cache.inv_std(0, c)) *
                (weight_ ? static_cast<double>(store_->value(*weight_)(0, c)) : 1.0);
  }
  if (&grad_x != &grad_out) ops::detail::resize_buffer(grad_x, rows, cols);
  for_each_block(rows, kRowBlock, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) {
        grad_x(r, c) = static_cast<T>(factor[c] *
                                      (grad_out(r, c) - g_mean[c] - normalized(r, c) * gn_mean[c]));
      }
    }
  });
}

template class BasicLayerNorm<float>;
template class BasicLayerNorm<double>;
template class BasicBatchNorm<float>;
template class BasicBatchNorm<double>;

}  // namespace maskgat::nn
