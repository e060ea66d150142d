#include "maskgat/ops/matmul.hpp"

#include <tbb/task_arena.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/detail/parallel.hpp"
#include "ops/detail/buffer.hpp"
#include "ops/detail/shape_checks.hpp"

namespace maskgat::ops {
namespace {

// Block sizes are constants, never derived from the thread count, so each element's arithmetic
// is fixed.
using maskgat::detail::kRowBlock;
constexpr std::int64_t kWeightRowBlock = 32;

// Columns of the output formed per pass over a row's entries, so that their sums stay in
// registers instead of being stored and reloaded per entry.
constexpr std::int64_t kColumnBlock = 16;
template <typename T>
using Block = Eigen::Array<T, kColumnBlock, 1>;
template <typename T>
using Tail = Eigen::Array<T, Eigen::Dynamic, 1, 0, kColumnBlock, 1>;

// Columns of the output formed per pass over a row's entries: several register blocks at once,
// so each entry's index and value are read once per pass and the blocks' independent
// multiply-add chains overlap.
constexpr std::int64_t kPassColumns = 4 * kColumnBlock;
template <typename T>
using PassBlock = Eigen::Array<T, kPassColumns, 1>;

using Index = RowSparse<float>::StorageIndex;

// target[c] (= or, with `accumulate`, +=) the sum of value * weight(id, c) over the entries
// (id, value) that `entries(add)` passes to `add(ids, values, count)` in runs, in that order. The
// columns are formed in register blocks, each in one pass over the entries; accumulating starts
// each sum from the target, so `+=` adds the entries in the same order as one running sum.
// The weight rows of the entries kAhead further on in a run are prefetched: they are read in the
// features' random order, and between two products of a layer the rest of the pass pushes them
// out of the core's caches (the forward product of Cora's features took a sixth fewer profile
// samples with them).
template <typename T, typename Entries>
void sum_weighted_rows(const Eigen::Ref<const RowMatrix<T>>& weight, Entries&& entries, T* target,
                       bool accumulate) {
  const std::int64_t width = weight.cols();
  constexpr std::int64_t kAhead = 8;
  constexpr std::int64_t kLine = 64 / static_cast<std::int64_t>(sizeof(T));
  const auto pass = [&](auto sum, std::int64_t first) {
    using Sum = decltype(sum);
    if (accumulate) sum = Eigen::Map<const Sum>(target + first, sum.size());
    entries([&](const Index* ids, const T* values, std::int64_t count) {
      for (std::int64_t k = 0; k < count; ++k) {
        if (k + kAhead < count) {
          const T* next = weight.row(ids[k + kAhead]).data() + first;
          for (std::int64_t c = 0; c < sum.size(); c += kLine) __builtin_prefetch(next + c);
        }
        const T* w = weight.row(ids[k]).data() + first;
        sum += values[k] * Eigen::Map<const Sum>(w, sum.size());
      }
    });
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

// The entries of a sparse x by column, for x^T products: within each of a few fixed blocks of
// rows, the block's entries (row id, value) are grouped by column, in row order, in the block's
// own slots (those of its rows in x). Column f's entries in row order are then its runs in the
// blocks in turn. One task groups each block and writes only that block's slots; buffers keep
// their capacity from call to call.
template <typename T>
class Columns {
 public:
  void assign(const RowSparse<T>& x) {
    const std::int64_t rows = x.rows();
    cols_ = x.cols();
    // At most 8 blocks of at least 256 rows: a column has one run per block.
    const std::int64_t block = std::max<std::int64_t>(256, (rows + 7) / 8);
    const std::int64_t blocks = (rows + block - 1) / block;
    runs_.resize(static_cast<std::size_t>(blocks * (cols_ + 1)));
    ids_.resize(static_cast<std::size_t>(x.nonZeros()));
    values_.resize(static_cast<std::size_t>(x.nonZeros()));
    const Index* outer = x.outerIndexPtr();
    const Index* inner = x.innerIndexPtr();
    maskgat::detail::for_each_block(rows, block, [&](std::int64_t begin, std::int64_t end) {
      // runs[f] .. runs[f + 1]: column f's run in this block.
      std::int64_t* runs = runs_.data() + begin / block * (cols_ + 1);
      std::fill(runs, runs + cols_ + 1, 0);
      for (auto k = outer[begin]; k < outer[end]; ++k) ++runs[inner[k] + 1];
      runs[0] = outer[begin];
      for (std::int64_t f = 0; f < cols_; ++f) runs[f + 1] += runs[f];
      for (std::int64_t i = begin; i < end; ++i) {
        for (auto k = outer[i]; k < outer[i + 1]; ++k) {
          const auto slot = static_cast<std::size_t>(runs[inner[k]]++);
          ids_[slot] = static_cast<Index>(i);
          values_[slot] = x.valuePtr()[k];
        }
      }
      // Placing moved each run's start to the next run's; shift them back.
      for (std::int64_t f = cols_; f > 0; --f) runs[f] = runs[f - 1];
      runs[0] = outer[begin];
    });
  }

  // Calls add(ids, values, count) for column f's run in each block, blocks in order: its entries
  // in row order.
  template <typename Add>
  void entries(std::int64_t f, Add&& add) const {
    for (const std::int64_t* runs = runs_.data(); runs < runs_.data() + runs_.size();
         runs += cols_ + 1) {
      add(ids_.data() + runs[f], values_.data() + runs[f], runs[f + 1] - runs[f]);
    }
  }

 private:
  std::int64_t cols_ = 0;
  std::vector<std::int64_t> runs_;  // per row block, cols + 1 run starts
  std::vector<Index> ids_;
  std::vector<T> values_;
};

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
      const RowSparse<T>& sparse = x.sparse();
      const Index* outer = sparse.outerIndexPtr();
      for (std::int64_t i = begin; i < end; ++i) {
        const auto row_entries = [&](auto&& add) {
          add(sparse.innerIndexPtr() + outer[i], sparse.valuePtr() + outer[i],
              outer[i + 1] - outer[i]);
        };
        sum_weighted_rows<T>(weight, row_entries, out.row(i).data(), false);
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
    // grad_weight.row(f) += sum over the entries (i, f) of x, in row order, of x(i, f) *
    // grad_out.row(i): x's entries grouped by column, then each row of grad_weight summed in
    // registers. The grouping lives in the calling thread's buffers, reused from call to call
    // (named through a reference, as a thread_local named inside a task would be the worker's
    // own). Isolated: while this thread waits for the tasks below it runs no task from outside
    // them, which could reach this op again and regroup the buffers in use.
    thread_local Columns<T> cached;
    Columns<T>& columns = cached;
    tbb::this_task_arena::isolate([&] {
      columns.assign(x.sparse());
      maskgat::detail::for_each_block(
          x.cols(), kRowBlock, [&](std::int64_t begin, std::int64_t end) {
            for (std::int64_t f = begin; f < end; ++f) {
              const auto column_entries = [&](auto&& add) { columns.entries(f, add); };
              sum_weighted_rows<T>(grad_out, column_entries, grad_weight.row(f).data(), true);
            }
          });
    });
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
