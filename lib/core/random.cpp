#include "maskgat/core/random.hpp"

#include <cassert>
#include <cmath>

namespace maskgat {
namespace {

using detail::splitmix64;

// 128-bit products for Lemire's unbiased bounded integers; a GCC/Clang extension.
__extension__ using Uint128 = unsigned __int128;

std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }

}  // namespace

Rng::Rng(std::uint64_t seed) noexcept {
  for (auto& word : state_) word = splitmix64(seed);
}

Rng::Rng(const RngState& state) noexcept
    : state_(state.words),
      spare_normal_(state.spare_normal),
      has_spare_normal_(state.has_spare_normal) {}

RngState Rng::state() const noexcept { return {state_, spare_normal_, has_spare_normal_}; }

std::uint64_t Rng::next_u64() noexcept {
  const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const std::uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

double Rng::uniform() noexcept { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

std::uint64_t Rng::uniform_int(std::uint64_t bound) noexcept {
  assert(bound > 0);
  // Lemire's rejection: multiply into 128 bits, reject the biased low range.
  Uint128 product = static_cast<Uint128>(next_u64()) * bound;
  auto low = static_cast<std::uint64_t>(product);
  if (low < bound) {
    const std::uint64_t threshold = (0 - bound) % bound;
    while (low < threshold) {
      product = static_cast<Uint128>(next_u64()) * bound;
      low = static_cast<std::uint64_t>(product);
    }
  }
  return static_cast<std::uint64_t>(product >> 64);
}

double Rng::normal() noexcept {
  if (has_spare_normal_) {
    has_spare_normal_ = false;
    return spare_normal_;
  }
  double u = 0.0;
  double v = 0.0;
  double s = 0.0;
  do {
    u = 2.0 * uniform() - 1.0;
    v = 2.0 * uniform() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  const double scale = std::sqrt(-2.0 * std::log(s) / s);
  spare_normal_ = v * scale;
  has_spare_normal_ = true;
  return u * scale;
}

}  // namespace maskgat
