#pragma once
/// @file
/// Link prediction: training an encoder whose node states score node pairs by their dot product
/// (the GAE decoder), its metrics, and scoring pairs and recommending nodes with a trained model.

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "maskgat/export.hpp"
#include "maskgat/graph/edge_split.hpp"
#include "maskgat/io/dataset.hpp"
#include "maskgat/nn/model.hpp"
#include "maskgat/train/checkpoint.hpp"
#include "maskgat/train/trainer.hpp"

namespace maskgat::train {

/// How well pair scores separate positives (edges) from negatives.
struct LinkMetrics {
  double loss = 0.0;      ///< mean binary cross-entropy over positives and negatives
  double accuracy = 0.0;  ///< share of pairs on the right side of probability 0.5
  double roc_auc = 0.0;   ///< ROC AUC of positives against negatives (`roc_auc`, ties exact)
  double average_precision = 0.0;  ///< `average_precision`, ties exact
  double hits_at_10 = 0.0;         ///< `hits_at_k` with K = 10 (OGB's rule)
  double hits_at_50 = 0.0;         ///< with K = 50
  double hits_at_100 = 0.0;        ///< with K = 100
  std::int64_t positives = 0;      ///< positive pairs scored
  std::int64_t negatives = 0;      ///< negative pairs scored
};

/// The settings for link prediction (`maskgat train --task link`): as the encoder, dropout 0.7
/// on the input and one GAT layer of 1 head with a residual projection
/// (`docs/specs/link-gat.json`), 128 output columns (`ModelOptions::classes` is the width of the
/// node states), Adam at learning rate 0.005 without weight decay, at most 1000 epochs, patience
/// 100 on the validation ROC AUC (`Selection::kMetric`), `task` set to `Task::kLink`. Chosen by
/// validation ROC AUC alone on Cora among about 60 encoders and settings (docs/performance.md,
/// "Link prediction"); the README's link results were measured with them.
/// @return the options, with seed 0
[[nodiscard]] MASKGAT_EXPORT TrainOptions link_recipe();

/// Evaluation-mode node states of a link model: its output on the whole `graph` (with the
/// self-loops its layers take). Draws nothing.
/// @param model a node-level model (no readout)
/// @param graph the graph message passing runs on (N nodes)
/// @param input N rows, e.g. from `model_input`
/// @return N x D states
/// @throws InvalidArgument when the model has a readout or reads edge features, or `input` does
///         not have N rows of the model's width.
[[nodiscard]] MASKGAT_EXPORT RowMatrix<float> node_states(nn::Model& model, const Graph& graph,
                                                          const FeatureMatrix& input);

/// The probability of each pair being an edge: sigmoid of the logit the model's decoder gives
/// its nodes' states (their dot product, or its MLP decoder's output: `nn::pair_logits`).
/// @param model  the link model whose states these are (its decoder's parameters are read)
/// @param states N x D node states
/// @param pairs  node pairs, each node in [0, N)
/// @return one probability per pair
/// @throws IndexError for a node outside [0, N).
[[nodiscard]] MASKGAT_EXPORT std::vector<double> pair_scores(const nn::Model& model,
                                                             const RowMatrix<float>& states,
                                                             const NodePairs& pairs);

/// Metrics of node states on positive and negative pairs, scored by the model's decoder.
/// @param model     the link model whose states these are
/// @param states    N x D node states
/// @param positives pairs that are edges (at least one)
/// @param negatives pairs that are not (at least one)
/// @return loss, accuracy, ROC AUC, average precision and Hits@10/50/100
/// @throws InvalidArgument when either list is empty; IndexError for a node out of range.
[[nodiscard]] MASKGAT_EXPORT LinkMetrics link_metrics(const nn::Model& model,
                                                      const RowMatrix<float>& states,
                                                      const NodePairs& positives,
                                                      const NodePairs& negatives);

/// A node and its score.
struct ScoredNode {
  NodeId node = 0;     ///< the node
  double score = 0.0;  ///< the probability of the pair being an edge
};

/// How many nodes `recommend` chooses from for `node`: every node but `node` itself and those
/// `node` already has an edge to in `graph`.
/// @param graph the known edges
/// @param node  in [0, N)
/// @return the number of candidates
/// @throws IndexError for `node` out of range.
[[nodiscard]] MASKGAT_EXPORT std::int64_t recommendation_candidates(const Graph& graph,
                                                                    NodeId node);

/// The `k` nodes with the highest scores as targets of `node` (`pair_scores` of `node -> v`)
/// among all nodes v but `node` itself and those `node` already has an edge to in `graph`: an
/// exact search over every node, O(N D + N log k) with the dot product (O(N D H) with an MLP
/// decoder of H hidden units), ties broken by the lower id. The dot products run on TBB's
/// workers; an MLP decoder scores blocks of nodes in turn.
/// @param model  the link model whose states these are
/// @param states N x D node states
/// @param graph  the known edges (N nodes); an edge `node -> v` excludes v
/// @param node   the node to recommend for, in [0, N)
/// @param k      how many, at least 1 and at most the candidates
/// @return k nodes, the highest score first
/// @throws IndexError for `node` out of range; InvalidArgument when `k` is below 1 or above the
///         number of candidates (naming it) or the state and graph sizes differ.
[[nodiscard]] MASKGAT_EXPORT std::vector<ScoredNode> recommend(const nn::Model& model,
                                                               const RowMatrix<float>& states,
                                                               const Graph& graph, NodeId node,
                                                               std::int64_t k);

/// Trains a link model: an encoder (the paper's model or any spec without readout) whose N x D
/// output scores a pair by the dot product of its nodes' rows, or by an MLP decoder on their
/// elementwise product (`TrainOptions::decoder_hidden`), on the training graph of an
/// `EdgeSplit` (no held-out edge reaches message passing). Each epoch takes one full-graph Adam
/// step on the binary cross-entropy of the training positives and as many negatives, drawn
/// afresh per epoch from (seed, epoch) among the pairs that are edges of the dataset's graph in
/// no part of the split (`sample_negatives`), so a run is the same on any number of threads and
/// resumes exactly. Early stopping and the kept epoch follow the validation ROC AUC against the
/// split's fixed negatives, through the same loop as the other tasks. The dataset must outlive
/// the trainer.
class MASKGAT_EXPORT LinkTrainer {
 public:
  /// A new run: the model initialised from `options.seed`, Adam at step 0.
  /// @param data    the graph (whose edges negatives avoid) and features; labels are not used
  /// @param split   the split of `data.graph`'s edges (`split_edges` or `read_edge_split`)
  /// @param options the run's settings; `model.classes` is the width of the node states,
  ///                `decoder_hidden` the decoder's; `task` is set to `Task::kLink`, `metric` to
  ///                `Metric::kRocAuc`
  /// @throws InvalidArgument when the model has a readout or reads edge features, uses batch
  ///         sizes or fanouts, the split is of another node count or has no training pairs, no
  ///         validation pairs while `patience > 0`, or the options are out of range.
  LinkTrainer(const Dataset& data, EdgeSplit split, const TrainOptions& options);
  /// Continues the run `checkpoint` saved, with a new epoch limit; the split must be the run's.
  /// @param data       the dataset the run trained on
  /// @param split      the run's split
  /// @param checkpoint from `checkpoint()`
  /// @param epochs     the new epoch limit
  /// @throws as `LinkTrainer(data, split, options)`, and InvalidArgument when the checkpoint is
  ///         not of a link task, or of other nodes or another split (their fingerprints).
  LinkTrainer(const Dataset& data, EdgeSplit split, const Checkpoint& checkpoint,
              std::int64_t epochs);
  ~LinkTrainer();
  /// Takes over another trainer; the moved-from one may only be assigned to or destroyed.
  LinkTrainer(LinkTrainer&&) noexcept;
  /// Takes over another trainer; the moved-from one may only be assigned to or destroyed.
  /// @return `*this`
  LinkTrainer& operator=(LinkTrainer&&) noexcept;

