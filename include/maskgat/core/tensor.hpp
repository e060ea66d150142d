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

/// A non-owning view of a layer input: a dense or a sparse N x F matrix, in memory or in a mapped
/// file. Converts implicitly from either matrix type (and from maps of them), so a layer's first
/// projection takes sparse features as they are, never densified. The viewed data must outlive
/// the view.
template <typename T>
class InputRef {
 public:
  /// A dense matrix's view.
  using DenseMap = Eigen::Map<const RowMatrix<T>>;
  /// A sparse matrix's view (CSR; uncompressed matrices keep their per-row counts).
  using SparseMap = Eigen::Map<const RowSparse<T>>;

  /// Views a dense matrix.
  /// @param dense N x F; must outlive the view
  InputRef(const RowMatrix<T>& dense) noexcept  // NOLINT(google-explicit-constructor)
      : InputRef(DenseMap(dense.data(), dense.rows(), dense.cols())) {}
  /// Views a sparse matrix.
  /// @param sparse N x F; must outlive the view
  InputRef(const RowSparse<T>& sparse) noexcept  // NOLINT(google-explicit-constructor)
      : InputRef(SparseMap(sparse.rows(), sparse.cols(), sparse.nonZeros(),
                           sparse.outerIndexPtr(), sparse.innerIndexPtr(), sparse.valuePtr(),
                           sparse.innerNonZeroPtr())) {}
  /// Views dense values held elsewhere (e.g. a mapped file).
  /// @param dense N x F, row-major; its data must outlive the view
  InputRef(const DenseMap& dense) noexcept  // NOLINT(google-explicit-constructor)
      : rows_(dense.rows()), cols_(dense.cols()), values_(dense.data()) {}
  /// Views CSR arrays held elsewhere (e.g. a mapped file).
  /// @param sparse N x F; its arrays must outlive the view
  InputRef(const SparseMap& sparse) noexcept  // NOLINT(google-explicit-constructor)
      : sparse_(true),
        rows_(sparse.rows()),
        cols_(sparse.cols()),
        nonzeros_(sparse.nonZeros()),
        outer_(sparse.outerIndexPtr()),
        inner_(sparse.innerIndexPtr()),
        inner_nonzeros_(sparse.innerNonZeroPtr()),
        values_(sparse.valuePtr()) {}

  /// Whether the viewed matrix is sparse.
  /// @return true for a sparse view, false for a dense one
  [[nodiscard]] bool is_sparse() const noexcept { return sparse_; }
  /// The number of rows.
  /// @return N, the number of nodes
  [[nodiscard]] std::int64_t rows() const noexcept { return rows_; }
  /// The number of columns.
  /// @return F, the number of features
  [[nodiscard]] std::int64_t cols() const noexcept { return cols_; }
  /// The dense matrix; only valid when `!is_sparse()`.
  /// @return the viewed N x F matrix
  [[nodiscard]] DenseMap dense() const noexcept { return DenseMap(values_, rows_, cols_); }
  /// The sparse matrix; only valid when `is_sparse()`.
  /// @return the viewed N x F matrix
  [[nodiscard]] SparseMap sparse() const noexcept {
    return SparseMap(rows_, cols_, nonzeros_, outer_, inner_, values_, inner_nonzeros_);
  }

 private:
  using Index = typename RowSparse<T>::StorageIndex;
  bool sparse_ = false;
  Eigen::Index rows_ = 0;
  Eigen::Index cols_ = 0;
  Eigen::Index nonzeros_ = 0;
  const Index* outer_ = nullptr;
  const Index* inner_ = nullptr;
  const Index* inner_nonzeros_ = nullptr;
  const T* values_ = nullptr;
};

}  // namespace maskgat
