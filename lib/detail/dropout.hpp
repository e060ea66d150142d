#pragma once
// The factor (0 or 1 / (1 - p)) a dropout key gives element k, recomputed from a counter-based
// hash instead of stored: the same in forward and backward and on any number of threads.

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "maskgat/core/error.hpp"
#include "maskgat/core/random.hpp"

namespace maskgat::detail {

template <typename T>
class DropoutMask {
 public:
  // @throws InvalidArgument naming `where` when the probability is outside [0, 1).
  DropoutMask(const char* where, const DropoutKey& key) : stream_(key.seed, key.stream) {
    if (!(key.probability >= 0.0 && key.probability < 1.0)) {
      throw InvalidArgument(std::string(where) + ": dropout probability " +
                            std::to_string(key.probability) + " is outside [0, 1)");
    }
    active_ = key.probability > 0.0;
    const double threshold = std::ldexp(key.probability, 64);
    threshold_ = threshold >= std::ldexp(1.0, 64) ? std::numeric_limits<std::uint64_t>::max()
                                                  : static_cast<std::uint64_t>(threshold);
    scale_ = static_cast<T>(1.0 / (1.0 - key.probability));
  }

  [[nodiscard]] bool active() const noexcept { return active_; }

  T operator()(std::uint64_t element) const noexcept {
    if (!active_) return T(1);
    return stream_(element) >= threshold_ ? scale_ : T(0);
  }

 private:
  CounterStream stream_;
  bool active_ = false;
  std::uint64_t threshold_ = 0;
  T scale_ = T(1);
};

}  // namespace maskgat::detail
