#pragma once
// Destination and source rows of a mask as kernels walk them: a task's range of destination rows,
// one row's ids, and the parallel passes over destination ranges, destinations and sources.

#include <cstdint>
#include <span>

#include "core/detail/parallel.hpp"
#include "maskgat/core/schedule.hpp"
#include "maskgat/core/types.hpp"
#include "maskgat/graph/graph.hpp"
#include "ops/detail/head_layout.hpp"

namespace maskgat::ops::detail {

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

// Runs `fn(shape, range)` on consecutive ranges of destination rows, in parallel, where `shape`
// is H x C, fixed at compile time where `with_shape` fixes it.
template <typename Fn>
void for_each_destination_range(const Graph& mask, const Schedule& schedule, std::int64_t heads,
                                std::int64_t channels, Fn&& fn) {
  const auto offsets = mask.in_offsets();
  maskgat::detail::for_each_row_range(offsets, schedule.grain, [&](NodeId begin, NodeId end) {
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
  maskgat::detail::for_each_row_range(offsets, schedule.grain, [&](NodeId begin, NodeId end) {
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

}  // namespace maskgat::ops::detail
