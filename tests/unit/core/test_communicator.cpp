// The collective helpers over a `Communicator` (support/thread_group.hpp's threads standing in for
// MPI ranks): sums over ranks have the bits of adding every rank's values in rank order, on every
// rank, for any count of values and ranks, and send a reduction's bytes, not a gather's.

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "maskgat/core/communicator.hpp"
#include "support/thread_group.hpp"

namespace {

// Rank r's k-th term: magnitudes far apart, so that another order of the sums has other bits.
double term(int rank, std::size_t k) {
  const double scale[] = {1.0, 1e16, -1e16, 3.0, 1e-3};
  return scale[rank % 5] * (1.0 + 0.1 * static_cast<double>(k)) + static_cast<double>(rank);
}

TEST_CASE("communicator: sums over ranks are rank-order sums on every rank, by reduction") {
  for (const int ranks : {1, 2, 3, 4, 5}) {
    for (const std::size_t count :
         {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{7}, std::size_t{100}}) {
      CAPTURE(ranks);
      CAPTURE(count);
      std::vector<double> expected(count);
      for (std::size_t k = 0; k < count; ++k) {
        expected[k] = term(0, k);
        for (int q = 1; q < ranks; ++q) expected[k] += term(q, k);
      }
      std::vector<std::vector<double>> got(static_cast<std::size_t>(ranks));
      std::vector<std::int64_t> sent(static_cast<std::size_t>(ranks));
      maskgat::test::ThreadGroup group(ranks);
      group.run([&](int rank, maskgat::Communicator& comm) {
        std::vector<double> values(count);
        for (std::size_t k = 0; k < count; ++k) values[k] = term(rank, k);
        maskgat::sum_in_rank_order<double>(comm, values);
        got[static_cast<std::size_t>(rank)] = values;
        sent[static_cast<std::size_t>(rank)] = comm.bytes_sent();
      });
      const std::size_t slice =
          (count + static_cast<std::size_t>(ranks) - 1) / static_cast<std::size_t>(ranks);
      for (int rank = 0; rank < ranks; ++rank) {
        CAPTURE(rank);
        const std::vector<double>& values = got[static_cast<std::size_t>(rank)];
        REQUIRE(values.size() == count);
        // Bit for bit (memcmp of no bytes would still pass null pointers).
        CHECK((count == 0 ||
               std::memcmp(values.data(), expected.data(), count * sizeof(double)) == 0));
        // A slice to every other rank and the summed slice to every other rank, where gathering
        // would send every value to every other rank.
        CHECK(sent[static_cast<std::size_t>(rank)] <=
              static_cast<std::int64_t>(2 * (ranks - 1) * slice * sizeof(double)));
      }
    }
  }
}

}  // namespace
