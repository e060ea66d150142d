#pragma once
// Serial row kernels of masked attention, shared by the unfused ops (sddmm, edge_softmax, spmm)
// and the fused attention, so both compute every value with the same code in the same order.
//
// Per-edge arrays are E x H in destination-major order; a "row" pointer points at the first edge
// of a destination row, so `row[k * H + h]` is head h of the row's k-th in-edge.

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "detail/buffer.hpp"
#include "detail/column_sums.hpp"
#include "detail/dropout.hpp"
#include "detail/parallel.hpp"
#include "detail/shape_checks.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/core/random.hpp"
#include "maskgat/core/schedule.hpp"
#include "maskgat/core/tensor.hpp"
#include "maskgat/graph/graph.hpp"
#include "maskgat/ops/sddmm.hpp"
#include "maskgat/ops/spmm.hpp"

namespace maskgat::detail {

inline std::size_t to_index(std::int64_t value) { return static_cast<std::size_t>(value); }

// Every element of a row-major matrix, in order.
template <typename T>
std::span<const T> elements(const RowMatrix<T>& matrix) {
  return {matrix.data(), to_index(matrix.size())};
}

// Written as max + slope * min rather than a select: the same value for every z (a kept side gets
// an exact +-0 added), but free of the branch a compiler makes of a product that only one side
// needs. The additive score kernels use the same form on Eigen arrays of heads.
template <typename T>
T leaky_relu(T z, T slope) {
  return std::max(z, T(0)) + slope * std::min(z, T(0));
}

template <typename T>
T leaky_relu_slope(T z, T slope) {
  return z > T(0) ? T(1) : slope;
}

template <typename T>
T dot(const T* a, const T* b, std::int64_t count) {
  T sum = T(0);
  for (std::int64_t c = 0; c < count; ++c) sum += a[c] * b[c];
  return sum;
}

// Per-thread scratch of at least `size` elements, kept between calls: once a thread has seen its
// largest row range (about a schedule grain of edges), the kernels allocate nothing. Aligned for
// Eigen's widest packets, so vector code over it never peels a scalar head whose extent would
// depend on where the thread's buffer happens to start (which would make results depend on
// scheduling). Contents are unspecified, and the pointer is valid until the thread's next call, so
// each kernel takes it once and calls no other kernel that does while it uses it.
template <typename T>
T* row_scratch(std::size_t size) {
  thread_local std::vector<T, Eigen::aligned_allocator<T>> buffer;
  if (buffer.size() < size) buffer.resize(size);
  return buffer.data();
}

// The attention-dropout factors of coefficients (e, h): element e * H + h of the key's mask.
template <typename T>
class DropoutFactor {
 public:
  DropoutFactor(const char* where, const DropoutKey& dropout, std::int64_t heads)
      : mask_(where, dropout), heads_(heads) {}

  // The factor of a kept coefficient, 1 / (1 - p) (1 without dropout).
  [[nodiscard]] T scale() const { return mask_.scale(); }

  // Writes the factors of the `count` edges from `first_edge` (count x H, edge-major).
  [[gnu::always_inline]] void fill(EdgeId first_edge, std::int64_t count, T* factors) const {
    mask_.fill(static_cast<std::uint64_t>(first_edge * heads_), count * heads_, factors);
  }

