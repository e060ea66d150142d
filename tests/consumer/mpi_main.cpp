// Uses the maskgat::mpi component as a downstream program does: MPI started by a
// `maskgat::mpi::Environment`, a communicator over MPI_COMM_WORLD, and a sum over the ranks. Exits
// 1 unless every rank gets 0 + 1 + ... + (P - 1).
#include <cstdint>
#include <iostream>
#include <span>

#include "maskgat/mpi/communicator.hpp"

int main(int argc, char** argv) {
  const maskgat::mpi::Environment environment(&argc, &argv);
  maskgat::mpi::MpiCommunicator comm(MPI_COMM_WORLD);
  std::int64_t value = comm.rank();
  maskgat::sum_in_rank_order<std::int64_t>(comm, std::span(&value, 1));
  const std::int64_t expected = std::int64_t{comm.size()} * (comm.size() - 1) / 2;
  if (comm.rank() == 0) std::cout << comm.size() << " ranks, sum " << value << '\n';
  return value == expected ? 0 : 1;
}
