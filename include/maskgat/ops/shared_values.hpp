#pragma once
/// @file
/// Masked additive attention over unprojected rows: every head aggregates the same input rows with
/// its own coefficients, and the layer projects the sums afterwards.
///
/// A GAT layer needs its projection `W x_j` only through two linear uses: the source score
/// `<a_src, W_h x_j> = <W_h a_src, x_j>` and the sum `sum_j alpha_ij W_h x_j = W_h sum_j alpha_ij
/// x_j` per head h. Where a layer reads many more rows than it forms (a sampled mini-batch's input
/// layer reads about seven rows per destination), aggregating first and projecting only the
/// formed rows does less work than projecting every row; `nn::GatConv` chooses the order by its
/// cost (`nn::ProjectionOrder`).

#include <cstdint>
#include <span>

#include "maskgat/core/random.hpp"
#include "maskgat/core/schedule.hpp"
#include "maskgat/core/tensor.hpp"
#include "maskgat/export.hpp"
#include "maskgat/graph/graph.hpp"
#include "maskgat/ops/sddmm.hpp"

namespace maskgat::ops {

/// `alpha = edge_softmax(sddmm(score))` (resized to E x H, before dropout) as `attention` forms
/// it, and per head h and formed row i, `sums(h * R + r, :) = sum_j d_ijh alpha_ijh x_j`, where
/// r is i's place among the R formed rows and d the attention-dropout factor. `sums` is resized to
/// (H * R) x F: head-major, so each head's sums are one contiguous R x F block. Parallel over
/// destination rows, edge-balanced (bitwise deterministic).
/// @param mask     N nodes, E edges; row i is node i's in-edges
/// @param score    additive scores of N rows and H heads
/// @param x        N x F, the rows every head aggregates
/// @param dropout  the attention-dropout key (probability 0: no dropout)
/// @param alpha    resized to E x H; the coefficients of rows not formed are unspecified
/// @param sums     resized to (H * R) x F
/// @param schedule task sizes; they change speed only, never the result
/// @param rows     empty (every row is formed), or a byte per node: the rows with a nonzero byte
/// @throws InvalidArgument on mismatched shapes, a dropout probability outside [0, 1), a
///         non-positive `schedule.grain` or `rows` neither empty nor of N bytes.
template <typename T>
MASKGAT_EXPORT void attention_shared_values(const Graph& mask, const AdditiveScore<T>& score,
                                            const Eigen::Ref<const RowMatrix<T>>& x,
                                            const DropoutKey& dropout, RowMatrix<T>& alpha,
                                            RowMatrix<T>& sums, const Schedule& schedule = {},
                                            std::span<const std::uint8_t> rows = {});

/// Backward of `attention_shared_values`, from `grad_sums` ((H * R) x F): writes the score's
/// gradients into `grad_score` and, when `grad_x` is not null, adds dL/dx into it (N x F). A pass
/// over the formed destination rows (dL/dalpha, the softmax and the destination-side gradients),
/// then one over source rows of the transpose: no atomics, bitwise deterministic.
/// @param mask       the forward's mask
/// @param score      the forward's score
/// @param x          the forward's rows, N x F
/// @param alpha      the forward's alpha, E x H
/// @param dropout    the forward's attention-dropout key
/// @param rows       the forward's rows
/// @param grad_sums  (H * R) x F
/// @param grad_score resized and overwritten
/// @param grad_x     null, or N x F, accumulated into
/// @param workspace  scratch, resized; contents unspecified on return. Pass the same matrix every
///                   step so no memory is allocated
/// @param schedule   task sizes; they change speed only, never the result
/// @throws InvalidArgument on mismatched shapes, a dropout probability outside [0, 1) or a
///         non-positive `schedule.grain`.
template <typename T>
MASKGAT_EXPORT void attention_shared_values_backward(
    const Graph& mask, const AdditiveScore<T>& score, const Eigen::Ref<const RowMatrix<T>>& x,
    const RowMatrix<T>& alpha, const DropoutKey& dropout, std::span<const std::uint8_t> rows,
    const RowMatrix<T>& grad_sums, AdditiveScoreGrad<T>& grad_score, RowMatrix<T>* grad_x,
    RowMatrix<T>& workspace, const Schedule& schedule = {});

}  // namespace maskgat::ops
