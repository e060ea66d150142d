#pragma once
// A trainer's current parameters as a plain vector, to compare runs bit for bit.

#include <vector>

#include "maskgat/train/trainer.hpp"

namespace maskgat::test {

inline std::vector<float> parameter_values(train::Trainer& trainer) {
  const auto values = trainer.model().parameters().values();
  return {values.begin(), values.end()};
}

}  // namespace maskgat::test
