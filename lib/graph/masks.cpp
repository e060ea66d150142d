#include "maskgat/graph/masks.hpp"

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "maskgat/core/error.hpp"

namespace maskgat::masks {
namespace {

constexpr std::int64_t kMaxMaskEntries = std::int64_t{1} << 62;

void check_node_count(const char* where, std::int64_t count) {
  if (count < 0 || count > kMaxNodeCount) {
    throw InvalidArgument(std::string(where) + ": " + std::to_string(count) +
                          " positions, expected a count in [0, " + std::to_string(kMaxNodeCount) +
                          "]");
  }
}

void check_entries(const char* where, std::int64_t rows, std::int64_t per_row) {
  if (per_row > 0 && rows > kMaxMaskEntries / per_row) {
    throw InvalidArgument(std::string(where) + ": " + std::to_string(rows) + " rows of up to " +
                          std::to_string(per_row) + " entries exceed 2^62 entries");
  }
}

// Builds a mask whose row i holds the sorted ids `sources(i, push)` pushes.
template <typename RowFn>
Graph build_rows(std::int64_t num_nodes, std::int64_t reserve, RowFn&& row) {
  std::vector<EdgeId> offsets(static_cast<std::size_t>(num_nodes) + 1, 0);
  std::vector<NodeId> sources;
  sources.reserve(static_cast<std::size_t>(reserve));
  for (std::int64_t i = 0; i < num_nodes; ++i) {
    row(i, sources);
    offsets[static_cast<std::size_t>(i) + 1] = static_cast<EdgeId>(sources.size());
  }
  return Graph(num_nodes, std::move(offsets), std::move(sources));
}

// The nodes within `layers` in-edges of `seeds`, in breadth-first order: the ones within d hops
// are the first `level_ends[d]` (d = 0 .. layers). `where` names the caller in errors.
struct Levels {
  std::vector<NodeId> nodes;
  std::vector<std::size_t> level_ends;
};

Levels levels(const char* where, const Graph& mask, std::span<const NodeId> seeds,
              std::int64_t layers) {
  if (layers < 0) {
    throw InvalidArgument(std::string(where) + ": layers " + std::to_string(layers) +
                          " is negative");
  }
  std::vector<bool> reached(static_cast<std::size_t>(mask.num_nodes()), false);
  Levels result;
  for (const NodeId node : seeds) {
    if (node < 0 || node >= mask.num_nodes()) {
      throw InvalidArgument(std::string(where) + ": node " + std::to_string(node) +
                            " is outside [0, " + std::to_string(mask.num_nodes()) + ")");
    }
    if (reached[static_cast<std::size_t>(node)]) continue;
    reached[static_cast<std::size_t>(node)] = true;
    result.nodes.push_back(node);
  }
  result.level_ends.push_back(result.nodes.size());
  std::size_t frontier_begin = 0;
  for (std::int64_t layer = 0; layer < layers; ++layer) {
    const std::size_t frontier_end = result.nodes.size();
    for (std::size_t k = frontier_begin; k < frontier_end; ++k) {
      for (const NodeId source : mask.in_neighbors(result.nodes[k])) {
        if (!reached[static_cast<std::size_t>(source)]) {
          reached[static_cast<std::size_t>(source)] = true;
          result.nodes.push_back(source);
        }
      }
    }
    result.level_ends.push_back(result.nodes.size());
    frontier_begin = frontier_end;
  }
  return result;
}

}  // namespace

Graph from_graph(const Graph& graph, bool self_loops) {
  const auto in_offsets = graph.in_offsets();
  const auto in_sources = graph.in_sources();
  return build_rows(graph.num_nodes(), graph.num_edges() + (self_loops ? graph.num_nodes() : 0),
                    [&](std::int64_t i, std::vector<NodeId>& out) {
                      const auto node = static_cast<NodeId>(i);
                      bool placed = !self_loops;
                      for (EdgeId e = in_offsets[static_cast<std::size_t>(i)];
                           e < in_offsets[static_cast<std::size_t>(i) + 1]; ++e) {
                        const NodeId src = in_sources[static_cast<std::size_t>(e)];
                        if (!placed && src >= node) {
                          if (src > node) out.push_back(node);
                          placed = true;
                        }
                        out.push_back(src);
                      }
                      if (!placed) out.push_back(node);
                    });
}

template <typename T>
RowMatrix<T> edge_features(const Graph& graph, const RowMatrix<T>& features, const Graph& mask) {
  constexpr const char* kWhere = "masks::edge_features";
  if (features.rows() != graph.num_edges() || mask.num_nodes() != graph.num_nodes()) {
    throw InvalidArgument(std::string(kWhere) + ": " + std::to_string(features.rows()) +
                          " feature rows for a graph of " + std::to_string(graph.num_edges()) +
                          " edges, and a mask of " + std::to_string(mask.num_nodes()) +
                          " nodes on a graph of " + std::to_string(graph.num_nodes()) +
                          ": expected one row per edge and the same nodes");
  }
  const auto offsets = graph.in_offsets();
  const auto sources = graph.in_sources();
  RowMatrix<T> out(mask.num_edges(), features.cols());
  const auto mask_offsets = mask.in_offsets();
  for (NodeId i = 0; i < mask.num_nodes(); ++i) {
    const auto row = static_cast<std::size_t>(i);
    EdgeId e = offsets[row];
    for (EdgeId m = mask_offsets[row]; m < mask_offsets[row + 1]; ++m) {
      const NodeId j = mask.in_sources()[static_cast<std::size_t>(m)];
      while (e < offsets[row + 1] && sources[static_cast<std::size_t>(e)] < j) ++e;
      if (e < offsets[row + 1] && sources[static_cast<std::size_t>(e)] == j) {
        out.row(m) = features.row(e);
      } else if (j == i) {
        const EdgeId degree = offsets[row + 1] - offsets[row];
        out.row(m).setZero();
        if (degree > 0) {
          out.row(m) =
              features.middleRows(offsets[row], degree).colwise().sum() / static_cast<T>(degree);
        }
      } else {
        throw InvalidArgument(std::string(kWhere) + ": the mask's entry " + std::to_string(j) +
                              " -> " + std::to_string(i) +
                              " is not an edge of the graph, so it has no features");
      }
    }
  }
  return out;
}

template RowMatrix<float> edge_features(const Graph&, const RowMatrix<float>&, const Graph&);
template RowMatrix<double> edge_features(const Graph&, const RowMatrix<double>&, const Graph&);

Graph window(std::int64_t length, std::int64_t half_width) {
  check_node_count("masks::window", length);
  if (half_width < 0) {
    throw InvalidArgument("masks::window: half_width " + std::to_string(half_width) +
                          " is negative");
  }
  const std::int64_t reach = std::min(half_width, std::max<std::int64_t>(length - 1, 0));
  check_entries("masks::window", length, 2 * reach + 1);
  return build_rows(length, length * (2 * reach + 1),
                    [&](std::int64_t i, std::vector<NodeId>& out) {
                      const std::int64_t last = std::min(length - 1, i + reach);
                      for (std::int64_t j = std::max<std::int64_t>(0, i - reach); j <= last; ++j) {
                        out.push_back(static_cast<NodeId>(j));
                      }
                    });
}

Graph grid(std::int64_t height, std::int64_t width, std::int64_t radius) {
  if (height < 0 || width < 0 || radius < 0) {
    throw InvalidArgument("masks::grid: height " + std::to_string(height) + ", width " +
                          std::to_string(width) + " and radius " + std::to_string(radius) +
                          " must not be negative");
  }
  if (width > 0 && height > kMaxNodeCount / width) {
    throw InvalidArgument("masks::grid: " + std::to_string(height) + " x " + std::to_string(width) +
                          " pixels exceed " + std::to_string(kMaxNodeCount) + " nodes");
  }
  const std::int64_t reach_rows = std::min(radius, std::max<std::int64_t>(height - 1, 0));
  const std::int64_t reach_cols = std::min(radius, std::max<std::int64_t>(width - 1, 0));
  const std::int64_t per_row = (2 * reach_rows + 1) * (2 * reach_cols + 1);
  check_entries("masks::grid", height * width, per_row);
  return build_rows(
      height * width, height * width * per_row, [&](std::int64_t pixel, std::vector<NodeId>& out) {
        const std::int64_t r = pixel / width;
        const std::int64_t c = pixel % width;
        const std::int64_t last_row = std::min(height - 1, r + reach_rows);
        const std::int64_t last_col = std::min(width - 1, c + reach_cols);
        for (std::int64_t rr = std::max<std::int64_t>(0, r - reach_rows); rr <= last_row; ++rr) {
          for (std::int64_t cc = std::max<std::int64_t>(0, c - reach_cols); cc <= last_col; ++cc) {
            out.push_back(static_cast<NodeId>(rr * width + cc));
          }
        }
      });
}

Graph full(std::int64_t length) {
  if (length < 0) {
    throw InvalidArgument("masks::full: length " + std::to_string(length) + " is negative");
  }
  check_entries("masks::full", length, length);
  check_node_count("masks::full", length);
  return window(length, length);
}

std::vector<NodeId> receptive_field(const Graph& mask, NodeId node, std::int64_t layers) {
  std::vector<NodeId> field =
      levels("masks::receptive_field", mask, std::span<const NodeId>(&node, 1), layers).nodes;
  std::sort(field.begin(), field.end());
  return field;
}

namespace {

// The subgraph of `mask` on `nodes` (ascending) with `layers` masks: in layer l's, node k keeps
// every in-edge where `whole(l, nodes[k])` and only its self-loop (if `mask` has it) elsewhere.
// Every in-edge kept must come from one of `nodes`.
template <typename Whole>
Subgraph subgraph_on(const Graph& mask, std::vector<NodeId> nodes, std::int64_t layers,
                     const Whole& whole) {
  Subgraph result;
  result.nodes = std::move(nodes);
  std::vector<NodeId> renumbered(static_cast<std::size_t>(mask.num_nodes()), -1);
  for (std::size_t k = 0; k < result.nodes.size(); ++k) {
    renumbered[static_cast<std::size_t>(result.nodes[k])] = static_cast<NodeId>(k);
  }
  const auto all_weights = mask.weights();
  for (std::int64_t layer = 0; layer < layers; ++layer) {
    std::vector<EdgeId> offsets{0};
    std::vector<NodeId> sources;
    std::vector<float> weights;
    for (const NodeId node : result.nodes) {
      const bool keep_all = whole(layer, node);
      const EdgeId first = mask.in_offsets()[static_cast<std::size_t>(node)];
      const auto row = mask.in_neighbors(node);
      for (std::size_t k = 0; k < row.size(); ++k) {
        if (!keep_all && row[k] != node) continue;
        sources.push_back(renumbered[static_cast<std::size_t>(row[k])]);
        if (mask.has_weights()) weights.push_back(all_weights[static_cast<std::size_t>(first) + k]);
      }
      offsets.push_back(static_cast<EdgeId>(sources.size()));
    }
    result.masks.emplace_back(static_cast<std::int64_t>(result.nodes.size()), std::move(offsets),
                              std::move(sources), std::move(weights));
  }
  return result;
}

}  // namespace

Subgraph receptive_subgraph(const Graph& mask, std::span<const NodeId> outputs,
                            std::int64_t layers) {
  Levels field = levels("masks::receptive_subgraph", mask, outputs, layers);
  // The hops from the outputs of every node reached, by original id.
  std::vector<std::int64_t> hops(static_cast<std::size_t>(mask.num_nodes()), -1);
  for (std::size_t d = 0, k = 0; d < field.level_ends.size(); ++d) {
    for (; k < field.level_ends[d]; ++k)
      hops[static_cast<std::size_t>(field.nodes[k])] = static_cast<std::int64_t>(d);
  }
  std::sort(field.nodes.begin(), field.nodes.end());
  // Layer l's output is needed within layers - 1 - l hops: those rows keep every in-edge.
  return subgraph_on(mask, std::move(field.nodes), layers, [&](std::int64_t layer, NodeId node) {
    return hops[static_cast<std::size_t>(node)] <= layers - 1 - layer;
  });
}

Subgraph rows_subgraph(const Graph& mask, std::span<const std::vector<std::uint8_t>> rows) {
  const auto count = static_cast<std::size_t>(mask.num_nodes());
  std::vector<std::uint8_t> kept(count, 0);
  const auto offsets = mask.in_offsets();
  const auto sources = mask.in_sources();
  for (std::size_t layer = 0; layer < rows.size(); ++layer) {
    if (rows[layer].size() != count) {
      throw InvalidArgument("masks::rows_subgraph: layer " + std::to_string(layer) + " gives " +
                            std::to_string(rows[layer].size()) + " bytes, expected one per node (" +
                            std::to_string(count) + ")");
    }
    for (std::size_t r = 0; r < count; ++r) {
      if (rows[layer][r] == 0) continue;
      kept[r] = 1;
      for (EdgeId e = offsets[r]; e < offsets[r + 1]; ++e)
        kept[static_cast<std::size_t>(sources[static_cast<std::size_t>(e)])] = 1;
    }
  }
  std::vector<NodeId> nodes;
  for (std::size_t r = 0; r < count; ++r) {
    if (kept[r] != 0) nodes.push_back(static_cast<NodeId>(r));
  }
  return subgraph_on(
      mask, std::move(nodes), static_cast<std::int64_t>(rows.size()),
      [&](std::int64_t layer, NodeId node) {
        return rows[static_cast<std::size_t>(layer)][static_cast<std::size_t>(node)] != 0;
      });
}

std::vector<std::vector<std::uint8_t>> receptive_rows(const Graph& mask,
                                                      std::span<const NodeId> outputs,
                                                      std::int64_t layers) {
  const Levels field = levels("masks::receptive_rows", mask, outputs, layers);
  std::vector<std::vector<std::uint8_t>> rows(
      static_cast<std::size_t>(layers),
      std::vector<std::uint8_t>(static_cast<std::size_t>(mask.num_nodes()), 0));
  for (std::int64_t layer = 0; layer < layers; ++layer) {
    const std::size_t end = field.level_ends[static_cast<std::size_t>(layers - 1 - layer)];
    for (std::size_t k = 0; k < end; ++k) {
      rows[static_cast<std::size_t>(layer)][static_cast<std::size_t>(field.nodes[k])] = 1;
    }
  }
  return rows;
}

}  // namespace maskgat::masks
