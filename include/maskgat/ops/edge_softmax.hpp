#pragma once
/// @file
/// Softmax of attention scores over each destination's mask row, per head.

#include "maskgat/core/schedule.hpp"
#include "maskgat/core/tensor.hpp"
#include "maskgat/export.hpp"
#include "maskgat/graph/graph.hpp"

namespace maskgat::ops {

/// ``alpha(e, h) = exp(scores(e, h) - m_ih) / sum_{e' in row i} exp(scores(e', h) - m_ih)`` for
/// every edge e of row i, with `m_ih` the row maximum, so scores of any magnitude neither overflow
/// nor underflow to NaN. Every non-empty row of `alpha` sums to 1 per head; an empty row (a node
/// with no in-edges) has no entries. Parallel over destination rows (bitwise deterministic).
/// @param mask     N nodes, E edges; row i is node i's in-edges
/// @param scores   E x H, destination-major
/// @param alpha    resized to E x H; may not alias `scores`
/// @param schedule task sizes; they change speed only, never the result
/// @throws InvalidArgument when `scores` does not have `mask.num_edges()` rows or
///         `schedule.grain` is not positive.
template <typename T>
MASKGAT_EXPORT void edge_softmax(const Graph& mask, const RowMatrix<T>& scores, RowMatrix<T>& alpha,
                                 const Schedule& schedule = {});

/// Backward of `edge_softmax`:
/// ``grad_scores(e, h) = alpha(e, h) * (grad_alpha(e, h) - sum_{e' in row i} alpha(e', h) *
/// grad_alpha(e', h))``. Parallel over destination rows (bitwise deterministic).
/// @param mask        the forward's mask (N nodes, E edges)
/// @param alpha       E x H, the forward result
/// @param grad_alpha  E x H
/// @param grad_scores resized to E x H
/// @param schedule    task sizes; they change speed only, never the result
/// @throws InvalidArgument when `alpha` or `grad_alpha` is not E x H or `schedule.grain` is not
///         positive.
template <typename T>
MASKGAT_EXPORT void edge_softmax_backward(const Graph& mask, const RowMatrix<T>& alpha,
                                          const RowMatrix<T>& grad_alpha, RowMatrix<T>& grad_scores,
                                          const Schedule& schedule = {});

}  // namespace maskgat::ops
