#pragma once
// Numerical gradients for the gradient checks: central differences of a loss in each entry of
// some values (parameters or an input), every entry restored afterwards.

#include <cstdint>
#include <span>

#include "maskgat/core/tensor.hpp"

namespace maskgat::test {

// (loss(v + step) - loss(v - step)) / (2 step) for each of the rows x cols `values` in turn, as a
// rows x cols matrix.
template <typename Loss>
RowMatrix<double> central_differences(std::span<double> values, std::int64_t rows,
                                      std::int64_t cols, Loss&& loss, double step = 1e-6) {
  RowMatrix<double> numeric(rows, cols);
  for (std::int64_t k = 0; k < rows * cols; ++k) {
    double& value = values[static_cast<std::size_t>(k)];
    const double saved = value;
    value = saved + step;
    const double plus = loss();
    value = saved - step;
    const double minus = loss();
    value = saved;
    numeric.data()[k] = (plus - minus) / (2 * step);
  }
  return numeric;
}

// The same for one tensor of a parameter store (`values` the store's, `parameter` its handle).
template <typename Parameter, typename Loss>
RowMatrix<double> central_differences(std::span<double> values, const Parameter& parameter,
                                      Loss&& loss, double step = 1e-6) {
  return central_differences(values.subspan(static_cast<std::size_t>(parameter.offset),
                                            static_cast<std::size_t>(parameter.size())),
                             parameter.rows, parameter.cols, loss, step);
}

}  // namespace maskgat::test
