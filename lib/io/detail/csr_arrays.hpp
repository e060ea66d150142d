#pragma once
// A sparse matrix in compressed sparse row form as the binary readers decode it (scipy's CSR
// inside a Planetoid pickle or an npz file), and the checks every such matrix passes before the
// readers build from it.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "maskgat/export.hpp"

namespace maskgat::detail {

// `indptr` (rows + 1, starting at 0, non-decreasing), `indices` (column of every entry, in
// [0, cols), strictly increasing within a row) and finite `values`.
struct CsrArrays {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<std::int64_t> indptr;
  std::vector<std::int32_t> indices;
  std::vector<float> values;
};

// What a decoder found, before the checks: `indices` still as read.
struct CsrParts {
  std::int64_t rows = 0;
  std::int64_t cols = 0;  // at most INT32_MAX (checked by the decoder against its limits)
  std::vector<std::int64_t> indptr;
  std::vector<std::int64_t> indices;
  std::vector<float> values;
};

// Where each array came from, to start its messages: e.g. `'indptr' of the
// scipy.sparse.csr.csr_matrix created at byte 12: `.
struct CsrSubjects {
  std::string indptr;
  std::string indices;
  std::string data;
};

// `parts` checked and with every row's entries sorted by column: throws ParseError
// `<reader>: <path>: <subject><what is wrong>` for an indptr of the wrong length, not starting at
// 0 or decreasing, index or data arrays of another length than indptr[rows], a column outside
// [0, cols) or repeated within a row, or a value that is not finite.
[[nodiscard]] MASKGAT_EXPORT CsrArrays checked_csr(CsrParts parts, const CsrSubjects& subjects,
                                                   std::string_view reader,
                                                   const std::string& path);

}  // namespace maskgat::detail