  /// Trains until early stopping or `epochs`. `FitResult::val_nodes` and `test_nodes` count
  /// positive pairs; `test_score` is the test ROC AUC, `test_accuracy` the test pairs' accuracy.
  /// @param on_epoch called after every epoch; may be empty
  /// @return the epochs, the best epoch, its validation results and the test scores
  /// @throws Error naming the epoch when the loss or a gradient stops being finite.
  FitResult fit(const std::function<void(const EpochStats&)>& on_epoch = {});
  /// Metrics of pairs with the current parameters, the states computed on the training graph.
  /// @param positives pairs that are edges
  /// @param negatives pairs that are not
  /// @return as `link_metrics`
  [[nodiscard]] LinkMetrics evaluate(const NodePairs& positives, const NodePairs& negatives);
  /// Evaluation-mode node states on the training graph with the current parameters.
  /// @return N x D
  [[nodiscard]] RowMatrix<float> states();
  /// The model and the whole training state, for `save_checkpoint`; its data record holds the
  /// fingerprints of the nodes and of the split.
  /// @return a self-contained copy; saving and resuming it continues the run exactly
  [[nodiscard]] Checkpoint checkpoint() const;
  /// The model being trained, its decoder's parameters (if any) after the encoder's.
  /// @return the model (the best parameters after `fit`)
  [[nodiscard]] nn::Model& model() noexcept;
  /// The run's settings.
  /// @return the options, with the model's widths and `task` set
  [[nodiscard]] const TrainOptions& options() const noexcept;
  /// The run's split.
  /// @return the training graph and the pairs of each part
  [[nodiscard]] const EdgeSplit& split() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The fingerprint of an edge split: FNV-1a 64 of its five pair lists, in order. A link model's
/// checkpoint holds it (`DataRecord::split_hash`), so that its test scores are only taken on the
/// split it trained with.
/// @param split any split
/// @return the fingerprint
[[nodiscard]] MASKGAT_EXPORT std::uint64_t edge_split_fingerprint(const EdgeSplit& split);

}  // namespace maskgat::train