 private:
  DropoutMask<T> mask_;
  std::int64_t heads_;
};

// A per-edge layout of H heads x C channels. Either count may be a compile-time constant (a
// nonzero template argument): the loops over one edge's heads or one head's channels then unroll
// into a few vector instructions instead of running loop setup for a handful of elements. Rows of
// citation graphs hold ~5 edges, so that setup would otherwise dominate.
template <int kHeads, int kChannels>
struct Shape {
  static constexpr int kHeadsFixed = kHeads;
  static constexpr int kChannelsFixed = kChannels;
  std::int64_t runtime_heads;
  std::int64_t runtime_channels;
  [[nodiscard]] constexpr std::int64_t heads() const {
    if constexpr (kHeads > 0) return kHeads;
    return runtime_heads;
  }
  [[nodiscard]] constexpr std::int64_t channels() const {
    if constexpr (kChannels > 0) return kChannels;
    return runtime_channels;
  }
};

// Calls fn(shape) with the shape of H x C, fixed at compile time for the common layouts (the GAT
// recipe's 8 heads x 8 channels, single-head output layers) and known at run time otherwise.
template <typename Fn>
decltype(auto) with_shape(std::int64_t heads, std::int64_t channels, Fn&& fn) {
  if (heads == 8 && channels == 8) return fn(Shape<8, 8>{heads, channels});
  if (heads == 8) return fn(Shape<8, 0>{heads, channels});
  if (heads == 1) return fn(Shape<1, 0>{heads, channels});
  return fn(Shape<0, 0>{heads, channels});
}

// H values of one row, one per head: a local array when H is fixed at compile time (which the
// compiler knows overlaps no other buffer, so the loops over heads vectorise), else the thread's
// row scratch.
template <typename T, typename S>
class PerHead {
 public:
  explicit PerHead(S shape) {
    if constexpr (S::kHeadsFixed == 0)
      data_ = row_scratch<T>(static_cast<std::size_t>(shape.heads()));
  }
  PerHead(const PerHead&) = delete;
  PerHead& operator=(const PerHead&) = delete;
  T& operator[](std::int64_t h) { return data()[h]; }
  T* data() {
    if constexpr (S::kHeadsFixed > 0) return local_;
    return data_;
  }

 private:
  T local_[S::kHeadsFixed > 0 ? S::kHeadsFixed : 1];
  T* data_ = nullptr;
};

// The H values at `data` as an Eigen array map: fixed-size when H is fixed at compile time, so
// every operation on it is a few vector instructions.
template <typename S, typename T>
auto head_map(S shape, T* data) {
  constexpr int kSize = S::kHeadsFixed > 0 ? S::kHeadsFixed : Eigen::Dynamic;
  using Array = Eigen::Array<std::remove_const_t<T>, kSize, 1>;
  using Mapped = std::conditional_t<std::is_const_v<T>, const Array, Array>;
  return Eigen::Map<Mapped>(data, shape.heads());
}

// Elements per block of the padded exp below: a multiple of every SIMD width Eigen uses.
constexpr std::int64_t kExpBlock = 16;

// The destination rows [begin, end) of a mask: one task's share of a row-parallel pass. Their
// in-edges are the consecutive edge ids [first, last).
struct RowRange {
  NodeId begin;
  NodeId end;
  EdgeId first;
  EdgeId last;
};

// The ids of one row of a CSR array (a destination's sources, a source's targets or out-edge
// ids), and where that array ends: prefetches look past the row's end into the next rows, so the
// first gathers of every row are prefetched too.
template <typename Id>
class RowIds {
 public:
  RowIds(std::span<const Id> all, EdgeId first, EdgeId last)
      : data_(all.data() + first),
        size_(to_index(last - first)),
        ahead_(to_index(static_cast<EdgeId>(all.size()) - first)) {}
  [[nodiscard]] std::size_t size() const { return size_; }
  Id operator[](std::size_t k) const { return data_[k]; }
  [[nodiscard]] const Id* begin() const { return data_; }
  [[nodiscard]] const Id* end() const { return data_ + size_; }
  // Whether the array holds an id at position k from the row's start (k may pass the row's end;
  // `begin()[k]` is that id).
  [[nodiscard]] bool has(std::size_t k) const { return k < ahead_; }

