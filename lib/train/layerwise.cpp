#include "maskgat/train/layerwise.hpp"

#include <algorithm>
#include <cassert>
#include <string>
#include <vector>

#include "core/detail/parallel.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/graph/sampler.hpp"

namespace maskgat::train {
namespace {

// Rows per task of the gathers between layers: a constant, so tasks do not depend on the
// thread count.
constexpr std::int64_t kGatherBlock = 1024;

// The nodes each layer must be formed at for the outputs `outputs` (not empty), ascending: the
// outputs for the last layer, and for each layer below the nodes the one above is formed at and
// their in-neighbours. O(N) per layer.
std::vector<std::vector<NodeId>> needed_rows(const Graph& graph, std::span<const NodeId> outputs,
                                             std::int64_t layers) {
  std::vector<std::vector<NodeId>> rows(static_cast<std::size_t>(layers));
  std::vector<NodeId>& last = rows.back();
  last.assign(outputs.begin(), outputs.end());
  std::sort(last.begin(), last.end());
  last.erase(std::unique(last.begin(), last.end()), last.end());
  std::vector<std::uint8_t> marked(static_cast<std::size_t>(graph.num_nodes()), 0);
  for (std::int64_t layer = layers - 2; layer >= 0; --layer) {
    for (const NodeId node : rows[static_cast<std::size_t>(layer) + 1]) {
      marked[static_cast<std::size_t>(node)] = 1;
      for (const NodeId source : graph.in_neighbors(node)) {
        marked[static_cast<std::size_t>(source)] = 1;
      }
    }
    std::vector<NodeId>& below = rows[static_cast<std::size_t>(layer)];
    for (NodeId node = 0; node < graph.num_nodes(); ++node) {
      if (marked[static_cast<std::size_t>(node)] != 0) below.push_back(node);
    }
  }
  return rows;
}

}  // namespace

RowMatrix<float> layerwise_logits(nn::Model& model, const Graph& graph, const FeatureMatrix& input,
                                  std::span<const NodeId> outputs, std::int64_t chunk_rows) {
  const NodeId nodes = graph.num_nodes();
  if (input.rows() != nodes) {
    throw InvalidArgument("layerwise_logits: input has " + std::to_string(input.rows()) +
                          " rows, the graph has " + std::to_string(nodes) + " nodes");
  }
  if (chunk_rows <= 0) {
    throw InvalidArgument("layerwise_logits: chunk_rows is " + std::to_string(chunk_rows) +
                          ", expected a positive count");
  }
  for (const NodeId node : outputs) {
    if (node < 0 || node >= nodes) {
      throw InvalidArgument("layerwise_logits: node " + std::to_string(node) + " is outside [0, " +
                            std::to_string(nodes) + ")");
    }
  }
  const std::int64_t layers = model.options().layers;
  if (nodes == 0) return RowMatrix<float>(0, model.options().classes);
  const bool every_node = outputs.empty();
  const std::vector<std::vector<NodeId>> rows =
      every_node ? std::vector<std::vector<NodeId>>() : needed_rows(graph, outputs, layers);
  // Layer l's row count, the node at each of its rows and the row of a node formed at it.
  const auto row_count = [&](std::int64_t layer) -> std::int64_t {
    return every_node ? nodes
                      : static_cast<std::int64_t>(rows[static_cast<std::size_t>(layer)].size());
  };
  const auto node_at = [&](std::int64_t layer, std::int64_t row) -> NodeId {
    return every_node ? static_cast<NodeId>(row)
                      : rows[static_cast<std::size_t>(layer)][static_cast<std::size_t>(row)];
  };
  const auto row_of = [&](std::int64_t layer, NodeId node) -> std::int64_t {
    if (every_node) return node;
    const std::vector<NodeId>& formed = rows[static_cast<std::size_t>(layer)];
    const auto at = std::lower_bound(formed.begin(), formed.end(), node);
    assert(at != formed.end() && *at == node);
    return at - formed.begin();
  };

  NeighborSampler blocks(graph, {-1}, 0);
  RowMatrix<float> previous;  // the layer below's output at its rows
  RowMatrix<float> current;
  RowMatrix<float> gathered;
  std::vector<NodeId> chunk;
  for (std::int64_t layer = 0; layer < layers; ++layer) {
    const std::int64_t count = row_count(layer);
    for (std::int64_t first = 0; first < count; first += chunk_rows) {
      const std::int64_t last = std::min(count, first + chunk_rows);
      chunk.clear();
      for (std::int64_t row = first; row < last; ++row) chunk.push_back(node_at(layer, row));
      const MiniBatch block = blocks.sample(chunk, 0);
      const auto block_nodes = static_cast<std::int64_t>(block.nodes.size());
      FeatureMatrix features;
      if (layer == 0) {
        features = input.select_rows(block.nodes);
      } else {
        gathered.resize(block_nodes, previous.cols());
        detail::for_each_block(
            block_nodes, kGatherBlock, [&](std::int64_t begin, std::int64_t end) {
              for (std::int64_t k = begin; k < end; ++k) {
                gathered.row(k) =
                    previous.row(row_of(layer - 1, block.nodes[static_cast<std::size_t>(k)]));
              }
            });
      }
      const RowMatrix<float>& formed = model.forward_layer(
          layer, block.masks.front(), layer == 0 ? features.view() : InputRef<float>(gathered));
      if (first == 0) current.resize(count, formed.cols());
      // The chunk's nodes are distinct, so they are the block's first rows, in order.
      current.middleRows(first, last - first) = formed.topRows(last - first);
    }
    previous.swap(current);
  }
  if (every_node) return previous;
  RowMatrix<float> logits(static_cast<Eigen::Index>(outputs.size()), previous.cols());
  for (std::size_t r = 0; r < outputs.size(); ++r) {
    logits.row(static_cast<Eigen::Index>(r)) = previous.row(row_of(layers - 1, outputs[r]));
  }
  return logits;
}

}  // namespace maskgat::train
