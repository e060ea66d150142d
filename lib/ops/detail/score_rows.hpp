#pragma once
// The score kernels of masked attention, row by row: additive (GAT), dot-product and GATv2
// scores, their backward, and `score_rows`, which picks the kernel of an ops score type.

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "maskgat/ops/sddmm.hpp"
#include "ops/detail/attention_rows.hpp"
#include "ops/detail/column_sums.hpp"
#include "ops/detail/shape_checks.hpp"

namespace maskgat::ops::detail {

// Score kernels. Each provides:
//   heads()                                      H
//   score_row(shape, i, sources, row)            row[k * H + h] = score(i, j_k, h)
//   prepare(grad, N)                             sizes the gradients
//   dst_row(shape, grad, i, sources, first, row) from grad_scores in `row` (transformed in place
//                                                into what src_row needs), writes the
//                                                destination-side gradients
//   src_row(shape, grad, j, targets, edges, buf) from the transformed E x H buffer, writes the
//                                                source-side gradients of node j over the
//                                                out-edges given (a target left out is one whose
//                                                buffer is zero)
// A destination row whose incoming gradient is zero gets dst_row with no sources: it writes that
// row's zero gradients.
//   finish(grad)                                 reduces per-node partials
// `shape` carries H (fixed at compile time where `with_shape` fixes it); channels are the
// kernel's own. `score_row` and `dst_row` get the row's first entry in the mask, where the
// row's edge terms (edge features) and their gradients are.

// Sizes the gradient of a score's edge term (edges x width), or empties it when the score has no
// edge term.
template <typename T>
void prepare_edge_grad(const char* where, bool has_edge, RowMatrix<T>* grad, EdgeId edges,
                       std::int64_t width) {
  if (has_edge && grad == nullptr) {
    throw InvalidArgument(std::string(where) +
                          ": the score has an edge term but its gradient has no edge matrix");
  }
  if (grad != nullptr) resize_buffer(*grad, has_edge ? edges : 0, width);
}

// Zeroes the edge-term gradients of `count` mask entries from `first`: those of a row the
// backward skips because its incoming gradient is zero.
template <typename Grad>
void clear_edge_grads(Grad& grad, EdgeId first, std::size_t count) {
  if constexpr (requires { grad.edge; }) {
    if (grad.edge != nullptr && grad.edge->rows() > 0) {
      const std::int64_t width = grad.edge->cols();
      std::fill_n(grad.edge->data() + first * width, static_cast<std::int64_t>(count) * width,
                  typename std::remove_pointer_t<decltype(grad.edge)>::Scalar(0));
    }
  }
}

template <typename T>
class AdditiveRows {
 public:
  using Grad = ops::AdditiveScoreGrad<T>;

  AdditiveRows(const char* where, const Graph& mask, const ops::AdditiveScore<T>& score)
      : score_(score), heads_(score.src.cols()), edges_(mask.num_edges()), where_(where) {
    check_shape(where, "score.src", score.src, mask.num_nodes(), -1, "the mask's node count");
    check_shape(where, "score.dst", score.dst, mask.num_nodes(), heads_, "the mask's node count");
    channels_per_head(where, "score.src", heads_, heads_);
    if (score.edge != nullptr) check_edge_matrix(where, "score.edge", mask, *score.edge, heads_);
  }

  [[nodiscard]] std::int64_t heads() const { return heads_; }

  template <typename S>
  void score_row(S shape, NodeId i, const Neighbors& sources, EdgeId first_edge, T* row) const {
    const T* dst = score_.dst.data() + i * shape.heads();
    if (score_.edge == nullptr) {
      scores_of<false>(shape, sources, score_.src.data(), dst, nullptr, score_.negative_slope, row);
    } else {
      scores_of<true>(shape, sources, score_.src.data(), dst, edge_row(first_edge),
                      score_.negative_slope, row);
    }
  }

  void prepare(Grad& grad, NodeId num_nodes) const {
    resize_buffer(grad.src, num_nodes, heads_);
    resize_buffer(grad.dst, num_nodes, heads_);
    prepare_edge_grad(where_, score_.edge != nullptr, grad.edge, edges_, heads_);
  }

