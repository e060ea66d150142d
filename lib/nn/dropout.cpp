#include "maskgat/nn/dropout.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <type_traits>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "core/detail/parallel.hpp"
#include "ops/detail/buffer.hpp"
#include "ops/detail/dropout_mask.hpp"

namespace maskgat::nn {
namespace {

using maskgat::detail::kRowBlock;

// Factors per pass of apply_mask's inner loop: a multiple of the mask's lanes, small enough to
// stay in registers or L1.
constexpr std::int64_t kChunk = 64;

// out = in .* d, element k of the row-major layout scaled by d(k).
template <typename T>
void apply_mask(const Eigen::Ref<const RowMatrix<T>>& in, const DropoutKey& key, const char* where,
                RowMatrix<T>& out) {
  const ops::detail::DropoutMask<T> mask(where, key);
  ops::detail::resize_buffer(out, in.rows(), in.cols());
  const std::int64_t width = in.cols();
  const T* source = in.data();
  T* target = out.data();
  ops::detail::check_numbers(where, key, in.rows());
  // Elements [k, last) of the layout, numbered from `number` on.
  const auto scale = [&](std::int64_t k, std::int64_t last, std::int64_t number) {
    T factors[kChunk];
    for (; k < last; k += kChunk, number += kChunk) {
      const std::int64_t count = std::min(kChunk, last - k);
      mask.fill(static_cast<std::uint64_t>(number), count, factors);
      for (std::int64_t c = 0; c < count; ++c) target[k + c] = source[k + c] * factors[c];
    }
  };
  maskgat::detail::for_each_block(in.rows(), kRowBlock, [&](std::int64_t begin, std::int64_t end) {
    if (key.numbers.empty()) {
      scale(begin * width, end * width, begin * width);
      return;
    }
    for (std::int64_t row = begin; row < end; ++row) {
      scale(row * width, (row + 1) * width, key.numbers[static_cast<std::size_t>(row)]);
    }
  });
}

// Entries per step of `compress_kept`: 16 where AVX-512 compresses 32-bit lanes and both the
// values and the indices are 32-bit; 0 (the plain loop only) elsewhere.
template <typename T, typename Index>
constexpr int compress_lanes() {
#if defined(__AVX512F__)
  return std::is_same_v<T, float> && sizeof(Index) == 4 ? 16 : 0;
#else
  return 0;
#endif
}

// Writes the kept ones of entries [k, last), 16 at a time, at `position` on: each step loads 16
// entries, scales their values and stores their kept ones packed, in order, with whole-vector
// stores (lanes past the kept ones are overwritten by the next step). Steps end while a whole
// vector still fits before `limit`, the next block's first slot; returns the first entry not
// written, the plain loop's to finish.
template <typename T, typename Index>
Index compress_kept(const Index* inner, const T* values, const std::uint8_t* kept, T scale, Index k,
                    Index last, std::int64_t limit, std::int64_t& position, Index* kept_inner,
                    T* kept_values) {
#if defined(__AVX512F__)
  if constexpr (compress_lanes<T, Index>() > 0) {
    constexpr int kLanes = compress_lanes<T, Index>();
    const __m512 factor = _mm512_set1_ps(scale);
    for (; k + kLanes <= last && position + kLanes <= limit; k += kLanes) {
      const __m512i bytes =
          _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kept + k)));
      const __mmask16 mask = _mm512_test_epi32_mask(bytes, bytes);
      const __m512i ids = _mm512_loadu_si512(inner + k);
      const __m512 scaled = _mm512_mul_ps(_mm512_loadu_ps(values + k), factor);
      _mm512_storeu_si512(kept_inner + position, _mm512_maskz_compress_epi32(mask, ids));
      _mm512_storeu_ps(kept_values + position, _mm512_maskz_compress_ps(mask, scaled));
      position += std::popcount(static_cast<unsigned>(mask));
    }
  }
#endif
  return k;
}

}  // namespace

template <typename T>
void dropout(const Eigen::Ref<const RowMatrix<std::type_identity_t<T>>>& x, const DropoutKey& key,
             RowMatrix<T>& out) {
  apply_mask<T>(x, key, "dropout", out);
}

