#include "maskgat/graph/graph.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "core/detail/parallel.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat {
namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw InvalidArgument("graph: " + message);
}

// The arrays of a graph built in memory, which its `Arrays` point into.
struct OwnedArrays {
  std::vector<EdgeId> in_offsets;
  std::vector<NodeId> in_sources;
  std::vector<float> weights;
  std::vector<EdgeId> out_offsets;
  std::vector<NodeId> out_targets;
  std::vector<EdgeId> out_edge_ids;
};

// Rows per task of the checks: a constant, so the tasks do not depend on the thread count.
constexpr std::int64_t kCheckBlock = 1 << 16;

// Runs `check(begin, end)` over fixed blocks of [0, count) in parallel and throws the first
// block's problem, so the message is the same on any number of threads.
template <typename Check>
void check_blocks(std::int64_t count, Check&& check) {
  if (auto problem = detail::first_problem(count, kCheckBlock, check)) invalid(*problem);
}

// Checks one CSR view: `offsets` (`name`) has N + 1 entries, starts at 0, ends at `ids.size()`
// and never decreases; each row's ids lie in [0, N) and strictly increase (`what`: "sources" or
// "targets", `role`: "source" or "target"). Returns the self-loops (ids equal to their row).
EdgeId check_view(std::span<const EdgeId> offsets, std::span<const NodeId> ids, NodeId num_nodes,
                  const char* name, const char* what, const char* role) {
  const auto n = static_cast<std::size_t>(num_nodes);
  const auto num_edges = static_cast<EdgeId>(ids.size());
  if (offsets.size() != n + 1) {
    invalid(std::string(name) + " has " + std::to_string(offsets.size()) + " entries, expected " +
            std::to_string(n + 1) + " (num_nodes + 1)");
  }
  if (offsets.front() != 0 || offsets.back() != num_edges) {
    invalid(std::string(name) + " must start at 0 and end at " + std::to_string(num_edges) +
            " (the number of edges), got " + std::to_string(offsets.front()) + " and " +
            std::to_string(offsets.back()));
  }
  check_blocks(num_nodes, [&](std::int64_t begin, std::int64_t end) -> std::optional<std::string> {
    for (auto node = static_cast<std::size_t>(begin); node < static_cast<std::size_t>(end);
         ++node) {
      if (offsets[node + 1] < offsets[node]) {
        return std::string(name) + " decreases at node " + std::to_string(node) + ": " +
               std::to_string(offsets[node]) + " then " + std::to_string(offsets[node + 1]);
      }
    }
    return std::nullopt;
  });
  std::vector<EdgeId> loops(static_cast<std::size_t>((num_nodes + kCheckBlock - 1) / kCheckBlock));
  check_blocks(num_nodes, [&](std::int64_t begin, std::int64_t end) -> std::optional<std::string> {
    EdgeId block_loops = 0;
    for (auto node = static_cast<std::size_t>(begin); node < static_cast<std::size_t>(end);
         ++node) {
      const EdgeId first = offsets[node];
      for (EdgeId e = first; e < offsets[node + 1]; ++e) {
        const NodeId id = ids[static_cast<std::size_t>(e)];
        if (id < 0 || id >= num_nodes) {
          return "edge " + std::to_string(e) + " has " + role + " " + std::to_string(id) +
                 ", expected a node id in [0, " + std::to_string(num_nodes) + ")";
        }
        if (e > first && id <= ids[static_cast<std::size_t>(e - 1)]) {
          return std::string(what) + " of node " + std::to_string(node) +
                 " are not strictly increasing at edge " + std::to_string(e) +
                 " (duplicate or unsorted)";
        }
        if (id == static_cast<NodeId>(node)) ++block_loops;
      }
    }
    loops[static_cast<std::size_t>(begin / kCheckBlock)] = block_loops;
    return std::nullopt;
  });
  EdgeId total = 0;
  for (const EdgeId count : loops) total += count;
  return total;
}

void check_weights(std::span<const float> weights, std::size_t num_edges) {
  if (!weights.empty() && weights.size() != num_edges) {
    invalid("weights has " + std::to_string(weights.size()) + " entries, expected " +
            std::to_string(num_edges) + " (one per edge)");
  }
  check_blocks(static_cast<std::int64_t>(weights.size()),
               [&](std::int64_t begin, std::int64_t end) -> std::optional<std::string> {
                 for (std::int64_t e = begin; e < end; ++e) {
                   if (!std::isfinite(weights[static_cast<std::size_t>(e)])) {
                     return std::string("edge weights must be finite");
                   }
                 }
                 return std::nullopt;
               });
}

NodeId checked_node_count(std::int64_t num_nodes) {
  if (num_nodes < 0 || num_nodes > kMaxNodeCount) {
    invalid("num_nodes " + std::to_string(num_nodes) + " is outside [0, " +
            std::to_string(kMaxNodeCount) + "]");
  }
  return static_cast<NodeId>(num_nodes);
}

}  // namespace

Graph::Graph() {
  auto owned = std::make_shared<OwnedArrays>();
  owned->in_offsets = {0};
  owned->out_offsets = {0};
  arrays_ = {owned->in_offsets, {}, {}, owned->out_offsets, {}, {}};
  owner_ = std::move(owned);
}