 private:
  const Id* data_;
  std::size_t size_;
  std::size_t ahead_;
};
using Neighbors = RowIds<NodeId>;
using EdgeIds = RowIds<EdgeId>;

// Calls fn(i, sources, first_edge) for every row of `range`, in order; `sources` is a Neighbors.
template <typename Fn>
[[gnu::always_inline]] inline void for_each_row(const Graph& mask, const RowRange& range, Fn&& fn) {
  const auto offsets = mask.in_offsets();
  const auto sources = mask.in_sources();
  for (NodeId i = range.begin; i < range.end; ++i) {
    const EdgeId first = offsets[to_index(i)];
    fn(i, Neighbors(sources, first, offsets[to_index(i) + 1]), first);
  }
}

// The body of `softmax_rows` on its buffers: `shifted` and `weights` (padded elements each),
// `max` and `inverse` (H each). The buffers are declared not to overlap, so the loops over heads
// vectorise.
template <typename T, typename S>
void softmax_rows_in(S shape, const EdgeId* __restrict offsets, const RowRange& range,
                     T* __restrict scores, std::int64_t padded, T* __restrict shifted,
                     T* __restrict weights, T* __restrict max, T* __restrict inverse) {
  const std::int64_t heads = shape.heads();
  const std::int64_t size = (range.last - range.first) * heads;
  auto row_max = head_map(shape, max);
  for (NodeId i = range.begin; i < range.end; ++i) {
    const std::int64_t degree = offsets[i + 1] - offsets[i];
    if (degree == 0) continue;
    const T* row = scores + (offsets[i] - range.first) * heads;
    T* out = shifted + (offsets[i] - range.first) * heads;
    row_max = head_map(shape, row);
    for (std::int64_t k = 1; k < degree; ++k)
      row_max = row_max.max(head_map(shape, row + k * heads));
    for (std::int64_t k = 0; k < degree; ++k) {
      head_map(shape, out + k * heads) = head_map(shape, row + k * heads) - row_max;
    }
  }
  for (std::int64_t k = size; k < padded; ++k) shifted[k] = T(0);
  using Block = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>, Eigen::AlignedMax>;
  Block(weights, padded) = Block(shifted, padded).exp();
  // Eigen's exp clamps its argument at log(min normal), so a score far below the row's maximum
  // would keep a weight of ~1e-38 instead of underflowing; flush those to an exact 0.
  const T lowest = std::log(std::numeric_limits<T>::min());
  for (std::int64_t k = 0; k < size; ++k) {
    if (shifted[k] < lowest) weights[k] = T(0);
  }
  auto row_inverse = head_map(shape, inverse);
  for (NodeId i = range.begin; i < range.end; ++i) {
    const std::int64_t degree = offsets[i + 1] - offsets[i];
    const T* weight = weights + (offsets[i] - range.first) * heads;
    T* row = scores + (offsets[i] - range.first) * heads;
    row_inverse.setZero();
    for (std::int64_t k = 0; k < degree; ++k) row_inverse += head_map(shape, weight + k * heads);
    row_inverse = row_inverse.inverse();
    for (std::int64_t k = 0; k < degree; ++k) {
      head_map(shape, row + k * heads) = head_map(shape, weight + k * heads) * row_inverse;
    }
  }
}

// Softmax over each row's edges, per head, in place on the E x H `scores`, for the rows of
// `range`. The loops run over the heads of one edge (contiguous). The exponentials of the whole
// range go through Eigen's vectorised exp in one call, on a copy padded to whole SIMD blocks, so no
// element takes a scalar path and every element gets the same result wherever it lies.
template <typename T, typename S>
void softmax_rows(S shape, const Graph& mask, const RowRange& range, T* scores) {
  const std::int64_t size = (range.last - range.first) * shape.heads();
  if (size == 0) return;
  const std::int64_t padded = (size + kExpBlock - 1) / kExpBlock * kExpBlock;
  const std::int64_t heads = shape.heads();
  T* scratch = row_scratch<T>(static_cast<std::size_t>(2 * padded + 2 * heads));
  softmax_rows_in(shape, mask.in_offsets().data(), range, scores + range.first * heads, padded,
                  scratch, scratch + padded, scratch + 2 * padded, scratch + 2 * padded + heads);
}

// grad <- alpha * (grad - sum_k alpha_k grad_k), per head, in place.
template <typename T, typename S>
void softmax_backward_row(S shape, const T* alpha, T* grad, std::int64_t degree) {
  const std::int64_t heads = shape.heads();
  PerHead<T, S> weighted(shape);
  for (std::int64_t h = 0; h < heads; ++h) weighted[h] = T(0);
  for (std::int64_t k = 0; k < degree; ++k) {
    for (std::int64_t h = 0; h < heads; ++h) {
      weighted[h] += alpha[k * heads + h] * grad[k * heads + h];
    }
  }
  for (std::int64_t k = 0; k < degree; ++k) {
    for (std::int64_t h = 0; h < heads; ++h) {
      T& g = grad[k * heads + h];
      g = alpha[k * heads + h] * (g - weighted[h]);
    }
  }
}

// Node rows are gathered in the mask's random order, so each gather is a cache miss the hardware
// prefetcher cannot predict; asking for rows some edges ahead overlaps those misses. The distance
// is in cache lines, so narrow rows (a node's H scores) are asked for further ahead than wide ones.
constexpr std::int64_t kPrefetchLines = 64;

// Prefetches row `ids[k + d]` of the row-major `base` (rows of `width`), d edges ahead such that
// about kPrefetchLines lines are in flight (kPrefetchLines over the row's lines rounded down to a
// power of two). Arrays start on a line, so a row whose size neither divides a line nor is a
// whole number of lines (10 classes are 40 bytes) can straddle one more line than its start's:
// its last element is asked for too. Only shifts and masks: with the width known at run time
// (single-head output layers), a division here was paid at every edge.
//
// Always inlined: GCC finds a function whose only effect is `__builtin_prefetch` pure, and drops
// every call to it that it has not inlined by then (the prefetches of all but two kernels were
// gone).
template <typename Id, typename T>
[[gnu::always_inline]] inline void prefetch_ahead(const RowIds<Id>& ids, std::size_t k,
                                                  const T* base, std::int64_t width) {
  constexpr std::int64_t kLine = 64 / static_cast<std::int64_t>(sizeof(T));
  const auto lines =
      static_cast<std::uint64_t>(std::max<std::int64_t>((width + kLine - 1) / kLine, 1));
  const auto distance = static_cast<std::size_t>(
      std::max<std::uint64_t>(std::uint64_t{kPrefetchLines} >> (std::bit_width(lines) - 1), 1));
  if (!ids.has(k + distance)) return;
  const T* row = base + static_cast<std::int64_t>(ids.begin()[k + distance]) * width;
  for (std::int64_t c = 0; c < width; c += kLine) __builtin_prefetch(row + c);
  // A width below a line divides it exactly when it is a power of two (kLine is one).
  if (width % kLine != 0 && !std::has_single_bit(static_cast<std::uint64_t>(width))) {
    __builtin_prefetch(row + width - 1);
  }
}

// target[h * C + c] += weights[h] * source[h * C + c] for every head h and channel c: one
// fixed-size Eigen vector operation per head when C is fixed, plain loops otherwise.
template <typename T, typename S>
void add_weighted_heads(S shape, const T* weights, const T* source, T* target) {
  const std::int64_t channels = shape.channels();
  for (std::int64_t h = 0; h < shape.heads(); ++h) {
    if constexpr (S::kChannelsFixed > 0) {
      using Vector = Eigen::Matrix<T, S::kChannelsFixed, 1>;
      Eigen::Map<Vector>(target + h * channels) +=
          weights[h] * Eigen::Map<const Vector>(source + h * channels);
    } else {
      for (std::int64_t c = 0; c < channels; ++c) {
        target[h * channels + c] += weights[h] * source[h * channels + c];
      }
    }
  }
}

// Elements of T in a 64-byte vector register.
template <typename T>
constexpr int kVectorLanes = 64 / static_cast<int>(sizeof(T));

// out = sum over k of weights(k) (H per-head factors) times row ids[k] of the row-major `rows`
// (H x C each). With H and C fixed at compile time the sum builds in a local array, which the
// compiler keeps in registers instead of storing and reloading `out` at every edge. So does a
// single head of at most a vector's channels (an output layer's classes): each row is read as a
// whole vector, whose lanes past the row's C hold the next rows' values; they are summed but never
// stored, and every kept lane is the same sum in the same order. A row too near the end of `rows`
// for a whole vector is copied into one first.
template <typename T, typename S, typename Weights>
[[gnu::always_inline]] inline void gather_row(S shape, const Neighbors& ids, Weights&& weights,
                                              std::span<const T> all_rows, T* out) {
  const T* rows = all_rows.data();
  const T* rows_end = rows + all_rows.size();
  const std::int64_t width = shape.heads() * shape.channels();
  if constexpr (S::kHeadsFixed > 0 && S::kChannelsFixed > 0) {
    alignas(64) T sum[S::kHeadsFixed * S::kChannelsFixed] = {};
    for (std::size_t k = 0; k < ids.size(); ++k) {
      prefetch_ahead(ids, k, rows, width);
      add_weighted_heads(shape, weights(k), rows + ids[k] * width, sum);
    }
    for (std::int64_t c = 0; c < width; ++c) out[c] = sum[c];
  } else if (S::kHeadsFixed == 1 && width <= kVectorLanes<T>) {
    using Lanes = Eigen::Array<T, kVectorLanes<T>, 1>;
    Lanes sum = Lanes::Zero();
    for (std::size_t k = 0; k < ids.size(); ++k) {
      prefetch_ahead(ids, k, rows, width);
      const T* source = rows + ids[k] * width;
      const T weight = *weights(k);
      if (rows_end - source >= kVectorLanes<T>) {
        sum += weight * Eigen::Map<const Lanes>(source);
      } else {
        Lanes tail = Lanes::Zero();
        for (std::int64_t c = 0; c < width; ++c) tail[c] = source[c];
        sum += weight * tail;
      }
    }
    for (std::int64_t c = 0; c < width; ++c) out[c] = sum[c];
  } else {
    for (std::int64_t c = 0; c < width; ++c) out[c] = T(0);
    for (std::size_t k = 0; k < ids.size(); ++k) {
      prefetch_ahead(ids, k, rows, width);
      add_weighted_heads(shape, weights(k), rows + ids[k] * width, out);
    }
  }
}

// out_i = sum_k d * alpha_k * v_{j_k}, per head, for the rows of `range`. The range's dropout
// factors are drawn in one pass over its edges x H elements (vectorised) and scaled by alpha,
// before the gathers.
template <typename T, typename S>
void aggregate_rows(S shape, const Graph& mask, const RowRange& range, const T* alpha,
                    const T* values, const DropoutFactor<T>& dropout, T* out) {
  const std::int64_t heads = shape.heads();
  const std::int64_t width = heads * shape.channels();
  const std::int64_t count = (range.last - range.first) * heads;
  T* weights = row_scratch<T>(static_cast<std::size_t>(count));
  dropout.fill(range.first, range.last - range.first, weights);
  const T* range_alpha = alpha + range.first * heads;
  for (std::int64_t k = 0; k < count; ++k) weights[k] *= range_alpha[k];
  const std::span<const T> all_values(values, to_index(mask.num_nodes() * width));
  // Inlined: GCC outlined this row body once the single-head path made it larger, and a call per
  // row costs more than a row's few gathers.
  const auto row = [&](NodeId i, const Neighbors& sources, EdgeId first)
      __attribute__((always_inline)) {
    const T* row_weights = weights + (first - range.first) * heads;
    gather_row(
        shape, sources,
        [&](std::size_t k) { return row_weights + static_cast<std::int64_t>(k) * heads; },
        all_values, out + i * width);
  };
  for_each_row(mask, range, row);
}

// grad_alpha_k = d * <grad_out_i, v_{j_k}>, per head, for the rows of `range`; also writes the
// range's mask to `kept` (edges x H bytes, 1 where d != 0), which the source pass then reads
// instead of redrawing the mask edge by edge: a byte per coefficient rather than a float.
template <typename T, typename S>
void grad_alpha_rows(S shape, const Graph& mask, const RowRange& range, const T* grad_out,
                     const T* values, const DropoutFactor<T>& dropout, T* grad_alpha,
                     std::uint8_t* kept) {
  const std::int64_t heads = shape.heads();
  const std::int64_t channels = shape.channels();
  const std::int64_t width = heads * channels;
  for_each_row(mask, range, [&](NodeId i, const Neighbors& sources, EdgeId first) {
    const T* grad = grad_out + i * width;
    for (std::size_t k = 0; k < sources.size(); ++k) {
      prefetch_ahead(sources, k, values, width);
      const T* value = values + sources[k] * width;
      T* target = grad_alpha + (first + static_cast<std::int64_t>(k)) * heads;
      for (std::int64_t h = 0; h < heads; ++h) {
        target[h] = dot(grad + h * channels, value + h * channels, channels);
      }
    }
  });
  const std::int64_t count = (range.last - range.first) * heads;
  T* factors = row_scratch<T>(static_cast<std::size_t>(count));
  dropout.fill(range.first, range.last - range.first, factors);
  T* range_grad = grad_alpha + range.first * heads;
  std::uint8_t* range_kept = kept + range.first * heads;
  for (std::int64_t k = 0; k < count; ++k) {
    range_grad[k] *= factors[k];
    range_kept[k] = factors[k] != T(0) ? 1 : 0;
  }
}

// grad_v_j = sum over out-edges e = (j -> i) of d * alpha_e * grad_out_i, per head, with d read
// from the `kept` bytes (E x H) that `grad_alpha_rows` wrote and the mask's `scale`.
template <typename T, typename S>
void grad_values_row(S shape, const Neighbors& targets, const EdgeIds& edges, const T* alpha,
                     const std::uint8_t* kept, T scale, std::span<const T> grad_out,
                     T* grad_value) {
  const std::int64_t heads = shape.heads();
  PerHead<T, S> weights(shape);
  gather_row(
      shape, targets,
      [&](std::size_t k) {
        prefetch_ahead(edges, k, alpha, heads);
        prefetch_ahead(edges, k, kept, heads);
        const EdgeId edge = edges[k];
        for (std::int64_t h = 0; h < heads; ++h) {
          // A product with the 0/1 byte rather than a select: branch-free, the same values.
          weights[h] = static_cast<T>(kept[edge * heads + h]) * (scale * alpha[edge * heads + h]);
        }
        return weights.data();
      },
      grad_out, grad_value);
}

// Score kernels. Each provides:
//   heads()                                      H
//   score_row(shape, i, sources, row)            row[k * H + h] = score(i, j_k, h)
//   prepare(grad, N)                             sizes the gradients
//   dst_row(shape, grad, i, sources, first, row) from grad_scores in `row` (transformed in place
//                                                into what src_row needs), writes the
//                                                destination-side gradients
//   src_row(shape, grad, j, targets, edges, buf) from the transformed E x H buffer, writes the
//                                                source-side gradients of node j
//   finish(grad)                                 reduces per-node partials
// `shape` carries H (fixed at compile time where `with_shape` fixes it); channels are the
// kernel's own.

template <typename T>
class AdditiveRows {
 public:
  using Grad = ops::AdditiveScoreGrad<T>;

