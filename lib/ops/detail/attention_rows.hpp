#pragma once
// Serial row kernels of masked attention (softmax, aggregation and their backward), shared by the
// unfused ops (sddmm, edge_softmax, spmm) and the fused attention, so both compute every value with
// the same code in the same order.
//
// Per-edge arrays are E x H in destination-major order; a "row" pointer points at the first edge
// of a destination row, so `row[k * H + h]` is head h of the row's k-th in-edge.

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "maskgat/core/random.hpp"
#include "maskgat/core/tensor.hpp"
#include "maskgat/graph/graph.hpp"
#include "ops/detail/dropout_mask.hpp"
#include "ops/detail/head_layout.hpp"
#include "ops/detail/row_ranges.hpp"
#include "ops/detail/zero_rows.hpp"

namespace maskgat::ops::detail {

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

// The attention-dropout factors of coefficients (e, h): element n(e) * H + h of the key's mask,
// n(e) = e, or, when the key has numbers, the number of e's row plus e's place in its row.
template <typename T>
class DropoutFactor {
 public:
  // @throws InvalidArgument naming `where` when the probability is outside [0, 1) or the key has
  //         numbers but not one per row of `mask`.
  DropoutFactor(const char* where, const DropoutKey& dropout, std::int64_t heads, const Graph& mask)
      : mask_(where, dropout), numbers_(dropout.numbers), heads_(heads) {
    check_numbers(where, dropout, mask.num_nodes());
  }

  // The factor of a kept coefficient, 1 / (1 - p) (1 without dropout).
  [[nodiscard]] T scale() const { return mask_.scale(); }

  // Writes the factors of the edges of `range` (edges x H, edge-major).
  [[gnu::always_inline]] void fill(const Graph& mask, const RowRange& range, T* factors) const {
    if (numbers_.empty()) {
      mask_.fill(static_cast<std::uint64_t>(range.first * heads_),
                 (range.last - range.first) * heads_, factors);
      return;
    }
    const auto offsets = mask.in_offsets();
    for (NodeId i = range.begin; i < range.end; ++i) {
      const EdgeId first = offsets[to_index(i)];
      mask_.fill(static_cast<std::uint64_t>(numbers_[to_index(i)] * heads_),
                 (offsets[to_index(i) + 1] - first) * heads_,
                 factors + (first - range.first) * heads_);
    }
  }

 private:
  DropoutMask<T> mask_;
  std::span<const std::int64_t> numbers_;
  std::int64_t heads_;
};

// The destination rows a kernel forms: every row.
struct AllRows {
  constexpr bool operator()(NodeId /*i*/) const { return true; }
};

// The destination rows a kernel forms: those whose byte is nonzero, or every row when there are
// no bytes.
class SomeRows {
 public:
  explicit SomeRows(std::span<const std::uint8_t> rows) : rows_(rows) {}
  [[nodiscard]] bool operator()(NodeId i) const { return rows_.empty() || rows_[to_index(i)] != 0; }

