#pragma once
/// @file
/// Classification metrics over a set of nodes.

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "maskgat/core/communicator.hpp"
#include "maskgat/core/tensor.hpp"
#include "maskgat/core/types.hpp"
#include "maskgat/export.hpp"

namespace maskgat::train {

/// The score that early stopping and model selection follow on the validation nodes, and that a
/// run reports on the test nodes (`TrainOptions::metric`).
enum class Metric : std::uint8_t {
  kAccuracy,  ///< fraction of nodes predicted correctly (any number of classes)
  kRocAuc,    ///< area under the ROC curve of the class-1 score (two classes only, `roc_auc`)
};

/// How early stopping picks the epoch whose parameters a run keeps.
enum class Selection : std::uint8_t {
  /// The GAT reference implementation's (PetarV-/GAT): patience resets when the validation loss
  /// or score improves on its best (ties count), and the parameters are kept when both do.
  kGat,
  /// Patience resets, and the parameters are kept, when the validation score (`Metric`) is above
  /// every earlier epoch's: the rule of Platonov et al. (2023) and of most PyG examples.
  kMetric,
};

/// The selection rule's name on the command line and in output: `gat`, `metric`.
/// @param selection any rule
/// @return its name
[[nodiscard]] MASKGAT_EXPORT const char* selection_name(Selection selection) noexcept;

/// The selection rule named `name` (`selection_name`'s spelling).
/// @param name `gat` or `metric`
/// @return the rule
/// @throws InvalidArgument for any other name, listing the two.
[[nodiscard]] MASKGAT_EXPORT Selection parse_selection(std::string_view name);

/// The metric's name on the command line and in output: `accuracy`, `roc-auc`.
/// @param metric any metric
/// @return a static string
[[nodiscard]] MASKGAT_EXPORT const char* metric_name(Metric metric) noexcept;

/// The metric named `name` (`metric_name`'s spelling).
/// @param name `accuracy` or `roc-auc`
/// @return the metric
/// @throws InvalidArgument naming the unknown name and the known ones.
[[nodiscard]] MASKGAT_EXPORT Metric parse_metric(std::string_view name);

/// Checks that `labels` at `nodes` are all 0 or 1 and that both classes occur, as ROC AUC needs.
/// @param labels class per node
/// @param nodes  the nodes (indices into `labels`)
/// @param what   names the nodes in messages, e.g. `the validation nodes`
/// @throws InvalidArgument, e.g. `roc_auc: the validation nodes are all of class 1 (40 nodes);
///         ROC AUC needs nodes of both classes`, or naming a node whose label is not 0 or 1.
MASKGAT_EXPORT void require_both_classes(std::span<const std::int32_t> labels,
                                         std::span<const NodeId> nodes, std::string_view what);

/// The area under the ROC curve of `scores` for class 1: the probability that a node of class 1
/// scores above a node of class 0, a tied pair counting 1/2 (the Mann-Whitney U statistic with
/// midranks, divided by P x N; scikit-learn's `roc_auc_score`). Exact for any ties: every tied
/// score gets the mean of the ranks it spans. O(n log n), serial.
/// @param scores one finite score per entry; any increasing function of P(class 1) (a
///               probability, a logit difference) gives the same value
/// @param labels 0 or 1 per entry, both classes present
/// @return in [0, 1]: 1 when every class-1 entry scores above every class-0 entry, 0 when below,
///         0.5 when all scores are equal
/// @throws InvalidArgument when the sizes differ, a score is not finite, a label is not 0 or 1,
///         or only one class occurs.
[[nodiscard]] MASKGAT_EXPORT double roc_auc(std::span<const double> scores,
                                            std::span<const std::int32_t> labels);

/// The average precision of `scores` for class 1, as scikit-learn's `average_precision_score`:
/// the sum over the distinct scores, highest first, of the precision at that threshold times the
/// recall it adds; entries of equal score enter together, so ties are exact. O(n log n), serial.
/// @param scores one finite score per entry
/// @param labels 0 or 1 per entry, both classes present
/// @return in [0, 1]
/// @throws InvalidArgument as `roc_auc`.
[[nodiscard]] MASKGAT_EXPORT double average_precision(std::span<const double> scores,
                                                      std::span<const std::int32_t> labels);

/// Hits\@K as OGB's link tasks compute it: the share of positive scores strictly above the K-th
/// highest negative score (1 when there are fewer than K negatives). O(P + N), serial.
/// @param positives the positives' scores (not empty)
/// @param negatives the negatives' scores
/// @param k         K (> 0)
/// @return in [0, 1]
/// @throws InvalidArgument for K below 1 or no positives.
[[nodiscard]] MASKGAT_EXPORT double hits_at_k(std::span<const double> positives,
                                              std::span<const double> negatives, std::int64_t k);

/// `roc_auc` of the class-1 score of a two-class model at `nodes`: the logit difference
/// `scores(i, 1) - scores(i, 0)` (monotone in the softmax probability of class 1, so the same AUC).
/// @param scores N x 2 logits (or log-probabilities)
/// @param labels class per node (N entries)
/// @param nodes  the nodes to score (indices into the rows)
/// @return the AUC over `nodes`
/// @throws InvalidArgument when `scores` has not 2 columns, a node is outside the rows, and as
///         `require_both_classes` (naming "the nodes") and `roc_auc`.
template <typename T>
[[nodiscard]] MASKGAT_EXPORT double roc_auc(const RowMatrix<T>& scores,
                                            std::span<const std::int32_t> labels,
                                            std::span<const NodeId> nodes);

/// The class of largest score in every row (the lowest index on ties). Serial.
/// @param scores N x K logits or probabilities
/// @return N class ids (0 for every row when K is 0)
template <typename T>
[[nodiscard]] MASKGAT_EXPORT std::vector<std::int32_t> predict_classes(const RowMatrix<T>& scores);

/// Counts of (true class, predicted class) over a set of nodes.
class MASKGAT_EXPORT ConfusionMatrix {
 public:
  /// An empty matrix of no classes.
  ConfusionMatrix() = default;
  /// Counts the nodes `nodes`. Serial.
  /// @param classes   K (> 0)
  /// @param labels    true class per node
  /// @param predicted predicted class per node, e.g. from `predict_classes`
  /// @param nodes     the nodes to count (a node listed twice counts twice)
  /// @throws InvalidArgument when `classes` is not positive, a node is outside the label and
  ///         prediction arrays, or a label or prediction is outside [0, classes).
  ConfusionMatrix(std::int32_t classes, std::span<const std::int32_t> labels,
                  std::span<const std::int32_t> predicted, std::span<const NodeId> nodes);