  AdditiveRows(const char* where, const Graph& mask, const ops::AdditiveScore<T>& score)
      : score_(score), heads_(score.src.cols()) {
    check_shape(where, "score.src", score.src, mask.num_nodes(), -1, "the mask's node count");
    check_shape(where, "score.dst", score.dst, mask.num_nodes(), heads_, "the mask's node count");
    channels_per_head(where, "score.src", heads_, heads_);
  }

  [[nodiscard]] std::int64_t heads() const { return heads_; }

  template <typename S>
  void score_row(S shape, NodeId i, const Neighbors& sources, T* row) const {
    scores_of(shape, sources, score_.src.data(), score_.dst.data() + i * shape.heads(),
              score_.negative_slope, row);
  }

  void prepare(Grad& grad, NodeId num_nodes) const {
    resize_buffer(grad.src, num_nodes, heads_);
    resize_buffer(grad.dst, num_nodes, heads_);
  }

  template <typename S>
  void dst_row(S shape, Grad& grad, NodeId i, const Neighbors& sources, EdgeId /*first_edge*/,
               T* row) const {
    const std::int64_t heads = shape.heads();
    dst_grads_of(shape, sources, score_.src.data(), score_.dst.data() + i * heads,
                 score_.negative_slope, row, grad.dst.data() + i * heads);
  }

