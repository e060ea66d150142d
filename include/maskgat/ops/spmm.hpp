#pragma once
/// @file
/// Aggregation of values weighted by attention over each mask row (the SpMM shape), with
/// attention dropout.

#include <cstdint>

#include "maskgat/core/random.hpp"
#include "maskgat/core/schedule.hpp"
#include "maskgat/core/tensor.hpp"
#include "maskgat/export.hpp"
#include "maskgat/graph/graph.hpp"

namespace maskgat::ops {

/// `out(i, h) = sum_{e = (j -> i)} d(e, h) * alpha(e, h) * values(j, h)` where `values(j, h)` is
/// the h-th block of C channels of row j and `d` the attention-dropout factor of element
/// `e * H + h` under `dropout` (1 without dropout).
/// A node with no in-edges gets a zero row. Parallel over destination rows (bitwise
/// deterministic).
/// @param mask     N nodes, E edges; row i is node i's in-edges
/// @param alpha    E x H, destination-major
/// @param values   N x (H * C)
/// @param dropout  the attention-dropout key (probability 0: no dropout)
/// @param out      resized to N x (H * C)
/// @param schedule task sizes; they change speed only, never the result
/// @throws InvalidArgument on mismatched shapes (H not dividing the width of `values`), a
///         dropout probability outside [0, 1) or a non-positive `schedule.grain`.
template <typename T>
MASKGAT_EXPORT void spmm(const Graph& mask, const RowMatrix<T>& alpha, const RowMatrix<T>& values,
                         const DropoutKey& dropout, RowMatrix<T>& out,
                         const Schedule& schedule = {});

/// Backward of `spmm`: `grad_alpha(e, h) = d(e, h) * <grad_out(i, h), values(j, h)>` over
/// destination rows and `grad_values(j, h) = sum_{e = (j -> i)} d(e, h) * alpha(e, h) *
/// grad_out(i, h)` over the transpose, with no atomics (bitwise deterministic). Rows of `grad_out`
/// that are zero are skipped (the same result for finite values and coefficients).
/// @param mask        the forward's mask (N nodes, E edges)
/// @param alpha       E x H, the forward's
/// @param values      N x (H * C), the forward's
/// @param dropout     the forward's attention-dropout key, so the same mask is recomputed
/// @param grad_out    N x (H * C)
/// @param grad_alpha  resized to E x H
/// @param grad_values resized to N x (H * C); not `values` or `grad_out`
/// @param schedule    task sizes; they change speed only, never the result
/// @throws InvalidArgument on mismatched shapes, `grad_values` that is `values` or `grad_out`, a
///         dropout probability outside [0, 1) or a non-positive `schedule.grain`.
template <typename T>
MASKGAT_EXPORT void spmm_backward(const Graph& mask, const RowMatrix<T>& alpha,
                                  const RowMatrix<T>& values, const DropoutKey& dropout,
                                  const RowMatrix<T>& grad_out, RowMatrix<T>& grad_alpha,
                                  RowMatrix<T>& grad_values, const Schedule& schedule = {});

}  // namespace maskgat::ops
