#pragma once
/// @file
/// Softmax and the negative log-likelihood loss of node classification.

#include <cstdint>
#include <span>

#include "maskgat/core/tensor.hpp"
#include "maskgat/core/types.hpp"
#include "maskgat/export.hpp"

namespace maskgat::nn {

/// Row-wise class probabilities ``out(i, k) = exp(z(i, k) - m_i) / sum_k' exp(z(i, k') - m_i)``,
/// with `m_i` the row maximum (no overflow for any finite logits). Parallel over fixed row blocks
/// (the same result for every thread count).
/// @param logits N x K
/// @param out    resized to N x K
template <typename T>
MASKGAT_EXPORT void softmax(const RowMatrix<T>& logits, RowMatrix<T>& out);

/// Mean negative log-likelihood of the classes `labels[i]` of the nodes `nodes` under
/// the log of `softmax(logits)`: `L = -1/|nodes| sum_{i in nodes} log p(i, labels[i])`.
/// With `grad`, also writes dL/dlogits (resized to N x K): `(p(i, .) - onehot(labels[i])) /
/// |nodes|` on the rows of `nodes`, zero elsewhere. Serial, in the order of `nodes`.
/// @param logits N x K
/// @param labels N class ids
/// @param nodes  the nodes to average over, each in [0, N) (a node listed twice counts twice)
/// @param grad   null, or resized to N x K and overwritten with dL/dlogits
/// @param mean_over the count the sum is divided by in place of |nodes| (0: |nodes|): a part of
///                  a distributed run divides by every part's nodes, so the parts' losses and
///                  gradients add up to the whole graph's
/// @return L, accumulated in double precision
/// @throws InvalidArgument when `nodes` is empty, a node is outside [0, N) or beyond `labels`,
///         or its label is outside [0, K) (-1, unlabelled, included), or `mean_over` is
///         negative.
template <typename T>
MASKGAT_EXPORT double nll_loss(const RowMatrix<T>& logits, std::span<const std::int32_t> labels,
                               std::span<const NodeId> nodes, RowMatrix<T>* grad = nullptr,
                               std::int64_t mean_over = 0);

}  // namespace maskgat::nn
