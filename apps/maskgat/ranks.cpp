#include "ranks.hpp"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>

#include "maskgat/core/error.hpp"

#if MASKGAT_WITH_MPI
#include "maskgat/mpi/communicator.hpp"
#endif

namespace maskgat::app {

#if MASKGAT_WITH_MPI

std::unique_ptr<Communicator> start_mpi(const DataOptions& data) {
  static const mpi::Environment environment(nullptr, nullptr);  // finalised at exit
  mpi::CommunicatorOptions options;
  options.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(1000.0 * data.mpi_timeout));
  return std::make_unique<mpi::MpiCommunicator>(MPI_COMM_WORLD, options);
}

namespace {
[[noreturn]] void abort_job(int code) { mpi::abort(MPI_COMM_WORLD, code); }
}  // namespace

#else

std::unique_ptr<Communicator> start_mpi(const DataOptions& /*data*/) {
  throw InvalidArgument(
      "--partitions runs under mpirun, and this maskgat was built without MPI (install "
      "libopenmpi-dev and openmpi-bin, then configure and build again)");
}

namespace {
[[noreturn]] void abort_job(int code) { std::_Exit(code); }
}  // namespace

#endif

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
  abort_job(dynamic_cast<const InvalidArgument*>(&error) != nullptr ? 2 : 1);
}

}  // namespace maskgat::app
