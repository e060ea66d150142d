#pragma once
// The factor (0 or 1 / (1 - p)) a dropout key gives element k, recomputed from a counter-based
// hash instead of stored: the same in forward and backward and on any number of threads.
//
// One 64-bit hash covers four consecutive elements: element k is kept when the 16-bit lane
// k % 4 of hash(k / 4) is at least round(p * 2^16). The probability is therefore rounded to a
// multiple of 2^-16, and kept elements are scaled by 1 / (1 - rounded p), so the mask stays
// unbiased. Hashing four elements at once makes masks four times cheaper than one hash each.

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "maskgat/core/error.hpp"
#include "maskgat/core/random.hpp"

namespace maskgat::ops::detail {

// Checks that a key with numbers has one per row of the `count` there are.
// @throws InvalidArgument naming `where` otherwise.
inline void check_numbers(const char* where, const DropoutKey& key, std::int64_t count) {
  if (!key.numbers.empty() && static_cast<std::int64_t>(key.numbers.size()) != count) {
    throw InvalidArgument(std::string(where) + ": the dropout key numbers " +
                          std::to_string(key.numbers.size()) + " elements, expected one per row (" +
                          std::to_string(count) + ")");
  }
}

template <typename T>
class DropoutMask {
 public:
  static constexpr unsigned kLaneBits = 16;
  static constexpr std::uint64_t kLanes = 64 / kLaneBits;

  // @throws InvalidArgument naming `where` when the probability is outside [0, 1).
  DropoutMask(const char* where, const DropoutKey& key) : stream_(key.seed, key.stream) {
    if (!(key.probability >= 0.0 && key.probability < 1.0)) {
      throw InvalidArgument(std::string(where) + ": dropout probability " +
                            std::to_string(key.probability) + " is outside [0, 1)");
    }
    constexpr double kRange = 1 << kLaneBits;
    threshold_ = static_cast<std::uint32_t>(std::lround(key.probability * kRange));
    active_ = threshold_ > 0;
    if (threshold_ >= (1U << kLaneBits)) {
      scale_ = T(0);  // p rounds to 1: every element is dropped
    } else {
      scale_ = static_cast<T>(kRange / (kRange - threshold_));
    }
  }

  // The factor of a kept element: 1 / (1 - rounded p), or 1 without dropout.
  [[nodiscard]] T scale() const noexcept { return scale_; }

  // Writes the factors of elements [first, first + count) to `factors`.
  [[gnu::always_inline]] void fill(std::uint64_t first, std::int64_t count, T* factors) const {
    draw(first, count, scale_, factors);
  }

  // Writes 1 for the kept elements of [first, first + count) and 0 for the dropped ones.
  [[gnu::always_inline]] void fill_kept(std::uint64_t first, std::int64_t count,
                                        std::uint8_t* kept) const {
    draw(first, count, std::uint8_t{1}, kept);
  }

 private:
  // Writes `kept` for the kept elements of [first, first + count) and V(0) for the dropped ones
  // to `out`, hashing each group of lanes once. Whole groups go in chunks: the chunk's hashes
  // first, then its elements from the hashes' 16-bit lanes read as one array (lane l of a hash is
  // the l-th uint16 in memory on a little-endian machine), two loops the compiler vectorises.
  // The members are copied to locals first: stores to `out` cannot alias them then, so they stay
  // in registers.
  template <typename V>
  [[gnu::always_inline]] void draw(std::uint64_t first, std::int64_t count, V kept, V* out) const {
    if (!active_) {
      for (std::int64_t k = 0; k < count; ++k) out[k] = kept;
      return;
    }
    const CounterStream stream = stream_;
    const std::uint32_t threshold = threshold_;
    const auto value = [&](std::uint64_t word, std::uint64_t lane) {
      const auto bits = static_cast<std::uint32_t>((word >> (lane * kLaneBits)) & 0xffffU);
      return bits >= threshold ? kept : V(0);
    };
    const std::uint64_t last = first + static_cast<std::uint64_t>(count);
    std::uint64_t k = first;
    // A partial group at the start, chunks of whole groups, single groups, a partial group at the
    // end.
    for (; k < last && k % kLanes != 0; ++k) out[k - first] = value(stream(k / kLanes), k % kLanes);
    if constexpr (std::endian::native == std::endian::little) {
      constexpr std::uint64_t kChunkWords = 16;
      std::uint64_t words[kChunkWords];
      std::uint16_t lanes[kChunkWords * kLanes];
      for (; k + kChunkWords * kLanes <= last; k += kChunkWords * kLanes) {
        for (std::uint64_t w = 0; w < kChunkWords; ++w) words[w] = stream(k / kLanes + w);
        std::memcpy(lanes, words, sizeof words);
        V* chunk = out + (k - first);
        for (std::uint64_t e = 0; e < kChunkWords * kLanes; ++e) {
          chunk[e] = lanes[e] >= threshold ? kept : V(0);
        }
      }
    }
    for (; k + kLanes <= last; k += kLanes) {
      const std::uint64_t word = stream(k / kLanes);
      for (std::uint64_t lane = 0; lane < kLanes; ++lane) out[k - first + lane] = value(word, lane);
    }
    for (; k < last; ++k) out[k - first] = value(stream(k / kLanes), k % kLanes);
  }

  CounterStream stream_;
  bool active_ = false;
  std::uint32_t threshold_ = 0;
  T scale_ = T(1);
};

}  // namespace maskgat::ops::detail