template <typename T>
void dropout(const Eigen::Ref<const RowSparse<std::type_identity_t<T>>>& x, const DropoutKey& key,
             RowSparse<T>& out) {
  const ops::detail::DropoutMask<T> mask("dropout", key);
  if (!x.isCompressed()) throw InvalidArgument("dropout: the sparse input is not compressed");
  if (x.outerIndexPtr() != nullptr && x.outerIndexPtr() == out.outerIndexPtr()) {
    throw InvalidArgument("dropout: the sparse output must not be the input");
  }
  using Index = typename RowSparse<T>::StorageIndex;
  out.resize(x.rows(), x.cols());
  out.resizeNonZeros(x.nonZeros());  // keeps its capacity from call to call
  const Index* outer = x.outerIndexPtr();
  const Index* inner = x.innerIndexPtr();
  const T* values = x.valuePtr();
  Index* kept_outer = out.outerIndexPtr();
  Index* kept_inner = out.innerIndexPtr();
  T* kept_values = out.valuePtr();
  // Two parallel passes over fixed row blocks. The first draws the mask of the block's entries, a
  // byte each, and counts each row's kept ones; after a prefix sum, the second writes the kept
  // entries at their offsets.
  const auto entries = static_cast<std::size_t>(x.nonZeros());
  const std::unique_ptr<std::uint8_t[]> kept(new std::uint8_t[entries]);
  ops::detail::check_numbers("dropout", key, x.rows());
  const auto count_block = [&, outer, kept_outer](std::int64_t begin, std::int64_t end) {
    if (key.numbers.empty()) {
      mask.fill_kept(static_cast<std::uint64_t>(outer[begin]), outer[end] - outer[begin],
                     kept.get() + outer[begin]);
    } else {
      for (std::int64_t row = begin; row < end; ++row) {
        mask.fill_kept(static_cast<std::uint64_t>(key.numbers[static_cast<std::size_t>(row)]),
                       outer[row + 1] - outer[row], kept.get() + outer[row]);
      }
    }
    for (std::int64_t row = begin; row < end; ++row) {
      Index count = 0;
      for (auto k = outer[row]; k < outer[row + 1]; ++k) count += kept[k];
      kept_outer[row + 1] = count;
    }
  };
  const auto write_block = [&, outer, inner, values, kept_outer, kept_inner, kept_values](
                               std::int64_t begin, std::int64_t end) {
    const T scale = mask.scale();
    // Entries are written at `position` whether kept or not (a dropped one is overwritten by the
    // next kept one), so the loop has no branch on the random mask. It ends after the block's
    // last kept entry, so no write lands past the block's slots: the next one is the next
    // block's.
    auto last = outer[end];
    while (last > outer[begin] && kept[last - 1] == 0) --last;
    std::int64_t position = kept_outer[begin];
    auto k = outer[begin];
    if constexpr (compress_lanes<T, Index>() > 0) {
      k = compress_kept(inner, values, kept.get(), scale, k, last, kept_outer[end], position,
                        kept_inner, kept_values);
    }
    for (; k < last; ++k) {
      kept_inner[position] = inner[k];
      kept_values[position] = values[k] * scale;
      position += kept[k];
    }
  };
  kept_outer[0] = 0;
  maskgat::detail::for_each_block(x.rows(), kRowBlock, count_block);
  for (std::int64_t row = 0; row < x.rows(); ++row) kept_outer[row + 1] += kept_outer[row];
  maskgat::detail::for_each_block(x.rows(), kRowBlock, write_block);
  out.resizeNonZeros(kept_outer[x.rows()]);
}

template <typename T>
void dropout_backward(const RowMatrix<T>& grad_out, const DropoutKey& key, RowMatrix<T>& grad_x) {
  apply_mask<T>(grad_out, key, "dropout_backward", grad_x);
}

template void dropout<float>(const Eigen::Ref<const RowMatrix<float>>&, const DropoutKey&,
                             RowMatrix<float>&);
template void dropout<double>(const Eigen::Ref<const RowMatrix<double>>&, const DropoutKey&,
                              RowMatrix<double>&);
template void dropout<float>(const Eigen::Ref<const RowSparse<float>>&, const DropoutKey&,
                             RowSparse<float>&);
template void dropout<double>(const Eigen::Ref<const RowSparse<double>>&, const DropoutKey&,
                              RowSparse<double>&);
template void dropout_backward<float>(const RowMatrix<float>&, const DropoutKey&,
                                      RowMatrix<float>&);
template void dropout_backward<double>(const RowMatrix<double>&, const DropoutKey&,
                                       RowMatrix<double>&);

}  // namespace maskgat::nn
