#pragma once
// The processes `mpirun` started, as the library's `Communicator`: MPI_COMM_WORLD of Open MPI (or
// any MPI) when the CLI was built with it, otherwise an error that says how to get it.

#include <memory>

#include "maskgat/core/communicator.hpp"

namespace maskgat::app {

// Initialises MPI and returns MPI_COMM_WORLD; destroying it finalises MPI. Only the calling
// thread uses MPI (the kernels' TBB workers never do). Errors are returned rather than fatal, and
// every call's is checked and thrown as `Error` naming the call and the rank.
// @throws InvalidArgument when the CLI was built without MPI; Error when MPI fails to start.
std::unique_ptr<Communicator> start_mpi();

// Ends every process of the job with `code` (MPI_Abort).
[[noreturn]] void abort_mpi(int code);

}  // namespace maskgat::app
