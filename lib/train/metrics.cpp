#include "maskgat/train/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
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

const char* metric_name(Metric metric) noexcept {
  return metric == Metric::kRocAuc ? "roc-auc" : "accuracy";
}

Metric parse_metric(std::string_view name) {
  if (name == "accuracy") return Metric::kAccuracy;
  if (name == "roc-auc") return Metric::kRocAuc;
  throw InvalidArgument("unknown metric '" + std::string(name) + "': expected accuracy or roc-auc");
}

const char* selection_name(Selection selection) noexcept {
  return selection == Selection::kMetric ? "metric" : "gat";
}

Selection parse_selection(std::string_view name) {
  if (name == "gat") return Selection::kGat;
  if (name == "metric") return Selection::kMetric;
  throw InvalidArgument("unknown selection '" + std::string(name) + "': expected gat or metric");
}

void require_both_classes(std::span<const std::int32_t> labels, std::span<const NodeId> nodes,
                          std::string_view what) {
  std::int64_t positives = 0;
  for (const NodeId node : nodes) {
    const auto index = static_cast<std::size_t>(node);
    const std::int32_t label = node >= 0 && index < labels.size() ? labels[index] : -1;
    if (label != 0 && label != 1) {
      throw InvalidArgument("roc_auc: node " + std::to_string(node) + " of " + std::string(what) +
                            " has label " + std::to_string(label) +
                            ", expected 0 or 1 (ROC AUC is for two-class tasks)");
    }
    positives += label;
  }
  const auto count = static_cast<std::int64_t>(nodes.size());
  if (positives == 0 || positives == count) {
    throw InvalidArgument("roc_auc: " + std::string(what) + " are all of class " +
                          std::to_string(positives == 0 ? 0 : 1) + " (" + std::to_string(count) +
                          " nodes); ROC AUC needs nodes of both classes");
  }
}

namespace {

// Checks that `scores` holds one finite score per label of `labels` and both classes occur (the
// messages start with `where`), then calls `run(first, last, positives)` for every run of equal
// scores in ascending (or descending) order: its places first..last (0-based) in that order and
// how many of its entries are of class 1.
template <typename Run>
void for_each_tie_run(const char* where, std::span<const double> scores,
                      std::span<const std::int32_t> labels, bool descending, Run&& run) {
  if (scores.size() != labels.size()) {
    throw InvalidArgument(std::string(where) + ": " + std::to_string(scores.size()) +
                          " scores for " + std::to_string(labels.size()) +
                          " labels, expected one per label");
  }
  for (std::size_t i = 0; i < scores.size(); ++i) {
    if (!std::isfinite(scores[i])) {
      throw InvalidArgument(std::string(where) + ": score " + std::to_string(i) + " is " +
                            std::to_string(scores[i]) + ", expected a finite number");
    }
  }
  std::vector<NodeId> entries(labels.size());
  std::iota(entries.begin(), entries.end(), NodeId{0});
  require_both_classes(labels, entries, "the entries");
  const auto score_of = [&](NodeId entry) { return scores[static_cast<std::size_t>(entry)]; };
  std::sort(entries.begin(), entries.end(), [&](NodeId a, NodeId b) {
    return descending ? score_of(a) > score_of(b) : score_of(a) < score_of(b);
  });
  for (std::size_t first = 0; first < entries.size();) {
    std::size_t last = first;
    while (last + 1 < entries.size() && score_of(entries[last + 1]) == score_of(entries[first])) {
      ++last;
    }
    double positives = 0.0;
    for (std::size_t k = first; k <= last; ++k) {
      positives += labels[static_cast<std::size_t>(entries[k])];
    }
    run(first, last, positives);
    first = last + 1;
  }
}

}  // namespace

double roc_auc(std::span<const double> scores, std::span<const std::int32_t> labels) {
  // Ranks are 1-based; a run of equal scores at ranks first..last gets (first + last) / 2 each.
  // Twice the ranks are integers, so the sum is exact in double up to 2^52.
  double twice_rank_sum = 0.0;
  double positives = 0.0;
  for_each_tie_run("roc_auc", scores, labels, /*descending=*/false,
                   [&](std::size_t first, std::size_t last, double in_run) {
                     twice_rank_sum += in_run * static_cast<double>(first + last + 2);
                     positives += in_run;
                   });
  const double negatives = static_cast<double>(labels.size()) - positives;
  const double u = twice_rank_sum / 2.0 - positives * (positives + 1.0) / 2.0;
  return u / (positives * negatives);
}

template <typename T>
double roc_auc(const RowMatrix<T>& scores, std::span<const std::int32_t> labels,
               std::span<const NodeId> nodes) {
  if (scores.cols() != 2) {
    throw InvalidArgument("roc_auc: the scores have " + std::to_string(scores.cols()) +
                          " columns, expected 2 (ROC AUC is for two-class tasks)");
  }
  std::vector<double> differences;
  std::vector<std::int32_t> node_labels;
  differences.reserve(nodes.size());
  node_labels.reserve(nodes.size());
  require_both_classes(labels, nodes, "the nodes");
  for (const NodeId node : nodes) {
    if (node >= scores.rows()) {
      throw InvalidArgument("roc_auc: node " + std::to_string(node) + " is outside the " +
                            std::to_string(scores.rows()) + " rows of scores");
    }
    differences.push_back(static_cast<double>(scores(node, 1)) -
                          static_cast<double>(scores(node, 0)));
    node_labels.push_back(labels[static_cast<std::size_t>(node)]);
  }
  return roc_auc(differences, node_labels);
}

template double roc_auc<float>(const RowMatrix<float>&, std::span<const std::int32_t>,
                               std::span<const NodeId>);
template double roc_auc<double>(const RowMatrix<double>&, std::span<const std::int32_t>,
                                std::span<const NodeId>);
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

double average_precision(std::span<const double> scores, std::span<const std::int32_t> labels) {
  double positives = 0.0;
  for (const std::int32_t label : labels) positives += label;
  // Thresholds at each distinct score, highest first: a run of equal scores enters at once.
  double true_positives = 0.0;
  double recall_before = 0.0;
  double sum = 0.0;
  for_each_tie_run("average_precision", scores, labels, /*descending=*/true,
                   [&](std::size_t, std::size_t last, double in_run) {
                     true_positives += in_run;
                     const double recall = true_positives / positives;
                     sum += (recall - recall_before) *
                            (true_positives / static_cast<double>(last + 1));
                     recall_before = recall;
                   });
  return sum;
}

double hits_at_k(std::span<const double> positives, std::span<const double> negatives,
                 std::int64_t k) {
  if (k <= 0) {
    throw InvalidArgument("hits_at_k: K is " + std::to_string(k) + ", expected a positive count");
  }
  if (positives.empty()) throw InvalidArgument("hits_at_k: no positive scores");
  if (static_cast<std::int64_t>(negatives.size()) < k) return 1.0;
  std::vector<double> top(negatives.begin(), negatives.end());
  std::nth_element(top.begin(), top.begin() + (k - 1), top.end(), std::greater<>());
  const double kth = top[static_cast<std::size_t>(k - 1)];
  const auto hits = std::count_if(positives.begin(), positives.end(),
                                  [kth](double score) { return score > kth; });
  return static_cast<double>(hits) / static_cast<double>(positives.size());
}

}  // namespace maskgat::train
