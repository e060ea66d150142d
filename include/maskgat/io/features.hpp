#pragma once
/// @file
/// Node feature matrices (sparse or dense) and the CSV/TSV features reader.

#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "maskgat/core/tensor.hpp"
#include "maskgat/core/types.hpp"
#include "maskgat/export.hpp"
#include "maskgat/io/limits.hpp"
#include "maskgat/io/node_index.hpp"

namespace maskgat {

/// Row-major sparse features, one node per row (citation features are ~1% dense).
using SparseFeatures = RowSparse<float>;
/// Row-major dense features, one node per row.
using DenseFeatures = RowMatrix<float>;

/// Features held elsewhere, as a mapped store holds them: a dense matrix or CSR arrays (compressed,
/// columns ascending within each row) that `owner` keeps valid.
struct MappedFeatures {
  InputRef<float> values;             ///< N x F, dense or sparse
  std::shared_ptr<const void> owner;  ///< keeps `values` valid for every copy of the matrix
};

/// An N x F feature matrix held sparse or dense, in memory or in a mapped store; N x 0 when a
/// dataset has no features. A mapped matrix is read in place (rows are paged in as they are
/// read); the methods that change values copy it into memory first.
class MASKGAT_EXPORT FeatureMatrix {
 public:
  /// An empty sparse 0 x 0 matrix.
  FeatureMatrix() = default;
  /// Holds sparse features, compressed.
  /// @param sparse N x F, one node per row
  explicit FeatureMatrix(SparseFeatures sparse) : values_(std::move(sparse)) {
    std::get<SparseFeatures>(values_).makeCompressed();
  }
  /// Holds dense features.
  /// @param dense N x F, one node per row
  explicit FeatureMatrix(DenseFeatures dense) : values_(std::move(dense)) {}
  /// Reads features held elsewhere (a mapped store) in place.
  /// @param mapped the values and what keeps them valid
  explicit FeatureMatrix(MappedFeatures mapped) : values_(std::move(mapped)) {}

  /// Whether the features are sparse.
  /// @return true for `SparseFeatures` or mapped CSR arrays, false for dense values
  [[nodiscard]] bool is_sparse() const noexcept { return view().is_sparse(); }
  /// Whether the features are read in place from memory held elsewhere (a mapped store).
  /// @return true for `MappedFeatures`
  [[nodiscard]] bool is_mapped() const noexcept { return values_.index() == 2; }
  /// The number of rows.
  /// @return N, the number of nodes
  [[nodiscard]] std::int64_t rows() const noexcept;
  /// The number of columns.
  /// @return F, the feature width
  [[nodiscard]] std::int64_t cols() const noexcept;
  /// Stored entries that are nonzero. O(stored entries).
  /// @return at most N * F
  [[nodiscard]] std::int64_t nonzeros() const noexcept;
  /// The fraction of nonzero entries.
  /// @return `nonzeros() / (rows * cols)`, 0 for an empty matrix
  [[nodiscard]] double density() const noexcept;

  /// The sparse matrix in memory.
  /// @return the N x F matrix
  /// @throws std::bad_variant_access when the matrix is dense or mapped (`view()` reads any).
  [[nodiscard]] const SparseFeatures& sparse() const { return std::get<SparseFeatures>(values_); }
  /// The dense matrix in memory.
  /// @return the N x F matrix
  /// @throws std::bad_variant_access when the matrix is sparse or mapped (`view()` reads any).
  [[nodiscard]] const DenseFeatures& dense() const { return std::get<DenseFeatures>(values_); }

  /// A view of whichever matrix this holds, as the attention layers take their input.
  /// @return a view valid while this matrix lives and is not modified
  [[nodiscard]] InputRef<float> view() const noexcept;

  /// Divides every row by its sum (rows summing to 0 are left as they are), as PyG's
  /// `NormalizeFeatures`. The sums are taken in double, so no row of finite floats overflows its
  /// sum (a row `3e38, 3e38` becomes `0.5, 0.5`). Serial, O(stored entries); a mapped matrix is
  /// copied into memory first.
  /// @throws InvalidArgument when a row's entries, divided by its sum, are not finite floats
  ///         (entries of both signs that nearly cancel), naming the row (0-based).
  void normalize_rows();

  /// Multiplies column `first + c` by `factors[c]`, for c = 0 .. K-1 (training's sign flips of a
  /// positional encoding). O(stored entries) sparse, O(N K) dense; allocates nothing, but a
  /// mapped matrix is copied into memory first.
  /// @param first   the first column to scale
  /// @param factors K factors; `first + K` must not exceed `cols()`
  /// @throws InvalidArgument when the columns do not fit.
  void scale_columns(std::int64_t first, std::span<const float> factors);

  /// The rows `rows[0], rows[1], ...` of this matrix, in that order, sparse if this one is, in
  /// memory (how mini-batches read a mapped store's rows). O(rows' stored entries) sparse,
  /// O(rows x F) dense, parallel over fixed blocks of rows.
  /// @param rows row ids, each in [0, N)
  /// @return a `rows.size()` x F matrix
  /// @throws InvalidArgument if a row id is outside [0, N).
  [[nodiscard]] FeatureMatrix select_rows(std::span<const NodeId> rows) const;

 private:
  // Replaces mapped values by a copy in memory.
  void copy_into_memory();

  std::variant<SparseFeatures, DenseFeatures, MappedFeatures> values_{SparseFeatures()};
};

/// Features read from a file, one row per node in `nodes` order.
struct MASKGAT_EXPORT FeatureTable {
  FeatureMatrix matrix;                   ///< N x F, sparse or dense
  std::vector<std::string> column_names;  ///< F names, from the header row
};

/// Reads a CSV (comma) or TSV (tab) file: a required header row `node,<feature names...>`, then
/// one row `<node>,<value>...` per node. The delimiter is the first tab or comma of the header.
/// The file defines the node set and order: each row's node is inserted into `nodes` (which must
/// be empty), and `nodes` is frozen afterwards. Values must be finite numbers. The matrix is
/// stored sparse when at most 10% of the entries are nonzero, dense otherwise. Serial.
/// @param path    the file
/// @param nodes   an empty, unfrozen index (named or numeric); filled and frozen
/// @param options limits and strictness
/// @return N x F features in `nodes` order, and the F column names
/// @throws InvalidArgument when `nodes` is not empty or frozen; IoError (cannot open),
///         ParseError (header missing, wrong column count, non-numeric or non-finite value, node
///         listed twice, numeric ids not covering 0..N-1), LimitError (width, rows or a line's
///         length over `limits`).
[[nodiscard]] MASKGAT_EXPORT FeatureTable read_features(const std::filesystem::path& path,
                                                        NodeIndex& nodes,
                                                        const ReadOptions& options);

}  // namespace maskgat