  template <typename S>
  void src_row(S shape, Grad& grad, NodeId j, const Neighbors& /*targets*/, const EdgeIds& edges,
               const T* buffer) const {
    src_grads_of(shape, edges, buffer, grad.src.data() + j * shape.heads());
  }

  void finish(Grad& /*grad*/) const {}

 private:
  // The bodies of the row kernels, on pointers declared not to overlap, so the loops over a row's
  // heads vectorise.
  template <typename S>
  static void scores_of(S shape, const Neighbors& sources, const T* __restrict src_scores,
                        const T* __restrict dst, T slope, T* __restrict row) {
    if constexpr (S::kHeadsFixed == 1) {
      // One head: scalars, which is what Eigen's one-element arrays compute, without the
      // bookkeeping GCC keeps for them at every edge.
      for (std::size_t k = 0; k < sources.size(); ++k) {
        prefetch_ahead(sources, k, src_scores, 1);
        row[k] = leaky_relu(src_scores[sources[k]] + *dst, slope);
      }
    } else {
      const std::int64_t heads = shape.heads();
      const auto dst_heads = head_map(shape, dst);
      for (std::size_t k = 0; k < sources.size(); ++k) {
        prefetch_ahead(sources, k, src_scores, heads);
        const auto z = head_map(shape, src_scores + sources[k] * heads) + dst_heads;
        head_map(shape, row + static_cast<std::int64_t>(k) * heads) =
            z.max(T(0)) + slope * z.min(T(0));
      }
    }
  }

