#pragma once
// `maskgat evaluate` and `maskgat predict`: applying a saved model.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "data_options.hpp"
#include "maskgat/train/metrics.hpp"

namespace maskgat::app {

struct EvaluateOptions {
  DataOptions data;
  std::optional<std::filesystem::path> partitions;  // --partitions: part r on MPI rank r
  std::filesystem::path model;
  std::optional<std::filesystem::path> metrics_json;
  std::optional<std::filesystem::path> split_out;
  std::optional<std::int64_t> batch_size;  // --batch-size: layer by layer in chunks of this many
  std::optional<std::string> metric;       // --metric: default the model's
  std::optional<std::filesystem::path> edge_split;    // --edge-split: a link model's split
  std::optional<double> val_fraction, test_fraction;  // a link model's split, drawn again
  ModelLimits limits;
  RunOptions run;
};

struct PredictOptions {
  DataOptions data;
  std::optional<std::filesystem::path> partitions;  // --partitions: part r on MPI rank r
  std::filesystem::path model;
  std::optional<std::filesystem::path> output;
  std::optional<std::filesystem::path> attention_out;
  std::vector<std::string> plot_attention;     // empty, or NODE and FILE
  std::vector<std::string> nodes;              // the nodes to score by name; empty: every node
  std::optional<std::filesystem::path> pairs;  // --pairs: a link model scores these pairs
  std::optional<std::string> recommend;        // --recommend: a link model's top nodes for it
  std::int64_t top_k = 10;                     // --top-k: how many --recommend lists
  std::optional<std::int64_t> batch_size;  // --batch-size: layer by layer in chunks of this many
  ModelLimits limits;
  RunOptions run;
};

// Register the `evaluate` and `predict` subcommands on `app`.
void add_evaluate_command(CLI::App& app, EvaluateOptions& options);
void add_predict_command(CLI::App& app, PredictOptions& options);

// Run them; return the exit code.
int run_evaluate(EvaluateOptions& options);
int run_predict(PredictOptions& options);

// What `predict` reports for the nodes or graphs `names` (row i of `logits` is names[i]'s; `key`
// `node` or `graph`): the CSV of --output and, with --json, the predictions on stdout.
void report_predictions(const PredictOptions& options, const RunOptions& run,
                        const std::string& dataset, const std::vector<std::string>& class_names,
                        const std::vector<std::string>& names, const RowMatrix<float>& logits,
                        const char* key);

// Prints a test confusion matrix (unless --json) and returns it as JSON rows (true class).
nlohmann::ordered_json report_confusion(const train::ConfusionMatrix& confusion,
                                        const std::vector<std::string>& class_names,
                                        const RunOptions& run);

}  // namespace maskgat::app
