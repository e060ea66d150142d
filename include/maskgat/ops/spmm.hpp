#pragma once
/// @file
/// Aggregation of values weighted by attention over each mask row (the SpMM shape), with
/// attention dropout.

#include <cstdint>

#include "maskgat/core/random.hpp"
#include "maskgat/core/schedule.hpp"
#include "maskgat/core/tensor.hpp"
#include "maskgat/graph/graph.hpp"

namespace maskgat::ops {

/// `out(i, h) = sum_{e = (j -> i)} d(e, h) * alpha(e, h) * values(j, h)` where `values(j, h)` is
/// the h-th block of C channels of row j and `d` the attention-dropout factor of element
/// `e * H + h` under `dropout` (1 without dropout).
/// A node with no in-edges gets a zero row.
/// @param alpha  E x H, destination-major
/// @param values N x (H * C)
/// @param out    resized to N x (H * C)
/// @throws InvalidArgument on mismatched shapes or a dropout probability outside [0, 1).
/// Parallel over destination rows (bitwise deterministic).
template <typename T>
void spmm(const Graph& mask, const RowMatrix<T>& alpha, const RowMatrix<T>& values,
          const DropoutKey& dropout, RowMatrix<T>& out, const Schedule& schedule = {});

/// Backward of `spmm`: `grad_alpha(e, h) = d(e, h) * <grad_out(i, h), values(j, h)>` over
/// destination rows and `grad_values(j, h) = sum_{e = (j -> i)} d(e, h) * alpha(e, h) *
/// grad_out(i, h)` over the transpose, with no atomics.
/// @param grad_alpha  resized to E x H
/// @param grad_values resized to N x (H * C)
/// @throws InvalidArgument on mismatched shapes.
template <typename T>
void spmm_backward(const Graph& mask, const RowMatrix<T>& alpha, const RowMatrix<T>& values,
                   const DropoutKey& dropout, const RowMatrix<T>& grad_out,
                   RowMatrix<T>& grad_alpha, RowMatrix<T>& grad_values,
                   const Schedule& schedule = {});

}  // namespace maskgat::ops
