#pragma once
// `maskgat info`: dataset statistics as key: value lines or JSON; for a TU collection of graphs
// (`--tu FILE` or `--dataset tu:NAME`), the graphs' counts and size distributions.

#include <CLI/CLI.hpp>

#include "data_options.hpp"

namespace maskgat::app {

struct InfoOptions {
  DataOptions data;
  RunOptions run;
};

// Registers the `info` subcommand on `app`.
void add_info_command(CLI::App& app, InfoOptions& options);

// Runs it; returns the exit code.
int run_info(InfoOptions& options);

}  // namespace maskgat::app
