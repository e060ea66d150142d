#pragma once
/// @file
/// The projections of attention layers, `x W`, with their gradients, for dense or sparse `x`.
///
/// Split over oneTBB in fixed blocks (of output rows, or of rows of `W` for its gradient) whose
/// size is a constant, so every element is computed by the same serial loop on any number of
/// threads: results are bitwise reproducible. Sparse `x` is never densified: a sparse product
/// costs one multiply-add per stored entry and output column, and so does the weight gradient,
/// which adds each row's `grad_out` into the rows of `W` named by the row's entries. Sparse `x`
/// may be compressed or not (rows with unused slots, as Eigen leaves them after `insert`).

#include "maskgat/core/tensor.hpp"
#include "maskgat/export.hpp"

namespace maskgat::ops {

/// `out = x * weight` (`out` resized to N x K). Fixed blocks of output rows.
/// @param x      N x F, dense or sparse
/// @param weight F x K
/// @param out    resized to N x K and overwritten; must not alias `x` or `weight`
/// @throws InvalidArgument when `x` has not F columns.
template <typename T>
MASKGAT_EXPORT void matmul(InputRef<T> x, const Eigen::Ref<const RowMatrix<T>>& weight,
                           RowMatrix<T>& out);

/// `grad_weight += x^T * grad_out`; for sparse `x`, each row f of `grad_weight` adds the entries
/// (i, f) of `x` in row order, one task per fixed block of rows of `grad_weight`, and rows of
/// `grad_out` that are zero are skipped (the same result for finite `x`); for dense `x`, fixed
/// blocks of rows of `grad_weight`.
/// @param x           N x F, dense or sparse: the forward's input
/// @param grad_out    N x K
/// @param grad_weight F x K, accumulated into
/// @throws InvalidArgument on mismatched shapes, or for sparse `x` whose rows' column indices are
/// not ascending (Eigen's compressed format keeps them so) where a row's entries are split
/// between tasks; `grad_weight` is then partly updated.
template <typename T>
MASKGAT_EXPORT void matmul_backward_weight(InputRef<T> x, const RowMatrix<T>& grad_out,
                                           Eigen::Ref<RowMatrix<T>> grad_weight);

/// `grad_x += grad_out * weight^T` (`grad_x` must already be N x F). Fixed blocks of rows.
/// @param grad_out N x K
/// @param weight   F x K
/// @param grad_x   N x F, accumulated into
/// @throws InvalidArgument on mismatched shapes.
template <typename T>
MASKGAT_EXPORT void matmul_backward_input(const RowMatrix<T>& grad_out,
                                          const Eigen::Ref<const RowMatrix<T>>& weight,
                                          RowMatrix<T>& grad_x);

}  // namespace maskgat::ops
