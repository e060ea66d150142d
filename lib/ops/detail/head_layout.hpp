#pragma once
// The layout of per-edge and per-node rows of H heads x C channels: the shape, fixed at compile
// time for the common layouts, per-head values and maps, and per-thread scratch.

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "maskgat/core/tensor.hpp"

namespace maskgat::ops::detail {

inline std::size_t to_index(std::int64_t value) { return static_cast<std::size_t>(value); }

// Every element of a row-major matrix, in order.
template <typename T>
std::span<const T> elements(const RowMatrix<T>& matrix) {
  return {matrix.data(), to_index(matrix.size())};
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

}  // namespace maskgat::ops::detail
