#pragma once
/// @file
/// Graph classification: training a model that ends in a readout on a collection of graphs, the
/// fair comparison's stratified folds, and predicting on graphs never seen.

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "maskgat/export.hpp"
#include "maskgat/io/tu.hpp"
#include "maskgat/nn/model.hpp"
#include "maskgat/train/checkpoint.hpp"
#include "maskgat/train/trainer.hpp"

namespace maskgat::train {

/// Which graphs of a collection a model trains on, is selected on and is tested on (ids into the
/// collection; the three are disjoint).
struct GraphSplit {
  std::vector<std::int64_t> train;  ///< the graphs the steps run on
  std::vector<std::int64_t> val;    ///< early stopping and model selection
  std::vector<std::int64_t> test;   ///< scored once, with the selected parameters
};

/// The protocol of Errica et al. (ICLR 2020, "A fair comparison of graph neural networks for
/// graph classification"): `folds` stratified folds of the graphs, fold k's graphs the test part
/// of split k, and of the others a stratified `validation` fraction the validation part (model
/// selection never sees the test fold). Each class's graphs are shuffled (from `seed`) and dealt
/// to the folds in turn, so every fold holds each class in proportion, within one graph; the
/// validation part takes round(`validation` x n) of each class's n training graphs, after a
/// shuffle drawn from (`seed`, k). Every list is ascending.
/// @param labels     a class id (0 or more) per graph
/// @param folds      K, at least 2 and at most the number of graphs
/// @param seed       draws the folds
/// @param validation in (0, 1): the share of each training part held out for validation
/// @return K splits; the test parts partition the graphs
/// @throws InvalidArgument for K or `validation` out of range, or a negative label.
[[nodiscard]] MASKGAT_EXPORT std::vector<GraphSplit> stratified_folds(
    std::span<const std::int32_t> labels, std::int64_t folds, std::uint64_t seed,
    double validation = 0.1);

/// The fingerprint of graph `g` of a collection: FNV-1a 64 of its node count, its features, its
/// edges (ids relative to its first node) and its edge features. Graphs equal in all of these
/// (in the same node order) have the same fingerprint in any collection.
/// @param data the collection
/// @param g    a graph id in [0, G)
/// @return the fingerprint
[[nodiscard]] MASKGAT_EXPORT std::uint64_t graph_fingerprint(const GraphCollection& data,
                                                             std::int64_t g);

/// The graphs of `data` that a graph classifier trained or was validated on (their fingerprints
/// are in `trained.fitted`): scores on them would not be test scores.
/// @param trained the model's record (`Checkpoint::data` of a graph task)
/// @param data    the collection to score
/// @param graphs  the graphs to check
/// @return those of `graphs` that were fitted, in order
[[nodiscard]] MASKGAT_EXPORT std::vector<std::int64_t> fitted_graphs(
    const DataRecord& trained, const GraphCollection& data, std::span<const std::int64_t> graphs);

/// The most graphs a batch of evaluation or prediction holds.
inline constexpr std::int64_t kEvaluationBatch = 256;

/// Evaluation-mode logits of a graph classifier on `graphs` of any collection (graphs it never
/// saw included), `kEvaluationBatch` graphs at a time. Draws nothing.
/// @param model  a model with a readout (`nn::BasicModel::graph_level`)
/// @param data   the collection; its features (and edge features, when the model reads them) of
///               the widths the model takes
/// @param graphs ids in [0, G), in any order
/// @return `graphs.size()` x K; row r belongs to `graphs[r]`
/// @throws InvalidArgument when the model has no readout or the widths differ (naming both);
///         IndexError for an id outside [0, G).
[[nodiscard]] MASKGAT_EXPORT RowMatrix<float> graph_logits(nn::Model& model,
                                                           const GraphCollection& data,
                                                           std::span<const std::int64_t> graphs);

/// Metrics of a graph classifier on some graphs of any collection (evaluation mode).
/// @param model  a model with a readout, of the collection's classes
/// @param data   the collection
/// @param graphs ids into it (not empty)
/// @param metric ROC AUC is computed too with `Metric::kRocAuc` (two classes, both present)
/// @return loss, accuracy, macro-F1 and confusion matrix over the graphs (`SplitMetrics::nodes`
///         counts graphs), and ROC AUC when asked for
/// @throws InvalidArgument when `graphs` is empty, the classes differ, or as `graph_logits`;
///         IndexError for an id out of range.
[[nodiscard]] MASKGAT_EXPORT SplitMetrics graph_metrics(nn::Model& model,
                                                        const GraphCollection& data,
                                                        std::span<const std::int64_t> graphs,
                                                        Metric metric);

/// Trains a graph classifier (a model whose spec holds a readout) on some graphs of a
/// collection with Adam, in mini-batches of `TrainOptions::batch_size` graphs (0: every training
/// graph in one batch), drawn by a shuffle of the training graphs per epoch from (seed, epoch):
/// a run is the same on any number of threads and resumes exactly. Graph-level cross-entropy;
/// early stopping and the kept epoch follow the validation graphs as `Trainer` does the
/// validation nodes (`TrainOptions::patience`, `metric`, `selection`), through the same loop.
/// Each batch is the block-diagonal graph of its graphs (`make_batch`) with self-loops, so the
/// attention layers attend within each graph; a model with `edge_dim` reads the collection's
/// edge features. The collection must outlive the trainer.
class MASKGAT_EXPORT GraphTrainer {
 public:
  /// A new run: the model initialised from `options.seed`, Adam at step 0.
  /// @param data    the graphs; must outlive the trainer
  /// @param split   the training, validation and test graphs
  /// @param options the run's settings; `spec` must hold a readout; `positional`, `fanouts` and
  ///                node-level settings are not used, and `task` is set to `Task::kGraph`
  /// @throws InvalidArgument when the model has no readout, reads edge features of another width
  ///         than the collection's, a split part names a graph outside the collection, there are
  ///         no training graphs, no validation graphs while `patience > 0`, the options are out
  ///         of range, or ROC AUC is asked for a task without two classes.
  GraphTrainer(const GraphCollection& data, GraphSplit split, const TrainOptions& options);
  /// Continues the run `checkpoint` saved, with a new epoch limit; the split must be the run's.
  /// @param data       the graphs the run trained on
  /// @param split      the run's split
  /// @param checkpoint from `checkpoint()` (e.g. through `save_checkpoint`, `load_checkpoint`)
  /// @param epochs     the new epoch limit
  /// @throws as `GraphTrainer(data, split, options)`, and InvalidArgument when the checkpoint is
  ///         not of a graph task, or of other data or another split (its fingerprints).
  GraphTrainer(const GraphCollection& data, GraphSplit split, const Checkpoint& checkpoint,
               std::int64_t epochs);
  ~GraphTrainer();
  /// Takes over another trainer; the moved-from one may only be assigned to or destroyed.
  GraphTrainer(GraphTrainer&&) noexcept;
  /// Takes over another trainer; the moved-from one may only be assigned to or destroyed.
  /// @return `*this`
  GraphTrainer& operator=(GraphTrainer&&) noexcept;

