#pragma once
// `maskgat import`: what a PyTorch state dict (a torch.save file) holds.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "data_options.hpp"

namespace maskgat::app {

struct ImportOptions {
  std::string torch;  // the torch.save file
  std::string key;    // the item of a wrapping dict that holds the state dict
  bool list = false;  // print every tensor's name, dtype and shape
  std::int64_t max_file_bytes = Limits{}.max_file_bytes;
  RunOptions run;
};

// Registers the `import` subcommand on `app`.
void add_import_command(CLI::App& app, ImportOptions& options);

// Runs it; returns the exit code.
int run_import(ImportOptions& options);

}  // namespace maskgat::app
