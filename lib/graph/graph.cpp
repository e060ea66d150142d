#include "maskgat/graph/graph.hpp"

#include <cmath>
#include <string>

#include "maskgat/core/error.hpp"

namespace maskgat {
namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw InvalidArgument("graph: " + message);
}

}  // namespace

Graph::Graph() : in_offsets_{0}, out_offsets_{0} {}

Graph::Graph(std::int64_t num_nodes, std::vector<EdgeId> in_offsets, std::vector<NodeId> in_sources,
             std::vector<float> weights)
    : in_offsets_(std::move(in_offsets)),
      in_sources_(std::move(in_sources)),
      weights_(std::move(weights)) {
  if (num_nodes < 0 || num_nodes > kMaxNodeCount) {
    invalid("num_nodes " + std::to_string(num_nodes) + " is outside [0, " +
            std::to_string(kMaxNodeCount) + "]");
  }
  num_nodes_ = static_cast<NodeId>(num_nodes);
  const auto n = static_cast<std::size_t>(num_nodes);
  const auto num_edges = static_cast<EdgeId>(in_sources_.size());
  if (in_offsets_.size() != n + 1) {
    invalid("in_offsets has " + std::to_string(in_offsets_.size()) + " entries, expected " +
            std::to_string(n + 1) + " (num_nodes + 1)");
  }
  if (in_offsets_.front() != 0 || in_offsets_.back() != num_edges) {
    invalid("in_offsets must start at 0 and end at " + std::to_string(num_edges) +
            " (the number of edges), got " + std::to_string(in_offsets_.front()) + " and " +
            std::to_string(in_offsets_.back()));
  }
  if (!weights_.empty() && weights_.size() != in_sources_.size()) {
    invalid("weights has " + std::to_string(weights_.size()) + " entries, expected " +
            std::to_string(num_edges) + " (one per edge)");
  }
  for (std::size_t dst = 0; dst < n; ++dst) {
    if (in_offsets_[dst + 1] < in_offsets_[dst]) {
      invalid("in_offsets decreases at node " + std::to_string(dst) + ": " +
              std::to_string(in_offsets_[dst]) + " then " + std::to_string(in_offsets_[dst + 1]));
    }
  }
  std::vector<EdgeId> out_counts(n + 1, 0);
  for (std::size_t dst = 0; dst < n; ++dst) {
    const EdgeId begin = in_offsets_[dst];
    for (EdgeId e = begin; e < in_offsets_[dst + 1]; ++e) {
      const NodeId src = in_sources_[static_cast<std::size_t>(e)];
      if (src < 0 || src >= num_nodes_) {
        invalid("edge " + std::to_string(e) + " has source " + std::to_string(src) +
                ", expected a node id in [0, " + std::to_string(num_nodes_) + ")");
      }
      if (e > begin && src <= in_sources_[static_cast<std::size_t>(e - 1)]) {
        invalid("sources of node " + std::to_string(dst) + " are not strictly increasing at edge " +
                std::to_string(e) + " (duplicate or unsorted)");
      }
      ++out_counts[static_cast<std::size_t>(src) + 1];
      if (src == static_cast<NodeId>(dst)) ++num_self_loops_;
    }
  }
  for (const float w : weights_) {
    if (!std::isfinite(w)) invalid("edge weights must be finite");
  }
  // Transpose by counting sort: visiting destinations in ascending order leaves every source's
  // targets sorted ascending.
  out_offsets_ = std::move(out_counts);
  for (std::size_t i = 0; i < n; ++i) out_offsets_[i + 1] += out_offsets_[i];
  out_targets_.resize(in_sources_.size());
  out_edge_ids_.resize(in_sources_.size());
  std::vector<EdgeId> cursor(out_offsets_.begin(), out_offsets_.end() - 1);
  for (std::size_t dst = 0; dst < n; ++dst) {
    for (EdgeId e = in_offsets_[dst]; e < in_offsets_[dst + 1]; ++e) {
      const auto slot = static_cast<std::size_t>(
          cursor[static_cast<std::size_t>(in_sources_[static_cast<std::size_t>(e)])]++);
      out_targets_[slot] = static_cast<NodeId>(dst);
      out_edge_ids_[slot] = e;
    }
  }
}

std::span<const NodeId> Graph::in_neighbors(NodeId node) const noexcept {
  const auto i = static_cast<std::size_t>(node);
  return std::span<const NodeId>(in_sources_)
      .subspan(static_cast<std::size_t>(in_offsets_[i]),
               static_cast<std::size_t>(in_offsets_[i + 1] - in_offsets_[i]));
}

std::span<const NodeId> Graph::out_neighbors(NodeId node) const noexcept {
  const auto i = static_cast<std::size_t>(node);
  return std::span<const NodeId>(out_targets_)
      .subspan(static_cast<std::size_t>(out_offsets_[i]),
               static_cast<std::size_t>(out_offsets_[i + 1] - out_offsets_[i]));
}

EdgeId Graph::in_degree(NodeId node) const noexcept {
  const auto i = static_cast<std::size_t>(node);
  return in_offsets_[i + 1] - in_offsets_[i];
}

EdgeId Graph::out_degree(NodeId node) const noexcept {
  const auto i = static_cast<std::size_t>(node);
  return out_offsets_[i + 1] - out_offsets_[i];
}

std::vector<NodeId> Graph::edge_destinations() const {
  std::vector<NodeId> destinations(in_sources_.size());
  for (NodeId node = 0; node < num_nodes_; ++node) {
    const auto i = static_cast<std::size_t>(node);
    for (EdgeId e = in_offsets_[i]; e < in_offsets_[i + 1]; ++e) {
      destinations[static_cast<std::size_t>(e)] = node;
    }
  }
  return destinations;
}

}  // namespace maskgat
