#include "maskgat/ops/matmul.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "core/detail/parallel.hpp"
#include "ops/detail/buffer.hpp"
#include "ops/detail/head_layout.hpp"
#include "ops/detail/register_blocks.hpp"
#include "ops/detail/shape_checks.hpp"
#include "ops/detail/zero_rows.hpp"

namespace maskgat::ops {
namespace {

// Block sizes are constants, never derived from the thread count, so each element's arithmetic
// is fixed.
using detail::Block;
using detail::kColumnBlock;
using detail::kWeightRowBlock;
using detail::Tail;
using maskgat::detail::kRowBlock;

// Columns of the output formed per pass over a row's entries: several register blocks at once,
// so each entry's index and value are read once per pass and the blocks' independent
// multiply-add chains overlap.
constexpr std::int64_t kPassColumns = 4 * kColumnBlock;
template <typename T>
using PassBlock = Eigen::Array<T, kPassColumns, 1>;

using Index = RowSparse<float>::StorageIndex;

// One past row i's last entry: an uncompressed matrix keeps a count per row, its row's unused
// slots before the next row's start.
template <typename T>
Index row_end(const Eigen::Map<const RowSparse<T>>& x, std::int64_t i) {
  const Index* counts = x.innerNonZeroPtr();
  return counts != nullptr ? x.outerIndexPtr()[i] + counts[i] : x.outerIndexPtr()[i + 1];
}

// target[c] = the sum of values[k] * weight(ids[k], c) over k in [0, count), in that order. The
// columns are formed in register blocks, each in one pass over the entries. The weight rows of the
// entries kAhead further on are prefetched: they are read in the features' random order, and
// between two products of a layer the rest of the pass pushes them out of the core's caches (the
// forward product of Cora's features took a sixth fewer profile samples with them).
template <typename T>
void sum_weighted_rows(const Eigen::Ref<const RowMatrix<T>>& weight, const Index* ids,
                       const T* values, std::int64_t count, T* target) {
  const std::int64_t width = weight.cols();
  constexpr std::int64_t kAhead = 8;
  constexpr std::int64_t kLine = 64 / static_cast<std::int64_t>(sizeof(T));
  const auto pass = [&](auto sum, std::int64_t first) {
    using Sum = decltype(sum);
    for (std::int64_t k = 0; k < count; ++k) {
      if (k + kAhead < count) {
        const T* next = weight.row(ids[k + kAhead]).data() + first;
        for (std::int64_t c = 0; c < sum.size(); c += kLine) __builtin_prefetch(next + c);
      }
      const T* w = weight.row(ids[k]).data() + first;
      sum += values[k] * Eigen::Map<const Sum>(w, sum.size());
    }
    Eigen::Map<Sum>(target + first, sum.size()) = sum;
  };
  const std::int64_t passes = width / kPassColumns * kPassColumns;
  const std::int64_t full = width / kColumnBlock * kColumnBlock;
  for (std::int64_t first = 0; first < passes; first += kPassColumns) {
    pass(PassBlock<T>::Zero().eval(), first);
  }
  for (std::int64_t first = passes; first < full; first += kColumnBlock) {
    pass(Block<T>::Zero().eval(), first);
  }
  if (full < width) pass(Tail<T>::Zero(width - full).eval(), full);
}

// The sparse weight gradient's tasks each own a block of rows of grad_weight (features), of about
// kWeightBlockBytes so that they stay in the core's second-level cache (2 MB here) while the task
// runs over x's rows, and at most kMaxWeightBlocks of them, each with about kWeightBlockEntries of
// x's entries or more: every task reads all of x's rows, which outweighs the cache on small
// inputs, and blocks that fit the first-level cache instead (32 KB) made Amazon Computers' epoch
// 3 % slower. (Tasks that owned slices of columns instead wrote parts of the same rows from two
// cores: on Amazon Computers the two threads' epoch was slower than one thread's.)
constexpr std::int64_t kWeightBlockBytes = 96 * 1024;
constexpr std::int64_t kMaxWeightBlocks = 8;
constexpr std::int64_t kWeightBlockEntries = 32 * 1024;
template <typename T>
constexpr std::int64_t kLinePad = 64 / static_cast<std::int64_t>(sizeof(T));

// target[c] += value * source[c] for c in [0, width), in register blocks.
template <typename T>
[[gnu::always_inline]] inline void add_scaled(T value, const T* source, T* target,
                                              std::int64_t width) {
  std::int64_t c = 0;
  for (; c + kPassColumns <= width; c += kPassColumns) {
    Eigen::Map<PassBlock<T>>(target + c) += value * Eigen::Map<const PassBlock<T>>(source + c);
  }
  for (; c + kColumnBlock <= width; c += kColumnBlock) {
    Eigen::Map<Block<T>>(target + c) += value * Eigen::Map<const Block<T>>(source + c);
  }
  if (c < width) {
    Eigen::Map<Tail<T>>(target + c, width - c) +=
        value * Eigen::Map<const Tail<T>>(source + c, width - c);
  }
}

// Whether every index in [begin, end) lies in [first, last): their minimum and maximum, in one
// pass without branches, which vectorises.
[[nodiscard]] inline bool all_within(const Index* begin, const Index* end, std::int64_t first,
                                     std::int64_t last) {
  Index low = std::numeric_limits<Index>::max();
  Index high = std::numeric_limits<Index>::min();
  for (const Index* k = begin; k < end; ++k) {
    low = std::min(low, *k);
    high = std::max(high, *k);
  }
  return begin == end || (low >= first && high < last);
}

// target row inner[k] += values[k] * grad for k in [begin, end) (rows `stride` apart). With the
// width fixed at compile time, grad stays in registers for the whole row; the pointers are
// declared not to overlap, so nothing is reloaded after each entry's stores.
template <typename T, int kWidth>
[[gnu::always_inline]] inline void add_entries(const Index* __restrict inner,
                                               const T* __restrict values, Index begin, Index end,
                                               const T* __restrict grad, T* __restrict target,
                                               std::int64_t stride, std::int64_t width) {
  if constexpr (kWidth != Eigen::Dynamic) {
    using Row = Eigen::Array<T, kWidth, 1>;
    const Row row = Eigen::Map<const Row>(grad);
    for (Index k = begin; k < end; ++k) {
      Eigen::Map<Row>(target + inner[k] * stride) += values[k] * row;
    }
  } else {
    for (Index k = begin; k < end; ++k)
      add_scaled(values[k], grad, target + inner[k] * stride, width);
  }
}

// grad_weight += x^T grad_out for sparse x: every entry (i, f) of x adds row i of grad_out, scaled
// by x(i, f), into row f of grad_weight, rows i in order, so each element of grad_weight adds its
// entries in row order however the features are cut into blocks. One task per block of features.
// With several blocks, a first pass finds where each row's entries of each block start, as Eigen
// keeps a row's column indices ascending; an entry outside its block means they were not, and
// throws rather than race with another block's task (grad_weight is then partly updated). One
// block is a single pass over the rows, in the calling thread. A row of
// grad_out that is zero is skipped: it would add x(i, f) * 0, +-0 for finite x, which leaves every
// sum as it is (a sum from +0 never is -0), and in whole-graph training most nodes' gradients are
// zero, as no loss term reaches them.
template <typename T>
void scatter_weighted_rows(const Eigen::Map<const RowSparse<T>>& x, const RowMatrix<T>& grad_out,
                           Eigen::Ref<RowMatrix<T>>& grad_weight) {
  const Index* outer = x.outerIndexPtr();
  const Index* inner = x.innerIndexPtr();
  const T* values = x.valuePtr();
  const std::int64_t rows = x.rows();
  const std::int64_t features = x.cols();
  const std::int64_t width = grad_weight.cols();
  const std::int64_t blocks = std::clamp<std::int64_t>(
      std::min((features * width * static_cast<std::int64_t>(sizeof(T)) + kWeightBlockBytes - 1) /
                   kWeightBlockBytes,
               x.nonZeros() / kWeightBlockEntries),
      1, kMaxWeightBlocks);
  // Adds row i's entries [begin, end), all of features [first, last), into `target`, whose row f
  // is at target + f * stride.
  const auto add_row = [&](std::int64_t i, Index begin, Index end, std::int64_t first,
                           std::int64_t last, T* target, std::int64_t stride) {
    if (!all_within(inner + begin, inner + end, first, last)) {
      throw InvalidArgument("ops::matmul_backward_weight: the column indices of x's row " +
                            std::to_string(i) + " are not ascending");
    }
    const T* grad = grad_out.row(i).data();
    if (width == kPassColumns) {
      add_entries<T, kPassColumns>(inner, values, begin, end, grad, target, stride, width);
    } else {
      add_entries<T, Eigen::Dynamic>(inner, values, begin, end, grad, target, stride, width);
    }
  };
  if (blocks == 1) {
    for (std::int64_t i = 0; i < rows; ++i) {
      if (!detail::is_zero_row(grad_out.row(i).data(), width)) {
        add_row(i, outer[i], row_end(x, i), 0, features, grad_weight.data(),
                grad_weight.outerStride());
      }
    }
    return;
  }
  const std::int64_t block = (features + blocks - 1) / blocks;
  // starts[i * (blocks + 1) + b]: the first entry of row i at or past feature b * block; all the
  // same (no entries) for a row of grad_out that is zero.
  std::vector<Index> starts(static_cast<std::size_t>(rows * (blocks + 1)));
  maskgat::detail::for_each_block(rows, kRowBlock, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      Index* row_starts = starts.data() + i * (blocks + 1);
      if (detail::is_zero_row(grad_out.row(i).data(), width)) {
        std::fill(row_starts, row_starts + blocks + 1, outer[i]);
        continue;
      }
      const Index row_last = row_end(x, i);
      Index k = outer[i];
      row_starts[0] = k;
      for (std::int64_t b = 1; b < blocks; ++b) {
        while (k < row_last && inner[k] < b * block) ++k;
        row_starts[b] = k;
      }
      row_starts[blocks] = row_last;
    }
  });
  maskgat::detail::run_tasks(blocks, [&](std::int64_t b) {
    const std::int64_t first = b * block;
    const std::int64_t last = std::min(first + block, features);
    // The block's rows of grad_weight, copied into scratch rows a cache line longer: rows a
    // multiple of 4 KB apart (16 of grad_weight's 64-float rows) alias in the core's store
    // forwarding, and an entry's loads then wait for the stores of the entries before it.
    const std::int64_t padded = width + kLinePad<T>;
    T* local = detail::row_scratch<T>(static_cast<std::size_t>((last - first) * padded));
    for (std::int64_t f = first; f < last; ++f) {
      std::copy_n(grad_weight.row(f).data(), width, local + (f - first) * padded);
    }
    T* const target = local - first * padded;
    for (std::int64_t i = 0; i < rows; ++i) {
      const Index* row_starts = starts.data() + i * (blocks + 1);
      add_row(i, row_starts[b], row_starts[b + 1], first, last, target, padded);
    }
    for (std::int64_t f = first; f < last; ++f) {
      std::copy_n(local + (f - first) * padded, width, grad_weight.row(f).data());
    }
  });
}

}  // namespace

