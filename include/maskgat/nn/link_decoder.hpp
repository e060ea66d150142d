#pragma once
/// @file
/// Scoring node pairs from node states for link prediction: the dot-product decoder (GAE), an MLP
/// on the elementwise product of the two states, and the binary cross-entropy on their logits,
/// with exact gradients.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "maskgat/core/random.hpp"
#include "maskgat/core/tensor.hpp"
#include "maskgat/core/types.hpp"
#include "maskgat/export.hpp"
#include "maskgat/nn/parameters.hpp"

namespace maskgat::nn {

/// The dot-product decoder: the logit of pair k is the dot product of rows `sources[k]` and
/// `targets[k]` of `z`, as the `InnerProductDecoder` of PyG before its sigmoid. Serial, O(P D).
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

/// The parameters of the MLP decoder in a store: for pair (s, t), with h the elementwise product
/// of rows s and t of the states, the logit is `relu(h W1 + b1) w2 + b2`, as the link predictors
/// of the PyG and OGB examples with one hidden layer (`decoder.lin1` D x H and `decoder.lin2`
/// H x 1, the layout of the other linear layers here: the transpose of the `Linear` of PyG).
struct MlpDecoder {
  Parameter hidden_weight;  ///< `decoder.lin1.weight`, D x H
  Parameter hidden_bias;    ///< `decoder.lin1.bias`, 1 x H
  Parameter out_weight;     ///< `decoder.lin2.weight`, H x 1
  Parameter out_bias;       ///< `decoder.lin2.bias`, 1 x 1
};

/// Registers the MLP decoder's parameters in `store` (after a model's), Glorot-uniform weights
/// and zero biases drawn from `rng`.
/// @param store  receives `decoder.lin1.weight`, `decoder.lin1.bias`, `decoder.lin2.weight`,
///               `decoder.lin2.bias`
/// @param width  D, the width of the node states (> 0)
/// @param hidden H, the hidden units (> 0)
/// @param rng    draws the weights
/// @return the handles
/// @throws InvalidArgument for a size below 1 or names in use.
template <typename T>
[[nodiscard]] MASKGAT_EXPORT MlpDecoder add_mlp_decoder(ParameterStore<T>& store,
                                                        std::int64_t width, std::int64_t hidden,
                                                        Rng& rng);

/// The MLP decoder a store holds, if it holds one (a loaded link model's).
/// @param store any store
/// @return its handles when `decoder.lin1.weight` is there (with the other three checked), else
///         none
/// @throws InvalidArgument when the four do not fit together (naming the shapes).
template <typename T>
[[nodiscard]] MASKGAT_EXPORT std::optional<MlpDecoder> find_mlp_decoder(
    const ParameterStore<T>& store);

/// The logits of node pairs from their states: `dot_scores` without `mlp`, else the MLP decoder.
/// Serial in pair order for the MLP's sums, so the same on any thread count. O(P D H).
/// @param z       N x D node states
/// @param store   the store holding `mlp`'s parameters (unused without it)
/// @param mlp     null: the dot product
/// @param sources the pairs' first nodes, in [0, N)
/// @param targets the pairs' second nodes
/// @return P logits
/// @throws InvalidArgument when the sizes differ or D is not the MLP's width; IndexError for a
///         node outside [0, N).
template <typename T>
[[nodiscard]] MASKGAT_EXPORT std::vector<T> pair_logits(const RowMatrix<T>& z,
                                                        const ParameterStore<T>& store,
                                                        const MlpDecoder* mlp,
                                                        std::span<const NodeId> sources,
                                                        std::span<const NodeId> targets);

/// The gradients of `pair_logits`: dL/dz added into `grad_z`, and with `mlp` the decoder's
/// parameter gradients added into `store`'s.
/// @param z           the forward's node states
/// @param store       the decoder's store, gradients accumulated
/// @param mlp         as in the forward
/// @param sources     the forward's pairs
/// @param targets     the forward's pairs
/// @param grad_logits dL/dlogit per pair
/// @param grad_z      N x D, accumulated into
/// @throws InvalidArgument when the sizes differ.
template <typename T>
MASKGAT_EXPORT void pair_logits_backward(const RowMatrix<T>& z, ParameterStore<T>& store,
                                         const MlpDecoder* mlp, std::span<const NodeId> sources,
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