  template <typename S>
  void dst_row(S shape, Grad& grad, NodeId i, const Neighbors& sources, EdgeId first_edge,
               T* row) const {
    const std::int64_t heads = shape.heads();
    dst_grads_of(shape, sources, score_.src.data(), score_.dst.data() + i * heads,
                 score_.edge == nullptr ? nullptr : edge_row(first_edge), score_.negative_slope,
                 row, grad.dst.data() + i * heads);
    // The score's gradient is that of its edge term: the row as `dst_grads_of` leaves it.
    if (score_.edge != nullptr) {
      std::copy_n(row, static_cast<std::int64_t>(sources.size()) * heads,
                  grad.edge->data() + first_edge * heads);
    }
  }

  template <typename S>
  void src_row(S shape, Grad& grad, NodeId j, const Neighbors& /*targets*/, const EdgeIds& edges,
               const T* buffer) const {
    src_grads_of(shape, edges, buffer, grad.src.data() + j * shape.heads());
  }

  void finish(Grad& /*grad*/) const {}

 private:
  [[nodiscard]] const T* edge_row(EdgeId first_edge) const {
    return score_.edge->data() + first_edge * heads_;
  }

  // The bodies of the row kernels, on pointers declared not to overlap, so the loops over a row's
  // heads vectorise. `edge` is the row's first entry of the edge term (kEdge) or unused.
  template <bool kEdge, typename S>
  static void scores_of(S shape, const Neighbors& sources, const T* __restrict src_scores,
                        const T* __restrict dst, const T* __restrict edge, T slope,
                        T* __restrict row) {
    if constexpr (S::kHeadsFixed == 1) {
      // One head: scalars, which is what Eigen's one-element arrays compute, without the
      // bookkeeping GCC keeps for them at every edge.
      for (std::size_t k = 0; k < sources.size(); ++k) {
        prefetch_ahead(sources, k, src_scores, 1);
        T z = src_scores[sources[k]] + *dst;
        if constexpr (kEdge) z += edge[k];
        row[k] = leaky_relu(z, slope);
      }
    } else {
      const std::int64_t heads = shape.heads();
      const auto dst_heads = head_map(shape, dst);
      for (std::size_t k = 0; k < sources.size(); ++k) {
        prefetch_ahead(sources, k, src_scores, heads);
        const auto offset = static_cast<std::int64_t>(k) * heads;
        const auto z = [&] {
          if constexpr (kEdge) {
            return (head_map(shape, src_scores + sources[k] * heads) + dst_heads +
                    head_map(shape, edge + offset))
                .eval();
          } else {
            return (head_map(shape, src_scores + sources[k] * heads) + dst_heads).eval();
          }
        }();
        head_map(shape, row + offset) = z.max(T(0)) + slope * z.min(T(0));
      }
    }
  }

  template <typename S>
  static void dst_grads_of(S shape, const Neighbors& sources, const T* __restrict src_scores,
                           const T* __restrict dst, const T* __restrict edge, T slope,
                           T* __restrict row, T* __restrict grad_dst) {
    const std::int64_t heads = shape.heads();
    for (std::int64_t h = 0; h < heads; ++h) grad_dst[h] = T(0);
    for (std::size_t k = 0; k < sources.size(); ++k) {
      prefetch_ahead(sources, k, src_scores, heads);
      const T* src = src_scores + sources[k] * heads;
      const std::int64_t offset = static_cast<std::int64_t>(k) * heads;
      for (std::int64_t h = 0; h < heads; ++h) {
        T& g = row[offset + h];
        const T z = src[h] + dst[h];
        g *= leaky_relu_slope(edge == nullptr ? z : z + edge[offset + h], slope);
        grad_dst[h] += g;
      }
    }
  }

  template <typename S>
  static void src_grads_of(S shape, const EdgeIds& edges, const T* __restrict buffer,
                           T* __restrict grad_src) {
    const std::int64_t heads = shape.heads();
    auto sum = head_map(shape, grad_src);
    sum.setZero();
    for (std::size_t k = 0; k < edges.size(); ++k) {
      prefetch_ahead(edges, k, buffer, heads);
      sum += head_map(shape, buffer + edges[k] * heads);
    }
  }