Graph::Graph(std::int64_t num_nodes, std::vector<EdgeId> in_offsets, std::vector<NodeId> in_sources,
             std::vector<float> weights)
    : num_nodes_(checked_node_count(num_nodes)) {
  auto owned = std::make_shared<OwnedArrays>();
  owned->in_offsets = std::move(in_offsets);
  owned->in_sources = std::move(in_sources);
  owned->weights = std::move(weights);
  num_self_loops_ = check_view(owned->in_offsets, owned->in_sources, num_nodes_, "in_offsets",
                               "sources", "source");
  check_weights(owned->weights, owned->in_sources.size());
  // Transpose by counting sort: visiting destinations in ascending order leaves every source's
  // targets sorted ascending.
  const auto n = static_cast<std::size_t>(num_nodes_);
  std::vector<EdgeId>& out_offsets = owned->out_offsets;
  out_offsets.assign(n + 1, 0);
  for (const NodeId source : owned->in_sources) ++out_offsets[static_cast<std::size_t>(source) + 1];
  for (std::size_t i = 0; i < n; ++i) out_offsets[i + 1] += out_offsets[i];
  owned->out_targets.resize(owned->in_sources.size());
  owned->out_edge_ids.resize(owned->in_sources.size());
  std::vector<EdgeId> cursor(out_offsets.begin(), out_offsets.end() - 1);
  for (std::size_t dst = 0; dst < n; ++dst) {
    for (EdgeId e = owned->in_offsets[dst]; e < owned->in_offsets[dst + 1]; ++e) {
      const auto slot = static_cast<std::size_t>(
          cursor[static_cast<std::size_t>(owned->in_sources[static_cast<std::size_t>(e)])]++);
      owned->out_targets[slot] = static_cast<NodeId>(dst);
      owned->out_edge_ids[slot] = e;
    }
  }
  arrays_ = {owned->in_offsets,  owned->in_sources,  owned->weights,
             owned->out_offsets, owned->out_targets, owned->out_edge_ids};
  owner_ = std::move(owned);
}

Graph::Graph(std::int64_t num_nodes, const Arrays& arrays, std::shared_ptr<const void> owner)
    : num_nodes_(checked_node_count(num_nodes)), arrays_(arrays), owner_(std::move(owner)) {
  const std::size_t num_edges = arrays.in_sources.size();
  num_self_loops_ = check_view(arrays.in_offsets, arrays.in_sources, num_nodes_, "in_offsets",
                               "sources", "source");
  check_weights(arrays.weights, num_edges);
  if (arrays.out_targets.size() != num_edges || arrays.out_edge_ids.size() != num_edges) {
    invalid("the transpose holds " + std::to_string(arrays.out_targets.size()) + " targets and " +
            std::to_string(arrays.out_edge_ids.size()) + " edge ids, expected " +
            std::to_string(num_edges) + " (one per edge)");
  }
  (void)check_view(arrays.out_offsets, arrays.out_targets, num_nodes_, "out_offsets", "targets",
                   "target");
  check_blocks(static_cast<std::int64_t>(num_edges),
               [&](std::int64_t begin, std::int64_t end) -> std::optional<std::string> {
                 for (std::int64_t slot = begin; slot < end; ++slot) {
                   const EdgeId e = arrays.out_edge_ids[static_cast<std::size_t>(slot)];
                   if (e < 0 || e >= static_cast<EdgeId>(num_edges)) {
                     return "transpose slot " + std::to_string(slot) + " has edge id " +
                            std::to_string(e) + ", expected one in [0, " +
                            std::to_string(num_edges) + ")";
                   }
                 }
                 return std::nullopt;
               });
}

bool Graph::has_edge(NodeId source, NodeId target) const noexcept {
  const std::span<const NodeId> row = in_neighbors(target);
  return std::binary_search(row.begin(), row.end(), source);
}

std::span<const NodeId> Graph::in_neighbors(NodeId node) const noexcept {
  const auto i = static_cast<std::size_t>(node);
  return arrays_.in_sources.subspan(
      static_cast<std::size_t>(arrays_.in_offsets[i]),
      static_cast<std::size_t>(arrays_.in_offsets[i + 1] - arrays_.in_offsets[i]));
}

std::span<const NodeId> Graph::out_neighbors(NodeId node) const noexcept {
  const auto i = static_cast<std::size_t>(node);
  return arrays_.out_targets.subspan(
      static_cast<std::size_t>(arrays_.out_offsets[i]),
      static_cast<std::size_t>(arrays_.out_offsets[i + 1] - arrays_.out_offsets[i]));
}

EdgeId Graph::in_degree(NodeId node) const noexcept {
  const auto i = static_cast<std::size_t>(node);
  return arrays_.in_offsets[i + 1] - arrays_.in_offsets[i];
}

EdgeId Graph::out_degree(NodeId node) const noexcept {
  const auto i = static_cast<std::size_t>(node);
  return arrays_.out_offsets[i + 1] - arrays_.out_offsets[i];
}

std::vector<NodeId> Graph::edge_destinations() const {
  std::vector<NodeId> destinations(arrays_.in_sources.size());
  for (NodeId node = 0; node < num_nodes_; ++node) {
    const auto i = static_cast<std::size_t>(node);
    for (EdgeId e = arrays_.in_offsets[i]; e < arrays_.in_offsets[i + 1]; ++e) {
      destinations[static_cast<std::size_t>(e)] = node;
    }
  }
  return destinations;
}

}  // namespace maskgat
