#include "maskgat/nn/loss.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/detail/parallel.hpp"
#include "maskgat/core/error.hpp"
#include "ops/detail/buffer.hpp"

namespace maskgat::nn {

namespace {

// Softmax of the `size / classes` rows at `in` into `out`. A row of a few classes is shorter than
// a vector, so the exponentials of all the rows run in one call of Eigen's vectorised exp over
// their contiguous elements; row by row they would be libm's scalar calls.
template <typename T>
void softmax_rows(const T* in, std::int64_t size, std::int64_t classes, T* out) {
  for (std::int64_t row = 0; row < size; row += classes) {
    T max = in[row];
    for (std::int64_t k = 1; k < classes; ++k) max = std::max(max, in[row + k]);
    for (std::int64_t k = 0; k < classes; ++k) out[row + k] = in[row + k] - max;
  }
  using Block = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
  Block(out, size) = Block(out, size).exp();
  for (std::int64_t row = 0; row < size; row += classes) {
    T sum = 0;
    for (std::int64_t k = 0; k < classes; ++k) sum += out[row + k];
    for (std::int64_t k = 0; k < classes; ++k) out[row + k] /= sum;
  }
}

}  // namespace

template <typename T>
void softmax(const RowMatrix<T>& logits, RowMatrix<T>& out) {
  ops::detail::resize_buffer(out, logits.rows(), logits.cols());
  const std::int64_t classes = logits.cols();
  maskgat::detail::for_each_block(
      logits.rows(), maskgat::detail::kRowBlock, [&](std::int64_t begin, std::int64_t end) {
        softmax_rows(logits.data() + begin * classes, (end - begin) * classes, classes,
                     out.data() + begin * classes);
      });
}

template <typename T>
double nll_loss(const RowMatrix<T>& logits, std::span<const std::int32_t> labels,
                std::span<const NodeId> nodes, RowMatrix<T>* grad, std::int64_t mean_over) {
  if (nodes.empty()) throw InvalidArgument("nll_loss: no nodes to average over");
  if (mean_over < 0) {
    throw InvalidArgument("nll_loss: mean_over is " + std::to_string(mean_over) +
                          ", expected 0 or a count");
  }
  const auto count =
      static_cast<double>(mean_over > 0 ? mean_over : static_cast<std::int64_t>(nodes.size()));
  const std::int64_t classes = logits.cols();
  if (grad != nullptr) {
    ops::detail::resize_buffer(*grad, logits.rows(), classes);
    grad->setZero();
  }
  const T scale = T(1) / static_cast<T>(count);
  double total = 0.0;
  for (const NodeId node : nodes) {
    if (node < 0 || node >= logits.rows() || static_cast<std::size_t>(node) >= labels.size()) {
      throw InvalidArgument("nll_loss: node " + std::to_string(node) + " is outside [0, " +
                            std::to_string(logits.rows()) + ")");
    }
    const std::int32_t label = labels[static_cast<std::size_t>(node)];
    if (label < 0 || label >= classes) {
      throw InvalidArgument("nll_loss: node " + std::to_string(node) + " has label " +
                            std::to_string(label) + ", expected a class in [0, " +
                            std::to_string(classes) + ")");
    }
    const auto row = logits.row(node);
    const T max = row.maxCoeff();
    const T log_sum = std::log((row.array() - max).exp().sum());
    total -= static_cast<double>(row(label) - max - log_sum);
    if (grad != nullptr) {
      grad->row(node) = (row.array() - max - log_sum).exp() * scale;
      (*grad)(node, label) -= scale;
    }
  }
  return total / count;
}

template void softmax<float>(const RowMatrix<float>&, RowMatrix<float>&);
template void softmax<double>(const RowMatrix<double>&, RowMatrix<double>&);
template double nll_loss<float>(const RowMatrix<float>&, std::span<const std::int32_t>,
                                std::span<const NodeId>, RowMatrix<float>*, std::int64_t);
template double nll_loss<double>(const RowMatrix<double>&, std::span<const std::int32_t>,
                                 std::span<const NodeId>, RowMatrix<double>*, std::int64_t);

}  // namespace maskgat::nn