  template <typename S>
  static void dst_grads_of(S shape, const Neighbors& sources, const T* __restrict src_scores,
                           const T* __restrict dst, T slope, T* __restrict row,
                           T* __restrict grad_dst) {
    const std::int64_t heads = shape.heads();
    for (std::int64_t h = 0; h < heads; ++h) grad_dst[h] = T(0);
    for (std::size_t k = 0; k < sources.size(); ++k) {
      prefetch_ahead(sources, k, src_scores, heads);
      const T* src = src_scores + sources[k] * heads;
      for (std::int64_t h = 0; h < heads; ++h) {
        T& g = row[static_cast<std::int64_t>(k) * heads + h];
        g *= leaky_relu_slope(src[h] + dst[h], slope);
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
  void score_row(S shape, NodeId i, const Neighbors& sources, T* row) const {
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
      : score_(score), heads_(score.att.rows()), channels_(score.att.cols()) {
    if (heads_ <= 0) channels_per_head(where, "score.att", 0, heads_);
    if (score.att.outerStride() != channels_) {
      throw InvalidArgument(std::string(where) + ": score.att has rows " +
                            std::to_string(score.att.outerStride()) + " values apart, expected " +
                            std::to_string(channels_) + " (a contiguous H x C matrix)");
    }
    check_shape(where, "score.src", score.src, mask.num_nodes(), width(), "the mask's node count");
    check_shape(where, "score.dst", score.dst, mask.num_nodes(), width(), "the mask's node count");
  }

  [[nodiscard]] std::int64_t heads() const { return heads_; }

  template <typename S>
  void score_row(S shape, NodeId i, const Neighbors& sources, T* row) const {
    const std::int64_t heads = shape.heads();
    const T* dst = score_.dst.data() + i * width();
    const T* att = score_.att.data();
    for (std::size_t k = 0; k < sources.size(); ++k) {
      prefetch_ahead(sources, k, score_.src.data(), width());
      const T* src = score_.src.data() + sources[k] * width();
      for (std::int64_t h = 0; h < heads; ++h) {
        T sum = T(0);
        for (std::int64_t c = h * channels_; c < (h + 1) * channels_; ++c) {
          sum += att[c] * leaky_relu(src[c] + dst[c], score_.negative_slope);
        }
        row[static_cast<std::int64_t>(k) * heads + h] = sum;
      }
    }
  }

  void prepare(Grad& grad, NodeId num_nodes) const {
    resize_buffer(grad.src, num_nodes, width());
    resize_buffer(grad.dst, num_nodes, width());
    // Per-destination partials of att's gradient, summed over nodes in `finish` in a fixed order.
    resize_buffer(att_partials_, num_nodes, width());
  }

  template <typename S>
  void dst_row(S shape, Grad& grad, NodeId i, const Neighbors& sources, EdgeId /*first_edge*/,
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
      for (std::int64_t h = 0; h < heads; ++h) {
        const T g = row[static_cast<std::int64_t>(k) * heads + h];
        for (std::int64_t c = h * channels_; c < (h + 1) * channels_; ++c) {
          const T z = src[c] + dst[c];
          grad_dst[c] += g * att[c] * leaky_relu_slope(z, score_.negative_slope);
          partial[c] += g * leaky_relu(z, score_.negative_slope);
        }
      }
    }
  }

  template <typename S>
  void src_row(S shape, Grad& grad, NodeId j, const Neighbors& targets, const EdgeIds& edges,
               const T* buffer) const {
    const std::int64_t heads = shape.heads();
    const T* src = score_.src.data() + j * width();
    const T* att = score_.att.data();
    T* grad_src = grad.src.data() + j * width();
    for (std::int64_t c = 0; c < width(); ++c) grad_src[c] = T(0);
    for (std::size_t k = 0; k < targets.size(); ++k) {
      prefetch_ahead(targets, k, score_.dst.data(), width());
      const T* dst = score_.dst.data() + targets[k] * width();
      for (std::int64_t h = 0; h < heads; ++h) {
        const T g = buffer[edges[k] * heads + h];
        for (std::int64_t c = h * channels_; c < (h + 1) * channels_; ++c) {
          grad_src[c] += g * att[c] * leaky_relu_slope(src[c] + dst[c], score_.negative_slope);
        }
      }
    }
  }

  void finish(Grad& grad) const {
    grad.att.resize(heads_, channels_);
    grad.att.setZero();
    add_column_sums(att_partials_, grad.att.data());
  }

 private:
  [[nodiscard]] std::int64_t width() const { return heads_ * channels_; }

  const ops::GatV2Score<T>& score_;
  std::int64_t heads_;
  std::int64_t channels_;
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

// Runs `fn(shape, range)` on consecutive ranges of destination rows, in parallel, where `shape`
// is H x C, fixed at compile time where `with_shape` fixes it.
template <typename Fn>
void for_each_destination_range(const Graph& mask, const Schedule& schedule, std::int64_t heads,
                                std::int64_t channels, Fn&& fn) {
  const auto offsets = mask.in_offsets();
  for_each_row_range(offsets, schedule.grain, [&](NodeId begin, NodeId end) {
    const RowRange range{begin, end, offsets[to_index(begin)], offsets[to_index(end)]};
    with_shape(heads, channels, [&](auto shape) { fn(shape, range); });
  });
}

// Runs `fn(shape, i, sources, first_edge)` for every destination row, in parallel, with `shape`
// as above: for kernels that need no range-wide pass.
template <typename Fn>
void for_each_destination(const Graph& mask, const Schedule& schedule, std::int64_t heads,
                          std::int64_t channels, Fn&& fn) {
  for_each_destination_range(
      mask, schedule, heads, channels, [&](auto shape, const RowRange& range) {
        for_each_row(mask, range, [&](NodeId i, const Neighbors& sources, EdgeId first) {
          fn(shape, i, sources, first);
        });
      });
}

// Runs `fn(shape, j, targets, edges)` for every source row of the transpose, in parallel, with
// `shape` as above.
template <typename Fn>
void for_each_source(const Graph& mask, const Schedule& schedule, std::int64_t heads,
                     std::int64_t channels, Fn&& fn) {
  const auto offsets = mask.out_offsets();
  for_each_row_range(offsets, schedule.grain, [&](NodeId begin, NodeId end) {
    with_shape(heads, channels, [&](auto shape) {
      for (NodeId j = begin; j < end; ++j) {
        const EdgeId first = offsets[to_index(j)];
        const EdgeId last = offsets[to_index(j) + 1];
        fn(shape, j, Neighbors(mask.out_targets(), first, last),
           EdgeIds(mask.out_edge_ids(), first, last));
      }
    });
  });
}

// Checks an attention-shaped (E x H) matrix.
template <typename T>
void check_edge_matrix(const char* where, const char* name, const Graph& mask,
                       const RowMatrix<T>& matrix, std::int64_t heads) {
  check_shape(where, name, matrix, mask.num_edges(), heads, "the mask's edge count");
}

}  // namespace maskgat::detail
