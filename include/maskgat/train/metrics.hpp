#pragma once
/// @file
/// Classification metrics over a set of nodes.

#include <cstdint>
#include <span>
#include <vector>

#include "maskgat/core/communicator.hpp"
#include "maskgat/core/tensor.hpp"
#include "maskgat/core/types.hpp"
#include "maskgat/export.hpp"

namespace maskgat::train {

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
