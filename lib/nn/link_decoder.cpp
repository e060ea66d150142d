#include "maskgat/nn/link_decoder.hpp"

#include <cmath>
#include <string>

#include "maskgat/core/error.hpp"

namespace maskgat::nn {
namespace {

void check_pairs(const char* where, std::int64_t nodes, std::span<const NodeId> sources,
                 std::span<const NodeId> targets) {
  if (sources.size() != targets.size()) {
    throw InvalidArgument(std::string(where) + ": " + std::to_string(sources.size()) +
                          " sources for " + std::to_string(targets.size()) +
                          " targets, expected one per target");
  }
  for (std::size_t k = 0; k < sources.size(); ++k) {
    for (const NodeId node : {sources[k], targets[k]}) {
      if (node < 0 || node >= nodes) {
        throw IndexError(std::string(where) + ": pair " + std::to_string(k) + " names node " +
                         std::to_string(node) + ", outside [0, " + std::to_string(nodes) + ")");
      }
    }
  }
}

}  // namespace

template <typename T>
std::vector<T> dot_scores(const RowMatrix<T>& z, std::span<const NodeId> sources,
                          std::span<const NodeId> targets) {
  check_pairs("dot_scores", z.rows(), sources, targets);
  std::vector<T> scores(sources.size());
  for (std::size_t k = 0; k < sources.size(); ++k) {
    scores[k] = z.row(sources[k]).dot(z.row(targets[k]));
  }
  return scores;
}

template <typename T>
void dot_scores_backward(const RowMatrix<T>& z, std::span<const NodeId> sources,
                         std::span<const NodeId> targets, std::span<const T> grad_logits,
                         RowMatrix<T>& grad_z) {
  check_pairs("dot_scores_backward", z.rows(), sources, targets);
  if (grad_logits.size() != sources.size() || grad_z.rows() != z.rows() ||
      grad_z.cols() != z.cols()) {
    throw InvalidArgument("dot_scores_backward: " + std::to_string(grad_logits.size()) +
                          " gradients for " + std::to_string(sources.size()) +
                          " pairs, or grad_z not of z's shape");
  }
  for (std::size_t k = 0; k < sources.size(); ++k) {
    grad_z.row(sources[k]) += grad_logits[k] * z.row(targets[k]);
    grad_z.row(targets[k]) += grad_logits[k] * z.row(sources[k]);
  }
}

template <typename T>
double binary_cross_entropy(std::span<const T> logits, std::span<const std::int32_t> labels,
                            std::span<T> grad) {
  if (logits.size() != labels.size() || logits.empty() ||
      (!grad.empty() && grad.size() != logits.size())) {
    throw InvalidArgument("binary_cross_entropy: " + std::to_string(logits.size()) + " logits, " +
                          std::to_string(labels.size()) + " labels and " +
                          std::to_string(grad.size()) +
                          " gradient entries, expected as many of each (and at least one)");
  }
  const auto count = static_cast<double>(logits.size());
  double sum = 0.0;
  for (std::size_t k = 0; k < logits.size(); ++k) {
    if (labels[k] != 0 && labels[k] != 1) {
      throw InvalidArgument("binary_cross_entropy: label " + std::to_string(k) + " is " +
                            std::to_string(labels[k]) + ", expected 0 or 1");
    }
    const double x = logits[k];
    const double y = labels[k];
    sum += std::max(x, 0.0) - x * y + std::log1p(std::exp(-std::abs(x)));
    if (!grad.empty()) grad[k] = static_cast<T>((1.0 / (1.0 + std::exp(-x)) - y) / count);
  }
  return sum / count;
}

template std::vector<float> dot_scores(const RowMatrix<float>&, std::span<const NodeId>,
                                       std::span<const NodeId>);
template std::vector<double> dot_scores(const RowMatrix<double>&, std::span<const NodeId>,
                                        std::span<const NodeId>);
template void dot_scores_backward(const RowMatrix<float>&, std::span<const NodeId>,
                                  std::span<const NodeId>, std::span<const float>,
                                  RowMatrix<float>&);
template void dot_scores_backward(const RowMatrix<double>&, std::span<const NodeId>,
                                  std::span<const NodeId>, std::span<const double>,
                                  RowMatrix<double>&);
template double binary_cross_entropy(std::span<const float>, std::span<const std::int32_t>,
                                     std::span<float>);
template double binary_cross_entropy(std::span<const double>, std::span<const std::int32_t>,
                                     std::span<double>);

}  // namespace maskgat::nn
