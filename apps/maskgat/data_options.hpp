#pragma once
// The input options every subcommand shares (a built-in dataset or own files) and loading them.

#include <tbb/global_control.h>

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

// The data directory when neither `--data-dir` nor $MASKGAT_DATA_DIR gives one: the source
// tree's datasets/ for a maskgat run from its build tree, else ${XDG_DATA_HOME:-~/.local/share}/
// maskgat (which the installed `maskgat-fetch` fills). Throws InvalidArgument when neither
// XDG_DATA_HOME (absolute) nor HOME is set.
std::filesystem::path default_data_dir();

// Loads what the options name and prints the loaders' notes to stderr as `note:` lines.
Dataset load_data(DataOptions& options);

// Loads the data a model trains on or is applied to: features required, rows normalised (as the
// GAT paper) when no feature is negative, else a note says they are not.
Dataset load_model_data(DataOptions& options);

// Limits the worker threads for the lifetime of the returned object (0: all cores).
std::optional<tbb::global_control> limit_threads(std::int64_t threads);

// `value` with `digits` digits after the point, for printed metrics.
std::string fixed(double value, int digits);

// Fails with an IoError naming `--force` when `path` exists and `force` is false, so a command
// refuses before it computes anything.
void check_output(const std::optional<std::filesystem::path>& path, bool force);

// `text` as one CSV field: quoted (with quotes doubled) when it holds a comma, quote or newline.
std::string csv_field(const std::string& text);

}  // namespace maskgat::app
