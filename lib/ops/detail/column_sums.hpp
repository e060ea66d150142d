#pragma once
// Column sums with a fixed summation order, for gradients that land in the parameter store.

#include <cstdint>

#include "core/detail/parallel.hpp"
#include "maskgat/core/tensor.hpp"

namespace maskgat::ops::detail {

// target[c] += sum over rows r (in order) of matrix(r, c). Eigen's colwise().sum() evaluates the
// unaligned ends of its destination with a different summation order than the aligned middle,
// and a parameter's gradient lies at whatever alignment the store gives it, so that would make
// results depend on where memory was allocated.
// Parallel over fixed blocks of columns, each summing every row in order.
template <typename T>
void add_column_sums(const RowMatrix<T>& matrix, T* target) {
  constexpr std::int64_t kColumnBlock = 16;
  const std::int64_t cols = matrix.cols();
  maskgat::detail::for_each_block(cols, kColumnBlock, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = 0; r < matrix.rows(); ++r) {
      const T* row = matrix.data() + r * cols;
      for (std::int64_t c = begin; c < end; ++c) target[c] += row[c];
    }
  });
}

}  // namespace maskgat::ops::detail
