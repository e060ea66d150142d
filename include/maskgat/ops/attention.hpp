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

#include <cstdint>
#include <span>

#include "maskgat/export.hpp"
#include "maskgat/ops/edge_softmax.hpp"
#include "maskgat/ops/sddmm.hpp"
#include "maskgat/ops/spmm.hpp"

namespace maskgat::ops {

/// `alpha = edge_softmax(sddmm(score))` (resized to E x H, before dropout) and
/// `out = spmm(alpha, values, dropout)` (resized to N x (H * C)). Parallel over destination
/// rows, edge-balanced (bitwise deterministic).
/// @param mask     N nodes, E edges; row i is node i's in-edges
/// @param score    an `AdditiveScore`, `DotScore` or `GatV2Score` whose matrices have N rows
/// @param values   N x (H * C) with H the score's head count
/// @param dropout  the attention-dropout key (probability 0: no dropout)
/// @param alpha    resized to E x H: the softmax before dropout, which the backward needs
/// @param out      resized to N x (H * C)
/// @param schedule task sizes; they change speed only, never the result
/// @param rows     empty (every row), or a byte per node: only the destination rows whose byte is
///                 nonzero are formed, each bitwise as over every row; the others' rows of `out`
///                 are zero and their coefficients in `alpha` unspecified, so a backward must see
///                 zero rows of `grad_out` there
/// @throws InvalidArgument on mismatched shapes, a dropout probability outside [0, 1), a
///         non-positive `schedule.grain` or `rows` neither empty nor of N bytes.
template <typename Score>
MASKGAT_EXPORT void attention(const Graph& mask, const Score& score,
                              const RowMatrix<typename Score::Scalar>& values,
                              const DropoutKey& dropout, RowMatrix<typename Score::Scalar>& alpha,
                              RowMatrix<typename Score::Scalar>& out, const Schedule& schedule = {},
                              std::span<const std::uint8_t> rows = {});

/// Backward of `attention`, from `grad_out` (N x (H * C)): writes the score inputs' gradients
/// into `grad_score` and `grad_values` (resized to N x (H * C)). A pass over destination rows
/// (softmax and destination-side gradients), then one over source rows of the transpose (values
/// and source-side gradients): no atomics, bitwise deterministic. Rows of `grad_out` that are
/// zero are skipped (the same result for finite values and coefficients).
/// @param mask        the forward's mask (N nodes, E edges)
/// @param score       the forward's score
/// @param values      N x (H * C), the forward's
/// @param alpha       the forward's alpha, E x H
/// @param dropout     the forward's attention-dropout key, so the same mask is recomputed
/// @param grad_out    N x (H * C)
/// @param grad_score  the score's gradient type (`AdditiveScoreGrad` for `AdditiveScore`, ...),
///                    resized and overwritten
/// @param grad_values resized to N x (H * C) and overwritten (scratch for the values laid out
///                    channel-major before that); not `values` or `grad_out`
/// @param workspace   scratch for the per-edge gradients (E x H), the attention-dropout mask (a
///                    byte per coefficient) and the rows of `grad_out` that are not zero (a byte
///                    per node); resized, contents unspecified on return. Pass the same matrix
///                    every step so no memory is allocated
/// @param schedule    task sizes; they change speed only, never the result
/// @throws InvalidArgument on mismatched shapes, `grad_values` that is `values` or `grad_out`, a
///         dropout probability outside [0, 1) or a non-positive `schedule.grain`.
template <typename Score, typename Grad>
MASKGAT_EXPORT void attention_backward(
    const Graph& mask, const Score& score, const RowMatrix<typename Score::Scalar>& values,
    const RowMatrix<typename Score::Scalar>& alpha, const DropoutKey& dropout,
    const RowMatrix<typename Score::Scalar>& grad_out, Grad& grad_score,
    RowMatrix<typename Score::Scalar>& grad_values, RowMatrix<typename Score::Scalar>& workspace,
    const Schedule& schedule = {});

}  // namespace maskgat::ops
