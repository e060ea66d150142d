#pragma once
/// @file
/// The mapping from the node tokens of text files to node ids, shared by the readers of one
/// dataset (features, edge list, labels, split) so they agree on the node order.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "maskgat/core/types.hpp"

namespace maskgat {

/// Maps node tokens to ids.
///
/// - *named* (the default): any token is a name; ids are given in order of first appearance;
/// - *numeric*: tokens are 0-based integer ids; the node count is the largest id + 1, or fixed.
///
/// Once `freeze()` is called (a features file defines the node set), `insert` no longer adds
/// nodes and reports unknown tokens instead.
class NodeIndex {
 public:
  /// Why `insert` could not give an id.
  enum class Status { kOk, kUnknown, kNotInteger, kNegative, kOutOfRange, kOverLimit };

  /// Named mode; at most `max_nodes` nodes.
  static NodeIndex named(std::int64_t max_nodes);
  /// Numeric mode; `fixed_count` >= 0 fixes the node count (`--num-nodes`), -1 lets the largest
  /// id decide; ids must stay below `max_nodes`.
  static NodeIndex numeric(std::int64_t fixed_count, std::int64_t max_nodes);

  /// The id of `token`, adding it if the index is not frozen. On failure returns `std::nullopt`
  /// and sets `status`.
  std::optional<NodeId> insert(std::string_view token, Status& status);
  /// The id of `token` without adding it.
  [[nodiscard]] std::optional<NodeId> find(std::string_view token) const;

  /// Stops adding nodes: unknown tokens give `Status::kUnknown` (named) or `kOutOfRange`
  /// (numeric, whose node count is then fixed at the largest id seen + 1).
  void freeze() noexcept;
  [[nodiscard]] bool frozen() const noexcept { return frozen_; }
  [[nodiscard]] bool is_numeric() const noexcept { return numeric_; }
  /// The node limit this index enforces.
  [[nodiscard]] std::int64_t max_nodes() const noexcept { return max_nodes_; }
  /// The fixed node count of numeric mode, or -1.
  [[nodiscard]] std::int64_t fixed_count() const noexcept { return fixed_count_; }

  /// Number of nodes: names seen (named), or fixed count / largest id + 1 (numeric).
  [[nodiscard]] std::int64_t size() const noexcept;
  /// The name of every node in id order (numeric mode: the decimal ids).
  [[nodiscard]] std::vector<std::string> names() const;

 private:
  NodeIndex(bool numeric, std::int64_t fixed_count, std::int64_t max_nodes);

  bool numeric_;
  bool frozen_ = false;
  std::int64_t fixed_count_;
  std::int64_t max_nodes_;
  std::int64_t largest_id_ = -1;
  std::vector<std::string> names_;
  std::unordered_map<std::string, NodeId> ids_;
};

}  // namespace maskgat
