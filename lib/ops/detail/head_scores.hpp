#pragma once
// The per-node score terms of additive attention (GAT): each node's projected heads dotted with
// the layer's source and destination attention vectors, and their backward.

#include "maskgat/core/tensor.hpp"

namespace maskgat::ops::detail {

// src(n, k) = <head k of h_n, att_src_k> and dst(n, k) = <head k of h_n, att_dst_k> for the
// N x (H * C) `h` and the H x C (contiguous) attention vectors; `src` and `dst` are resized to
// N x H. Parallel over blocks of rows; 8 heads x 8 channels of floats take a transposing AVX
// kernel where the compiler offers vector extensions.
template <typename T>
void head_scores(const RowMatrix<T>& h, const Eigen::Ref<const RowMatrix<T>>& att_src,
                 const Eigen::Ref<const RowMatrix<T>>& att_dst, RowMatrix<T>& src,
                 RowMatrix<T>& dst);

// Backward of `head_scores`: grad_h += grad_src (x) att_src + grad_dst (x) att_dst per head, and
// grad_att_src += grad_src^T h, grad_att_dst += grad_dst^T h per head, summed node by node in
// order.
template <typename T>
void head_scores_backward(const RowMatrix<T>& h, const Eigen::Ref<const RowMatrix<T>>& att_src,
                          const Eigen::Ref<const RowMatrix<T>>& att_dst,
                          const RowMatrix<T>& grad_src, const RowMatrix<T>& grad_dst,
                          RowMatrix<T>& grad_h, Eigen::Map<RowMatrix<T>> grad_att_src,
                          Eigen::Map<RowMatrix<T>> grad_att_dst);

}  // namespace maskgat::ops::detail
