// Compares the parameters of two checkpoints: every value a of the first within
// `tolerance * (1 + |b|)` of the second's b, names and shapes equal. Prints the largest relative
// difference; exits 0 when within, 1 when not, 2 on bad usage or unreadable files.
//   compare_checkpoints A.ckpt B.ckpt TOLERANCE

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "maskgat/train/checkpoint.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: compare_checkpoints A.ckpt B.ckpt TOLERANCE\n";
    return 2;
  }
  try {
    const maskgat::train::Checkpoint a = maskgat::train::load_checkpoint(argv[1]);
    const maskgat::train::Checkpoint b = maskgat::train::load_checkpoint(argv[2]);
    const double tolerance = std::stod(argv[3]);
    if (a.parameters.size() != b.parameters.size() || a.values.size() != b.values.size()) {
      std::cout << "FAIL: the checkpoints hold different parameters\n";
      return 1;
    }
    for (std::size_t k = 0; k < a.parameters.size(); ++k) {
      const auto& p = a.parameters[k];
      const auto& q = b.parameters[k];
      if (p.name != q.name || p.rows != q.rows || p.cols != q.cols) {
        std::cout << "FAIL: parameter " << k << " is " << p.name << " in one, " << q.name
                  << " in the other\n";
        return 1;
      }
    }
    double worst = 0.0;
    std::size_t at = 0;
    for (std::size_t k = 0; k < a.values.size(); ++k) {
      const double difference = std::abs(static_cast<double>(a.values[k]) - b.values[k]) /
                                (1.0 + std::abs(static_cast<double>(b.values[k])));
      if (!(difference <= worst)) {
        worst = difference;
        at = k;
      }
    }
    std::cout << (worst <= tolerance ? "PASS" : "FAIL") << ": largest difference " << worst
              << " (relative to 1 + |value|) at value " << at << " of " << a.values.size()
              << ", tolerance " << tolerance << '\n';
    return worst <= tolerance ? 0 : 1;
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << '\n';
    return 2;
  }
}