template <typename T>
void matmul(InputRef<T> x, const Eigen::Ref<const RowMatrix<T>>& weight, RowMatrix<T>& out) {
  constexpr const char* kWhere = "ops::matmul";
  if (x.cols() != weight.rows()) {
    throw InvalidArgument(std::string(kWhere) + ": x has " + std::to_string(x.cols()) +
                          " columns, weight has " + std::to_string(weight.rows()) + " rows");
  }
  detail::resize_buffer(out, x.rows(), weight.cols());
  maskgat::detail::for_each_block(x.rows(), kRowBlock, [&](std::int64_t begin, std::int64_t end) {
    if (x.is_sparse()) {
      const auto sparse = x.sparse();
      const Index* outer = sparse.outerIndexPtr();
      for (std::int64_t i = begin; i < end; ++i) {
        sum_weighted_rows<T>(weight, sparse.innerIndexPtr() + outer[i],
                             sparse.valuePtr() + outer[i], row_end(sparse, i) - outer[i],
                             out.row(i).data());
      }
    } else {
      out.middleRows(begin, end - begin).noalias() =
          x.dense().middleRows(begin, end - begin) * weight;
    }
  });
}

template <typename T>
void matmul_backward_weight(InputRef<T> x, const RowMatrix<T>& grad_out,
                            Eigen::Ref<RowMatrix<T>> grad_weight) {
  constexpr const char* kWhere = "ops::matmul_backward_weight";
  detail::check_shape(kWhere, "grad_out", grad_out, x.rows(), grad_weight.cols(), "the rows of x");
  detail::check_shape(kWhere, "grad_weight", grad_weight, x.cols(), -1, "the columns of x");
  if (x.is_sparse()) {
    scatter_weighted_rows(x.sparse(), grad_out, grad_weight);
  } else {
    maskgat::detail::for_each_block(
        x.cols(), kWeightRowBlock, [&](std::int64_t begin, std::int64_t end) {
          grad_weight.middleRows(begin, end - begin).noalias() +=
              x.dense().middleCols(begin, end - begin).transpose() * grad_out;
        });
  }
}