  const ops::AdditiveScore<T>& score_;
  std::int64_t heads_;
  EdgeId edges_;
  const char* where_;
};

template <typename T>
class DotRows {
 public:
  using Grad = ops::DotScoreGrad<T>;

  DotRows(const char* where, const Graph& mask, const ops::DotScore<T>& score)
      : score_(score),
        heads_(score.heads),
        channels_(channels_per_head(where, "score.query", score.query.cols(), score.heads)) {
    check_shape(where, "score.query", score.query, mask.num_nodes(), -1, "the mask's node count");
    check_shape(where, "score.key", score.key, mask.num_nodes(), score.query.cols(),
                "the mask's node count");
  }

  [[nodiscard]] std::int64_t heads() const { return heads_; }

  template <typename S>
  void score_row(S shape, NodeId i, const Neighbors& sources, EdgeId /*first_edge*/, T* row) const {
    const std::int64_t heads = shape.heads();
    const T* query = score_.query.data() + i * width();
    for (std::size_t k = 0; k < sources.size(); ++k) {
      prefetch_ahead(sources, k, score_.key.data(), width());
      const T* key = score_.key.data() + sources[k] * width();
      for (std::int64_t h = 0; h < heads; ++h) {
        row[static_cast<std::int64_t>(k) * heads + h] =
            score_.scale * dot(query + h * channels_, key + h * channels_, channels_);
      }
    }
  }

  void prepare(Grad& grad, NodeId num_nodes) const {
    resize_buffer(grad.query, num_nodes, width());
    resize_buffer(grad.key, num_nodes, width());
  }

  template <typename S>
  void dst_row(S shape, Grad& grad, NodeId i, const Neighbors& sources, EdgeId /*first_edge*/,
               T* row) const {
    const std::int64_t heads = shape.heads();
    T* grad_query = grad.query.data() + i * width();
    for (std::int64_t c = 0; c < width(); ++c) grad_query[c] = T(0);
    for (std::size_t k = 0; k < sources.size(); ++k) {
      prefetch_ahead(sources, k, score_.key.data(), width());
      const T* key = score_.key.data() + sources[k] * width();
      for (std::int64_t h = 0; h < heads; ++h) {
        const T weight = score_.scale * row[static_cast<std::int64_t>(k) * heads + h];
        for (std::int64_t c = h * channels_; c < (h + 1) * channels_; ++c) {
          grad_query[c] += weight * key[c];
        }
      }
    }
  }

  template <typename S>
  void src_row(S shape, Grad& grad, NodeId j, const Neighbors& targets, const EdgeIds& edges,
               const T* buffer) const {
    const std::int64_t heads = shape.heads();
    T* grad_key = grad.key.data() + j * width();
    for (std::int64_t c = 0; c < width(); ++c) grad_key[c] = T(0);
    for (std::size_t k = 0; k < targets.size(); ++k) {
      prefetch_ahead(targets, k, score_.query.data(), width());
      const T* query = score_.query.data() + targets[k] * width();
      for (std::int64_t h = 0; h < heads; ++h) {
        const T weight = score_.scale * buffer[edges[k] * heads + h];
        for (std::int64_t c = h * channels_; c < (h + 1) * channels_; ++c) {
          grad_key[c] += weight * query[c];
        }
      }
    }
  }

  void finish(Grad& /*grad*/) const {}

 private:
  [[nodiscard]] std::int64_t width() const { return heads_ * channels_; }

  const ops::DotScore<T>& score_;
  std::int64_t heads_;
  std::int64_t channels_;
};

template <typename T>
class GatV2Rows {
 public:
  using Grad = ops::GatV2ScoreGrad<T>;

