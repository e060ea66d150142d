#include "maskgat/graph/edge_split.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <unordered_set>
#include <utility>

#include "maskgat/core/error.hpp"
#include "maskgat/core/random.hpp"
#include "maskgat/graph/build.hpp"

namespace maskgat {
namespace {

constexpr std::uint64_t kSplitStream = 0x73706c6974ULL;     // "split"
constexpr std::uint64_t kNegativeStream = 0x6e65676174ULL;  // "negat"
constexpr std::uint64_t kValNegatives = 0;
constexpr std::uint64_t kTestNegatives = 1;

// The graph's pairs: every edge but self-loops, as (source, target); undirected, each pair once
// with source < target.
std::vector<std::pair<NodeId, NodeId>> pairs_of(const Graph& graph, bool undirected) {
  std::vector<std::pair<NodeId, NodeId>> pairs;
  for (NodeId target = 0; target < graph.num_nodes(); ++target) {
    for (const NodeId source : graph.in_neighbors(target)) {
      if (source == target) continue;
      pairs.emplace_back(undirected ? std::min(source, target) : source,
                         undirected ? std::max(source, target) : target);
    }
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

void check_share(const char* name, double value) {
  if (!(value >= 0.0 && value < 1.0)) {
    throw InvalidArgument(std::string("split_edges: ") + name + " is " + std::to_string(value) +
                          ", expected a share in [0, 1)");
  }
}

NodePairs to_pairs(std::span<const std::pair<NodeId, NodeId>> pairs) {
  NodePairs result;
  for (const auto& [source, target] : pairs) {
    result.sources.push_back(source);
    result.targets.push_back(target);
  }
  return result;
}

}  // namespace

NodePairs sample_negatives(const Graph& graph, std::int64_t count, bool undirected,
                           std::uint64_t seed, std::uint64_t stream) {
  const auto nodes = static_cast<double>(graph.num_nodes());
  const double possible = (undirected ? nodes * (nodes - 1.0) / 2.0 : nodes * (nodes - 1.0));
  // The listed edges bound the pairs from above; count them exactly only when that matters.
  const bool surely_enough =
      count >= 0 && static_cast<double>(count) <= possible - static_cast<double>(graph.num_edges());
  const double edges =
      surely_enough ? 0.0 : static_cast<double>(pairs_of(graph, undirected).size());
  if (count < 0 || static_cast<double>(count) > possible - edges) {
    throw InvalidArgument("sample_negatives: " + std::to_string(count) + " pairs asked for, but " +
                          std::to_string(graph.num_nodes()) + " nodes have only " +
                          std::to_string(static_cast<std::int64_t>(possible - edges)) +
                          " pairs that are not edges");
  }
  Rng rng(counter_hash(seed, kNegativeStream, stream));
  const auto n = static_cast<std::uint64_t>(graph.num_nodes());
  std::unordered_set<std::uint64_t> drawn;
  NodePairs result;
  while (result.size() < count) {
    auto source = static_cast<NodeId>(rng.uniform_int(n));
    auto target = static_cast<NodeId>(rng.uniform_int(n));
    if (source == target) continue;
    if (undirected && source > target) std::swap(source, target);
    if (graph.has_edge(source, target) || (undirected && graph.has_edge(target, source))) {
      continue;
    }
    const std::uint64_t key =
        static_cast<std::uint64_t>(source) * n + static_cast<std::uint64_t>(target);
    if (!drawn.insert(key).second) continue;
    result.sources.push_back(source);
    result.targets.push_back(target);
  }
  return result;
}

Graph remove_pairs(const Graph& graph, const NodePairs& first, const NodePairs& second,
                   bool undirected) {
  std::vector<std::pair<NodeId, NodeId>> held;
  for (const NodePairs* pairs : {&first, &second}) {
    if (pairs->sources.size() != pairs->targets.size()) {
      throw InvalidArgument("remove_pairs: " + std::to_string(pairs->sources.size()) +
                            " sources for " + std::to_string(pairs->targets.size()) + " targets");
    }
    for (std::size_t k = 0; k < pairs->sources.size(); ++k) {
      const NodeId source = pairs->sources[k];
      const NodeId target = pairs->targets[k];
      held.emplace_back(undirected ? std::min(source, target) : source,
                        undirected ? std::max(source, target) : target);
    }
  }
  std::sort(held.begin(), held.end());
  const auto is_held = [&](NodeId source, NodeId target) {
    if (undirected && source > target) std::swap(source, target);
    return std::binary_search(held.begin(), held.end(), std::pair(source, target));
  };
  EdgeList kept;
  for (NodeId target = 0; target < graph.num_nodes(); ++target) {
    for (const NodeId source : graph.in_neighbors(target)) {
      if (source != target && is_held(source, target)) continue;
      kept.sources.push_back(source);
      kept.targets.push_back(target);
    }
  }
  return build_graph(graph.num_nodes(), kept).graph;
}

EdgeSplit split_edges(const Graph& graph, const EdgeSplitOptions& options) {
  check_share("val_fraction", options.val_fraction);
  check_share("test_fraction", options.test_fraction);
  if (options.val_fraction + options.test_fraction >= 1.0) {
    throw InvalidArgument("split_edges: the validation and test shares sum to " +
                          std::to_string(options.val_fraction + options.test_fraction) +
                          ", expected below 1 (some edges must train)");
  }
  std::vector<std::pair<NodeId, NodeId>> pairs = pairs_of(graph, options.undirected);
  Rng rng(counter_hash(options.seed, kSplitStream, 0));
  for (std::size_t k = pairs.size(); k > 1; --k) std::swap(pairs[k - 1], pairs[rng.uniform_int(k)]);
  const auto total = static_cast<double>(pairs.size());
  const auto val = static_cast<std::size_t>(std::lround(options.val_fraction * total));
  const auto test = static_cast<std::size_t>(std::lround(options.test_fraction * total));
  EdgeSplit split;
  split.val = to_pairs(std::span(pairs).subspan(0, val));
  split.test = to_pairs(std::span(pairs).subspan(val, test));
  split.train = remove_pairs(graph, split.val, split.test, options.undirected);
  split.train_edges = to_pairs(std::span(pairs).subspan(val + test));
  split.val_negatives =
      sample_negatives(graph, split.val.size(), options.undirected, options.seed, kValNegatives);
  split.test_negatives =
      sample_negatives(graph, split.test.size(), options.undirected, options.seed, kTestNegatives);
  return split;
}

}  // namespace maskgat
