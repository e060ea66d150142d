#pragma once
/// @file
/// Seeded, platform-independent random numbers.
///
/// All randomness in MaskGAT comes from an explicit `Rng` (or from `counter_hash` inside parallel
/// loops), never from `std::rand`, Eigen's `Random()` or the implementation-defined
/// `std::*_distribution`s, so a seed gives the same numbers with every compiler and thread count.

#include <array>
#include <cstdint>
#include <span>

#include "maskgat/export.hpp"

namespace maskgat {

namespace detail {

/// SplitMix64: advances `state` by the golden-ratio increment and returns the mixed value.
constexpr std::uint64_t splitmix64(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace detail

/// Counter-based random values of one (`seed`, `stream`) pair, with the pair mixed once:
/// `CounterStream(seed, stream)(counter) == counter_hash(seed, stream, counter)`. For hot loops.
class CounterStream {
 public:
  /// Mixes the pair once.
  /// @param seed   the run's seed
  /// @param stream separates independent draws of one seed (e.g. a step or a purpose)
  constexpr CounterStream(std::uint64_t seed, std::uint64_t stream) noexcept
      : key_(mix(seed, stream)) {}

  /// The random 64-bit value of `counter`.
  /// @param counter e.g. an element id; each counter gives an independent value
  /// @return the same value for the same (seed, stream, counter), on any platform
  [[nodiscard]] constexpr std::uint64_t operator()(std::uint64_t counter) const noexcept {
    std::uint64_t state = key_ ^ counter;
    return detail::splitmix64(state);
  }

 private:
  static constexpr std::uint64_t mix(std::uint64_t seed, std::uint64_t stream) noexcept {
    std::uint64_t state = seed;
    std::uint64_t mixed = detail::splitmix64(state) ^ stream;
    return detail::splitmix64(mixed);
  }

  std::uint64_t key_;
};

/// SplitMix64 finaliser of (`seed`, `stream`, `counter`): a counter-based random 64-bit value.
/// Used where draws happen inside parallel loops, keyed by e.g. (seed, step, element id), so the
/// result does not depend on scheduling.
/// @param seed    the run's seed
/// @param stream  separates independent uses of one seed
/// @param counter e.g. an element id
/// @return `CounterStream(seed, stream)(counter)`
[[nodiscard]] constexpr std::uint64_t counter_hash(std::uint64_t seed, std::uint64_t stream,
                                                   std::uint64_t counter) noexcept {
  return CounterStream(seed, stream)(counter);
}

/// The key of a dropout mask that is recomputed rather than stored. Element k is kept when the
/// 16-bit lane `k % 4` of `counter_hash(seed, stream, k / 4)` is at least
/// `round(probability * 2^16)`, so the probability is rounded to a multiple of 2^-16 (and a
/// probability below 2^-17 drops nothing); kept elements are scaled by `1 / (1 - rounded
/// probability)`, which keeps the mask unbiased. The same key gives the same mask in forward and
/// backward, on any number of threads. Attention dropout numbers elements `edge * H + head`,
/// feature dropout `row * F + column` (dense) or the position among stored entries (sparse).
/// With `numbers`, a part of a graph draws the mask of the whole (distributed training): row r's
/// elements are numbered from `numbers[r]` on (its features or layer input; or its attention
/// entries, the k-th of them numbered `numbers[r] + k`).
struct DropoutKey {
  double probability = 0.0;  ///< in [0, 1); 0 disables dropout
  std::uint64_t seed = 0;    ///< the mask's seed (the model and layers draw it from their `Rng`)
  std::uint64_t stream = 0;  ///< separates masks that share a seed
  /// Empty (number by position), or one number per row: that of the row's first element
  /// (feature dropout) or first attention entry (attention dropout); viewed, not owned.
  std::span<const std::int64_t> numbers = {};
};

/// The complete state of an `Rng`, to save and restore it (checkpoints).
struct RngState {
  std::array<std::uint64_t, 4> words{};  ///< the xoshiro256** state
  double spare_normal = 0.0;             ///< the second deviate of the last polar-method pair
  bool has_spare_normal = false;         ///< whether `normal()` returns `spare_normal` next
};

/// A sequential generator (xoshiro256**, seeded through SplitMix64).
/// Not thread-safe: give each task its own, or use `counter_hash`.
class MASKGAT_EXPORT Rng {
 public:
  /// Seeds the four state words from `seed` with SplitMix64.
  /// @param seed any value; equal seeds give equal sequences
  explicit Rng(std::uint64_t seed) noexcept;
  /// Continues exactly where the generator that produced `state` was.
  /// @param state a value of `state()`, e.g. read from a checkpoint
  explicit Rng(const RngState& state) noexcept;

  /// The current state; `Rng(rng.state())` draws the same numbers as `rng` from here on.
  /// @return the state words and the pending normal deviate
  [[nodiscard]] RngState state() const noexcept;

  /// The next raw 64-bit value.
  /// @return 64 random bits
  std::uint64_t next_u64() noexcept;
  /// Uniform double in [0, 1) with 53 random bits.
  /// @return a multiple of 2^-53 in [0, 1); draws one `next_u64()`
  double uniform() noexcept;
  /// Uniform integer in [0, bound) without modulo bias (Lemire's rejection method).
  /// @param bound must be positive (checked by an assertion only)
  /// @return a value in [0, bound); draws one or, rarely, more `next_u64()`
  std::uint64_t uniform_int(std::uint64_t bound) noexcept;
  /// Standard normal deviate (Marsaglia's polar method).
  /// @return a draw of N(0, 1); deviates come in pairs, the second kept for the next call
  double normal() noexcept;

 private:
  std::array<std::uint64_t, 4> state_{};
  double spare_normal_ = 0.0;
  bool has_spare_normal_ = false;
};

}  // namespace maskgat