template <typename T>
void matmul_backward_input(const RowMatrix<T>& grad_out,
                           const Eigen::Ref<const RowMatrix<T>>& weight, RowMatrix<T>& grad_x) {
  constexpr const char* kWhere = "ops::matmul_backward_input";
  detail::check_shape(kWhere, "grad_out", grad_out, grad_x.rows(), weight.cols(),
                      "the rows of grad_x");
  detail::check_shape(kWhere, "weight", weight, grad_x.cols(), -1, "the columns of grad_x");
  maskgat::detail::for_each_block(
      grad_out.rows(), kRowBlock, [&](std::int64_t begin, std::int64_t end) {
        grad_x.middleRows(begin, end - begin).noalias() +=
            grad_out.middleRows(begin, end - begin) * weight.transpose();
      });
}

#define MASKGAT_INSTANTIATE_MATMUL(T)                                                         \
  template void matmul<T>(InputRef<T>, const Eigen::Ref<const RowMatrix<T>>&, RowMatrix<T>&); \
  template void matmul_backward_weight<T>(InputRef<T>, const RowMatrix<T>&,                   \
                                          Eigen::Ref<RowMatrix<T>>);                          \
  template void matmul_backward_input<T>(const RowMatrix<T>&,                                 \
                                         const Eigen::Ref<const RowMatrix<T>>&, RowMatrix<T>&);
MASKGAT_INSTANTIATE_MATMUL(float)
MASKGAT_INSTANTIATE_MATMUL(double)
#undef MASKGAT_INSTANTIATE_MATMUL

}  // namespace maskgat::ops
