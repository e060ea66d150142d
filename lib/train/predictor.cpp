#include "maskgat/train/predictor.hpp"

#include <iomanip>
#include <sstream>
#include <utility>

#include "maskgat/core/error.hpp"
#include "maskgat/graph/masks.hpp"
#include "maskgat/io/output_file.hpp"
#include "maskgat/nn/loss.hpp"
#include "maskgat/train/layerwise.hpp"
#include "maskgat/train/metrics.hpp"
#include "maskgat/train/trainer.hpp"

namespace maskgat::train {
namespace {

// Finite parameters can still overflow on some data; a NaN would be reported as a result.
const RowMatrix<float>& finite(const RowMatrix<float>& logits) {
  if (!logits.allFinite()) {
    throw Error(
        "the model's outputs on this data are not finite (NaN or infinity): the parameters are "
        "too large for these features");
  }
  return logits;
}

}  // namespace

Predictor::Predictor(Checkpoint checkpoint, const Dataset& dataset,
                     std::optional<std::int64_t> chunk_rows)
    : checkpoint_(std::move(checkpoint)),
      dataset_(&dataset),
      chunk_rows_([&]() -> std::int64_t {
        check_input_width(checkpoint_, dataset);  // before anything is computed for the data
        if (chunk_rows) {
          if (*chunk_rows <= 0) {
            throw InvalidArgument("predictor: chunk_rows is " + std::to_string(*chunk_rows) +
                                  ", expected a positive count");
          }
          return *chunk_rows;
        }
        return checkpoint_.options.batch_size > 0 ? kDefaultChunkRows : 0;
      }()),
      model_(load_model(checkpoint_)) {
  // The encoding is recomputed from this data's graph, as the model was trained with it.
  if (checkpoint_.options.positional.kind != transforms::EncodingKind::kNone) {
    encoded_ = model_input(dataset, checkpoint_.options);
  }
  if (model_.edge_feature_width() > 0) {
    if (chunk_rows_ > 0) {
      throw InvalidArgument(
          "predict: a model with edge features runs on the whole graph, not layer by layer");
    }
    edge_features_ = mask_edge_features(model_, dataset, mask());
  }
}

nn::Model& Predictor::bound_model() {
  model_.set_edge_features(edge_features_.size() > 0 ? &edge_features_ : nullptr);
  return model_;
}

const Graph& Predictor::mask() const {
  if (!mask_) mask_ = masks::from_graph(dataset_->graph, model_.mask_self_loops());
  return *mask_;
}

const RowMatrix<float>& Predictor::logits() {
  if (layerwise()) {
    layerwise_logits_ = layerwise_logits(model_, dataset_->graph, input(), {}, chunk_rows_);
    return finite(layerwise_logits_);
  }
  Rng unused(0);  // evaluation draws nothing
  return finite(bound_model().forward(mask(), input().view(), nn::Mode::kEval, unused));
}

RowMatrix<float> Predictor::logits(std::span<const NodeId> nodes) {
  RowMatrix<float> some =
      layerwise() ? layerwise_logits(model_, dataset_->graph, input(), nodes, chunk_rows_)
                  : logits_at(bound_model(), mask(), input(), nodes);
  finite(some);
  return some;
}

RowMatrix<float> Predictor::probabilities() {
  RowMatrix<float> probabilities;
  nn::softmax(logits(), probabilities);
  return probabilities;
}

RowMatrix<float> Predictor::probabilities(std::span<const NodeId> nodes) {
  RowMatrix<float> probabilities;
  nn::softmax(logits(nodes), probabilities);
  return probabilities;
}

std::vector<std::int32_t> Predictor::predicted_classes() { return predict_classes(logits()); }

std::vector<nn::AttentionWeights<float>> Predictor::attention() {
  Rng unused(0);
  finite(bound_model().forward(mask(), input().view(), nn::Mode::kEval, unused));
  return model_.attention(mask());
}

std::string predictions_csv(std::span<const std::string> names,
                            std::span<const std::string> class_names,
                            const RowMatrix<float>& logits, std::string_view key) {
  if (static_cast<std::int64_t>(names.size()) != logits.rows() ||
      static_cast<std::int64_t>(class_names.size()) != logits.cols()) {
    throw InvalidArgument("predictions_csv: " + std::to_string(names.size()) + " names and " +
                          std::to_string(class_names.size()) + " class names for logits of " +
                          std::to_string(logits.rows()) + " x " + std::to_string(logits.cols()));
  }
  RowMatrix<float> probabilities;
  nn::softmax(logits, probabilities);
  const std::vector<std::int32_t> predicted = predict_classes(logits);
  std::ostringstream csv;
  csv << key << ",predicted_class";
  for (const auto& name : class_names) csv << ",p_" << csv_field(name);
  csv << '\n' << std::setprecision(6);
  for (std::int64_t i = 0; i < probabilities.rows(); ++i) {
    const auto row = static_cast<std::size_t>(i);
    csv << csv_field(names[row]) << ','
        << csv_field(class_names[static_cast<std::size_t>(predicted[row])]);
    for (std::int64_t k = 0; k < probabilities.cols(); ++k) csv << ',' << probabilities(i, k);
    csv << '\n';
  }
  return csv.str();
}

}  // namespace maskgat::train
