#pragma once
/// @file
/// The dense and sparse matrix types MaskGAT computes with, and a view of a layer input that may
/// be either.
///
/// Matrices are row-major with one node (or edge) per row, so a node's heads and channels are
/// contiguous: `h` is N x (H * C) with head `k` of node `i` at columns `[k * C, (k + 1) * C)`,
/// attention is E x H in destination-major edge order.

#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <cstdint>

// MaskGAT's ABI fixes Eigen's alignment at 64 bytes for the library and for every program that
// includes its headers (the `maskgat::maskgat` CMake target and `maskgat.pc` define both macros),
// so the layout and the allocation of every Eigen object are the same on both sides whatever
// instruction set each is compiled for (Eigen's own defaults follow it: 16 bytes for SSE, 64 for
// AVX-512, and memory allocated by one side would be freed wrongly by the other).
static_assert(EIGEN_MAX_ALIGN_BYTES == 64 && EIGEN_MAX_STATIC_ALIGN_BYTES == 64,
              "MaskGAT needs Eigen's alignment fixed at 64 bytes: compile with "
              "-DEIGEN_MAX_ALIGN_BYTES=64 -DEIGEN_MAX_STATIC_ALIGN_BYTES=64, as the maskgat "
              "CMake target and `pkg-config --cflags maskgat` do, before Eigen is included");

namespace maskgat {

/// A dense row-major matrix of `T` (`float` by default in the library, `double` in gradient
/// checks).
template <typename T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// A sparse row-major (CSR) matrix of `T`, the type sparse citation features load as.
template <typename T>
using RowSparse = Eigen::SparseMatrix<T, Eigen::RowMajor>;

/// A non-owning view of a layer input: a dense or a sparse N x F matrix. Converts implicitly from
/// either, so a layer's first projection takes sparse features as they are, never densified.
/// The viewed matrix must outlive the view.
template <typename T>
class InputRef {
 public:
  /// Views a dense matrix.
  /// @param dense N x F; must outlive the view
  InputRef(const RowMatrix<T>& dense) noexcept
      : dense_(&dense) {}  // NOLINT(google-explicit-constructor)
  /// Views a sparse matrix.
  /// @param sparse N x F; must outlive the view
  InputRef(const RowSparse<T>& sparse) noexcept
      : sparse_(&sparse) {}  // NOLINT(google-explicit-constructor)

  /// Whether the viewed matrix is sparse.
  /// @return true for a `RowSparse` view, false for a `RowMatrix` view
  [[nodiscard]] bool is_sparse() const noexcept { return sparse_ != nullptr; }
  /// The number of rows.
  /// @return N, the number of nodes
  [[nodiscard]] std::int64_t rows() const noexcept {
    return is_sparse() ? sparse_->rows() : dense_->rows();
  }
  /// The number of columns.
  /// @return F, the number of features
  [[nodiscard]] std::int64_t cols() const noexcept {
    return is_sparse() ? sparse_->cols() : dense_->cols();
  }
  /// The dense matrix; only valid when `!is_sparse()`.
  /// @return the viewed N x F matrix
  [[nodiscard]] const RowMatrix<T>& dense() const noexcept { return *dense_; }
  /// The sparse matrix; only valid when `is_sparse()`.
  /// @return the viewed N x F matrix
  [[nodiscard]] const RowSparse<T>& sparse() const noexcept { return *sparse_; }

 private:
  const RowMatrix<T>* dense_ = nullptr;
  const RowSparse<T>* sparse_ = nullptr;
};

}  // namespace maskgat
