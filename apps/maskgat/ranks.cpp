#include "ranks.hpp"

#include <iostream>
#include <string>

#include "maskgat/core/error.hpp"
#include "mpi_communicator.hpp"

namespace maskgat::app {

GraphPart open_rank_part(const std::filesystem::path& dir, const Communicator& comm,
                         const DataOptions& data) {
  StoreOptions store;
  store.verify_features = data.verify_store;
  store.limits = data.load.read.limits;
  GraphPart part = open_part(dir / ("part-" + std::to_string(comm.rank())), store);
  if (part.parts != comm.size()) {
    throw InvalidArgument("--partitions: " + dir.string() + " holds " + std::to_string(part.parts) +
                          " parts, the job runs " + std::to_string(comm.size()) +
                          " processes; run it with mpirun -np " + std::to_string(part.parts));
  }
  return part;
}

RunOptions rank_output(const RunOptions& run, const Communicator& comm) {
  RunOptions output = run;
  output.quiet = output.quiet || comm.rank() != 0;
  output.json = output.json && comm.rank() == 0;
  return output;
}

void fail_rank(const Communicator& comm, const std::exception& error) {
  // In one write: std::cerr writes each piece as it comes, and mpirun could print its abort
  // notice between the pieces it forwards.
  const std::string line = "error: rank " + std::to_string(comm.rank()) + " of " +
                           std::to_string(comm.size()) + ": " + error.what() + "\n";
  std::cerr << line << std::flush;
  abort_mpi(dynamic_cast<const InvalidArgument*>(&error) != nullptr ? 2 : 1);
}

}  // namespace maskgat::app
