#include "maskgat/io/node_pairs.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/io/node_index.hpp"
#include "maskgat/io/output_file.hpp"

namespace maskgat {
namespace {

NodeIndex index_of(std::span<const std::string> node_names) {
  NodeIndex nodes = NodeIndex::named(static_cast<std::int64_t>(node_names.size()));
  NodeIndex::Status status{};
  for (const std::string& name : node_names) static_cast<void>(nodes.insert(name, status));
  nodes.freeze();
  return nodes;
}

NodeId node_of(const detail::LineReader& reader, const NodeIndex& nodes, std::string_view name) {
  const std::optional<NodeId> id = nodes.find(name);
  if (!id) reader.fail("node " + detail::quoted(name) + " is not in the graph");
  return *id;
}

constexpr std::array<std::string_view, 5> kParts{"train", "val", "test", "val_negative",
                                                 "test_negative"};

void check_writable(const std::string& name, std::size_t id) {
  if (name.empty() || name.find_first_of(" \t,\r\n") != std::string::npos || name.front() == '#' ||
      name.front() == '%') {
    throw InvalidArgument("write_edge_split: node " + std::to_string(id) + " is named " +
                          detail::quoted(name) +
                          ", which an edge split file cannot hold (empty, a space, tab, comma or "
                          "line end, or a leading # or %)");
  }
}

}  // namespace

NodePairs read_node_pairs(const std::filesystem::path& path,
                          std::span<const std::string> node_names, const ReadOptions& options) {
  const NodeIndex nodes = index_of(node_names);
  detail::LineReader reader(path, "pairs", options.limits.max_line_bytes);
  NodePairs pairs;
  std::string_view line;
  std::vector<std::string_view> fields;
  while (reader.next(line)) {
    if (detail::is_blank_or_comment(line)) continue;
    detail::split_fields(line, fields);
    if (fields.size() != 2) {
      reader.fail("expected 2 columns (source target), got " + std::to_string(fields.size()));
    }
    for (std::size_t k = 0; k < 2; ++k) {
      const std::optional<NodeId> id = nodes.find(fields[k]);
      if (!id) {
        reader.fail("node " + detail::quoted(fields[k]) + " is not in the graph" +
                    (pairs.size() == 0 ? " (a pairs file has no header line)" : ""));
      }
      (k == 0 ? pairs.sources : pairs.targets).push_back(*id);
    }
  }
  return pairs;
}

void write_edge_split(const std::filesystem::path& path, std::span<const std::string> node_names,
                      const EdgeSplit& split, bool overwrite) {
  if (static_cast<std::int64_t>(node_names.size()) != split.train.num_nodes()) {
    throw InvalidArgument("write_edge_split: " + std::to_string(node_names.size()) +
                          " node names for a graph of " + std::to_string(split.train.num_nodes()) +
                          " nodes");
  }
  for (std::size_t i = 0; i < node_names.size(); ++i) check_writable(node_names[i], i);
  const std::array<const NodePairs*, 5> parts{&split.train_edges, &split.val, &split.test,
                                              &split.val_negatives, &split.test_negatives};
  std::string text;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    for (std::int64_t k = 0; k < parts[p]->size(); ++k) {
      text += kParts[p];
      text += ' ';
      text += node_names[static_cast<std::size_t>(parts[p]->sources[static_cast<std::size_t>(k)])];
      text += ' ';
      text += node_names[static_cast<std::size_t>(parts[p]->targets[static_cast<std::size_t>(k)])];
      text += '\n';
    }
  }
  write_file_atomically(path, text, overwrite);
}

EdgeSplit read_edge_split(const std::filesystem::path& path, const Graph& graph,
                          std::span<const std::string> node_names, bool undirected,
                          const ReadOptions& options) {
  if (static_cast<std::int64_t>(node_names.size()) != graph.num_nodes()) {
    throw InvalidArgument("read_edge_split: " + std::to_string(node_names.size()) +
                          " node names for a graph of " + std::to_string(graph.num_nodes()) +
                          " nodes");
  }
  const NodeIndex nodes = index_of(node_names);
  detail::LineReader reader(path, "edge split", options.limits.max_line_bytes);
  EdgeSplit split;
  const std::array<NodePairs*, 5> parts{&split.train_edges, &split.val, &split.test,
                                        &split.val_negatives, &split.test_negatives};
  // The line each positive pair was first listed on, to refuse a pair in two places.
  std::vector<std::pair<std::pair<NodeId, NodeId>, std::int64_t>> positives;
  std::string_view line;
  std::vector<std::string_view> fields;
  while (reader.next(line)) {
    if (detail::is_blank_or_comment(line)) continue;
    detail::split_fields(line, fields);
    if (fields.size() != 3) {
      reader.fail("expected 3 columns (part source target), got " + std::to_string(fields.size()));
    }
    const auto part = std::find(kParts.begin(), kParts.end(), fields[0]);
    if (part == kParts.end()) {
      reader.fail("unknown part " + detail::quoted(fields[0]) +
                  ": expected train, val, test, val_negative or test_negative");
    }
    NodeId source = node_of(reader, nodes, fields[1]);
    NodeId target = node_of(reader, nodes, fields[2]);
    if (source == target)
      reader.fail("the pair is a self-loop, which link prediction never scores");
    const bool edge =
        graph.has_edge(source, target) || (undirected && graph.has_edge(target, source));
    const bool negative = part - kParts.begin() >= 3;
    if (negative && edge) {
      reader.fail("the negative pair " + std::string(fields[1]) + " " + std::string(fields[2]) +
                  " is an edge of the graph");
    }
    if (!negative && !edge) {
      reader.fail("the " + std::string(*part) + " pair " + std::string(fields[1]) + " " +
                  std::string(fields[2]) + " is not an edge of the graph");
    }
    NodePairs& pairs = *parts[static_cast<std::size_t>(part - kParts.begin())];
    pairs.sources.push_back(source);
    pairs.targets.push_back(target);
    if (!negative) {
      if (undirected && source > target) std::swap(source, target);
      positives.push_back({{source, target}, reader.line_number()});
    }
  }
  std::stable_sort(positives.begin(), positives.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t k = 1; k < positives.size(); ++k) {
    if (positives[k].first == positives[k - 1].first) {
      throw ParseError(
          reader.reader(), reader.path(), positives[k].second,
          "the pair " + node_names[static_cast<std::size_t>(positives[k].first.first)] + " " +
              node_names[static_cast<std::size_t>(positives[k].first.second)] +
              " is listed again (first on line " + std::to_string(positives[k - 1].second) + ")");
    }
  }
  if (split.train_edges.size() == 0) {
    throw InvalidArgument("edge split: " + reader.path() + " lists no training pairs");
  }
  for (const auto& [positive, negative, name] :
       {std::tuple{&split.val, &split.val_negatives, "validation"},
        std::tuple{&split.test, &split.test_negatives, "test"}}) {
    if (positive->size() != negative->size()) {
      throw InvalidArgument("edge split: " + reader.path() + " lists " +
                            std::to_string(positive->size()) + " " + name + " pairs and " +
                            std::to_string(negative->size()) +
                            " negatives, expected as many of each");
    }
  }
  split.train = remove_pairs(graph, split.val, split.test, undirected);
  return split;
}

}  // namespace maskgat
