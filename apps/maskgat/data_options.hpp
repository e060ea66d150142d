#pragma once
// The input options every subcommand shares (a built-in dataset or own files) and loading them.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "maskgat/io/dataset.hpp"

namespace maskgat::app {

struct DataOptions {
  std::string dataset;
  std::optional<std::filesystem::path> data_dir;
  std::string source = "planetoid";
  FileSources files;
  DatasetOptions load;
};

// Registers `--dataset`, `--data-dir`, `--source`, `--graph`, `--format`, `--features`,
// `--labels`, `--split`, `--undirected`, `--numeric-ids`, `--num-nodes`, `--strict`, `--seed`
// and the reader limits on `command`.
void add_data_options(CLI::App& command, DataOptions& options);

// Loads what the options name and prints the loaders' notes to stderr as `note:` lines.
Dataset load_data(DataOptions& options);

}  // namespace maskgat::app