  GatV2Rows(const char* where, const Graph& mask, const ops::GatV2Score<T>& score)
      : score_(score),
        heads_(score.att.rows()),
        channels_(score.att.cols()),
        edges_(mask.num_edges()),
        where_(where) {
    if (heads_ <= 0) channels_per_head(where, "score.att", 0, heads_);
    if (score.att.outerStride() != channels_) {
      throw InvalidArgument(std::string(where) + ": score.att has rows " +
                            std::to_string(score.att.outerStride()) + " values apart, expected " +
                            std::to_string(channels_) + " (a contiguous H x C matrix)");
    }
    check_shape(where, "score.src", score.src, mask.num_nodes(), width(), "the mask's node count");
    check_shape(where, "score.dst", score.dst, mask.num_nodes(), width(), "the mask's node count");
    if (score.edge != nullptr) check_edge_matrix(where, "score.edge", mask, *score.edge, width());
  }

  [[nodiscard]] std::int64_t heads() const { return heads_; }

  template <typename S>
  void score_row(S shape, NodeId i, const Neighbors& sources, EdgeId first_edge, T* row) const {
    if (score_.edge == nullptr) {
      score_row_of<false>(shape, i, sources, first_edge, row);
    } else {
      score_row_of<true>(shape, i, sources, first_edge, row);
    }
  }

  void prepare(Grad& grad, NodeId num_nodes) const {
    resize_buffer(grad.src, num_nodes, width());
    resize_buffer(grad.dst, num_nodes, width());
    prepare_edge_grad(where_, score_.edge != nullptr, grad.edge, edges_, width());
    // Per-destination partials of att's gradient, summed over nodes in `finish` in a fixed order.
    resize_buffer(att_partials_, num_nodes, width());
  }

  template <typename S>
  void dst_row(S shape, Grad& grad, NodeId i, const Neighbors& sources, EdgeId first_edge,
               T* row) const {
    if (score_.edge == nullptr) {
      dst_row_of<false>(shape, grad, i, sources, first_edge, row);
    } else {
      dst_row_of<true>(shape, grad, i, sources, first_edge, row);
    }
  }

  template <typename S>
  void src_row(S shape, Grad& grad, NodeId j, const Neighbors& targets, const EdgeIds& edges,
               const T* buffer) const {
    if (score_.edge == nullptr) {
      src_row_of<false>(shape, grad, j, targets, edges, buffer);
    } else {
      src_row_of<true>(shape, grad, j, targets, edges, buffer);
    }
  }

  void finish(Grad& grad) const {
    grad.att.resize(heads_, channels_);
    grad.att.setZero();
    add_column_sums(att_partials_, grad.att.data());
  }

 private:
  [[nodiscard]] std::int64_t width() const { return heads_ * channels_; }

  // The edge term of mask entry e (kEdge), or a pointer never read.
  template <bool kEdge>
  [[nodiscard]] const T* edge_of(EdgeId e) const {
    if constexpr (kEdge) {
      return score_.edge->data() + e * width();
    } else {
      return nullptr;
    }
  }

  // src + dst (+ edge) at channel c, the sum inside the LeakyReLU.
  template <bool kEdge>
  static T sum_at(const T* src, const T* dst, const T* edge, std::int64_t c) {
    if constexpr (kEdge) {
      return src[c] + dst[c] + edge[c];
    } else {
      return src[c] + dst[c];
    }
  }

  template <bool kEdge, typename S>
  void score_row_of(S shape, NodeId i, const Neighbors& sources, EdgeId first_edge, T* row) const {
    const std::int64_t heads = shape.heads();
    const T* dst = score_.dst.data() + i * width();
    const T* att = score_.att.data();
    for (std::size_t k = 0; k < sources.size(); ++k) {
      prefetch_ahead(sources, k, score_.src.data(), width());
      const T* src = score_.src.data() + sources[k] * width();
      const T* edge = edge_of<kEdge>(first_edge + static_cast<EdgeId>(k));
      for (std::int64_t h = 0; h < heads; ++h) {
        T sum = T(0);
        for (std::int64_t c = h * channels_; c < (h + 1) * channels_; ++c) {
          sum += att[c] * leaky_relu(sum_at<kEdge>(src, dst, edge, c), score_.negative_slope);
        }
        row[static_cast<std::int64_t>(k) * heads + h] = sum;
      }
    }
  }

