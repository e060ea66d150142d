#include "maskgat/ops/matmul.hpp"

#include <string>

#include "detail/attention_rows.hpp"
#include "detail/parallel.hpp"

namespace maskgat::ops {
namespace {

// Block sizes are constants, never derived from the thread count, so each element's arithmetic
// is fixed.
constexpr std::int64_t kRowBlock = 256;
constexpr std::int64_t kWeightRowBlock = 32;
// Columns of a weight gradient per task when x is sparse: each task runs over all of x's entries
// and owns these columns of the gradient, so no transpose of x is formed.
constexpr std::int64_t kWeightColumnBlock = 16;

// out.row(i) = sum over stored (i, f) of x(i, f) * weight.row(f), for rows [begin, end).
template <typename T>
void sparse_rows_times(const RowSparse<T>& x, const Eigen::Ref<const RowMatrix<T>>& weight,
                       std::int64_t begin, std::int64_t end, RowMatrix<T>& out) {
  const std::int64_t width = weight.cols();
  const auto* outer = x.outerIndexPtr();
  for (std::int64_t i = begin; i < end; ++i) {
    T* row = out.row(i).data();
    for (std::int64_t c = 0; c < width; ++c) row[c] = T(0);
    for (auto k = outer[i]; k < outer[i + 1]; ++k) {
      const T value = x.valuePtr()[k];
      const T* w = weight.row(x.innerIndexPtr()[k]).data();
      for (std::int64_t c = 0; c < width; ++c) row[c] += value * w[c];
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
  out.resize(x.rows(), weight.cols());
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
    detail::for_each_block(grad_weight.cols(), kWeightColumnBlock,
                           [&](std::int64_t begin, std::int64_t end) {
                             for (std::int64_t i = 0; i < sparse.rows(); ++i) {
                               const T* g = grad_out.row(i).data() + begin;
                               for (auto k = outer[i]; k < outer[i + 1]; ++k) {
                                 const T value = sparse.valuePtr()[k];
                                 T* w = grad_weight.row(sparse.innerIndexPtr()[k]).data() + begin;
                                 for (std::int64_t c = 0; c < end - begin; ++c)
                                   w[c] += value * g[c];
                               }
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
