#include "io/detail/csr_arrays.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "maskgat/core/error.hpp"

namespace maskgat::detail {

CsrArrays checked_csr(CsrParts parts, const CsrSubjects& subjects, std::string_view reader,
                      const std::string& path) {
  const auto fail = [&](const std::string& message) { throw ParseError(reader, path, 0, message); };
  CsrArrays out;
  out.rows = parts.rows;
  out.cols = parts.cols;
  if (static_cast<std::int64_t>(parts.indptr.size()) != out.rows + 1) {
    fail(subjects.indptr + std::to_string(parts.indptr.size()) +
         " entries, expected rows + 1 = " + std::to_string(out.rows + 1));
  }
  out.indptr = std::move(parts.indptr);
  if (out.indptr[0] != 0) {
    fail(subjects.indptr + "indptr[0] = " + std::to_string(out.indptr[0]) + ", expected 0");
  }
  for (std::size_t r = 1; r < out.indptr.size(); ++r) {
    if (out.indptr[r] < out.indptr[r - 1]) {
      fail(subjects.indptr + "not monotone: indptr[" + std::to_string(r) +
           "] = " + std::to_string(out.indptr[r]) + " is less than indptr[" +
           std::to_string(r - 1) + "] = " + std::to_string(out.indptr[r - 1]));
    }
  }
  const std::int64_t nnz = out.indptr.back();
  if (static_cast<std::int64_t>(parts.indices.size()) != nnz) {
    fail(subjects.indices + std::to_string(parts.indices.size()) +
         " entries, expected indptr[rows] = " + std::to_string(nnz));
  }
  if (static_cast<std::int64_t>(parts.values.size()) != nnz) {
    fail(subjects.data + std::to_string(parts.values.size()) +
         " entries, expected indptr[rows] = " + std::to_string(nnz));
  }
  out.indices.resize(parts.indices.size());
  for (std::size_t k = 0; k < parts.indices.size(); ++k) {
    if (parts.indices[k] < 0 || parts.indices[k] >= out.cols) {
      fail(subjects.indices + "indices[" + std::to_string(k) + "] = " +
           std::to_string(parts.indices[k]) + " is outside [0, " + std::to_string(out.cols) + ")");
    }
    out.indices[k] = static_cast<std::int32_t>(parts.indices[k]);
  }
  parts.indices = {};
  out.values = std::move(parts.values);
  for (std::size_t k = 0; k < out.values.size(); ++k) {
    if (!std::isfinite(out.values[k])) {
      fail(subjects.data + "data[" + std::to_string(k) + "] is not a finite float");
    }
  }

  // scipy allows unsorted rows; Eigen needs sorted ones, and a repeated column is ambiguous.
  std::vector<std::pair<std::int32_t, float>> scratch;
  for (std::int64_t r = 0; r < out.rows; ++r) {
    const auto begin = static_cast<std::size_t>(out.indptr[static_cast<std::size_t>(r)]);
    const auto end = static_cast<std::size_t>(out.indptr[static_cast<std::size_t>(r) + 1]);
    bool sorted = true;
    for (std::size_t k = begin + 1; k < end && sorted; ++k)
      sorted = out.indices[k - 1] < out.indices[k];
    if (sorted) continue;
    scratch.clear();
    for (std::size_t k = begin; k < end; ++k) scratch.emplace_back(out.indices[k], out.values[k]);
    std::sort(scratch.begin(), scratch.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t k = 0; k < scratch.size(); ++k) {
      if (k > 0 && scratch[k - 1].first == scratch[k].first) {
        fail(subjects.indices + "row " + std::to_string(r) + " lists column " +
             std::to_string(scratch[k].first) + " twice");
      }
      out.indices[begin + k] = scratch[k].first;
      out.values[begin + k] = scratch[k].second;
    }
  }
  return out;
}

}  // namespace maskgat::detail
