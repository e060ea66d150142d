#pragma once
/// @file
/// Training a node classifier the GAT paper's way, from C++.

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "maskgat/io/dataset.hpp"
#include "maskgat/nn/model.hpp"
#include "maskgat/optim/adam.hpp"
#include "maskgat/train/metrics.hpp"

namespace maskgat::train {

struct Checkpoint;

/// Everything that defines a training run.
struct TrainOptions {
  nn::ModelOptions model;  ///< `in_features` and `classes` are taken from the dataset
  optim::AdamOptions optimizer;
  std::int64_t epochs = 10000;  ///< at most this many epochs (> 0)
  std::int64_t patience = 100;  ///< early-stopping patience; 0 trains exactly `epochs` epochs
  std::uint64_t seed = 0;       ///< the only source of randomness (initialisation and dropout)
};

/// The GAT paper's settings (Veličković et al. 2018) for `dataset`: for `pubmed` 8 averaged
/// output heads, learning rate 0.01 and weight decay 1e-3; for every other name the Cora and
/// CiteSeer settings (the `TrainOptions` defaults).
[[nodiscard]] TrainOptions paper_recipe(std::string_view dataset);

/// What one epoch measured; passed to `fit`'s callback.
struct EpochStats {
  std::int64_t epoch = 0;       ///< 1-based
  double train_loss = 0.0;      ///< of the training pass (with dropout)
  double train_accuracy = 0.0;  ///< of the training pass (with dropout)
  double val_loss = 0.0;        ///< evaluation pass (no dropout)
  double val_accuracy = 0.0;
  double milliseconds = 0.0;        ///< training step plus evaluation pass
  double train_milliseconds = 0.0;  ///< the training step alone (forward, backward, Adam)
  bool improved = false;            ///< the patience counter was reset
  bool checkpoint = false;          ///< these parameters became the best ones
};

/// The outcome of `fit`.
struct FitResult {
  std::int64_t epochs = 0;      ///< epochs trained
  std::int64_t best_epoch = 0;  ///< the epoch whose parameters the model holds now
  double val_accuracy = 0.0;    ///< at `best_epoch`
  double val_loss = 0.0;        ///< at `best_epoch`
  double test_accuracy = 0.0;   ///< with the parameters of `best_epoch`
  double ms_per_epoch = 0.0;    ///< mean wall time of an epoch
};

/// Loss, accuracy, macro-F1 and confusion matrix of one split part.
struct SplitMetrics {
  std::int64_t nodes = 0;
  double loss = 0.0;
  double accuracy = 0.0;
  double macro_f1 = 0.0;
  ConfusionMatrix confusion;
};

/// Trains a `Model` on a dataset's training nodes with Adam, full batch, one step per epoch.
///
/// Early stopping follows the reference implementation (PetarV-/GAT): the patience counter resets
/// whenever validation accuracy is at least its best or validation loss at most its best; the
/// best parameters are taken whenever both hold at once; training stops after `patience` epochs
/// without a reset, and the model then holds the best parameters.
///
/// The mask is the dataset's graph plus self-loops. Features are used as given (load them with
/// `DatasetOptions::normalize_features` for the paper's recipe). The same seed, data and options
/// give bitwise the same run on any number of threads. The dataset must outlive the trainer.
class Trainer {
 public:
  /// @throws InvalidArgument when the dataset has no features, no classes, no training nodes, or
  ///         no validation nodes while `patience > 0`, or the options are invalid.
  Trainer(const Dataset& dataset, const TrainOptions& options);
  /// Continues the run `checkpoint` saved (options, parameters, optimizer, early-stopping and
  /// random state); `fit` then goes on up to `epochs` (which may be raised by the caller).
  /// @throws InvalidArgument as above, or when the checkpoint's classes, feature width or
  ///         parameters do not fit the dataset, naming what differs.
  Trainer(const Dataset& dataset, const Checkpoint& checkpoint, std::int64_t epochs);
  ~Trainer();
  Trainer(Trainer&&) noexcept;
  Trainer& operator=(Trainer&&) noexcept;

  /// Trains until early stopping or `epochs`; calls `on_epoch` after every epoch. Afterwards the
  /// model holds the best epoch's parameters. Called again (or after resuming), it continues
  /// from the last epoch trained.
  /// @throws Error naming the epoch when the loss or a gradient stops being finite (nothing is
  ///         updated with it; the trainer should then be discarded).
  FitResult fit(const std::function<void(const EpochStats&)>& on_epoch = {});

  /// The model and the whole training state, for `save_checkpoint`.
  [[nodiscard]] Checkpoint checkpoint() const;

  /// Metrics of `part` with the current parameters (evaluation mode).
  /// @throws InvalidArgument when no node is in `part`.
  [[nodiscard]] SplitMetrics evaluate(SplitPart part);
  /// Class probabilities of every node (N x K), evaluation mode.
  [[nodiscard]] RowMatrix<float> predict_probabilities();
  /// The attention of every layer in an evaluation pass, `conv1` first.
  [[nodiscard]] std::vector<nn::AttentionWeights<float>> attention();

  [[nodiscard]] nn::Model& model() noexcept;
  [[nodiscard]] const TrainOptions& options() const noexcept;
  /// The attention mask: the dataset's graph with self-loops.
  [[nodiscard]] const Graph& mask() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace maskgat::train
