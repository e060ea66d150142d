#pragma once
/// @file
/// Attention masks: which pairs (destination i, source j) may score each other.
///
/// Every mask is a `Graph`: the in-edges of node i are the positions i attends to, and every pair
/// that is not an edge gets attention exactly zero (it is never computed nor stored). The same
/// kernels run all of them, so a graph attention network, truncated self-attention over a
/// sequence, attention over an image and ordinary self-attention differ only in the mask.

#include <cstdint>
#include <span>
#include <vector>

#include "maskgat/core/tensor.hpp"
#include "maskgat/export.hpp"
#include "maskgat/graph/graph.hpp"

namespace maskgat::masks {

/// The GAT mask: node i attends to its in-neighbours in `graph`, and to itself when
/// `self_loops` is true (loops already present are kept, missing ones added, as PyG's
/// `add_remaining_self_loops`). Edge weights are not part of a mask and are dropped.
/// Cost O(N + E), serial.
/// @param graph      the graph whose in-edges are the attention pattern
/// @param self_loops add the loop `i -> i` of every node that lacks one
/// @return an unweighted mask on the same N nodes
[[nodiscard]] MASKGAT_EXPORT Graph from_graph(const Graph& graph, bool self_loops = true);

/// Edge features on the entries of a mask made from `graph` (`from_graph`), from one row per edge
/// of `graph`: entry j -> i takes the row of the graph's edge j -> i, and a self-loop the graph
/// lacks takes the mean of the rows of node i's in-edges (zero for a node without any), as PyG's
/// `add_self_loops(..., fill_value="mean")`. A loop the graph has keeps its own row. Cost
/// O((N + E) x D), serial.
/// @param graph    N nodes, E edges, each row's sources ascending (as every built graph)
/// @param features E x D, row e for the graph's edge e (destination-major, `Graph::in_sources`)
/// @param mask     N nodes whose entries are edges of `graph` or self-loops, sources ascending
/// @return one row per entry of `mask`, in its order
/// @throws InvalidArgument when `features` has not E rows, the node counts differ, or an entry of
///         `mask` is neither an edge of `graph` nor a self-loop (named by its nodes).
template <typename T>
[[nodiscard]] MASKGAT_EXPORT RowMatrix<T> edge_features(const Graph& graph,
                                                        const RowMatrix<T>& features,
                                                        const Graph& mask);

/// Truncated self-attention over a sequence of `length` positions: position i attends to
/// positions `[i - half_width, i + half_width]` clipped to the sequence, itself included, so
/// a row has at most `2 * half_width + 1` entries. Cost O(N + entries), serial.
/// @param length     the number of positions N, in [0, 2^31 - 1]
/// @param half_width how far each side a position sees (>= 0; 0 attends only to itself)
/// @return the mask on `length` nodes
/// @throws InvalidArgument if `length` is outside [0, 2^31 - 1], `half_width` is negative, or
///         the mask would have more than 2^62 entries.
[[nodiscard]] MASKGAT_EXPORT Graph window(std::int64_t length, std::int64_t half_width);

/// Attention over the pixels of a `height` x `width` image, pixel (r, c) having id `r * width + c`
/// (row-major): a pixel attends to every pixel within Chebyshev distance `radius`, itself
/// included: the receptive field of a `(2 radius + 1)` x `(2 radius + 1)` convolution, clipped
/// at the border. Cost O(N + entries), serial.
/// @param height rows of pixels (>= 0)
/// @param width  columns of pixels (>= 0)
/// @param radius Chebyshev radius (>= 0; 0 attends only to itself)
/// @return the mask on `height * width` nodes
/// @throws InvalidArgument if a size is negative, `height * width` exceeds 2^31 - 1, or the
///         mask would have more than 2^62 entries.
[[nodiscard]] MASKGAT_EXPORT Graph grid(std::int64_t height, std::int64_t width,
                                        std::int64_t radius);

/// Ordinary self-attention: every one of `length` positions attends to all of them, itself
/// included (`length`^2 entries; 16 bytes each across the two CSR views). Cost O(N + entries),
/// serial.
/// @param length the number of positions N
/// @return the dense mask on `length` nodes
/// @throws InvalidArgument if `length` is outside [0, 2^31 - 1] (so `length`^2 stays below 2^62).
[[nodiscard]] MASKGAT_EXPORT Graph full(std::int64_t length);

/// The nodes whose inputs can reach `node`'s output through `layers` attention layers over
/// `mask`, each of which adds self-loops (as GAT layers do by default): `node` itself and every
/// node with a path of at most `layers` edges into it, found by a breadth-first search over
/// in-edges. For `grid(H, W, r)` it is the (2 L r + 1) x (2 L r + 1) window around the pixel,
/// clipped at the border. Cost O(nodes and edges reached), serial.
/// @param mask   the attention mask of every layer
/// @param node   the output node, in [0, N)
/// @param layers the number of stacked layers L (>= 0; 0 gives `node` alone)
/// @return the nodes, in increasing id order
/// @throws InvalidArgument if `node` is outside [0, N) or `layers` is negative.
[[nodiscard]] MASKGAT_EXPORT std::vector<NodeId> receptive_field(const Graph& mask, NodeId node,
                                                                 std::int64_t layers);

/// The part of a graph that the outputs of a stack of attention layers at some nodes depend on.
struct Subgraph {
  std::vector<NodeId> nodes;  ///< the original id of every node, ascending
  /// One mask per layer, the input layer's first, each on `nodes.size()` nodes (node k standing
  /// for `nodes[k]`).
  std::vector<Graph> masks;
};

/// What a stack of `layers` attention layers over `mask` needs to compute its output at
/// `outputs`: the nodes within `layers` in-edges of an output (their receptive fields, as
/// `receptive_field`), renumbered in increasing id order, and a mask per layer. Layer l (0 the
/// input layer) is needed at the nodes within `layers - 1 - l` in-edges of an output: in its mask
/// they keep every in-edge and every other node only its self-loop (if `mask` has it). Run on the
/// rows of the input at `nodes` (`BasicModel::forward` with the masks), such a stack gives the
/// outputs' rows exactly as over the whole of `mask` (up to the order of floating-point sums):
/// it is how a trainer confines a step to what its loss reads. Weights are kept. Cost
/// O(N + layers x (nodes and edges reached)), serial.
/// @param mask    the attention mask of every layer
/// @param outputs the nodes whose outputs are wanted, each in [0, N); duplicates are ignored
/// @param layers  the number of stacked layers L (>= 0)
/// @return the nodes and their L masks
/// @throws InvalidArgument if an output is outside [0, N) or `layers` is negative.
[[nodiscard]] MASKGAT_EXPORT Subgraph receptive_subgraph(const Graph& mask,
                                                         std::span<const NodeId> outputs,
                                                         std::int64_t layers);

/// The subgraph a stack of attention layers over `mask` needs to form each layer l at the nodes
/// `rows[l]` marks (`receptive_rows`, or any rows whose sources the layer below forms): every
/// marked node and the sources of its in-edges, in increasing id order, and a mask per layer in
/// which the nodes marked for that layer keep every in-edge and every other node only its
/// self-loop (if `mask` has it). For L >= 1, `receptive_subgraph(mask, outputs, L)` is this
/// subgraph of `receptive_rows(mask, outputs, L)`. Weights are kept. Cost O(N x layers + the marked
/// rows' edges), serial.
/// @param mask the attention mask of every layer
/// @param rows one vector per layer, the input layer's first, of a byte per node (1: formed)
/// @return the nodes and one mask per layer
/// @throws InvalidArgument if a layer has not one byte per node.
[[nodiscard]] MASKGAT_EXPORT Subgraph
rows_subgraph(const Graph& mask, std::span<const std::vector<std::uint8_t>> rows);

/// Where each layer of a stack of `layers` attention layers over `mask` must be formed for its
/// output at `outputs`, on the whole graph's numbering: layer l (0 the input layer) at the nodes
/// within `layers - 1 - l` in-edges of an output, the rows `receptive_subgraph` keeps whole. A
/// byte per node and layer, 1 where the row is needed. `BasicModel::forward` with these rows forms
/// the outputs' rows bitwise as it does over all rows, with the same dropout draws, at the cost
/// of the rows needed. Cost O(N x layers + nodes and edges reached), serial.
/// @param mask    the attention mask of every layer
/// @param outputs the nodes whose outputs are wanted, each in [0, N); duplicates are ignored
/// @param layers  the number of stacked layers L (>= 0)
/// @return L vectors of N bytes, the input layer's first
/// @throws InvalidArgument if an output is outside [0, N) or `layers` is negative.
[[nodiscard]] MASKGAT_EXPORT std::vector<std::vector<std::uint8_t>> receptive_rows(
    const Graph& mask, std::span<const NodeId> outputs, std::int64_t layers);

}  // namespace maskgat::masks
