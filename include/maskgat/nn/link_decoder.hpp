#pragma once
/// @file
/// Scoring node pairs from node states for link prediction: the dot-product decoder (GAE) and the
/// binary cross-entropy on its logits, with exact gradients.

#include <cstdint>
#include <span>
#include <vector>

#include "maskgat/core/tensor.hpp"
#include "maskgat/core/types.hpp"
#include "maskgat/export.hpp"

namespace maskgat::nn {

/// The dot-product decoder: the logit of pair k is `z[sources[k]] . z[targets[k]]`, as PyG's
/// `InnerProductDecoder` (before its sigmoid). Serial, O(P D).
/// @param z       N x D node states
/// @param sources the pairs' first nodes, each in [0, N)
/// @param targets the pairs' second nodes, as many, each in [0, N)
/// @return P logits
/// @throws InvalidArgument when the sizes differ; IndexError for a node outside [0, N).
template <typename T>
[[nodiscard]] MASKGAT_EXPORT std::vector<T> dot_scores(const RowMatrix<T>& z,
                                                       std::span<const NodeId> sources,
                                                       std::span<const NodeId> targets);

/// Adds the gradient of the dot-product decoder into `grad_z`: for pair k with dL/dlogit g_k,
/// `grad_z[s] += g_k z[t]` and `grad_z[t] += g_k z[s]`. Serial in pair order, so the sums are the
/// same on any thread count.
/// @param z           the forward's node states, N x D
/// @param sources     the forward's pairs' first nodes
/// @param targets     their second nodes
/// @param grad_logits dL/dlogit per pair
/// @param grad_z      N x D, accumulated into
/// @throws InvalidArgument when the sizes differ.
template <typename T>
MASKGAT_EXPORT void dot_scores_backward(const RowMatrix<T>& z, std::span<const NodeId> sources,
                                        std::span<const NodeId> targets,
                                        std::span<const T> grad_logits, RowMatrix<T>& grad_z);

/// The mean binary cross-entropy of logits against 0/1 labels, computed stably as PyTorch's
/// `binary_cross_entropy_with_logits`: `max(x, 0) - x y + log(1 + exp(-|x|))`, and its gradient
/// `(sigmoid(x) - y) / P`.
/// @param logits P logits
/// @param labels P labels, 0 or 1
/// @param grad   when not empty, P entries overwritten with dL/dlogit
/// @return the mean loss
/// @throws InvalidArgument when the sizes differ, P is 0, or a label is not 0 or 1.
template <typename T>
[[nodiscard]] MASKGAT_EXPORT double binary_cross_entropy(std::span<const T> logits,
                                                         std::span<const std::int32_t> labels,
                                                         std::span<T> grad);

}  // namespace maskgat::nn
