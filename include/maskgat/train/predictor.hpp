#pragma once
/// @file
/// A saved model applied to a dataset: the one path `maskgat evaluate` and `predict` and C++
/// programs take from a checkpoint to probabilities and attention.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "maskgat/core/tensor.hpp"
#include "maskgat/export.hpp"
#include "maskgat/graph/graph.hpp"
#include "maskgat/io/dataset.hpp"
#include "maskgat/io/features.hpp"
#include "maskgat/nn/layer.hpp"
#include "maskgat/nn/model.hpp"
#include "maskgat/train/checkpoint.hpp"

namespace maskgat::train {

/// A saved model in evaluation mode on a dataset, its input built as in training: the mask is the
/// dataset's graph with a self-loop on every node, the input its features with the model's
/// positional encoding of that graph appended (`model_input`). Load the dataset as the model's
/// data was loaded (`data_differences` names what differs). A model trained in mini-batches
/// (`TrainOptions::batch_size`), or any model when a chunk size is given, runs layer by layer
/// (`layerwise_logits`), so graphs whose whole-graph activations do not fit still run; the
/// logits are the same up to the order of floating-point sums. Evaluation draws nothing, so every
/// result is the same on every run and thread count. The dataset must outlive the predictor.
class MASKGAT_EXPORT Predictor {
 public:
  /// Builds the model and its input on `dataset`, and its mask unless it runs layer by layer.
  /// @param checkpoint e.g. from `load_checkpoint`
  /// @param dataset    features and graph; labels and split are not used
  /// @param chunk_rows run layer by layer with this many destination rows per chunk (> 0);
  ///                   unset: layer by layer in chunks of `kDefaultChunkRows` when the model was
  ///                   trained in mini-batches, else over the whole graph
  /// @throws IoError when the dataset's features are unavailable; InvalidArgument when their width
  ///         does not fit the model (`check_input_width`), the parameters do not fit the model
  ///         they describe (`load_model`) or `chunk_rows` is not positive; what `model_input`
  ///         throws for the encoding.
  Predictor(Checkpoint checkpoint, const Dataset& dataset,
            std::optional<std::int64_t> chunk_rows = std::nullopt);

  /// The logits of every node.
  /// @return N x K, valid until the next call on this predictor
  /// @throws Error when an output is not finite (the parameters are too large for these features).
  const RowMatrix<float>& logits();
  /// The logits of `nodes` alone, on their receptive field (`logits_at`), or layer by layer.
  /// @param nodes each in [0, N), in any order (repeats allowed)
  /// @return `nodes.size()` x K; row r belongs to `nodes[r]`
  /// @throws InvalidArgument for a node outside [0, N); Error as `logits()`.
  [[nodiscard]] RowMatrix<float> logits(std::span<const NodeId> nodes);
  /// Class probabilities of every node (softmax of `logits()`).
  /// @return N x K, every row summing to 1
  [[nodiscard]] RowMatrix<float> probabilities();
  /// Class probabilities of `nodes` alone, on their receptive field.
  /// @param nodes each in [0, N), in any order (repeats allowed)
  /// @return `nodes.size()` x K; row r belongs to `nodes[r]`
  [[nodiscard]] RowMatrix<float> probabilities(std::span<const NodeId> nodes);
  /// The most probable class of every node.
  /// @return N class ids
  [[nodiscard]] std::vector<std::int32_t> predicted_classes();
  /// The attention of every layer on the whole graph, `conv1` first.
  /// @return one `nn::AttentionWeights` per layer, over the edges of `mask()`
  [[nodiscard]] std::vector<nn::AttentionWeights<float>> attention();

  /// The checkpoint it was built from.
  /// @return the options, class names and parameters
  [[nodiscard]] const Checkpoint& checkpoint() const noexcept { return checkpoint_; }
  /// The mask the model runs on (formed on first use when the model runs layer by layer).
  /// @return the dataset's graph with a self-loop on every node
  [[nodiscard]] const Graph& mask() const;
  /// Whether the model runs layer by layer.
  /// @return true when logits come from `layerwise_logits`
  [[nodiscard]] bool layerwise() const noexcept { return chunk_rows_ > 0; }
  /// The model's input.
  /// @return N rows: the features, with the positional encoding when the model has one
  [[nodiscard]] const FeatureMatrix& input() const noexcept {
    return encoded_ ? *encoded_ : dataset_->features;
  }

 private:
  // The model, reading this predictor's edge features (a moved predictor keeps its own).
  nn::Model& bound_model();

  Checkpoint checkpoint_;
  const Dataset* dataset_;
  std::int64_t chunk_rows_;            // > 0: layer by layer
  mutable std::optional<Graph> mask_;  // see mask()
  nn::Model model_;
  std::optional<FeatureMatrix> encoded_;
  RowMatrix<float> layerwise_logits_;  // the last layer-wise `logits()`
  RowMatrix<float> edge_features_;     // on the entries of mask(), when the model reads them
};

/// Predictions as CSV, as `maskgat predict --output` writes them: a header
/// `node,predicted_class,p_<class>...` (`graph,...` for a graph classifier's), then per row of
/// `logits` the node's (graph's) name, its most probable class (`predict_classes`) and the class
/// probabilities (softmax, 6 significant digits); names go through `csv_field`.
/// @param names       the name of the node (graph) of each row of `logits`
/// @param class_names the K class names
/// @param logits      rows x K, e.g. `Predictor::logits()`
/// @param key         the first column's name: `node` or `graph`
/// @return the CSV text
/// @throws InvalidArgument when `names` or `class_names` do not match the shape of `logits`.
[[nodiscard]] MASKGAT_EXPORT std::string predictions_csv(std::span<const std::string> names,
                                                         std::span<const std::string> class_names,
                                                         const RowMatrix<float>& logits,
                                                         std::string_view key = "node");

}  // namespace maskgat::train
