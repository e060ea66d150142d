#pragma once
// What the commands that run on the parts of a partition under mpirun share: starting MPI,
// opening rank r's part, and ending the whole job when a rank fails.

#include <exception>
#include <filesystem>
#include <memory>

#include "data_options.hpp"
#include "maskgat/core/communicator.hpp"
#include "maskgat/io/partition.hpp"

namespace maskgat::app {

// Initialises MPI (once per process; finalised at exit) and returns MPI_COMM_WORLD's duplicate
// (maskgat::mpi::MpiCommunicator), whose calls wait at most `data.mpi_timeout` seconds for
// another rank.
// @throws InvalidArgument when the CLI was built without MPI; Error when MPI fails to start.
std::unique_ptr<Communicator> start_mpi(const DataOptions& data);

// Rank r's part of the partition `dir` wrote (`dir/part-r`), read with the store options of
// `data` (--verify, the reader limits).
// @throws as `open_part`; InvalidArgument when the partition holds another number of parts than
//         the job has processes.
GraphPart open_rank_part(const std::filesystem::path& dir, const Communicator& comm,
                         const DataOptions& data);

// The output options of this rank: rank 0 prints and writes as `run` asks, the others print
// their errors only.
RunOptions rank_output(const RunOptions& run, const Communicator& comm);

// Prints `error` as this rank's ("error: rank r of P: ...") and ends every process of the job
// (MPI_Abort), with exit code 2 for bad usage (InvalidArgument) and 1 otherwise, so no rank waits
// on one that has stopped.
[[noreturn]] void fail_rank(const Communicator& comm, const std::exception& error);

}  // namespace maskgat::app
