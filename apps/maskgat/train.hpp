#pragma once
// `maskgat train`: the GAT paper's node classification, one or several seeds.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "data_options.hpp"

namespace maskgat::app {

struct TrainCommandOptions {
  DataOptions data;
  std::optional<std::string> recipe, attention, positional, metric, selection;
  std::optional<std::string> model;  // --model: a spec file, or paper
  std::optional<std::int64_t> layers, heads, hidden, output_heads, epochs, patience;
  std::optional<double> dropout, attention_dropout, learning_rate, weight_decay;
  bool whole_graph = false;
  std::optional<std::int64_t> batch_size;  // --batch-size: mini-batches of this many
  std::vector<std::int64_t> fanouts;       // --fanout: per layer, input layer first
  std::int64_t runs = 1;
  bool same_split = false;  // --same-split: every run on the first run's random split
  ModelLimits limits;
  std::optional<std::filesystem::path> metrics_json, save, resume, plot, split_out;
  std::optional<std::filesystem::path> partitions;  // --partitions: part r on MPI rank r
  RunOptions run;
};

// Registers the `train` subcommand on `app`.
void add_train_command(CLI::App& app, TrainCommandOptions& options);

// Runs it; returns the exit code.
int run_train(TrainCommandOptions& options);

}  // namespace maskgat::app
