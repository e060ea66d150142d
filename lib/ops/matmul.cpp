#include "maskgat/ops/matmul.hpp"

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

// Columns of grad_weight per task of the sparse weight gradient. Each task reads all of x's
// entries, so wider slices read them fewer times; on Amazon Computers (64 columns) slices of 16,
// 32 and 64 took 11.1 %, 7.7 % and 6.6 % of a training epoch's profile on one thread, and 32
// leaves two tasks for two threads.
constexpr std::int64_t kScatterColumns = 2 * kColumnBlock;
template <typename T>
using ScatterSlice = Eigen::Array<T, kScatterColumns, 1>;
template <typename T>
using ScatterTail = Eigen::Array<T, Eigen::Dynamic, 1, 0, kScatterColumns, 1>;

// grad_weight(f, c) += x(i, f) * grad_out(i, c) over the entries (i, f) of x, rows in order, for
// the columns c in [first, first + slice.size()): each row's grad_out slice is read once into
// registers, and every entry adds it, scaled, into its row of grad_weight. Each element of
// grad_weight therefore adds its entries in row order, whichever slices the columns are cut
// into. A row whose slice of grad_out is zero is skipped: it would add x(i, f) * 0, +-0 for finite
// x, which leaves every sum as it is (a sum from +0 never is -0), and in whole-graph training
// most nodes' gradients are zero, as no loss term reaches them.
template <typename T, typename Slice>
void scatter_weighted_rows(const RowSparse<T>& x, const RowMatrix<T>& grad_out, std::int64_t first,
                           Slice slice, Eigen::Ref<RowMatrix<T>>& grad_weight) {
  const Index* outer = x.outerIndexPtr();
  const Index* inner = x.innerIndexPtr();
  const T* values = x.valuePtr();
  const std::int64_t size = slice.size();
  // Locals: stores through `target` cannot change them, so they stay in registers.
  T* const target = grad_weight.data() + first;
  const std::int64_t stride = grad_weight.outerStride();
  for (std::int64_t i = 0; i < x.rows(); ++i) {
    if (outer[i] == outer[i + 1]) continue;
    slice = Eigen::Map<const Slice>(grad_out.row(i).data() + first, size);
    if ((slice == T(0)).all()) continue;
    for (auto k = outer[i]; k < outer[i + 1]; ++k) {
      Eigen::Map<Slice>(target + inner[k] * stride, size) += values[k] * slice;
    }
  }
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
      const RowSparse<T>& sparse = x.sparse();
      const Index* outer = sparse.outerIndexPtr();
      for (std::int64_t i = begin; i < end; ++i) {
        sum_weighted_rows<T>(weight, sparse.innerIndexPtr() + outer[i],
                             sparse.valuePtr() + outer[i], outer[i + 1] - outer[i],
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
    // One task per slice of kScatterColumns columns of grad_weight (and a narrower last one),
    // each over all of x's entries.
    const std::int64_t width = grad_weight.cols();
    const std::int64_t slices = (width + kScatterColumns - 1) / kScatterColumns;
    maskgat::detail::run_tasks(slices, [&](std::int64_t slice) {
      const std::int64_t first = slice * kScatterColumns;
      if (first + kScatterColumns <= width) {
        scatter_weighted_rows(x.sparse(), grad_out, first, ScatterSlice<T>(), grad_weight);
      } else {
        scatter_weighted_rows(x.sparse(), grad_out, first, ScatterTail<T>(width - first),
                              grad_weight);
      }
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
