#include "ops/detail/head_scores.hpp"

#include <cassert>
#include <cstring>
#include <type_traits>

#include "core/detail/parallel.hpp"
#include "ops/detail/attention_rows.hpp"
#include "ops/detail/buffer.hpp"
#include "ops/detail/head_layout.hpp"

namespace maskgat::ops::detail {
namespace {

// The 8 x 8 head scores transpose rows in GCC (12 or later) and Clang vector extensions, where AVX
// makes eight floats one register; other builds take the plain dot products.
#if defined(__AVX__) && defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define MASKGAT_TRANSPOSED_HEAD_SCORES 1
#endif
#endif

#ifdef MASKGAT_TRANSPOSED_HEAD_SCORES
// Eight floats as a GCC / Clang vector.
using Float8 [[gnu::vector_size(32)]] = float;

// Transposes the 8 x 8 block held in rows[0..8): two-vector shuffles in three rounds (pairs of
// elements, pairs of pairs, halves), as the usual AVX transpose.
void transpose8(Float8 (&rows)[8]) {
  Float8 pairs[8];
  Float8 quads[8];
  for (int p = 0; p < 4; ++p) {
    pairs[2 * p] = __builtin_shufflevector(rows[2 * p], rows[2 * p + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    pairs[2 * p + 1] =
        __builtin_shufflevector(rows[2 * p], rows[2 * p + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int q = 0; q < 2; ++q) {
    for (int e = 0; e < 2; ++e) {
      const Float8& low = pairs[4 * q + e];
      const Float8& high = pairs[4 * q + e + 2];
      quads[4 * q + 2 * e] = __builtin_shufflevector(low, high, 0, 1, 8, 9, 4, 5, 12, 13);
      quads[4 * q + 2 * e + 1] = __builtin_shufflevector(low, high, 2, 3, 10, 11, 6, 7, 14, 15);
    }
  }
  for (int c = 0; c < 4; ++c) {
    rows[c] = __builtin_shufflevector(quads[c], quads[c + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    rows[c + 4] = __builtin_shufflevector(quads[c], quads[c + 4], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}

// The 8 x 8 block at `data` (row-major), transposed: element c of the result holds column c.
void load_transposed8(const float* data, Float8 (&columns)[8]) {
  for (int r = 0; r < 8; ++r) std::memcpy(&columns[r], data + 8 * r, sizeof(Float8));
  transpose8(columns);
}

// head_scores' rows [begin, end) for 8 heads x 8 channels of floats: each row transposed in
// vector registers, then one vector multiply-add per channel for all heads, in the same order per
// head as the dot product. (Eigen copies a fixed 8 x 8 block column-major element by element.)
// (A template only so that a call in a discarded branch for double is not checked against it.)
template <typename T>
void head_scores_8x8(const T* h, const T* att_src, const T* att_dst, T* src, T* dst,
                     std::int64_t begin, std::int64_t end) {
  static_assert(std::is_same_v<T, float>);
  Float8 src_columns[8];
  Float8 dst_columns[8];
  load_transposed8(att_src, src_columns);
  load_transposed8(att_dst, dst_columns);
  for (std::int64_t n = begin; n < end; ++n) {
    Float8 columns[8];
    load_transposed8(h + n * 64, columns);
    Float8 src_sum = {};
    Float8 dst_sum = {};
    for (int c = 0; c < 8; ++c) {
      src_sum += columns[c] * src_columns[c];
      dst_sum += columns[c] * dst_columns[c];
    }
    std::memcpy(src + n * 8, &src_sum, sizeof(Float8));
    std::memcpy(dst + n * 8, &dst_sum, sizeof(Float8));
  }
}
#endif

// Whether head_scores takes head_scores_8x8 for scalars T and shape S.
template <typename T, typename S>
constexpr bool kTransposedHeadScores =
#ifdef MASKGAT_TRANSPOSED_HEAD_SCORES
    (std::is_same_v<T, float> && S::kHeadsFixed == 8 && S::kChannelsFixed == 8);
#else
    false;
#endif

}  // namespace

// src(n, k) = <head k of h_n, att_src_k> and dst(n, k) = <head k of h_n, att_dst_k>: the
// per-node score terms of additive attention, in one pass over h.
template <typename T>
void head_scores(const RowMatrix<T>& h, const Eigen::Ref<const RowMatrix<T>>& att_src,
                 const Eigen::Ref<const RowMatrix<T>>& att_dst, RowMatrix<T>& src,
                 RowMatrix<T>& dst) {
  const std::int64_t heads = att_src.rows();
  const std::int64_t channels = att_src.cols();
  // Both kernels read the attention vectors as contiguous H x C blocks, as the store keeps them.
  assert(att_src.outerStride() == channels && att_dst.outerStride() == channels);
  resize_buffer(src, h.rows(), heads);
  resize_buffer(dst, h.rows(), heads);
  maskgat::detail::for_each_block(
      h.rows(), maskgat::detail::kRowBlock, [&](std::int64_t begin, std::int64_t end) {
        with_shape(heads, channels, [&](auto shape) {
          if constexpr (kTransposedHeadScores<T, decltype(shape)>) {
            head_scores_8x8(h.data(), att_src.data(), att_dst.data(), src.data(), dst.data(), begin,
                            end);
          } else {
            const std::int64_t width = shape.heads() * shape.channels();
            for (std::int64_t n = begin; n < end; ++n) {
              for (std::int64_t k = 0; k < shape.heads(); ++k) {
                const std::int64_t first = k * shape.channels();
                const T* head = h.data() + n * width + first;
                src(n, k) = dot(head, att_src.data() + first, shape.channels());
                dst(n, k) = dot(head, att_dst.data() + first, shape.channels());
              }
            }
          }
        });
      });
}

// Backward of `head_scores`: grad_h += grad_src (x) att_src + grad_dst (x) att_dst per head, and
// grad_att_src += grad_src^T h, grad_att_dst += grad_dst^T h per head.
template <typename T>
void head_scores_backward(const RowMatrix<T>& h, const Eigen::Ref<const RowMatrix<T>>& att_src,
                          const Eigen::Ref<const RowMatrix<T>>& att_dst,
                          const RowMatrix<T>& grad_src, const RowMatrix<T>& grad_dst,
                          RowMatrix<T>& grad_h, Eigen::Map<RowMatrix<T>> grad_att_src,
                          Eigen::Map<RowMatrix<T>> grad_att_dst) {
  const std::int64_t heads = att_src.rows();
  const std::int64_t channels = att_src.cols();
  maskgat::detail::for_each_block(
      h.rows(), maskgat::detail::kRowBlock, [&](std::int64_t begin, std::int64_t end) {
        with_shape(heads, channels, [&](auto shape) {
          for (std::int64_t n = begin; n < end; ++n) {
            T* target = grad_h.row(n).data();
            add_weighted_heads(shape, grad_src.row(n).data(), att_src.data(), target);
            add_weighted_heads(shape, grad_dst.row(n).data(), att_dst.data(), target);
          }
        });
      });
  // Summed node by node in order, not by an Eigen product: the gradients lie in the parameter
  // store at any alignment, and Eigen's kernels sum unaligned ends in another order. One task per
  // side, over all heads at once, so each reads h once, row by row.
  maskgat::detail::for_each_block(2, 1, [&](std::int64_t side, std::int64_t /*end*/) {
    const RowMatrix<T>& grad = side == 0 ? grad_src : grad_dst;
    T* target = (side == 0 ? grad_att_src : grad_att_dst).data();
    with_shape(heads, channels, [&](auto shape) {
      for (std::int64_t n = 0; n < h.rows(); ++n) {
        add_weighted_heads(shape, grad.row(n).data(), h.row(n).data(), target);
      }
    });
  });
}

template void head_scores<float>(const RowMatrix<float>&, const Eigen::Ref<const RowMatrix<float>>&,
                                 const Eigen::Ref<const RowMatrix<float>>&, RowMatrix<float>&,
                                 RowMatrix<float>&);
template void head_scores<double>(const RowMatrix<double>&,
                                  const Eigen::Ref<const RowMatrix<double>>&,
                                  const Eigen::Ref<const RowMatrix<double>>&, RowMatrix<double>&,
                                  RowMatrix<double>&);
template void head_scores_backward<float>(const RowMatrix<float>&,
                                          const Eigen::Ref<const RowMatrix<float>>&,
                                          const Eigen::Ref<const RowMatrix<float>>&,
                                          const RowMatrix<float>&, const RowMatrix<float>&,
                                          RowMatrix<float>&, Eigen::Map<RowMatrix<float>>,
                                          Eigen::Map<RowMatrix<float>>);
template void head_scores_backward<double>(const RowMatrix<double>&,
                                           const Eigen::Ref<const RowMatrix<double>>&,
                                           const Eigen::Ref<const RowMatrix<double>>&,
                                           const RowMatrix<double>&, const RowMatrix<double>&,
                                           RowMatrix<double>&, Eigen::Map<RowMatrix<double>>,
                                           Eigen::Map<RowMatrix<double>>);

}  // namespace maskgat::ops::detail
