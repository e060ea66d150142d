#pragma once
/// @file
/// Training a node classifier the GAT paper's way, from C++.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "maskgat/core/communicator.hpp"
#include "maskgat/export.hpp"
#include "maskgat/io/dataset.hpp"
#include "maskgat/io/partition.hpp"
#include "maskgat/nn/model.hpp"
#include "maskgat/optim/adam.hpp"
#include "maskgat/train/metrics.hpp"
#include "maskgat/transforms/positional.hpp"

namespace maskgat::train {

struct Checkpoint;
class HaloExchange;

/// What a model predicts, and so what a training run's batches, loss and outputs are.
enum class Task : std::uint8_t {
  kNode,   ///< a class per node of one graph (`Trainer`)
  kGraph,  ///< a class per graph of a collection (`GraphTrainer`; the model ends in a readout)
  kLink,   ///< which node pairs are edges (`LinkTrainer`; the model's rows are node states)
};

/// The name of a task, as the CLI and checkpoints spell it.
/// @param task any task
/// @return `node`, `graph` or `link` (a static string)
[[nodiscard]] MASKGAT_EXPORT const char* task_name(Task task) noexcept;
/// Parses `node`, `graph` or `link`.
/// @param name the exact name
/// @return the task `task_name` names so
/// @throws InvalidArgument naming the accepted values.
[[nodiscard]] MASKGAT_EXPORT Task parse_task(std::string_view name);

/// Everything that defines a training run.
struct TrainOptions {
  /// What the model predicts: `Trainer` trains node tasks, `GraphTrainer` graph tasks,
  /// `LinkTrainer` link tasks. Stored in
  /// checkpoints (files from before it are node tasks).
  Task task = Task::kNode;
  nn::ModelOptions model;  ///< `in_features` and `classes` are taken from the dataset
  /// The model's modules (`maskgat train --model`); unset: the GAT paper's model that `model`
  /// describes. Its `in_features` and `classes` are taken from the dataset; the trained model's
  /// `model` then holds its shape (`nn::BasicModel::options`). A model with batch normalisation
  /// takes every step over the whole graph (its statistics are over all nodes). Stored in
  /// checkpoints.
  std::optional<nn::ModelSpec> spec;
  optim::AdamOptions optimizer;  ///< Adam's hyper-parameters
  std::int64_t epochs = 10000;   ///< at most this many epochs (> 0)
  std::int64_t patience = 100;   ///< early-stopping patience; 0 trains exactly `epochs` epochs
  std::uint64_t seed = 0;  ///< the only source of randomness (initialisation, dropout, sign flips)
  /// Columns appended to the features, computed from the dataset's graph (`model_input`);
  /// Laplacian eigenvectors get random sign flips at every training step.
  transforms::PositionalEncoding positional;
  /// Run each training step on the training nodes' receptive field alone
  /// (`masks::receptive_subgraph` of the model's layers) when that holds at most half of the
  /// graph's attention entries. The step's logits at the training nodes, its loss and its
  /// gradients are those of a step over the whole graph, up to the order of floating-point sums;
  /// the dropout draws differ (they are keyed by positions in the subgraph), so runs with and
  /// without it are different samples of the same training. The validation pass after each step
  /// then runs on the validation nodes' field too when that holds at most half of the entries
  /// (its loss and accuracy equal the whole graph's up to float rounding). A larger field would
  /// cost buffers nearly the graph's size for little: the steps and validation passes then run
  /// on the whole graph, each layer formed only at the rows the training (validation) nodes'
  /// logits need (`masks::receptive_rows`), as a step over every row (bitwise, but for GAT
  /// layers on dense input that aggregate first there: `nn::ProjectionOrder`). `evaluate`, the
  /// final test accuracy and prediction run on the whole graph. Stored in checkpoints (files
  /// from before it train on the whole graph).
  bool receptive_field = true;
  /// Mini-batch training: each epoch visits the training nodes in a seeded shuffled order, in
  /// batches of this many (the last one smaller), and takes one Adam step per batch on the
  /// masks a `NeighborSampler` draws for it (`fanouts`), with the rows of the input at the
  /// batch's nodes: how graphs too large for whole-graph steps train, as PyG's `NeighborLoader`
  /// and DGL's `DataLoader` do. The order depends only on (`seed`, epoch) and the draws on
  /// (`seed`, epoch, node, layer), so a run is the same on any number of threads and resumes
  /// exactly; the next batch is sampled while the current one trains. 0 (the default): one
  /// full-batch step per epoch. Stored in checkpoints.
  std::int64_t batch_size = 0;
  /// With `batch_size`: one fanout per layer, the input layer's first; -1 keeps every
  /// in-neighbour. Empty: -1 for every layer. Stored in checkpoints.
  std::vector<std::int64_t> fanouts;
  /// The validation score early stopping and the choice of the best epoch follow, and the test
  /// score `fit` reports: accuracy, or ROC AUC (`roc_auc`) for a two-class task, whose validation
  /// and test nodes must then hold both classes. Stored in checkpoints (files from before it
  /// follow accuracy).
  Metric metric = Metric::kAccuracy;
  /// Which epoch's parameters the model keeps and when the patience counter resets. Stored in
  /// checkpoints (files from before it follow `kGat`).
  Selection selection = Selection::kGat;
  /// With a link task: how a pair is scored from its two nodes' states. 0 (the default): their
  /// dot product; H > 0: an MLP of H hidden units on their elementwise product
  /// (`nn::add_mlp_decoder`), whose parameters `make_model` adds after the model's. Saved in
  /// checkpoints as those parameters.
  std::int64_t decoder_hidden = 0;
  /// The most projection weights the model may hold (`check_model_size`); not saved.
  std::int64_t max_parameters = 100'000'000;
  /// The most entries of one layer's output over all nodes (nodes x heads x width); not saved.
  std::int64_t max_activations = 1'000'000'000;
};

/// Checks, before anything is allocated, that the model `options` describe is within its limits
/// on `dataset`: the weights of its projections (input width x output width, summed over the
/// layers) at most `options.max_parameters`, and every layer's output over all nodes (nodes x
/// heads x width) at most `options.max_activations`. `Trainer` calls it; the apps call it first
/// to report a model too large for the machine as bad usage.
/// @param options the run's settings (model shape and limits)
/// @param dataset the data: its feature width, classes and node count
/// @throws IoError when the dataset's features are unavailable; InvalidArgument for more than
///         `nn::kMaxLayers` layers, or naming the sizes and the flag that raises the limit, e.g.
///         `train: the model's projections hold
///         6.2e+21 weights (1433 features x 2147483647 heads x 2147483647 hidden, ...), over the
///         limit of 100000000 (raise it with --max-parameters)`.
MASKGAT_EXPORT void check_model_size(const TrainOptions& options, const Dataset& dataset);

/// The model `options` describe, initialised from `rng`: built from `options.spec` when set,
/// else the paper's model of `options.model`; for a link task with `decoder_hidden`, its MLP
/// decoder's parameters follow the model's.
/// @param options the run's settings, with the model's `in_features` and `classes` set (as a
///                trainer's `options()` has them)
/// @param rng     draws the initial weights
/// @return the model
/// @throws InvalidArgument as the model's constructor.
[[nodiscard]] MASKGAT_EXPORT nn::Model make_model(const TrainOptions& options, Rng& rng);

/// The largest spec file `read_model_spec` reads.
inline constexpr std::int64_t kMaxSpecBytes = 1 << 20;

/// Reads a model spec from a JSON file (`maskgat train --model`), as `nn::parse_model_spec`.
/// @param path the file
/// @return the spec, with `in_features` and `classes` unset
/// @throws IoError when the file cannot be read, LimitError over `kMaxSpecBytes`, ParseError as
///         `nn::parse_model_spec`.
[[nodiscard]] MASKGAT_EXPORT nn::ModelSpec read_model_spec(const std::filesystem::path& path);

/// What a model trained with `options` takes as input on `dataset`: its features, with
/// `options.positional`'s encoding of its graph appended when there is one. The trainer, and
/// anything that runs a trained model on data (such as `maskgat evaluate` and `predict`), build
/// the input with this.
/// @param dataset  features and graph; `require_features` must hold
/// @param options  the run's settings; only `positional` is read
/// @return N x (F + K) features, sparse if the dataset's are
/// @throws IoError when the dataset's features are unavailable; InvalidArgument from
///         `transforms::check_positional_encoding` or the encoding; Error when the Laplacian
///         eigensolver does not converge (`transforms::laplacian_encoding`).
[[nodiscard]] MASKGAT_EXPORT FeatureMatrix model_input(const Dataset& dataset,
                                                       const TrainOptions& options);

/// The edge features `model` reads on `mask` (`nn::BasicModel::set_edge_features`): the
/// dataset's, one row per edge of its graph, on the mask's entries (`masks::edge_features`, added
/// self-loops taking the mean of their node's in-edges). O((N + E) x D).
/// @param model the model; reads `edge_feature_width()` of them, or none
/// @param data  the dataset whose graph `mask` was made from
/// @param mask  the mask the model runs on
/// @return mask entries x D, or an empty matrix for a model without edge features
/// @throws InvalidArgument when the model reads edge features and the dataset has none, or of
///         another width (the message says how to give them).
[[nodiscard]] MASKGAT_EXPORT RowMatrix<float> mask_edge_features(const nn::Model& model,
                                                                 const Dataset& data,
                                                                 const Graph& mask);

/// Evaluation-mode logits of `model` at `nodes` alone. When their receptive field
/// (`masks::receptive_subgraph` over the model's layers) holds at most half of `mask`'s edges,
/// the model runs on that field only, so a few nodes of a large graph cost their neighbourhoods,
/// not the graph; otherwise (and for a model with edge features) it runs on the whole graph.
/// Either way the rows are those of
/// `model.forward(mask, input.view(), nn::Mode::kEval, ...)` at `nodes`.
/// @param model a trained model; its buffers are reused and resized
/// @param mask  the attention mask the model runs on (N nodes)
/// @param input N rows, e.g. from `model_input`
/// @param nodes the nodes to score, each in [0, N), in any order (repeats allowed)
/// @return `nodes.size()` x classes; row r belongs to `nodes[r]`
/// @throws InvalidArgument when `input` does not have N rows or a node is outside [0, N).
[[nodiscard]] MASKGAT_EXPORT RowMatrix<float> logits_at(nn::Model& model, const Graph& mask,
                                                        const FeatureMatrix& input,
                                                        std::span<const NodeId> nodes);

/// The GAT paper's settings (Veličković et al. 2018) for `dataset`: for `pubmed` 8 averaged
/// output heads, learning rate 0.01 and weight decay 1e-3; for every other name the Cora and
/// CiteSeer settings (the `TrainOptions` defaults).
/// @param dataset a dataset name, e.g. `pubmed`
/// @return the options, with seed 0
[[nodiscard]] MASKGAT_EXPORT TrainOptions paper_recipe(std::string_view dataset);

/// The settings for Shchur et al.'s co-purchase and co-authorship graphs (`amazon-computers`,
/// `amazon-photo`, `coauthor-cs`; `maskgat train --recipe shchur`): the paper's Cora settings
/// without weight decay. The paper's 5e-4 underfits these larger graphs (Amazon Computers:
/// training loss still 1.25 after 450 epochs, runs below 65 % test accuracy); no weight decay was
/// chosen by validation accuracy alone, among seven settings on 3 random 20,30 splits of Amazon
/// Computers' largest component (docs/performance.md, "Shchur et al.'s graphs").
/// @return the options, with seed 0
[[nodiscard]] MASKGAT_EXPORT TrainOptions shchur_recipe();

/// The settings for graph classification (`maskgat train --task graph`): Adam at learning rate
/// 0.001 without weight decay, mini-batches of 32 graphs, at most 500 epochs with patience 100,
/// `task` set to `Task::kGraph`; the model (`spec`, with a readout) is the caller's. The TU
/// results in the README were measured with them.
/// @return the options, with seed 0
[[nodiscard]] MASKGAT_EXPORT TrainOptions graph_recipe();

/// What one epoch measured; passed to `fit`'s callback.
struct EpochStats {
  std::int64_t epoch = 0;       ///< 1-based
  double train_loss = 0.0;      ///< of the training pass (with dropout)
  double train_accuracy = 0.0;  ///< of the training pass (with dropout)
  double val_loss = 0.0;        ///< evaluation pass (no dropout)
  double val_accuracy = 0.0;    ///< evaluation pass (no dropout)
  /// The validation score of `TrainOptions::metric` (`val_accuracy` for accuracy).
  double val_score = 0.0;
  double milliseconds = 0.0;        ///< training step plus evaluation pass
  double train_milliseconds = 0.0;  ///< the training step alone (forward, backward, Adam)
  /// Rows of the input the epoch's steps read: with mini-batches the batches' nodes, summed
  /// (their features are gathered once per batch), else the rows of the one step's input.
  std::int64_t input_rows = 0;
  bool improved = false;    ///< the patience counter was reset
  bool checkpoint = false;  ///< these parameters became the best ones
};

/// The outcome of `fit`.
struct FitResult {
  std::int64_t epochs = 0;      ///< epochs trained
  std::int64_t best_epoch = 0;  ///< the epoch whose parameters the model holds now
  double val_accuracy = 0.0;    ///< at `best_epoch`; 0 without validation nodes
  double val_loss = 0.0;        ///< at `best_epoch`; 0 without validation nodes
  double test_accuracy = 0.0;   ///< with the parameters of `best_epoch`; 0 without test nodes
  /// `TrainOptions::metric`'s validation score at `best_epoch`; 0 without validation nodes.
  double val_score = 0.0;
  /// `TrainOptions::metric`'s test score with the parameters of `best_epoch`; 0 without test
  /// nodes.
  double test_score = 0.0;
  std::int64_t val_nodes = 0;   ///< the validation nodes (0: there is none, no metric)
  std::int64_t test_nodes = 0;  ///< the test nodes it was measured on (0: there is none)
  double ms_per_epoch = 0.0;    ///< mean wall time of an epoch
};

/// Loss, accuracy, macro-F1 and confusion matrix of one split part.
struct SplitMetrics {
  std::int64_t nodes = 0;     ///< nodes in the part
  double loss = 0.0;          ///< mean negative log-likelihood (`nn::nll_loss`)
  double accuracy = 0.0;      ///< fraction predicted correctly
  double macro_f1 = 0.0;      ///< `ConfusionMatrix::macro_f1`
  ConfusionMatrix confusion;  ///< true against predicted class
  /// ROC AUC of class 1 (`roc_auc`) when asked for (`Metric::kRocAuc`), else unset.
  std::optional<double> roc_auc;
};

/// Trains a `Model` on a dataset's training nodes with Adam: one full-batch step per epoch, or
/// one step per sampled mini-batch (`TrainOptions::batch_size`).
///
/// Early stopping follows the reference implementation (PetarV-/GAT): the patience counter resets
/// whenever the validation score (accuracy, or `TrainOptions::metric`) is at least its best or
/// validation loss at most its best; the best parameters are taken whenever both hold at once;
/// training stops after `patience` epochs without a reset, and the model then holds the best
/// parameters.
///
/// The mask is the dataset's graph plus self-loops. Features are used as given (load them with
/// `DatasetOptions::normalize_features` for the paper's recipe), with `options.positional`'s
/// encoding of the graph appended (`model_input`). The same seed, data and options
/// give bitwise the same run on any number of threads. The dataset must outlive the trainer.
class MASKGAT_EXPORT Trainer {
 public:
  /// A new run: the model initialised from `options.seed`, Adam at step 0.
  /// @param dataset features, labels and split; must outlive the trainer
  /// @param options the run's settings
  /// @throws IoError when the dataset's features are unavailable (`Dataset::require_features`);
  ///         InvalidArgument when it has no classes or no training nodes, no validation nodes
  ///         while `patience > 0`, or the options are invalid; with `Metric::kRocAuc`, when the
  ///         task has not two classes or its validation or test nodes are all of one class.
  Trainer(const Dataset& dataset, const TrainOptions& options);
  /// Continues the run `checkpoint` saved (options, parameters, optimizer, early-stopping and
  /// random state); `fit` then goes on up to `epochs` (which may be raised by the caller).
  /// @param dataset    the data the checkpoint was trained on; must outlive the trainer
  /// @param checkpoint e.g. from `load_checkpoint`
  /// @param epochs     the new epoch limit, replacing the checkpoint's
  /// @throws IoError, InvalidArgument as above, or InvalidArgument when the checkpoint's
  ///         classes, feature width or parameters do not fit the dataset, or the dataset is not
  ///         prepared as the run's was (`data_differences`), naming what differs.
  Trainer(const Dataset& dataset, const Checkpoint& checkpoint, std::int64_t epochs);
  /// A new run on one part of a partitioned graph (`open_part`), one process per part, rank r
  /// holding part r: distributed full-graph training. Every rank computes its own nodes' rows and
  /// in-edges (in a training step only those the training nodes of every part need,
  /// `HaloExchange::receptive_rows`, on the subgraph of those rows when it is small on every part,
  /// as `receptive_field` says, with the exchange `HaloExchange::field` builds for it; validation
  /// likewise); in each layer after the first the halo rows of the
  /// source-side projections come from their owners (`HaloExchange`), and their gradients go back
  /// to them (the first layer projects the halo's stored features); parameters are replicated,
  /// their gradients summed over the ranks in rank order, so every rank takes the same Adam step.
  /// Losses, accuracies and early stopping are over every part's nodes, and dropout draws the
  /// whole graph's mask, so the run follows the single-process run on the whole graph without
  /// receptive fields (`receptive_field = false`) up to the order of floating-point sums, on any
  /// number of parts. Every method is collective; `predict_probabilities` and
  /// `predicted_classes` give a row per node of `part.data` (the part's nodes in the whole
  /// graph's order).
  /// Checkpoints record the whole graph's data (`GraphPart::whole`), as a run on it does.
  /// @param part    this rank's part; must outlive the trainer
  /// @param comm    the group, of `part.parts` ranks; must outlive the trainer
  /// @param options the run's settings; mini-batches, positional encodings and ROC AUC are not
  ///                available
  /// @throws as `Trainer(dataset, options)` (counting every part's training and validation
  ///         nodes), InvalidArgument for a batch size, positional encoding or ROC AUC, and what
  ///         `HaloExchange` throws.
  Trainer(const GraphPart& part, Communicator& comm, const TrainOptions& options);
  /// Continues a run on a part, as `Trainer(dataset, checkpoint, epochs)` does on a whole graph;
  /// the checkpoint may come from a run on any number of parts or on the whole graph.
  /// @param part       this rank's part; must outlive the trainer
  /// @param comm       the group, of `part.parts` ranks; must outlive the trainer
  /// @param checkpoint e.g. from `load_checkpoint`
  /// @param epochs     the new epoch limit, replacing the checkpoint's
  /// @throws as `Trainer(part, comm, options)` and `Trainer(dataset, checkpoint, epochs)`, and
  ///         InvalidArgument when the checkpoint records other data than the partition's whole
  ///         graph (its node count or fingerprints).
  Trainer(const GraphPart& part, Communicator& comm, const Checkpoint& checkpoint,
          std::int64_t epochs);
  ~Trainer();
  /// Takes over another trainer; the moved-from one may only be assigned to or destroyed.
  Trainer(Trainer&&) noexcept;
  /// Takes over another trainer; the moved-from one may only be assigned to or destroyed.
  /// @return `*this`
  Trainer& operator=(Trainer&&) noexcept;

