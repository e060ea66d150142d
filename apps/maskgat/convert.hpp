#pragma once
// `maskgat convert`: any input written as a binary graph store, which --store then maps.

#include <CLI/CLI.hpp>
#include <filesystem>

#include "data_options.hpp"

namespace maskgat::app {

struct ConvertOptions {
  DataOptions data;
  std::filesystem::path out;  // the store's directory
  RunOptions run;
};

// Registers the `convert` subcommand on `app`.
void add_convert_command(CLI::App& app, ConvertOptions& options);

// Runs it; returns the exit code.
int run_convert(ConvertOptions& options);

}  // namespace maskgat::app
