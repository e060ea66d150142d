#pragma once
// Rows of a gradient that are exactly zero, which the backward kernels skip.

#include <bit>
#include <cstdint>
#include <type_traits>

namespace maskgat::ops::detail {

// Whether all `width` elements at `row` are +-0: their bits but the sign's, or-ed together, are
// zero (NaN and infinities have other bits set). An integer reduction, which vectorises.
template <typename T>
[[nodiscard]] bool is_zero_row(const T* row, std::int64_t width) {
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  constexpr Bits kMagnitude = ~Bits{0} >> 1;
  Bits any = 0;
  for (std::int64_t c = 0; c < width; ++c) any |= std::bit_cast<Bits>(row[c]) & kMagnitude;
  return any == 0;
}

}  // namespace maskgat::ops::detail