 private:
  std::span<const std::uint8_t> rows_;
};

// Elements per block of the padded exp below: a multiple of every SIMD width Eigen uses.
constexpr std::int64_t kExpBlock = 16;

// The body of `softmax_rows` on its buffers: `shifted` and `weights` (padded elements each),
// `max` and `inverse` (H each). The buffers are declared not to overlap, so the loops over heads
// vectorise.
template <typename T, typename S, typename Rows>
void softmax_rows_in(S shape, const EdgeId* __restrict offsets, const RowRange& range,
                     T* __restrict scores, std::int64_t padded, T* __restrict shifted,
                     T* __restrict weights, T* __restrict max, T* __restrict inverse,
                     const Rows& formed) {
  const std::int64_t heads = shape.heads();
  const std::int64_t size = (range.last - range.first) * heads;
  auto row_max = head_map(shape, max);
  for (NodeId i = range.begin; i < range.end; ++i) {
    const std::int64_t degree = offsets[i + 1] - offsets[i];
    if (degree == 0) continue;
    const T* row = scores + (offsets[i] - range.first) * heads;
    T* out = shifted + (offsets[i] - range.first) * heads;
    if (!formed(i)) {
      // Exponentiated with the rest, as exp(0), and never normalised.
      for (std::int64_t k = 0; k < degree * heads; ++k) out[k] = T(0);
      continue;
    }
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
    if (!formed(i)) continue;
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
// `range` that `formed` names (the others' scores are left as they are). The loops run over the
// heads of one edge (contiguous). The exponentials of the whole range go through Eigen's
// vectorised exp in one call, on a copy padded to whole SIMD blocks, so no element takes a scalar
// path and every element gets the same result wherever it lies.
template <typename T, typename S, typename Rows = AllRows>
void softmax_rows(S shape, const Graph& mask, const RowRange& range, T* scores,
                  const Rows& formed = {}) {
  const std::int64_t size = (range.last - range.first) * shape.heads();
  if (size == 0) return;
  const std::int64_t padded = (size + kExpBlock - 1) / kExpBlock * kExpBlock;
  const std::int64_t heads = shape.heads();
  T* scratch = row_scratch<T>(static_cast<std::size_t>(2 * padded + 2 * heads));
  softmax_rows_in(shape, mask.in_offsets().data(), range, scores + range.first * heads, padded,
                  scratch, scratch + padded, scratch + 2 * padded, scratch + 2 * padded + heads,
                  formed);
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

// The nodes whose row of a gradient holds a nonzero: a byte per node, 1 where the row has one.
// A gradient row that is exactly zero adds nothing to any sum it enters (a term 0 * x is +-0 for
// finite x, and a running sum from +0 never is -0), so the backward kernels skip those rows, the
// many nodes that no loss term reaches, with results bitwise the same.
class LiveRows {
 public:
  // Marks the rows of `grad` in `live` (N bytes), in parallel over fixed blocks of rows.
  template <typename T>
  LiveRows(const RowMatrix<T>& grad, std::uint8_t* live) : live_(live) {
    const std::int64_t width = grad.cols();
    maskgat::detail::for_each_block(
        grad.rows(), maskgat::detail::kRowBlock, [&](std::int64_t begin, std::int64_t end) {
          for (std::int64_t i = begin; i < end; ++i) {
            live[i] = is_zero_row(grad.data() + i * width, width) ? 0 : 1;
          }
        });
  }

  // The rows marked already in `live` (N bytes).
  explicit LiveRows(const std::uint8_t* live) : live_(live) {}

  [[nodiscard]] bool operator()(NodeId i) const { return live_[i] != 0; }

 private:
  const std::uint8_t* live_;
};

// Runs `fn(shape, j, targets, edges)` for every source row of the transpose, in parallel, as
// `for_each_source`, with only the out-edges whose target is live (`LiveRows`), in order. Each
// range of sources first packs those into per-thread arrays without a branch, so the kernels walk
// them without testing every edge (in whole-graph training about half the hidden layer's edges and
// nearly all the output layer's reach a zero row, and a test per edge mispredicted at random), and
// their prefetches look ahead over live edges only.
template <typename Fn>
void for_each_live_source(const Graph& mask, const Schedule& schedule, std::int64_t heads,
                          std::int64_t channels, const LiveRows& live, Fn&& fn) {
  const auto offsets = mask.out_offsets();
  const auto all_targets = mask.out_targets();
  const auto all_edges = mask.out_edge_ids();
  maskgat::detail::for_each_row_range(offsets, schedule.grain, [&](NodeId begin, NodeId end) {
    const EdgeId first = offsets[to_index(begin)];
    const auto count = to_index(offsets[to_index(end)] - first);
    const auto rows = to_index(end - begin);
    // One scratch per id type: the packed targets; the packed edge ids, then each row's start.
    NodeId* targets = row_scratch<NodeId>(count);
    EdgeId* edges = row_scratch<EdgeId>(count + rows + 1);
    EdgeId* starts = edges + count;
    EdgeId packed = 0;
    for (NodeId j = begin; j < end; ++j) {
      starts[to_index(j - begin)] = packed;
      for (EdgeId e = offsets[to_index(j)]; e < offsets[to_index(j) + 1]; ++e) {
        const NodeId target = all_targets[to_index(e)];
        targets[packed] = target;
        edges[packed] = all_edges[to_index(e)];
        packed += live(target) ? 1 : 0;
      }
    }
    starts[rows] = packed;
    const std::span<const NodeId> packed_targets(targets, to_index(packed));
    const std::span<const EdgeId> packed_edges(edges, to_index(packed));
    with_shape(heads, channels, [&](auto shape) {
      for (NodeId j = begin; j < end; ++j) {
        const EdgeId row_first = starts[to_index(j - begin)];
        const EdgeId row_last = starts[to_index(j - begin) + 1];
        fn(shape, j, Neighbors(packed_targets, row_first, row_last),
           EdgeIds(packed_edges, row_first, row_last));
      }
    });
  });
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

// out_i = sum_k d * alpha_k * v_{j_k}, per head, for the rows of `range` that `formed` names
// (the others are set to zero). The range's dropout factors are drawn in one pass over its
// edges x H elements (vectorised) and scaled by alpha, before the gathers.
template <typename T, typename S, typename Rows = AllRows>
void aggregate_rows(S shape, const Graph& mask, const RowRange& range, const T* alpha,
                    const T* values, const DropoutFactor<T>& dropout, T* out,
                    const Rows& formed = {}) {
  const std::int64_t heads = shape.heads();
  const std::int64_t width = heads * shape.channels();
  const std::int64_t count = (range.last - range.first) * heads;
  T* weights = row_scratch<T>(static_cast<std::size_t>(count));
  dropout.fill(mask, range, weights);
  const T* range_alpha = alpha + range.first * heads;
  for (std::int64_t k = 0; k < count; ++k) weights[k] *= range_alpha[k];
  const std::span<const T> all_values(values, to_index(mask.num_nodes() * width));
  // Inlined: GCC outlined this row body once the single-head path made it larger, and a call per
  // row costs more than a row's few gathers.
  const auto row = [&](NodeId i, const Neighbors& sources, EdgeId first)
      __attribute__((always_inline)) {
    if (!formed(i)) {
      for (std::int64_t c = 0; c < width; ++c) out[i * width + c] = T(0);
      return;
    }
    const T* row_weights = weights + (first - range.first) * heads;
    gather_row(
        shape, sources,
        [&](std::size_t k) { return row_weights + static_cast<std::int64_t>(k) * heads; },
        all_values, out + i * width);
  };
  for_each_row(mask, range, row);
}

// Whether rows of shape S are read channel-major (`ChannelMajor`): several heads and channels
// fixed at compile time, where the heads fill vector lanes.
template <typename S>
constexpr bool kChannelMajor = S::kHeadsFixed > 1 && S::kChannelsFixed > 0;

// Node rows of H x C values laid out channel-major, C x H: element (h, c) of row j at
// j * H * C + c * H + h, for the shapes `kChannelMajor` names; other shapes read the rows as they
// are. The per-head dot products of `grad_alpha_rows` then run over channels with the heads in
// vector lanes, one multiply-add per channel, rather than over each head's channels in turn.
template <typename T>
class ChannelMajor {
 public:
  // Lays out `values` (N x (H * C)) channel-major in `buffer` (N * H * C elements, not
  // overlapping `values`) where the shape asks for it, in parallel over fixed blocks of rows.
  ChannelMajor(const RowMatrix<T>& values, std::int64_t heads, T* buffer) : data_(values.data()) {
    const std::int64_t width = values.cols();
    with_shape(heads, width / heads, [&](auto shape) {
      if constexpr (kChannelMajor<decltype(shape)>) {
        maskgat::detail::for_each_block(
            values.rows(), maskgat::detail::kRowBlock, [&](std::int64_t begin, std::int64_t end) {
              for (std::int64_t j = begin; j < end; ++j) {
                const T* row = values.data() + j * width;
                T* out = buffer + j * width;
                for (std::int64_t h = 0; h < shape.heads(); ++h) {
                  for (std::int64_t c = 0; c < shape.channels(); ++c) {
                    out[c * shape.heads() + h] = row[h * shape.channels() + c];
                  }
                }
              }
            });
        data_ = buffer;
      }
    });
  }

  [[nodiscard]] const T* data() const { return data_; }

 private:
  const T* data_;
};

// grad_alpha_k = d * <grad_out_i, v_{j_k}>, per head, for the rows of `range`; with the values
// channel-major (`ChannelMajor`), each head's dot product is one running sum over its channels in
// order, all heads at once in vector lanes. A row of grad_out that is zero (`LiveRows`) gives
// zeros, written only with `zero_dead_rows` (the fused backward reads nothing of those rows).
// Also writes the live rows' mask to `kept` (edges x H bytes, 1 where d != 0), which the source
// pass then reads instead of redrawing the mask edge by edge: a byte per coefficient rather than a
// float. The range's mask is drawn in one pass first (vectorised).
template <typename T, typename S>
void grad_alpha_rows(S shape, const Graph& mask, const RowRange& range, const T* grad_out,
                     const LiveRows& live, const ChannelMajor<T>& values,
                     const DropoutFactor<T>& dropout, T* grad_alpha, std::uint8_t* kept,
                     bool zero_dead_rows) {
  const std::int64_t heads = shape.heads();
  const std::int64_t channels = shape.channels();
  const std::int64_t width = heads * channels;
  const std::int64_t count = (range.last - range.first) * heads;
  T* factors = row_scratch<T>(static_cast<std::size_t>(count));
  dropout.fill(mask, range, factors);
  const T* all_values = values.data();
  for_each_row(mask, range, [&](NodeId i, const Neighbors& sources, EdgeId first) {
    const auto size = static_cast<std::int64_t>(sources.size()) * heads;
    if (!live(i)) {
      T* row = grad_alpha + first * heads;
      if (zero_dead_rows) {
        for (std::int64_t k = 0; k < size; ++k) row[k] = T(0);
      }
      return;
    }
    const T* grad_row = grad_out + i * width;
    const T* row_factors = factors + (first - range.first) * heads;
    if constexpr (kChannelMajor<S>) {
      constexpr int kHeads = S::kHeadsFixed;
      constexpr int kChannels = S::kChannelsFixed;
      using Lanes = Eigen::Array<T, kHeads, 1>;
      // The row's grad_out channel-major, in registers.
      Lanes grad[kChannels];
      for (int h = 0; h < kHeads; ++h) {
        for (int c = 0; c < kChannels; ++c) grad[c][h] = grad_row[h * kChannels + c];
      }
      for (std::size_t k = 0; k < sources.size(); ++k) {
        prefetch_ahead(sources, k, all_values, width);
        const T* value = all_values + sources[k] * width;
        Lanes sum = Lanes::Zero();
        for (int c = 0; c < kChannels; ++c) {
          sum += grad[c] * Eigen::Map<const Lanes>(value + c * kHeads);
        }
        const auto at = static_cast<std::int64_t>(k) * heads;
        Eigen::Map<Lanes>(grad_alpha + first * heads + at) =
            sum * Eigen::Map<const Lanes>(row_factors + at);
      }
    } else {
      for (std::size_t k = 0; k < sources.size(); ++k) {
        prefetch_ahead(sources, k, all_values, width);
        const T* value = all_values + sources[k] * width;
        const auto at = static_cast<std::int64_t>(k) * heads;
        T* target = grad_alpha + first * heads + at;
        for (std::int64_t h = 0; h < heads; ++h) {
          target[h] =
              dot(grad_row + h * channels, value + h * channels, channels) * row_factors[at + h];
        }
      }
    }
    std::uint8_t* row_kept = kept + first * heads;
    for (std::int64_t k = 0; k < size; ++k) row_kept[k] = row_factors[k] != T(0) ? 1 : 0;
  });
}

// grad_v_j = sum over out-edges e = (j -> i) of d * alpha_e * grad_out_i, per head, with d read
// from the `kept` bytes (E x H) that `grad_alpha_rows` wrote and the mask's `scale`, over the
// out-edges given (`for_each_live_source` gives those whose row of grad_out is not zero).
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

}  // namespace maskgat::ops::detail
