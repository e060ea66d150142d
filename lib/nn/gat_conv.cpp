#include "maskgat/nn/gat_conv.hpp"

#include <cassert>
#include <cstring>
#include <type_traits>

#include "detail/parallel.hpp"
#include "maskgat/ops/attention.hpp"
#include "nn/layer_common.hpp"

namespace maskgat::nn {
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
  maskgat::detail::resize_buffer(src, h.rows(), heads);
  maskgat::detail::resize_buffer(dst, h.rows(), heads);
  maskgat::detail::for_each_block(
      h.rows(), maskgat::detail::kRowBlock, [&](std::int64_t begin, std::int64_t end) {
        maskgat::detail::with_shape(heads, channels, [&](auto shape) {
          if constexpr (kTransposedHeadScores<T, decltype(shape)>) {
            head_scores_8x8(h.data(), att_src.data(), att_dst.data(), src.data(), dst.data(), begin,
                            end);
          } else {
            const std::int64_t width = shape.heads() * shape.channels();
            for (std::int64_t n = begin; n < end; ++n) {
              for (std::int64_t k = 0; k < shape.heads(); ++k) {
                const std::int64_t first = k * shape.channels();
                const T* head = h.data() + n * width + first;
                src(n, k) = maskgat::detail::dot(head, att_src.data() + first, shape.channels());
                dst(n, k) = maskgat::detail::dot(head, att_dst.data() + first, shape.channels());
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
  maskgat::detail::for_each_block(h.rows(), maskgat::detail::kRowBlock,
                                  [&](std::int64_t begin, std::int64_t end) {
                                    maskgat::detail::with_shape(heads, channels, [&](auto shape) {
                                      for (std::int64_t n = begin; n < end; ++n) {
                                        T* target = grad_h.row(n).data();
                                        maskgat::detail::add_weighted_heads(
                                            shape, grad_src.row(n).data(), att_src.data(), target);
                                        maskgat::detail::add_weighted_heads(
                                            shape, grad_dst.row(n).data(), att_dst.data(), target);
                                      }
                                    });
                                  });
  // Summed node by node in order, not by an Eigen product: the gradients lie in the parameter
  // store at any alignment, and Eigen's kernels sum unaligned ends in another order. One task per
  // side, over all heads at once, so each reads h once, row by row.
  maskgat::detail::for_each_block(2, 1, [&](std::int64_t side, std::int64_t /*end*/) {
    const RowMatrix<T>& grad = side == 0 ? grad_src : grad_dst;
    T* target = (side == 0 ? grad_att_src : grad_att_dst).data();
    maskgat::detail::with_shape(heads, channels, [&](auto shape) {
      for (std::int64_t n = 0; n < h.rows(); ++n) {
        maskgat::detail::add_weighted_heads(shape, grad.row(n).data(), h.row(n).data(), target);
      }
    });
  });
}

}  // namespace

template <typename T>
BasicGatConv<T>::BasicGatConv(ParameterStore<T>& store, std::string_view name,
                              const GatConvOptions& options, Rng& rng)
    : store_(&store), options_(options) {
  const std::string where = "gat_conv";
  detail::check_layer_options(where, options.in_features, options.out_features, options.heads,
                              options.dropout, options.schedule);
  detail::check_slope(where, options.negative_slope);
  const std::string prefix(name);
  const std::int64_t width = options.heads * options.out_features;
  lin_ = detail::add_projection(store, prefix, options.in_features, width, false, rng);
  att_src_ = store.add(prefix + ".att_src", options.heads, options.out_features);
  glorot_uniform<T>(store.value(att_src_), options.heads, options.out_features, rng);
  att_dst_ = store.add(prefix + ".att_dst", options.heads, options.out_features);
  glorot_uniform<T>(store.value(att_dst_), options.heads, options.out_features, rng);
  if (options.residual) {
    residual_ = detail::add_projection(store, prefix + ".res", options.in_features,
                                       output_features(), false, rng);
  }
  if (options.bias) bias_ = store.add(prefix + ".bias", 1, output_features());
}

template <typename T>
std::int64_t BasicGatConv<T>::output_features() const noexcept {
  return options_.concat ? options_.heads * options_.out_features : options_.out_features;
}

template <typename T>
void BasicGatConv<T>::forward(const Graph& graph, InputRef<T> x, Mode mode, Rng& rng, Cache& cache,
                              RowMatrix<T>& out) const {
  detail::check_input("gat_conv.forward", graph, x, options_.in_features);
  const Graph& mask = detail::forward_mask(graph, options_.add_self_loops, cache.looped);
  detail::project(*store_, lin_, x, cache.h);
  head_scores<T>(cache.h, store_->value(att_src_), store_->value(att_dst_), cache.src, cache.dst);
  cache.dropout = detail::dropout_for(mode, options_.dropout, rng);
  const ops::AdditiveScore<T> score{cache.src, cache.dst, static_cast<T>(options_.negative_slope)};
  ops::attention(mask, score, cache.h, cache.dropout, cache.alpha,
                 detail::heads_target(options_.concat, options_.heads, out, cache.heads_out),
                 options_.schedule);
  detail::finish_output(*store_, options_.concat, options_.heads, cache.heads_out, residual_, bias_,
                        x, cache.projected, out);
}

template <typename T>
void BasicGatConv<T>::backward(const Graph& graph, InputRef<T> x, Cache& cache,
                               const RowMatrix<T>& grad_out, RowMatrix<T>* grad_x) const {
  detail::check_backward("gat_conv.backward", graph, x, grad_out, output_features(), grad_x);
  const Graph& mask = detail::attention_mask(graph, options_.add_self_loops, cache.looped);
  const RowMatrix<T>& grad_heads =
      detail::finish_output_backward(*store_, options_.concat, options_.heads, residual_, bias_, x,
                                     grad_out, grad_x, cache.grad_heads);
  const ops::AdditiveScore<T> score{cache.src, cache.dst, static_cast<T>(options_.negative_slope)};
  ops::AdditiveScoreGrad<T> grad_score{cache.grad_src, cache.grad_dst};
  ops::attention_backward(mask, score, cache.h, cache.alpha, cache.dropout, grad_heads, grad_score,
                          cache.grad_h, cache.workspace, options_.schedule);
  head_scores_backward<T>(cache.h, store_->value(att_src_), store_->value(att_dst_), cache.grad_src,
                          cache.grad_dst, cache.grad_h, store_->grad(att_src_),
                          store_->grad(att_dst_));
  detail::project_backward(*store_, lin_, x, cache.grad_h, grad_x);
}

template <typename T>
AttentionWeights<T> BasicGatConv<T>::attention(const Graph& graph, const Cache& cache) const {
  return attention_weights(detail::attention_mask(graph, options_.add_self_loops, cache.looped),
                           cache.alpha);
}

template class BasicGatConv<float>;
template class BasicGatConv<double>;

}  // namespace maskgat::nn
