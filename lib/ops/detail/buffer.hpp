#pragma once
// Output buffers of the kernels: resized without initialisation and, when large, backed by
// transparent huge pages.

#include <cstddef>
#include <cstdint>

namespace maskgat::ops::detail {

// Asks the kernel to back the whole pages of [data, data + bytes) with transparent huge pages
// (Linux `madvise`; honoured when THP is in "madvise" or "always" mode), when the range spans at
// least a few huge pages. Node and edge arrays are read in the mask's random order; with 4 KiB
// pages nearly every such read of an array of hundreds of megabytes also misses the TLB. Advice
// only: it changes no value, and a refusal is ignored.
void advise_huge_pages(void* data, std::size_t bytes);

// matrix.resize(rows, cols), contents unspecified. A new allocation is advised right away, before
// anything touches it: pages fault in huge then, while advice on touched pages only takes effect
// when the kernel's background collapsing gets round to them.
template <typename Matrix>
void resize_buffer(Matrix& matrix, std::int64_t rows, std::int64_t cols) {
  if (matrix.rows() == rows && matrix.cols() == cols) return;
  const auto* before = matrix.data();
  matrix.resize(rows, cols);
  if (matrix.data() != before) {
    advise_huge_pages(matrix.data(),
                      static_cast<std::size_t>(matrix.size()) * sizeof(typename Matrix::Scalar));
  }
}

}  // namespace maskgat::ops::detail
