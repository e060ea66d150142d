#include "train/detail/fit_loop.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "maskgat/core/error.hpp"

namespace maskgat::train::detail {
namespace {

double elapsed_ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Updates the early-stopping state with `stats`' validation results, setting its `improved` and
// `checkpoint` flags.
void follow(const TrainOptions& options, TrainingState& state, EpochStats& stats) {
  if (options.patience == 0) {
    stats.checkpoint = true;
  } else if (options.selection == Selection::kMetric) {
    stats.improved = stats.val_score > state.best_accuracy;
    stats.checkpoint = stats.improved;
    if (stats.improved) {
      state.best_accuracy = stats.val_score;
      state.best_loss = std::min(state.best_loss, stats.val_loss);
      state.waiting = 0;
    } else {
      state.stopped = ++state.waiting >= options.patience;
    }
  } else if (stats.val_score >= state.best_accuracy || stats.val_loss <= state.best_loss) {
    stats.improved = true;
    stats.checkpoint = stats.val_score >= state.best_accuracy && stats.val_loss <= state.best_loss;
    state.best_accuracy = std::max(state.best_accuracy, stats.val_score);
    state.best_loss = std::min(state.best_loss, stats.val_loss);
    state.waiting = 0;
  } else {
    state.stopped = ++state.waiting >= options.patience;
  }
}

}  // namespace

void check_loop_options(const TrainOptions& options) {
  if (options.batch_size < 0) {
    throw InvalidArgument("train: batch size is " + std::to_string(options.batch_size) +
                          ", expected 0 (full batch) or a positive count");
  }
  if (options.epochs <= 0) {
    throw InvalidArgument("train: epochs is " + std::to_string(options.epochs) +
                          ", expected a positive count");
  }
  if (options.patience < 0) {
    throw InvalidArgument("train: patience is " + std::to_string(options.patience) +
                          ", expected 0 (no early stopping) or a positive count");
  }
}

FitResult run_epochs(FitTask& task, const TrainOptions& options, nn::Model& model,
                     TrainingState& state, std::vector<float>& best_buffers,
                     const std::function<void(const EpochStats&)>& on_epoch) {
  const auto values = model.parameters().values();
  if (!state.last_values.empty())
    std::copy(state.last_values.begin(), state.last_values.end(), values.begin());
  double total_ms = 0.0;
  std::int64_t epochs_run = 0;
  for (std::int64_t epoch = state.epoch + 1; epoch <= options.epochs && !state.stopped; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    EpochStats stats;
    stats.epoch = epoch;
    const EpochTraining training = task.train_epoch(epoch);
    stats.train_loss = training.loss;
    stats.train_accuracy = training.accuracy;
    stats.input_rows = training.input_rows;
    stats.train_milliseconds = elapsed_ms(start);
    if (const std::optional<Validation> val = task.validate()) {
      stats.val_loss = val->loss;
      stats.val_accuracy = val->accuracy;
      stats.val_score = val->score;
    }
    stats.milliseconds = elapsed_ms(start);
    total_ms += stats.milliseconds;
    ++epochs_run;
    follow(options, state, stats);
    if (stats.checkpoint) {
      std::copy(values.begin(), values.end(), state.best_values.begin());
      const auto buffers = model.buffers().values();
      best_buffers.assign(buffers.begin(), buffers.end());
      state.best_epoch = epoch;
      state.best_val_accuracy = stats.val_accuracy;
      state.best_val_score = stats.val_score;
      state.best_val_loss = stats.val_loss;
    }
    state.epoch = epoch;
    if (on_epoch) on_epoch(stats);
  }
  state.last_values.assign(values.begin(), values.end());
  std::copy(state.best_values.begin(), state.best_values.end(), values.begin());
  if (!best_buffers.empty()) {
    std::copy(best_buffers.begin(), best_buffers.end(), model.buffers().values().begin());
  }
  FitResult result;
  result.epochs = state.epoch;
  result.best_epoch = state.best_epoch;
  result.val_accuracy = state.best_val_accuracy;
  result.val_loss = state.best_val_loss;
  result.val_score = state.best_val_score;
  result.ms_per_epoch = epochs_run > 0 ? total_ms / static_cast<double>(epochs_run) : 0.0;
  return result;
}

void restore_run(const Checkpoint& checkpoint, nn::Model& model, optim::Adam& optimizer,
                 TrainingState& state, Rng& rng) {
  auto& parameters = model.parameters();
  check_parameters(parameters, checkpoint.parameters, checkpoint.values.size());
  const TrainingState& saved = checkpoint.state;
  const auto size = static_cast<std::size_t>(parameters.size());
  if (saved.best_values.size() != size ||
      (!saved.last_values.empty() && saved.last_values.size() != size)) {
    throw InvalidArgument("checkpoint: the training state holds " +
                          std::to_string(saved.best_values.size()) + " parameters, the model " +
                          std::to_string(size));
  }
  std::copy(checkpoint.values.begin(), checkpoint.values.end(), parameters.values().begin());
  restore_buffers(model, checkpoint.buffers);
  optimizer.restore(saved.optimizer_steps, saved.optimizer_first, saved.optimizer_second);
  state = saved;
  rng = Rng(saved.rng);
}

Checkpoint capture_run(const TrainOptions& options, const std::string& dataset,
                       const std::vector<std::string>& class_names, const nn::Model& model,
                       const optim::Adam& optimizer, const TrainingState& state, const Rng& rng) {
  Checkpoint checkpoint;
  checkpoint.options = options;
  checkpoint.dataset = dataset;
  checkpoint.class_names = class_names;
  const auto& parameters = model.parameters();
  for (const auto& entry : parameters.entries()) {
    checkpoint.parameters.push_back({entry.name, entry.parameter.rows, entry.parameter.cols});
  }
  checkpoint.values.assign(parameters.values().begin(), parameters.values().end());
  checkpoint.buffers.assign(model.buffers().values().begin(), model.buffers().values().end());
  checkpoint.state = state;
  checkpoint.state.optimizer_steps = optimizer.steps();
  checkpoint.state.optimizer_first.assign(optimizer.first_moments().begin(),
                                          optimizer.first_moments().end());
  checkpoint.state.optimizer_second.assign(optimizer.second_moments().begin(),
                                           optimizer.second_moments().end());
  checkpoint.state.rng = rng.state();
  return checkpoint;
}

}  // namespace maskgat::train::detail