  /// Trains until early stopping or `epochs`, as `Trainer::fit`; `FitResult::val_nodes` and
  /// `test_nodes` count graphs.
  /// @param on_epoch called after every epoch; may be empty
  /// @return the epochs, the best epoch, its validation results, the test accuracy and score
  /// @throws Error naming the epoch and batch when the loss or a gradient stops being finite.
  FitResult fit(const std::function<void(const EpochStats&)>& on_epoch = {});
  /// Metrics of some graphs with the current parameters (evaluation mode).
  /// @param graphs ids into the collection (not empty)
  /// @return loss, accuracy, macro-F1, confusion matrix (`SplitMetrics::nodes` counts graphs),
  ///         and ROC AUC with `Metric::kRocAuc`
  /// @throws InvalidArgument when `graphs` is empty; IndexError for an id out of range.
  [[nodiscard]] SplitMetrics evaluate(std::span<const std::int64_t> graphs);
  /// The model and the whole training state, for `save_checkpoint`; its data record names the
  /// collection and the graphs fitted (`fitted_graphs`).
  /// @return a self-contained copy; saving and resuming it continues the run exactly
  [[nodiscard]] Checkpoint checkpoint() const;
  /// The model being trained.
  /// @return the model (the best parameters after `fit`)
  [[nodiscard]] nn::Model& model() noexcept;
  /// The run's settings.
  /// @return the options, with the model's widths and `task` set
  [[nodiscard]] const TrainOptions& options() const noexcept;
  /// The run's split.
  /// @return the training, validation and test graphs
  [[nodiscard]] const GraphSplit& split() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace maskgat::train
