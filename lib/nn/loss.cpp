#include "maskgat/nn/loss.hpp"

#include <cmath>
#include <string>

#include "detail/buffer.hpp"
#include "detail/parallel.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat::nn {

// A block's exponentials and logarithms run over whole arrays, through Eigen's vectorised exp and
// log: a row of a few classes is shorter than a vector, so row by row they would be libm's scalar
// calls. The block's shifted logits are exponentiated in place in `out`, and `out` then receives
// logits - max - log(sum) as before.
template <typename T>
void log_softmax(const RowMatrix<T>& logits, RowMatrix<T>& out) {
  detail::resize_buffer(out, logits.rows(), logits.cols());
  detail::for_each_block(
      logits.rows(), detail::kRowBlock, [&](std::int64_t begin, std::int64_t end) {
        const std::int64_t rows = end - begin;
        const auto in = logits.middleRows(begin, rows).array();
        auto block = out.middleRows(begin, rows).array();
        Eigen::Array<T, Eigen::Dynamic, 1, 0, detail::kRowBlock, 1> max = in.rowwise().maxCoeff();
        block = in.colwise() - max;
        block = block.exp();
        Eigen::Array<T, Eigen::Dynamic, 1, 0, detail::kRowBlock, 1> log_sum =
            block.rowwise().sum().log();
        block = (in.colwise() - max).colwise() - log_sum;
      });
}

template <typename T>
double nll_loss(const RowMatrix<T>& logits, std::span<const std::int32_t> labels,
                std::span<const NodeId> nodes, RowMatrix<T>* grad) {
  if (nodes.empty()) throw InvalidArgument("nll_loss: no nodes to average over");
  const std::int64_t classes = logits.cols();
  if (grad != nullptr) {
    detail::resize_buffer(*grad, logits.rows(), classes);
    grad->setZero();
  }
  const T scale = T(1) / static_cast<T>(nodes.size());
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
  return total / static_cast<double>(nodes.size());
}

template void log_softmax<float>(const RowMatrix<float>&, RowMatrix<float>&);
template void log_softmax<double>(const RowMatrix<double>&, RowMatrix<double>&);
template double nll_loss<float>(const RowMatrix<float>&, std::span<const std::int32_t>,
                                std::span<const NodeId>, RowMatrix<float>*);
template double nll_loss<double>(const RowMatrix<double>&, std::span<const std::int32_t>,
                                 std::span<const NodeId>, RowMatrix<double>*);

}  // namespace maskgat::nn
