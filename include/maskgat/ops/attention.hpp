#pragma once
/// @file
/// Fused masked attention: scores, edge softmax and aggregation in one pass over each
/// destination row, and its backward in one pass over destinations and one over sources.
///
/// Equal to `sddmm` -> `edge_softmax` -> `spmm` (and their backwards in reverse), but a row's
/// scores are normalised and consumed while they are in cache, and the only per-edge tensor is
/// alpha (E x H); no E x H x C tensor is ever formed. The backward keeps alpha from the forward
/// rather than recomputing it from per-row maxima and sums: recomputing costs a second scoring
/// pass over every edge and head (measured with `maskgat-microbench`, README "Performance"),
/// storing costs E x H scalars.

#include "maskgat/ops/edge_softmax.hpp"
#include "maskgat/ops/sddmm.hpp"
#include "maskgat/ops/spmm.hpp"

namespace maskgat::ops {

/// `alpha = edge_softmax(sddmm(score))` (resized to E x H, before dropout) and
/// `out = spmm(alpha, values, dropout)` (resized to N x (H * C)).
/// @param values N x (H * C) with H the score's head count
/// @throws InvalidArgument on mismatched shapes or a dropout probability outside [0, 1).
/// Parallel over destination rows, edge-balanced (bitwise deterministic).
template <typename Score>
void attention(const Graph& mask, const Score& score,
               const RowMatrix<typename Score::Scalar>& values, const DropoutKey& dropout,
               RowMatrix<typename Score::Scalar>& alpha, RowMatrix<typename Score::Scalar>& out,
               const Schedule& schedule = {});

/// Backward of `attention`, from `grad_out` (N x (H * C)): writes the score inputs' gradients
/// into `grad_score` and `grad_values` (resized to N x (H * C)).
/// @param alpha     the forward's alpha
/// @param workspace scratch for the per-edge gradients (E x H) and the attention-dropout mask (a
///                  byte per coefficient); resized, contents unspecified on return. Pass the same
///                  matrix every step so no memory is allocated
/// @throws InvalidArgument on mismatched shapes.
/// A pass over destination rows (softmax and destination-side gradients), then one over source
/// rows of the transpose (values and source-side gradients): no atomics, bitwise deterministic.
template <typename Score, typename Grad>
void attention_backward(const Graph& mask, const Score& score,
                        const RowMatrix<typename Score::Scalar>& values,
                        const RowMatrix<typename Score::Scalar>& alpha, const DropoutKey& dropout,
                        const RowMatrix<typename Score::Scalar>& grad_out, Grad& grad_score,
                        RowMatrix<typename Score::Scalar>& grad_values,
                        RowMatrix<typename Score::Scalar>& workspace,
                        const Schedule& schedule = {});

}  // namespace maskgat::ops