  /// Trains until early stopping or `epochs`; calls `on_epoch` after every epoch. Afterwards the
  /// model holds the best epoch's parameters. Called again (or after resuming), it continues
  /// from the last epoch trained.
  /// @param on_epoch called with each epoch's measurements, on the calling thread; may be empty
  /// @return the epochs trained, the best epoch, its validation loss, accuracy and score, and the
  ///         test accuracy and score with its parameters (0 without test nodes)
  /// @throws Error naming the epoch when the loss or a gradient stops being finite (nothing is
  ///         updated with it; the trainer should then be discarded); InvalidArgument when a
  ///         training or validation node has no valid label (from `nn::nll_loss`).
  FitResult fit(const std::function<void(const EpochStats&)>& on_epoch = {});

  /// The model and the whole training state, for `save_checkpoint`.
  /// @return a self-contained copy; saving and resuming it continues the run exactly
  [[nodiscard]] Checkpoint checkpoint() const;

  /// Metrics of `part` with the current parameters (evaluation mode).
  /// @param part the split part to evaluate
  /// @return loss, accuracy, macro-F1 and confusion matrix over its nodes, and ROC AUC with
  ///         `Metric::kRocAuc`
  /// @throws InvalidArgument when no node is in `part` or one of them has no valid label.
  [[nodiscard]] SplitMetrics evaluate(SplitPart part);
  /// The logits of every node, evaluation mode.
  /// @return N x K; valid until the trainer next runs its model
  [[nodiscard]] const RowMatrix<float>& logits();
  /// Class probabilities of every node, evaluation mode: the softmax of `logits()`.
  /// @return N x K, every row summing to 1
  [[nodiscard]] RowMatrix<float> predict_probabilities();
  /// Class probabilities of `nodes` alone, evaluation mode, through `logits_at`: on a large
  /// graph, a few nodes cost their receptive field rather than the whole graph.
  /// @param nodes the nodes, each in [0, N), in any order (repeats allowed)
  /// @return `nodes.size()` x K; row r belongs to `nodes[r]` and equals that row of
  ///         `predict_probabilities()`
  /// @throws InvalidArgument when a node is outside [0, N).
  [[nodiscard]] RowMatrix<float> predict_probabilities(std::span<const NodeId> nodes);
  /// The predicted class of every node: the most probable one in an evaluation pass.
  /// @return N class ids, in [0, K)
  [[nodiscard]] std::vector<std::int32_t> predicted_classes();
  /// The attention of every layer in an evaluation pass, `conv1` first.
  /// @return one `nn::AttentionWeights` per layer, over the edges of `mask()`
  [[nodiscard]] std::vector<nn::AttentionWeights<float>> attention();

  /// The model being trained.
  /// @return the model, holding the current parameters (the best ones after `fit`)
  [[nodiscard]] nn::Model& model() noexcept;
  /// The run's settings.
  /// @return the options, with `model.in_features` and `model.classes` taken from the dataset
  [[nodiscard]] const TrainOptions& options() const noexcept;
  /// The attention mask: the dataset's graph with self-loops (formed on first use in
  /// mini-batch training, whose evaluation runs layer by layer without it).
  /// @return N nodes; the graph evaluation and prediction run on
  [[nodiscard]] const Graph& mask() const;
  /// The mask training steps run their first layer on: `mask()`, or the training nodes'
  /// receptive field in it (`TrainOptions::receptive_field`; deeper layers keep fewer rows).
  /// @return `mask()` or the subgraph's first mask, on its own node numbering
  [[nodiscard]] const Graph& step_mask() const;

 private:
  struct Impl;
  Trainer(std::unique_ptr<HaloExchange> halo, Communicator& comm, const TrainOptions& options);
  void restore(const Checkpoint& checkpoint);
  std::unique_ptr<Impl> impl_;
};

}  // namespace maskgat::train
