#include "maskgat/ops/matmul.hpp"

#include <string>
#include <type_traits>

#include "detail/attention_rows.hpp"
#include "detail/parallel.hpp"

namespace maskgat::ops {
namespace {

// Block sizes are constants, never derived from the thread count, so each element's arithmetic
// is fixed.
constexpr std::int64_t kRowBlock = 256;
constexpr std::int64_t kWeightRowBlock = 32;

// Columns of the output formed per pass over a row's entries, so that their sums stay in
// registers instead of being stored and reloaded per entry.
constexpr std::int64_t kColumnBlock = 16;
template <typename T>
using Block = Eigen::Array<T, kColumnBlock, 1>;
template <typename T>
using Tail = Eigen::Array<T, Eigen::Dynamic, 1, 0, kColumnBlock, 1>;

// Adds x(i, f) * weight(f, first + c) over row i's stored entries into `sum`, an Eigen array of at
// most kColumnBlock columns on the stack: one vector multiply-add per entry, the sum in registers.
template <typename T, typename Sum>
void add_row_block(const RowSparse<T>& x, const Eigen::Ref<const RowMatrix<T>>& weight,
                   std::int64_t i, std::int64_t first, Sum& sum) {
  const auto* outer = x.outerIndexPtr();
  for (auto k = outer[i]; k < outer[i + 1]; ++k) {
    const T* w = weight.row(x.innerIndexPtr()[k]).data() + first;
    sum += x.valuePtr()[k] * Eigen::Map<const Sum>(w, sum.size());
  }
}

// Columns of the output formed per pass over a row's entries in the forward product: several
// register blocks at once, so each entry's index and value are read once per pass and the blocks'
// independent multiply-add chains overlap.
constexpr std::int64_t kPassColumns = 4 * kColumnBlock;
template <typename T>
using PassBlock = Eigen::Array<T, kPassColumns, 1>;

// out.row(i) = sum over stored (i, f) of x(i, f) * weight.row(f), for rows [begin, end).
template <typename T>
void sparse_rows_times(const RowSparse<T>& x, const Eigen::Ref<const RowMatrix<T>>& weight,
                       std::int64_t begin, std::int64_t end, RowMatrix<T>& out) {
  const std::int64_t width = weight.cols();
  const std::int64_t passes = width / kPassColumns * kPassColumns;
  const std::int64_t full = width / kColumnBlock * kColumnBlock;
  for (std::int64_t i = begin; i < end; ++i) {
    T* row = out.row(i).data();
    for (std::int64_t first = 0; first < passes; first += kPassColumns) {
      PassBlock<T> sum = PassBlock<T>::Zero();
      add_row_block(x, weight, i, first, sum);
      Eigen::Map<PassBlock<T>>(row + first) = sum;
    }
    for (std::int64_t first = passes; first < full; first += kColumnBlock) {
      Block<T> sum = Block<T>::Zero();
      add_row_block(x, weight, i, first, sum);
      Eigen::Map<Block<T>>(row + first) = sum;
    }
    if (full < width) {
      Tail<T> sum = Tail<T>::Zero(width - full);
      add_row_block(x, weight, i, full, sum);
      Eigen::Map<Tail<T>>(row + full, width - full) = sum;
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
  detail::for_each_block(x.rows(), kRowBlock, [&](std::int64_t begin, std::int64_t end) {
    if (x.is_sparse()) {
      sparse_rows_times(x.sparse(), weight, begin, end, out);
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
    const RowSparse<T>& sparse = x.sparse();
    const auto* outer = sparse.outerIndexPtr();
    // Each task runs over all of x's entries and owns a block of the gradient's columns, so no
    // transpose of x is formed.
    detail::for_each_block(
        grad_weight.cols(), kColumnBlock, [&](std::int64_t begin, std::int64_t end) {
          const auto add_rows = [&](auto columns) {
            using Columns = typename decltype(columns)::type;
            const std::int64_t width = end - begin;
            for (std::int64_t i = 0; i < sparse.rows(); ++i) {
              const Eigen::Map<const Columns> g(grad_out.row(i).data() + begin, width);
              for (auto k = outer[i]; k < outer[i + 1]; ++k) {
                T* w = grad_weight.row(sparse.innerIndexPtr()[k]).data() + begin;
                Eigen::Map<Columns>(w, width) += sparse.valuePtr()[k] * g;
              }
            }
          };
          if (end - begin == kColumnBlock) {
            add_rows(std::type_identity<Block<T>>{});
          } else {
            add_rows(std::type_identity<Tail<T>>{});
          }
        });
  } else {
    detail::for_each_block(x.cols(), kWeightRowBlock, [&](std::int64_t begin, std::int64_t end) {
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
  detail::for_each_block(grad_out.rows(), kRowBlock, [&](std::int64_t begin, std::int64_t end) {
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
