#include "maskgat/train/metrics.hpp"

#include <string>
#include <utility>

#include "maskgat/core/error.hpp"

namespace maskgat::train {

template <typename T>
std::vector<std::int32_t> predict_classes(const RowMatrix<T>& scores) {
  std::vector<std::int32_t> classes(static_cast<std::size_t>(scores.rows()), 0);
  for (std::int64_t i = 0; i < scores.rows(); ++i) {
    Eigen::Index best = 0;
    if (scores.cols() > 0) scores.row(i).maxCoeff(&best);
    classes[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(best);
  }
  return classes;
}

ConfusionMatrix::ConfusionMatrix(std::int32_t classes, std::span<const std::int32_t> labels,
                                 std::span<const std::int32_t> predicted,
                                 std::span<const NodeId> nodes)
    : classes_(classes) {
  if (classes <= 0) {
    throw InvalidArgument("confusion matrix: " + std::to_string(classes) +
                          " classes, expected a positive count");
  }
  counts_.assign(static_cast<std::size_t>(classes) * static_cast<std::size_t>(classes), 0);
  for (const NodeId node : nodes) {
    const auto index = static_cast<std::size_t>(node);
    if (node < 0 || index >= labels.size() || index >= predicted.size()) {
      throw InvalidArgument("confusion matrix: node " + std::to_string(node) +
                            " has no label or prediction");
    }
    const std::int32_t truth = labels[index];
    const std::int32_t guess = predicted[index];
    if (truth < 0 || truth >= classes || guess < 0 || guess >= classes) {
      throw InvalidArgument("confusion matrix: node " + std::to_string(node) + " has label " +
                            std::to_string(truth) + " and prediction " + std::to_string(guess) +
                            ", expected classes in [0, " + std::to_string(classes) + ")");
    }
    ++counts_[static_cast<std::size_t>(truth) * static_cast<std::size_t>(classes) +
              static_cast<std::size_t>(guess)];
    ++total_;
  }
}

std::int64_t ConfusionMatrix::count(std::int32_t truth, std::int32_t predicted) const noexcept {
  return counts_[static_cast<std::size_t>(truth) * static_cast<std::size_t>(classes_) +
                 static_cast<std::size_t>(predicted)];
}

double ConfusionMatrix::accuracy() const noexcept {
  if (total_ == 0) return 0.0;
  std::int64_t correct = 0;
  for (std::int32_t c = 0; c < classes_; ++c) correct += count(c, c);
  return static_cast<double>(correct) / static_cast<double>(total_);
}

double ConfusionMatrix::macro_f1() const noexcept {
  if (classes_ == 0) return 0.0;
  double sum = 0.0;
  for (std::int32_t c = 0; c < classes_; ++c) {
    std::int64_t true_count = 0;
    std::int64_t predicted_count = 0;
    for (std::int32_t other = 0; other < classes_; ++other) {
      true_count += count(c, other);
      predicted_count += count(other, c);
    }
    const std::int64_t denominator = true_count + predicted_count;
    if (denominator > 0)
      sum += 2.0 * static_cast<double>(count(c, c)) / static_cast<double>(denominator);
  }
  return sum / static_cast<double>(classes_);
}

template std::vector<std::int32_t> predict_classes<float>(const RowMatrix<float>&);
template std::vector<std::int32_t> predict_classes<double>(const RowMatrix<double>&);

void ConfusionMatrix::sum_over(Communicator& comm) {
  std::vector<std::int64_t> values(counts_);
  values.push_back(total_);
  sum_in_rank_order<std::int64_t>(comm, values);
  total_ = values.back();
  values.pop_back();
  counts_ = std::move(values);
}

}  // namespace maskgat::train
