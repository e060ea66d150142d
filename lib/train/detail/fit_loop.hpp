#pragma once
// The one training loop every task runs: epochs, early stopping, the best parameters kept,
// progress. What a task trains on and how it scores sit behind `FitTask`.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "maskgat/core/random.hpp"
#include "maskgat/nn/model.hpp"
#include "maskgat/optim/adam.hpp"
#include "maskgat/train/checkpoint.hpp"
#include "maskgat/train/trainer.hpp"

namespace maskgat::train::detail {

// The loss and accuracy of one epoch's training steps.
struct EpochTraining {
  double loss = 0.0;
  double accuracy = 0.0;
  std::int64_t input_rows = 0;
};

// The validation pass after an epoch.
struct Validation {
  double loss = 0.0;
  double accuracy = 0.0;
  double score = 0.0;  // of `TrainOptions::metric`
};

// What differs between tasks (node classification, graph classification): an epoch's steps and
// the validation pass.
class FitTask {
 public:
  virtual ~FitTask() = default;
  // Takes epoch `epoch`'s steps (1-based), updating the model's parameters.
  virtual EpochTraining train_epoch(std::int64_t epoch) = 0;
  // The validation pass with the current parameters; none without validation data.
  virtual std::optional<Validation> validate() = 0;
};

// Checks the options every task's loop reads: a batch size of 0 (one batch) or more, a positive
// epoch count and a patience of 0 (none) or more.
void check_loop_options(const TrainOptions& options);

// Trains `model` from `state.epoch + 1` until early stopping or `options.epochs` (the rule of
// `options.selection`), calling `on_epoch` after each epoch; afterwards the model holds the best
// epoch's parameters (and running statistics, kept in `best_buffers`) and `state` where the run
// stands. Fills the epochs, the best epoch and its validation results, and the time per epoch.
FitResult run_epochs(FitTask& task, const TrainOptions& options, nn::Model& model,
                     TrainingState& state, std::vector<float>& best_buffers,
                     const std::function<void(const EpochStats&)>& on_epoch);

// Puts a saved run's parameters, running statistics, optimizer state, training state and
// generator into a freshly built run, after checking they fit its model.
void restore_run(const Checkpoint& checkpoint, nn::Model& model, optim::Adam& optimizer,
                 TrainingState& state, Rng& rng);

// A run's checkpoint without its data record: its options, the data's name and class names,
// the parameters (names, shapes, values), running statistics, training state, optimizer state
// and generator.
Checkpoint capture_run(const TrainOptions& options, const std::string& dataset,
                       const std::vector<std::string>& class_names, const nn::Model& model,
                       const optim::Adam& optimizer, const TrainingState& state, const Rng& rng);

// The order an epoch visits `items` (training nodes, graphs) in mini-batches: a Fisher-Yates
// shuffle drawn from (seed, epoch) alone, so a resumed run visits them as the uninterrupted one.
template <typename Id>
std::vector<Id> shuffled(std::span<const Id> items, std::uint64_t seed, std::int64_t epoch) {
  constexpr std::uint64_t kShuffleStream = 0x73687566666c65ULL;  // "shuffle"
  Rng rng(counter_hash(seed, kShuffleStream, static_cast<std::uint64_t>(epoch)));
  std::vector<Id> order(items.begin(), items.end());
  for (std::size_t k = order.size(); k > 1; --k) {
    std::swap(order[k - 1], order[rng.uniform_int(k)]);
  }
  return order;
}

}  // namespace maskgat::train::detail
