#include "maskgat/nn/dropout.hpp"

#include "detail/dropout.hpp"
#include "detail/parallel.hpp"

namespace maskgat::nn {
namespace {

constexpr std::int64_t kRowBlock = 256;

// out = in .* d, element k of the row-major layout scaled by d(k).
template <typename T>
void apply_mask(const RowMatrix<T>& in, const DropoutKey& key, const char* where,
                RowMatrix<T>& out) {
  const detail::DropoutMask<T> mask(where, key);
  out.resize(in.rows(), in.cols());
  const std::int64_t width = in.cols();
  detail::for_each_block(in.rows(), kRowBlock, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t k = begin * width; k < end * width; ++k) {
      out.data()[k] = in.data()[k] * mask(static_cast<std::uint64_t>(k));
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
  out = x;
  T* values = out.valuePtr();
  for (std::int64_t k = 0; k < out.nonZeros(); ++k) {
    values[k] *= mask(static_cast<std::uint64_t>(k));
  }
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