  /// The number of classes.
  /// @return K, or 0 for the empty matrix
  [[nodiscard]] std::int32_t classes() const noexcept { return classes_; }
  /// Nodes of class `truth` predicted as `predicted`.
  /// @param truth     in [0, K) (not checked)
  /// @param predicted in [0, K) (not checked)
  /// @return the count
  [[nodiscard]] std::int64_t count(std::int32_t truth, std::int32_t predicted) const noexcept;
  /// All counted nodes.
  /// @return the number of entries of `nodes` given to the constructor
  [[nodiscard]] std::int64_t total() const noexcept { return total_; }
  /// Fraction predicted correctly.
  /// @return in [0, 1]; 0 when no node was counted
  [[nodiscard]] double accuracy() const noexcept;
  /// Mean over classes of F1 = 2 TP / (2 TP + FP + FN); a class with no true and no predicted
  /// node scores 0, as scikit-learn's `f1_score(average="macro", zero_division=0)`.
  /// @return in [0, 1]; 0 for the empty matrix
  [[nodiscard]] double macro_f1() const noexcept;
  /// Replaces the counts by their sums over the ranks of `comm` (collective; every rank's matrix
  /// must have the same classes), as distributed training adds up its parts' nodes.
  /// @param comm the group
  void sum_over(Communicator& comm);

 private:
  std::int32_t classes_ = 0;
  std::int64_t total_ = 0;
  std::vector<std::int64_t> counts_;  // classes x classes, row = true class
};

}  // namespace maskgat::train
