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
      out.middleRows(begin, end - begin).noalias() =
          x.sparse().middleRows(begin, end - begin) * weight;
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
    const RowSparse<T> transposed = x.sparse().transpose();
    detail::for_each_block(x.cols(), kWeightRowBlock, [&](std::int64_t begin, std::int64_t end) {
      grad_weight.middleRows(begin, end - begin).noalias() +=
          transposed.middleRows(begin, end - begin) * grad_out;
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
