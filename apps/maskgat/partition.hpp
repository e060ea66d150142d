#pragma once
// `maskgat partition`: METIS k-way parts of any input, written as one graph store per part.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>

#include "data_options.hpp"

namespace maskgat::app {

struct PartitionOptions {
  DataOptions data;
  std::int32_t parts = 2;       // --parts
  std::int64_t metis_seed = 0;  // --metis-seed
  std::filesystem::path out;    // the partition's directory
  RunOptions run;
};

// Registers the `partition` subcommand on `app`.
void add_partition_command(CLI::App& app, PartitionOptions& options);

// Runs it; returns the exit code.
int run_partition(PartitionOptions& options);

}  // namespace maskgat::app
