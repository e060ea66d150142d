#pragma once
// `maskgat train`: the GAT paper's node classification, one or several seeds.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "data_options.hpp"
#include "maskgat/train/checkpoint.hpp"
#include "maskgat/train/trainer.hpp"

namespace maskgat::app {

struct TrainCommandOptions {
  DataOptions data;
  std::optional<std::string> recipe, attention, positional, metric, selection;
  std::optional<std::string> task;      // --task: node (default), graph or link
  std::vector<std::string> models;      // --model: a spec file, or paper; graph tasks: candidates
  std::optional<std::int64_t> folds;    // --folds: graph tasks, every fold of K
  std::optional<std::int64_t> fold;     // --fold: graph tasks, fold k (1-based) alone
  std::optional<std::int64_t> out_dim;  // --out-dim: link tasks, state width
  std::optional<std::string> decoder;   // --decoder: link tasks, dot or mlp
  std::optional<std::int64_t> decoder_hidden;         // --decoder-hidden: the MLP's width
  std::optional<double> val_fraction, test_fraction;  // link tasks: edges held out
  std::optional<std::filesystem::path> edge_split;    // --edge-split: link tasks, read it
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

// The run's options from the command line: the recipe, then the options given, with `model` (a
// spec file, `paper` or none) and `seed`.
train::TrainOptions recipe(const TrainCommandOptions& cli, std::uint64_t seed,
                           const std::optional<std::string>& model);

// Checks the files a training run writes (--plot, --metrics-json, --save, --split-out) against
// those it reads (--resume, `inputs` as option and path, the data), once --save, --resume and
// --plot are known to come with one run; then reads the checkpoint --resume names, with the
// command line's limits (none without --resume).
std::optional<train::Checkpoint> check_run_files(
    const TrainCommandOptions& options,
    const std::vector<std::pair<std::string, std::filesystem::path>>& inputs = {});

// Refuses the options --resume takes from the checkpoint and would contradict: only --epochs
// may be given with it.
void check_resume_options(const TrainCommandOptions& options);

// How results name `metric`: `acc` or `roc_auc` in result lines and JSON keys.
std::string metric_key(train::Metric metric);

// Progress of one run on stderr: a live line on a terminal, a plain line every 50 epochs
// otherwise (every epoch with --verbose), nothing with --quiet; `prefix` names the run.
class Progress {
 public:
  Progress(const RunOptions& output, std::string prefix, const train::TrainOptions& options);
  void operator()(const train::EpochStats& stats);
  void finish() const;

 private:
  bool quiet_;
  std::int64_t every_;
  bool terminal_;
  std::string prefix_;
  std::int64_t epochs_;
  std::int64_t patience_;
  std::string score_key_;
  std::int64_t waiting_ = 0;
  double elapsed_ms_ = 0.0;
  double best_ = 0.0;
};

// Trains run `run` (0-based) of `runs` with `trainer` (of any task) and its progress line,
// keeping each epoch's figures in `curves` (for --plot).
template <typename AnyTrainer>
train::FitResult fit_run(AnyTrainer& trainer, const RunOptions& output, std::int64_t run,
                         std::int64_t runs, const train::TrainOptions& options,
                         std::vector<train::EpochStats>& curves) {
  Progress progress(output,
                    "run " + std::to_string(run + 1) + "/" + std::to_string(runs) + " seed " +
                        std::to_string(options.seed),
                    options);
  curves.clear();
  const train::FitResult result = trainer.fit([&](const train::EpochStats& stats) {
    progress(stats);
    curves.push_back(stats);
  });
  progress.finish();
  return result;
}

// Registers the `train` subcommand on `app`.
void add_train_command(CLI::App& app, TrainCommandOptions& options);

// Runs it; returns the exit code.
int run_train(TrainCommandOptions& options);

}  // namespace maskgat::app
