#include "maskgat/io/node_index.hpp"

#include <algorithm>
#include <cassert>

#include "io/detail/text.hpp"

namespace maskgat {

NodeIndex::NodeIndex(bool numeric, std::int64_t fixed_count, std::int64_t max_nodes)
    : numeric_(numeric),
      fixed_count_(fixed_count),
      max_nodes_(std::min<std::int64_t>(max_nodes, kMaxNodeCount)) {}

NodeIndex NodeIndex::named(std::int64_t max_nodes) { return {false, -1, max_nodes}; }

NodeIndex NodeIndex::numeric(std::int64_t fixed_count, std::int64_t max_nodes) {
  NodeIndex index(true, fixed_count, max_nodes);
  if (fixed_count >= 0) index.frozen_ = true;
  return index;
}

std::optional<NodeId> NodeIndex::insert(std::string_view token, Status& status) {
  status = Status::kOk;
  if (numeric_) {
    const auto id = detail::parse_integer(token);
    if (!id) {
      status = Status::kNotInteger;
      return std::nullopt;
    }
    if (*id < 0) {
      status = Status::kNegative;
      return std::nullopt;
    }
    if (frozen_) {
      if (*id >= size()) {
        status = Status::kOutOfRange;
        return std::nullopt;
      }
    } else if (*id >= max_nodes_) {
      status = Status::kOverLimit;
      return std::nullopt;
    }
    largest_id_ = std::max(largest_id_, *id);
    return static_cast<NodeId>(*id);
  }
  if (const auto found = ids_.find(std::string(token)); found != ids_.end()) return found->second;
  if (frozen_) {
    status = Status::kUnknown;
    return std::nullopt;
  }
  if (static_cast<std::int64_t>(names_.size()) >= max_nodes_) {
    status = Status::kOverLimit;
    return std::nullopt;
  }
  const auto id = static_cast<NodeId>(names_.size());
  names_.emplace_back(token);
  ids_.emplace(names_.back(), id);
  return id;
}

std::optional<NodeId> NodeIndex::find(std::string_view token) const {
  if (numeric_) {
    const auto id = detail::parse_integer(token);
    if (!id || *id < 0 || *id >= size()) return std::nullopt;
    return static_cast<NodeId>(*id);
  }
  const auto found = ids_.find(std::string(token));
  if (found == ids_.end()) return std::nullopt;
  return found->second;
}

void NodeIndex::freeze() noexcept {
  if (numeric_ && fixed_count_ < 0) fixed_count_ = largest_id_ + 1;
  frozen_ = true;
}

std::int64_t NodeIndex::size() const noexcept {
  if (!numeric_) return static_cast<std::int64_t>(names_.size());
  return fixed_count_ >= 0 ? fixed_count_ : largest_id_ + 1;
}

std::vector<std::string> NodeIndex::names() const {
  if (!numeric_) return names_;
  std::vector<std::string> result;
  result.reserve(static_cast<std::size_t>(size()));
  for (std::int64_t id = 0; id < size(); ++id) result.push_back(std::to_string(id));
  return result;
}

std::string NodeIndex::name(NodeId id) const {
  return numeric_ ? std::to_string(id) : names_[static_cast<std::size_t>(id)];
}

}  // namespace maskgat
