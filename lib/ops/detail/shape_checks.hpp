#pragma once
// The argument checks every kernel makes before it runs: matrix shapes, head splits and
// schedules, each failing with InvalidArgument naming the kernel, the argument and the sizes.

#include <cstdint>
#include <span>
#include <string>

#include "maskgat/core/error.hpp"
#include "maskgat/core/schedule.hpp"
#include "maskgat/core/tensor.hpp"
#include "maskgat/graph/graph.hpp"

namespace maskgat::ops::detail {

// Throws `where: name has R x C, expected ...` unless `matrix` is rows x cols (-1 = any).
template <typename Matrix>
void check_shape(const char* where, const char* name, const Matrix& matrix, std::int64_t rows,
                 std::int64_t cols, const char* rows_meaning) {
  const bool rows_ok = rows < 0 || matrix.rows() == rows;
  const bool cols_ok = cols < 0 || matrix.cols() == cols;
  if (rows_ok && cols_ok) return;
  std::string message = std::string(where) + ": " + name + " is " + std::to_string(matrix.rows()) +
                        " x " + std::to_string(matrix.cols()) + ", expected ";
  message += rows < 0 ? "any" : std::to_string(rows);
  message += " x ";
  message += cols < 0 ? "any" : std::to_string(cols);
  if (!rows_ok) message += std::string(" (") + rows_meaning + ")";
  throw InvalidArgument(message);
}

// Throws `where: name must not be the same matrix as other_name` when `output` is `input`: an
// output the kernel writes while it still reads the input.
template <typename Matrix>
void check_distinct(const char* where, const char* name, const Matrix& output,
                    const char* other_name, const Matrix& input) {
  if (&output != &input) return;
  throw InvalidArgument(std::string(where) + ": " + name + " must not be the same matrix as " +
                        other_name);
}

// Checks that `columns` splits into `heads` equal blocks and returns the block width.
inline std::int64_t channels_per_head(const char* where, const char* name, std::int64_t columns,
                                      std::int64_t heads) {
  if (heads <= 0) {
    throw InvalidArgument(std::string(where) + ": heads is " + std::to_string(heads) +
                          ", expected a positive count");
  }
  if (columns % heads != 0) {
    throw InvalidArgument(std::string(where) + ": " + name + " has " + std::to_string(columns) +
                          " columns, not a multiple of the " + std::to_string(heads) + " heads");
  }
  return columns / heads;
}

inline void check_schedule(const char* where, const Schedule& schedule) {
  if (schedule.grain <= 0) {
    throw InvalidArgument(std::string(where) + ": schedule grain is " +
                          std::to_string(schedule.grain) + ", expected a positive count");
  }
}

// Checks the bytes naming the rows a kernel forms: none (every row) or one per node.
inline void check_rows(const char* where, std::span<const std::uint8_t> rows, std::int64_t nodes) {
  if (!rows.empty() && static_cast<std::int64_t>(rows.size()) != nodes) {
    throw InvalidArgument(std::string(where) + ": rows has " + std::to_string(rows.size()) +
                          " bytes, expected none or the mask's " + std::to_string(nodes) +
                          " nodes");
  }
}

// Checks an attention-shaped (E x H) matrix.
template <typename T>
void check_edge_matrix(const char* where, const char* name, const Graph& mask,
                       const RowMatrix<T>& matrix, std::int64_t heads) {
  check_shape(where, name, matrix, mask.num_edges(), heads, "the mask's edge count");
}

}  // namespace maskgat::ops::detail
