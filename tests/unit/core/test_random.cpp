#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "maskgat/core/random.hpp"

TEST_SUITE("unit") {
  TEST_CASE("Rng is deterministic for a seed and differs across seeds") {
    maskgat::Rng a(42);
    maskgat::Rng b(42);
    maskgat::Rng c(43);
    int differing = 0;
    for (int k = 0; k < 100; ++k) {
      const auto x = a.next_u64();
      CHECK(x == b.next_u64());
      differing += x != c.next_u64() ? 1 : 0;
    }
    CHECK(differing == 100);
  }

  TEST_CASE("Rng uniform_int stays in range and covers it") {
    maskgat::Rng rng(7);
    std::vector<int> counts(10, 0);
    for (int k = 0; k < 10000; ++k) {
      const auto v = rng.uniform_int(10);
      REQUIRE(v < 10);
      ++counts[v];
    }
    for (const int count : counts) CHECK(count > 850);
  }

  TEST_CASE("Rng uniform and normal have the right moments") {
    maskgat::Rng rng(1);
    double sum = 0.0;
    double sum_normal = 0.0;
    double sum_squares = 0.0;
    constexpr int kDraws = 100000;
    for (int k = 0; k < kDraws; ++k) {
      const double u = rng.uniform();
      REQUIRE(u >= 0.0);
      REQUIRE(u < 1.0);
      sum += u;
      const double z = rng.normal();
      sum_normal += z;
      sum_squares += z * z;
    }
    CHECK(sum / kDraws == doctest::Approx(0.5).epsilon(0.01));
    CHECK(std::abs(sum_normal / kDraws) < 0.02);
    CHECK(sum_squares / kDraws == doctest::Approx(1.0).epsilon(0.02));
  }

  TEST_CASE("counter_hash depends on every key") {
    const auto base = maskgat::counter_hash(1, 2, 3);
    CHECK(base == maskgat::counter_hash(1, 2, 3));
    CHECK(base != maskgat::counter_hash(2, 2, 3));
    CHECK(base != maskgat::counter_hash(1, 3, 3));
    CHECK(base != maskgat::counter_hash(1, 2, 4));
    CHECK(maskgat::counter_hash(0, 1, 0) != maskgat::counter_hash(0, 0, 1));
  }
}
