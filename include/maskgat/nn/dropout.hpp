#pragma once
/// @file
/// Inverted dropout on layer inputs, dense or sparse, with masks recomputed from a `DropoutKey`.

#include <type_traits>

#include "maskgat/core/random.hpp"
#include "maskgat/core/tensor.hpp"
#include "maskgat/export.hpp"

namespace maskgat::nn {

/// `out(i, c) = x(i, c) * d(i * F + c)`, with `d` the key's factor (0 or 1 / (1 - p)).
/// `out` may be `x`. Parallel over fixed row blocks; the mask does not depend on scheduling.
/// @param x   N x F (a matrix or a map of one)
/// @param key the mask (probability 0: a plain copy)
/// @param out resized to N x F
/// @throws InvalidArgument when the probability is outside [0, 1).
template <typename T>
MASKGAT_EXPORT void dropout(const Eigen::Ref<const RowMatrix<std::type_identity_t<T>>>& x,
                            const DropoutKey& key, RowMatrix<T>& out);

/// Dropout of a sparse matrix's stored entries only: the k-th stored entry of `x` is scaled by
/// `d(k)`, and the entries it drops are left out of `out`, so products with `out` cost only the
/// kept entries (1 - p of them). `x` must be compressed (the loaders' output is) and must not be
/// `out`; `out`'s storage is reused from call to call. Parallel over fixed row blocks (a
/// counting pass, then a writing pass); the mask does not depend on scheduling.
/// @param x   N x F, compressed (a matrix or a map of CSR arrays)
/// @param key the mask, over the stored entries in order
/// @param out resized to N x F, holding the kept entries only
/// @throws InvalidArgument when the probability is outside [0, 1), `x` is not compressed or `x`
///         is `out`.
template <typename T>
MASKGAT_EXPORT void dropout(const Eigen::Ref<const RowSparse<std::type_identity_t<T>>>& x,
                            const DropoutKey& key, RowSparse<T>& out);

/// Backward of dense `dropout`: `grad_x(i, c) = grad_out(i, c) * d(i * F + c)`; `grad_x` may be
/// `grad_out`. Parallel over fixed row blocks.
/// @param grad_out N x F
/// @param key      the forward's key
/// @param grad_x   resized to N x F
/// @throws InvalidArgument when the probability is outside [0, 1).
template <typename T>
MASKGAT_EXPORT void dropout_backward(const RowMatrix<T>& grad_out, const DropoutKey& key,
                                     RowMatrix<T>& grad_x);

}  // namespace maskgat::nn
