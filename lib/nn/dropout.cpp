#include "maskgat/nn/dropout.hpp"

#include <algorithm>

#include "detail/dropout.hpp"
#include "detail/parallel.hpp"

namespace maskgat::nn {
namespace {

constexpr std::int64_t kRowBlock = 256;

// Factors per pass of apply_mask's inner loop: a multiple of the mask's lanes, small enough to
// stay in registers or L1.
constexpr std::int64_t kChunk = 64;

// out = in .* d, element k of the row-major layout scaled by d(k).
template <typename T>
void apply_mask(const RowMatrix<T>& in, const DropoutKey& key, const char* where,
                RowMatrix<T>& out) {
  const detail::DropoutMask<T> mask(where, key);
  out.resize(in.rows(), in.cols());
  const std::int64_t width = in.cols();
  const T* source = in.data();
  T* target = out.data();
  detail::for_each_block(in.rows(), kRowBlock, [&](std::int64_t begin, std::int64_t end) {
    T factors[kChunk];
    for (std::int64_t k = begin * width; k < end * width; k += kChunk) {
      const std::int64_t count = std::min(kChunk, end * width - k);
      mask.fill(static_cast<std::uint64_t>(k), count, factors);
      for (std::int64_t c = 0; c < count; ++c) target[k + c] = source[k + c] * factors[c];
    }
  });
}

}  // namespace

template <typename T>
void dropout(const RowMatrix<T>& x, const DropoutKey& key, RowMatrix<T>& out) {
  apply_mask(x, key, "dropout", out);
}

template <typename T>
void dropout(const RowSparse<T>& x, const DropoutKey& key, RowSparse<T>& out) {
  const detail::DropoutMask<T> mask("dropout", key);
  if (!x.isCompressed()) throw InvalidArgument("dropout: the sparse input is not compressed");
  if (&x == &out) throw InvalidArgument("dropout: the sparse output must not be the input");
  out.resize(x.rows(), x.cols());
  out.resizeNonZeros(x.nonZeros());
  const auto* outer = x.outerIndexPtr();
  auto* kept_outer = out.outerIndexPtr();
  std::int64_t kept = 0;
  T factors[kChunk];
  for (std::int64_t row = 0; row < x.rows(); ++row) {
    for (std::int64_t k = outer[row]; k < outer[row + 1]; k += kChunk) {
      const std::int64_t count = std::min<std::int64_t>(kChunk, outer[row + 1] - k);
      mask.fill(static_cast<std::uint64_t>(k), count, factors);
      for (std::int64_t c = 0; c < count; ++c) {
        out.innerIndexPtr()[kept] = x.innerIndexPtr()[k + c];
        out.valuePtr()[kept] = x.valuePtr()[k + c] * factors[c];
        kept += factors[c] != T(0) ? 1 : 0;
      }
    }
    kept_outer[row + 1] = static_cast<typename RowSparse<T>::StorageIndex>(kept);
  }
  out.resizeNonZeros(kept);
}

template <typename T>
void dropout_backward(const RowMatrix<T>& grad_out, const DropoutKey& key, RowMatrix<T>& grad_x) {
  apply_mask(grad_out, key, "dropout_backward", grad_x);
}

template void dropout<float>(const RowMatrix<float>&, const DropoutKey&, RowMatrix<float>&);
template void dropout<double>(const RowMatrix<double>&, const DropoutKey&, RowMatrix<double>&);
template void dropout<float>(const RowSparse<float>&, const DropoutKey&, RowSparse<float>&);
template void dropout<double>(const RowSparse<double>&, const DropoutKey&, RowSparse<double>&);
template void dropout_backward<float>(const RowMatrix<float>&, const DropoutKey&,
                                      RowMatrix<float>&);
template void dropout_backward<double>(const RowMatrix<double>&, const DropoutKey&,
                                       RowMatrix<double>&);

}  // namespace maskgat::nn