  template <bool kEdge, typename S>
  void dst_row_of(S shape, Grad& grad, NodeId i, const Neighbors& sources, EdgeId first_edge,
                  T* row) const {
    const std::int64_t heads = shape.heads();
    const T* dst = score_.dst.data() + i * width();
    const T* att = score_.att.data();
    T* grad_dst = grad.dst.data() + i * width();
    T* partial = att_partials_.data() + i * width();
    for (std::int64_t c = 0; c < width(); ++c) {
      grad_dst[c] = T(0);
      partial[c] = T(0);
    }
    for (std::size_t k = 0; k < sources.size(); ++k) {
      prefetch_ahead(sources, k, score_.src.data(), width());
      const T* src = score_.src.data() + sources[k] * width();
      const EdgeId e = first_edge + static_cast<EdgeId>(k);
      const T* edge = edge_of<kEdge>(e);
      for (std::int64_t h = 0; h < heads; ++h) {
        const T g = row[static_cast<std::int64_t>(k) * heads + h];
        for (std::int64_t c = h * channels_; c < (h + 1) * channels_; ++c) {
          const T z = sum_at<kEdge>(src, dst, edge, c);
          const T grad_z = g * att[c] * leaky_relu_slope(z, score_.negative_slope);
          grad_dst[c] += grad_z;
          if constexpr (kEdge) grad.edge->data()[e * width() + c] = grad_z;
          partial[c] += g * leaky_relu(z, score_.negative_slope);
        }
      }
    }
  }

  template <bool kEdge, typename S>
  void src_row_of(S shape, Grad& grad, NodeId j, const Neighbors& targets, const EdgeIds& edges,
                  const T* buffer) const {
    const std::int64_t heads = shape.heads();
    const T* src = score_.src.data() + j * width();
    const T* att = score_.att.data();
    T* grad_src = grad.src.data() + j * width();
    for (std::int64_t c = 0; c < width(); ++c) grad_src[c] = T(0);
    for (std::size_t k = 0; k < targets.size(); ++k) {
      prefetch_ahead(targets, k, score_.dst.data(), width());
      const T* dst = score_.dst.data() + targets[k] * width();
      const T* edge = edge_of<kEdge>(edges[k]);
      for (std::int64_t h = 0; h < heads; ++h) {
        const T g = buffer[edges[k] * heads + h];
        for (std::int64_t c = h * channels_; c < (h + 1) * channels_; ++c) {
          grad_src[c] += g * att[c] *
                         leaky_relu_slope(sum_at<kEdge>(src, dst, edge, c), score_.negative_slope);
        }
      }
    }
  }

  const ops::GatV2Score<T>& score_;
  std::int64_t heads_;
  std::int64_t channels_;
  EdgeId edges_;
  const char* where_;
  mutable RowMatrix<T> att_partials_;
};

template <typename T>
AdditiveRows<T> score_rows(const char* where, const Graph& mask,
                           const ops::AdditiveScore<T>& score) {
  return AdditiveRows<T>(where, mask, score);
}
template <typename T>
DotRows<T> score_rows(const char* where, const Graph& mask, const ops::DotScore<T>& score) {
  return DotRows<T>(where, mask, score);
}
template <typename T>
GatV2Rows<T> score_rows(const char* where, const Graph& mask, const ops::GatV2Score<T>& score) {
  return GatV2Rows<T>(where, mask, score);
}

}  // namespace maskgat::ops::detail

// Calls X(Score, Grad) for every score type of `ops` and its gradient type, in float and double:
// the list the ops instantiate their kernels for.
#define MASKGAT_FOR_EACH_SCORE(X)                     \
  X(AdditiveScore<float>, AdditiveScoreGrad<float>)   \
  X(AdditiveScore<double>, AdditiveScoreGrad<double>) \
  X(DotScore<float>, DotScoreGrad<float>)             \
  X(DotScore<double>, DotScoreGrad<double>)           \
  X(GatV2Score<float>, GatV2ScoreGrad<float>)         \
  X(GatV2Score<double>, GatV2ScoreGrad<double>)
