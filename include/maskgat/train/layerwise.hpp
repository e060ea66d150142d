#pragma once
/// @file
/// Layer-wise inference: a model's outputs over a graph one layer and one chunk of rows at a
/// time, as PyG's `inference()` over a `NeighborLoader` computes them, for graphs whose
/// whole-graph activations do not fit in memory.

#include <cstdint>
#include <span>

#include "maskgat/core/tensor.hpp"
#include "maskgat/export.hpp"
#include "maskgat/graph/graph.hpp"
#include "maskgat/io/features.hpp"
#include "maskgat/nn/model.hpp"

namespace maskgat::train {

/// The rows of destinations a layer-wise pass forms per chunk when not told otherwise.
inline constexpr std::int64_t kDefaultChunkRows = 16384;

/// Evaluation-mode logits of `model` at `outputs` (every node when `outputs` is empty), with full
/// neighbourhoods, computed one layer at a time. Layer l is formed only at the nodes the layers
/// above read (the outputs for the last layer, those and their in-neighbours for the one below,
/// and so on; every node in a whole pass), `chunk_rows` destinations at a time: each chunk runs
/// the layer (`BasicModel::forward_layer`) on its block of `graph`, the chunk's in-edges and
/// every self-loop (`NeighborSampler` with fanout -1), with the rows of the layer's input at the
/// block's nodes. Memory: two buffers of (rows formed) x (layer width) and one chunk's block,
/// never the whole graph's activations, attention or self-looped copy.
///
/// The logits are those of `model.forward(masks::from_graph(graph), input, kEval)` at the same
/// rows up to the order of floating-point sums (a row's in-edges are summed in its block's
/// order). Parallel inside each chunk (oneTBB); the same bits on any number of threads.
/// @param model      a model whose input width is `input.cols()`; its buffers are reused
/// @param graph      N nodes, the graph the model attends over (self-loops are added)
/// @param input      N rows, e.g. from `model_input`
/// @param outputs    the nodes to score, each in [0, N), any order (repeats allowed); empty: all
/// @param chunk_rows destinations per chunk (> 0)
/// @return `outputs.size()` x K (row r belongs to `outputs[r]`), or N x K for every node
/// @throws InvalidArgument when `input` does not have N rows, a node is outside [0, N) or
///         `chunk_rows` is not positive; what `forward_layer` throws.
[[nodiscard]] MASKGAT_EXPORT RowMatrix<float> layerwise_logits(
    nn::Model& model, const Graph& graph, const FeatureMatrix& input,
    std::span<const NodeId> outputs = {}, std::int64_t chunk_rows = kDefaultChunkRows);

}  // namespace maskgat::train
