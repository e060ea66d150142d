// Training on the parts of a graph across MPI processes, from C++ (the maskgat::mpi component):
// rank 0 splits a synthetic graph into one part per process (`write_partition`; here in blocks
// of consecutive nodes, where `maskgat partition` uses METIS), every rank opens its own part and
// trains the GAT paper's model with the others (`train::Trainer` over an `mpi::MpiCommunicator`,
// which duplicates MPI_COMM_WORLD), and rank 0 prints the result. The parameters follow
// single-process training on the whole graph.
// Usage: mpirun -np P distributed_training DIR [NODES]   (DIR: where the parts are written)
#include <mpi.h>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "maskgat/maskgat.hpp"
#include "maskgat/mpi/communicator.hpp"

int main(int argc, char** argv) {
  const maskgat::mpi::Environment environment(&argc, &argv);  // MPI_Init_thread and MPI_Finalize
  try {
    if (argc < 2) throw maskgat::InvalidArgument("usage: distributed_training DIR [NODES]");
    const std::filesystem::path dir = argv[1];
    maskgat::mpi::MpiCommunicator comm(MPI_COMM_WORLD);

    if (comm.rank() == 0) {
      maskgat::SyntheticOptions graph;
      graph.nodes = argc > 2 ? std::stoll(argv[2]) : 20000;
      const maskgat::Dataset data = maskgat::make_synthetic(graph, {});
      std::vector<std::int32_t> owner(static_cast<std::size_t>(data.graph.num_nodes()));
      for (std::size_t node = 0; node < owner.size(); ++node) {
        owner[node] =
            static_cast<std::int32_t>(node * static_cast<std::size_t>(comm.size()) / owner.size());
      }
      const maskgat::PartitionStats stats =
          maskgat::write_partition(data, owner, comm.size(), dir, /*overwrite=*/true);
      std::cout << "rank 0 wrote " << comm.size() << " parts; halo nodes:";
      for (const std::int64_t halo : stats.halo) std::cout << ' ' << halo;
      std::cout << '\n';
    }
    MPI_Barrier(MPI_COMM_WORLD);  // the parts are written

    const maskgat::GraphPart part =
        maskgat::open_part(dir / ("part-" + std::to_string(comm.rank())));
    maskgat::train::TrainOptions options = maskgat::train::paper_recipe("cora");
    options.epochs = 100;
    maskgat::train::Trainer trainer(part, comm, options);
    const maskgat::train::FitResult result = trainer.fit();
    if (comm.rank() == 0) {
      std::cout << "trained on " << comm.size() << " parts: test accuracy "
                << 100.0 * result.test_accuracy << " % after " << result.epochs << " epochs, "
                << comm.bytes_sent() << " bytes sent by rank 0\n";
    }
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << '\n';
    maskgat::mpi::abort(MPI_COMM_WORLD, 1);
  }
  return 0;
}
