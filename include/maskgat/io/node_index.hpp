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
#include "maskgat/export.hpp"

namespace maskgat {

/// Maps node tokens to ids.
///
/// - *named* (the default): any token is a name; ids are given in order of first appearance;
/// - *numeric*: tokens are 0-based integer ids; the node count is the largest id + 1, or fixed.
///
/// Once `freeze()` is called (a features file defines the node set), `insert` no longer adds
/// nodes and reports unknown tokens instead.
class MASKGAT_EXPORT NodeIndex {
 public:
  /// Why `insert` could not give an id.
  enum class Status { kOk, kUnknown, kNotInteger, kNegative, kOutOfRange, kOverLimit };

  /// Named mode; at most `max_nodes` nodes.
  /// @param max_nodes the node limit (`Limits::max_nodes`), capped at 2^31 - 1
  /// @return an empty, unfrozen index
  static NodeIndex named(std::int64_t max_nodes);
  /// Numeric mode; ids must stay below `max_nodes`.
  /// @param fixed_count >= 0 fixes the node count (`--num-nodes`) and freezes the index; -1 lets
  ///                    the largest id decide
  /// @param max_nodes   the node limit (`Limits::max_nodes`), capped at 2^31 - 1
  /// @return the index, frozen when `fixed_count` >= 0
  static NodeIndex numeric(std::int64_t fixed_count, std::int64_t max_nodes);

  /// The id of `token`, adding it if the index is not frozen.
  /// @param token  a node name, or a decimal id in numeric mode
  /// @param status set to `Status::kOk`, or to why no id could be given
  /// @return the id, or `std::nullopt` on failure
  std::optional<NodeId> insert(std::string_view token, Status& status);
  /// The id of `token` without adding it.
  /// @param token a node name, or a decimal id in numeric mode
  /// @return the id, or `std::nullopt` when the node is unknown (numeric: not an id below
  ///         `size()`)
  [[nodiscard]] std::optional<NodeId> find(std::string_view token) const;

  /// Stops adding nodes: unknown tokens give `Status::kUnknown` (named) or `kOutOfRange`
  /// (numeric, whose node count is then fixed at the largest id seen + 1).
  void freeze() noexcept;
  /// Whether `insert` no longer adds nodes.
  /// @return true after `freeze()`, or from the start with a fixed numeric count
  [[nodiscard]] bool frozen() const noexcept { return frozen_; }
  /// Whether tokens are numeric ids.
  /// @return true for an index made by `numeric`, false for `named`
  [[nodiscard]] bool is_numeric() const noexcept { return numeric_; }
  /// The node limit this index enforces.
  /// @return the limit given at creation, capped at 2^31 - 1
  [[nodiscard]] std::int64_t max_nodes() const noexcept { return max_nodes_; }
  /// The fixed node count of numeric mode.
  /// @return the count, or -1 when not fixed (named mode, or numeric before `freeze()`)
  [[nodiscard]] std::int64_t fixed_count() const noexcept { return fixed_count_; }

  /// Number of nodes: names seen (named), or fixed count / largest id + 1 (numeric).
  /// @return N
  [[nodiscard]] std::int64_t size() const noexcept;
  /// The name of every node in id order (numeric mode: the decimal ids).
  /// @return `size()` names
  [[nodiscard]] std::vector<std::string> names() const;
  /// The name of one node, as `names()[id]` without copying them all.
  /// @param id a node id in [0, size())
  /// @return its token (numeric: the id written in decimal)
  [[nodiscard]] std::string name(NodeId id) const;

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
