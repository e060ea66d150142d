#pragma once
// Decoders of the values a pickle holds (`pickle.hpp`) into the arrays the readers build from:
// numpy arrays (int32/int64/float32/float64, C or Fortran order), scipy CSR matrices and
// adjacency dicts. Each checks the value's structure, shapes and every index against the limits
// before it allocates, and fails with a ParseError (LimitError for limits) naming the value and
// where it was created.

#include <cstdint>
#include <vector>

#include "io/detail/pickle.hpp"
#include "maskgat/core/types.hpp"
#include "maskgat/export.hpp"
#include "maskgat/io/limits.hpp"

namespace maskgat::detail {

// A scipy.sparse.csr_matrix: `indptr` (rows + 1, starting at 0, non-decreasing), `indices`
// (column of every entry, in [0, cols), strictly increasing within a row) and finite `values`.
struct CsrArrays {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<std::int64_t> indptr;
  std::vector<std::int32_t> indices;
  std::vector<float> values;
};

// The root of `pickle` as a CSR matrix with int32/int64 index arrays and float32/float64 data
// (converted to float). Rows of unsorted indices are sorted; a column repeated within a row, an
// inconsistent indptr, an index out of range or a non-finite value is a ParseError. Rows are
// checked against `limits.max_nodes`, columns against `limits.max_features` (LimitError).
[[nodiscard]] MASKGAT_EXPORT CsrArrays decode_csr_matrix(const Pickle& pickle,
                                                         const Limits& limits);

// A dense row-major integer matrix.
struct IntMatrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<std::int64_t> values;
};

// The root of `pickle` as a 2-D int32/int64 numpy array (C or Fortran order).
[[nodiscard]] MASKGAT_EXPORT IntMatrix decode_int_matrix(const Pickle& pickle,
                                                         const Limits& limits);

// The edges `key -> item` of a dict (or defaultdict) of int -> list of int, in file order.
struct AdjacencyLists {
  std::vector<NodeId> sources;
  std::vector<NodeId> targets;
};

// The root of `pickle` as an adjacency dict over `num_nodes` nodes: every key and list item must
// be an int in [0, num_nodes), no key may appear twice, and the number of entries may not exceed
// `limits.max_edges` (LimitError).
[[nodiscard]] MASKGAT_EXPORT AdjacencyLists decode_adjacency(const Pickle& pickle,
                                                             std::int64_t num_nodes,
                                                             const Limits& limits);

}  // namespace maskgat::detail
