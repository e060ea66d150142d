#include "maskgat/train/graph_trainer.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <string>
#include <utility>

#include "core/detail/binary_record.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/graph/masks.hpp"
#include "maskgat/nn/loss.hpp"
#include "maskgat/train/metrics.hpp"
#include "train/detail/fit_loop.hpp"

namespace maskgat::train {
namespace {

// Each class's graphs, ascending.
std::vector<std::vector<std::int64_t>> by_class(std::span<const std::int32_t> labels,
                                                std::span<const std::int64_t> graphs) {
  std::vector<std::vector<std::int64_t>> classes;
  for (const std::int64_t g : graphs) {
    const std::int32_t label = labels[static_cast<std::size_t>(g)];
    if (label < 0) {
      throw InvalidArgument("stratified_folds: graph " + std::to_string(g) + " has label " +
                            std::to_string(label) + ", expected a class id (0 or more)");
    }
    const auto index = static_cast<std::size_t>(label);
    if (index >= classes.size()) classes.resize(index + 1);
    classes[index].push_back(g);
  }
  return classes;
}

void shuffle(std::vector<std::int64_t>& items, Rng& rng) {
  for (std::size_t k = items.size(); k > 1; --k) std::swap(items[k - 1], items[rng.uniform_int(k)]);
}

constexpr std::uint64_t kFoldStream = 0x666f6c6473ULL;        // "folds"
constexpr std::uint64_t kValidationStream = 0x76616c6964ULL;  // "valid"

// A batch of graphs as the model runs on it: the block-diagonal graph, its mask (with the
// self-loops the model's layers expect) and the edge features on the mask's entries.
struct Prepared {
  GraphBatch batch;
  Graph mask;
  RowMatrix<float> edge_features;  // empty when the model reads none
  std::vector<NodeId> rows;        // 0 .. B - 1, the rows of the batch's logits

  Prepared(const GraphCollection& data, std::span<const std::int64_t> graphs,
           const nn::Model& model)
      : batch(make_batch(data, graphs)),
        mask(masks::from_graph(batch.graph, model.mask_self_loops())),
        rows(graphs.size()) {
    if (model.edge_feature_width() > 0) {
      edge_features = masks::edge_features(batch.graph, batch.edge_features, mask);
    }
    std::iota(rows.begin(), rows.end(), NodeId{0});
  }

  const RowMatrix<float>& forward(nn::Model& model, nn::Mode mode, Rng& rng) const {
    model.set_graph_offsets(batch.offsets);
    model.set_edge_features(edge_features.size() > 0 ? &edge_features : nullptr);
    return model.forward(mask, batch.features, mode, rng);
  }

  void backward(nn::Model& model, const RowMatrix<float>& grad_logits) const {
    model.set_graph_offsets(batch.offsets);
    model.set_edge_features(edge_features.size() > 0 ? &edge_features : nullptr);
    model.backward(mask, batch.features, grad_logits);
  }
};

// Checks that `model` is a graph classifier whose inputs `data` has.
void check_model_on(const nn::Model& model, const GraphCollection& data, const char* where) {
  if (!model.graph_level()) {
    throw InvalidArgument(std::string(where) +
                          ": the model has no readout; a graph task needs one (sum_pool, "
                          "mean_pool, max_pool or attention_pool) after the attention layers "
                          "(docs/model-specs.md)");
  }
  if (model.options().in_features != data.features.cols()) {
    throw InvalidArgument(std::string(where) + ": the model takes " +
                          std::to_string(model.options().in_features) + " features per node, " +
                          data.name + " has " + std::to_string(data.features.cols()));
  }
  const std::int64_t width = model.edge_feature_width();
  if (width > 0 && data.edge_features.cols() != width) {
    throw InvalidArgument(std::string(where) + ": the model's attention layers read " +
                          std::to_string(width) + " features per edge (edge_dim), " + data.name +
                          " has " + std::to_string(data.edge_features.cols()));
  }
}

// The logits of `graphs`, `kEvaluationBatch` at a time, prepared once and kept in `batches`.
RowMatrix<float> logits_of(nn::Model& model, const std::vector<Prepared>& batches,
                           std::int64_t rows) {
  RowMatrix<float> logits(rows, model.options().classes);
  Rng unused(0);  // evaluation draws nothing
  Eigen::Index at = 0;
  for (const Prepared& prepared : batches) {
    const RowMatrix<float>& out = prepared.forward(model, nn::Mode::kEval, unused);
    logits.middleRows(at, out.rows()) = out;
    at += out.rows();
  }
  return logits;
}

std::vector<Prepared> prepare_all(const GraphCollection& data, std::span<const std::int64_t> graphs,
                                  const nn::Model& model) {
  std::vector<Prepared> batches;
  for (std::size_t first = 0; first < graphs.size();
       first += static_cast<std::size_t>(kEvaluationBatch)) {
    const std::size_t count =
        std::min(graphs.size() - first, static_cast<std::size_t>(kEvaluationBatch));
    batches.emplace_back(data, graphs.subspan(first, count), model);
  }
  return batches;
}

std::vector<std::int32_t> labels_of(const GraphCollection& data,
                                    std::span<const std::int64_t> graphs) {
  std::vector<std::int32_t> labels;
  for (const std::int64_t g : graphs) {
    if (g < 0 || g >= data.num_graphs()) {
      throw IndexError("evaluate: graph " + std::to_string(g) + " is outside [0, " +
                       std::to_string(data.num_graphs()) + ")");
    }
    labels.push_back(data.labels[static_cast<std::size_t>(g)]);
  }
  return labels;
}

// Loss, accuracy, macro-F1, confusion (and ROC AUC when asked for) of graph logits, row r of
// `logits` for the graph of `labels[r]`.
SplitMetrics metrics_of(const RowMatrix<float>& logits, std::span<const std::int32_t> labels,
                        std::int32_t classes, Metric metric) {
  std::vector<NodeId> rows(labels.size());
  std::iota(rows.begin(), rows.end(), NodeId{0});
  SplitMetrics metrics;
  metrics.confusion = ConfusionMatrix(classes, labels, predict_classes(logits), rows);
  metrics.loss = nn::nll_loss(logits, labels, rows);
  metrics.nodes = metrics.confusion.total();
  metrics.accuracy = metrics.confusion.accuracy();
  metrics.macro_f1 = metrics.confusion.macro_f1();
  if (metric == Metric::kRocAuc) metrics.roc_auc = roc_auc(logits, labels, rows);
  return metrics;
}

// The fingerprint of a split: FNV-1a 64 of its three lists.
std::uint64_t split_fingerprint(const GraphSplit& split) {
  maskgat::detail::RecordWriter out;
  for (const auto* part : {&split.train, &split.val, &split.test}) {
    out.scalar<std::uint64_t>(part->size());
    for (const std::int64_t g : *part) out.scalar(g);
  }
  return maskgat::detail::fnv1a(out.bytes());
}

}  // namespace

std::vector<GraphSplit> stratified_folds(std::span<const std::int32_t> labels, std::int64_t folds,
                                         std::uint64_t seed, double validation) {
  const auto graphs = static_cast<std::int64_t>(labels.size());
  if (folds < 2 || folds > graphs) {
    throw InvalidArgument("stratified_folds: " + std::to_string(folds) + " folds of " +
                          std::to_string(graphs) + " graphs, expected 2 to " +
                          std::to_string(graphs));
  }
  if (!(validation > 0.0 && validation < 1.0)) {
    throw InvalidArgument("stratified_folds: the validation share is " +
                          std::to_string(validation) + ", expected a value in (0, 1)");
  }
  std::vector<std::int64_t> all(static_cast<std::size_t>(graphs));
  std::iota(all.begin(), all.end(), std::int64_t{0});
  std::vector<std::int64_t> fold_of(all.size());
  Rng rng(counter_hash(seed, kFoldStream, 0));
  std::int64_t dealt = 0;
  for (auto& members : by_class(labels, all)) {
    shuffle(members, rng);
    for (const std::int64_t g : members) fold_of[static_cast<std::size_t>(g)] = dealt++ % folds;
  }
  std::vector<GraphSplit> splits(static_cast<std::size_t>(folds));
  for (std::int64_t k = 0; k < folds; ++k) {
    GraphSplit& split = splits[static_cast<std::size_t>(k)];
    std::vector<std::int64_t> rest;
    for (const std::int64_t g : all) {
      (fold_of[static_cast<std::size_t>(g)] == k ? split.test : rest).push_back(g);
    }
    Rng draw(counter_hash(seed, kValidationStream, static_cast<std::uint64_t>(k)));
    for (auto& members : by_class(labels, rest)) {
      shuffle(members, draw);
      const auto held =
          static_cast<std::size_t>(std::lround(validation * static_cast<double>(members.size())));
      split.val.insert(split.val.end(), members.begin(),
                       members.begin() + static_cast<std::ptrdiff_t>(held));
      split.train.insert(split.train.end(), members.begin() + static_cast<std::ptrdiff_t>(held),
                         members.end());
    }
    std::sort(split.val.begin(), split.val.end());
    std::sort(split.train.begin(), split.train.end());
  }
  return splits;
}

std::uint64_t graph_fingerprint(const GraphCollection& data, std::int64_t g) {
  if (g < 0 || g >= data.num_graphs()) {
    throw IndexError("graph_fingerprint: graph " + std::to_string(g) + " is outside [0, " +
                     std::to_string(data.num_graphs()) + ")");
  }
  const std::vector<std::int64_t> one{g};
  const GraphBatch batch = make_batch(data, one);
  maskgat::detail::RecordWriter out;
  out.scalar(batch.graph.num_nodes());
  out.scalar(batch.features.cols());
  for (Eigen::Index k = 0; k < batch.features.size(); ++k) out.scalar(batch.features.data()[k]);
  out.scalar(batch.edge_features.cols());
  for (NodeId i = 0; i < batch.graph.num_nodes(); ++i) {
    for (const NodeId j : batch.graph.in_neighbors(i)) {
      out.scalar(j);
      out.scalar(i);
    }
  }
  for (Eigen::Index k = 0; k < batch.edge_features.size(); ++k) {
    out.scalar(batch.edge_features.data()[k]);
  }
  return maskgat::detail::fnv1a(out.bytes());
}

std::vector<std::int64_t> fitted_graphs(const DataRecord& trained, const GraphCollection& data,
                                        std::span<const std::int64_t> graphs) {
  std::vector<std::int64_t> fitted;
  for (const std::int64_t g : graphs) {
    if (std::binary_search(trained.fitted.begin(), trained.fitted.end(),
                           graph_fingerprint(data, g))) {
      fitted.push_back(g);
    }
  }
  return fitted;
}

RowMatrix<float> graph_logits(nn::Model& model, const GraphCollection& data,
                              std::span<const std::int64_t> graphs) {
  check_model_on(model, data, "graph_logits");
  return logits_of(model, prepare_all(data, graphs, model),
                   static_cast<std::int64_t>(graphs.size()));
}

struct GraphTrainer::Impl final : detail::FitTask {
  Impl(const GraphCollection& collection, GraphSplit graph_split, const TrainOptions& given)
      : data(&collection),
        split(std::move(graph_split)),
        options(with_widths(collection, given)),
        rng(options.seed),
        model(make_model(options, rng)),
        optimizer(model.parameters().size(), options.optimizer) {
    options.model = model.options();
    options.spec = model.spec();
    check_model_on(model, collection, "train");
    check_split();
    detail::check_loop_options(options);
    if (options.patience > 0 && split.val.empty()) {
      throw InvalidArgument(
          "train: the split has no validation graphs, which early stopping needs (use patience "
          "0)");
    }
    val_labels = labels_of(collection, split.val);
    if (options.metric == Metric::kRocAuc) {
      if (collection.class_names.size() != 2) {
        throw InvalidArgument("train: ROC AUC is for two-class tasks, " + collection.name +
                              " has " + std::to_string(collection.class_names.size()) + " classes");
      }
      const auto check = [&](const std::vector<std::int64_t>& graphs, const char* what) {
        if (graphs.empty()) return;
        const std::vector<std::int32_t> labels = labels_of(collection, graphs);
        std::vector<NodeId> rows(labels.size());
        std::iota(rows.begin(), rows.end(), NodeId{0});
        require_both_classes(labels, rows, what);
      };
      check(split.val, "the validation graphs");
      check(split.test, "the test graphs");
    }
    const auto values = model.parameters().values();
    state.best_values.assign(values.begin(), values.end());
  }

  static TrainOptions with_widths(const GraphCollection& collection, TrainOptions options) {
    if (!options.spec) {
      throw InvalidArgument(
          "train: a graph task needs a model spec with a readout (TrainOptions::spec, --model); "
          "the paper's model classifies nodes");
    }
    if (!options.fanouts.empty() || options.positional.kind != transforms::EncodingKind::kNone) {
      throw InvalidArgument(
          "train: fanouts and positional encodings are for node tasks, not graph tasks");
    }
    options.task = Task::kGraph;
    options.receptive_field = false;
    options.model.in_features = collection.features.cols();
    options.model.classes = static_cast<std::int64_t>(collection.class_names.size());
    options.spec->in_features = options.model.in_features;
    options.spec->classes = options.model.classes;
    options.spec->schedule = options.model.schedule;
    const double weights = nn::spec_size(*options.spec).weights;
    if (weights > static_cast<double>(options.max_parameters)) {
      throw InvalidArgument("train: the model's projections hold " + std::to_string(weights) +
                            " weights, over the limit of " +
                            std::to_string(options.max_parameters) +
                            " (raise it with --max-parameters)");
    }
    return options;
  }

  void check_split() const {
    std::vector<std::uint8_t> seen(static_cast<std::size_t>(data->num_graphs()), 0);
    for (const auto& [part, name] :
         {std::pair{&split.train, "training"}, std::pair{&split.val, "validation"},
          std::pair{&split.test, "test"}}) {
      for (const std::int64_t g : *part) {
        if (g < 0 || g >= data->num_graphs()) {
          throw InvalidArgument(std::string("train: ") + name + " graph " + std::to_string(g) +
                                " is outside [0, " + std::to_string(data->num_graphs()) + ")");
        }
        if (seen[static_cast<std::size_t>(g)]++ != 0) {
          throw InvalidArgument("train: graph " + std::to_string(g) +
                                " is in two parts of the split (or twice in one)");
        }
      }
    }
    if (split.train.empty()) throw InvalidArgument("train: the split has no training graphs");
  }

  detail::EpochTraining train_epoch(std::int64_t epoch) override {
    const std::vector<std::int64_t> order =
        detail::shuffled(std::span<const std::int64_t>(split.train), options.seed, epoch);
    const std::size_t size =
        options.batch_size > 0 ? static_cast<std::size_t>(options.batch_size) : order.size();
    const std::size_t batches = (order.size() + size - 1) / size;
    auto& parameters = model.parameters();
    detail::EpochTraining total;
    RowMatrix<float> grad_logits;
    for (std::size_t b = 0; b < batches; ++b) {
      const auto graphs = std::span<const std::int64_t>(order).subspan(
          b * size, std::min(size, order.size() - b * size));
      const Prepared prepared(*data, graphs, model);
      const std::string where = "epoch " + std::to_string(epoch) + ", batch " +
                                std::to_string(b + 1) + " of " + std::to_string(batches);
      parameters.zero_grad();
      const RowMatrix<float>& logits = prepared.forward(model, nn::Mode::kTrain, rng);
      const ConfusionMatrix confusion(static_cast<std::int32_t>(data->class_names.size()),
                                      prepared.batch.labels, predict_classes(logits),
                                      prepared.rows);
      const double loss = nn::nll_loss(logits, prepared.batch.labels, prepared.rows, &grad_logits);
      if (!std::isfinite(loss)) {
        throw Error("train: the training loss is " + std::to_string(loss) + " at " + where +
                    "; lower the learning rate or check the features");
      }
      prepared.backward(model, grad_logits);
      const auto grads = parameters.grads();
      if (!std::all_of(grads.begin(), grads.end(), [](float g) { return std::isfinite(g); })) {
        throw Error("train: a gradient is not finite at " + where +
                    "; lower the learning rate or check the features");
      }
      optimizer.step(parameters.values(), grads);
      const auto weight = static_cast<double>(graphs.size());
      total.loss += loss * weight;
      total.accuracy += confusion.accuracy() * weight;
      total.input_rows += prepared.batch.graph.num_nodes();
    }
    total.loss /= static_cast<double>(order.size());
    total.accuracy /= static_cast<double>(order.size());
    return total;
  }

  std::optional<detail::Validation> validate() override {
    if (split.val.empty()) return std::nullopt;
    if (val_batches.empty()) val_batches = prepare_all(*data, split.val, model);
    const SplitMetrics metrics = score(
        logits_of(model, val_batches, static_cast<std::int64_t>(split.val.size())), val_labels);
    return detail::Validation{metrics.loss, metrics.accuracy,
                              metrics.roc_auc.value_or(metrics.accuracy)};
  }

  SplitMetrics score(const RowMatrix<float>& logits, std::span<const std::int32_t> labels) const {
    return metrics_of(logits, labels, static_cast<std::int32_t>(data->class_names.size()),
                      options.metric);
  }

  DataRecord record() const {
    DataRecord record;
    record.nodes = data->num_graphs();
    std::vector<std::uint64_t> fingerprints;
    maskgat::detail::RecordWriter out;
    for (std::int64_t g = 0; g < data->num_graphs(); ++g) {
      fingerprints.push_back(graph_fingerprint(*data, g));
      out.scalar(fingerprints.back());
      out.scalar(data->labels[static_cast<std::size_t>(g)]);
    }
    record.nodes_hash = maskgat::detail::fnv1a(out.bytes());
    record.split_hash = split_fingerprint(split);
    for (const auto* part : {&split.train, &split.val}) {
      for (const std::int64_t g : *part) {
        record.fitted.push_back(fingerprints[static_cast<std::size_t>(g)]);
      }
    }
    std::sort(record.fitted.begin(), record.fitted.end());
    return record;
  }

  const GraphCollection* data;
  GraphSplit split;
  TrainOptions options;
  TrainingState state;
  Rng rng;
  nn::Model model;
  optim::Adam optimizer;
  std::vector<float> best_buffers;
  std::vector<std::int32_t> val_labels;
  std::vector<Prepared> val_batches;  // prepared on the first validation pass
};

GraphTrainer::GraphTrainer(const GraphCollection& data, GraphSplit split,
                           const TrainOptions& options)
    : impl_(std::make_unique<Impl>(data, std::move(split), options)) {}

GraphTrainer::GraphTrainer(const GraphCollection& data, GraphSplit split,
                           const Checkpoint& checkpoint, std::int64_t epochs)
    : GraphTrainer(data, std::move(split), [&] {
        if (checkpoint.options.task != Task::kGraph) {
          throw InvalidArgument("checkpoint: the model was trained on a " +
                                std::string(task_name(checkpoint.options.task)) +
                                " task, not a graph task");
        }
        TrainOptions options = checkpoint.options;
        options.epochs = epochs;
        return options;
      }()) {
  Impl& s = *impl_;
  if (checkpoint.class_names != s.data->class_names) {
    throw InvalidArgument(
        "checkpoint: the model was trained on " + std::to_string(checkpoint.class_names.size()) +
        " classes that differ from the collection's " + std::to_string(s.data->class_names.size()));
  }
  const DataRecord mine = s.record();
  if (!checkpoint.data || checkpoint.data->nodes_hash != mine.nodes_hash ||
      checkpoint.data->split_hash != mine.split_hash) {
    throw InvalidArgument(
        "checkpoint: the run was trained on other graphs or another split than these (their "
        "fingerprints differ)");
  }
  detail::restore_run(checkpoint, s.model, s.optimizer, s.state, s.rng);
}

GraphTrainer::~GraphTrainer() = default;
GraphTrainer::GraphTrainer(GraphTrainer&&) noexcept = default;
GraphTrainer& GraphTrainer::operator=(GraphTrainer&&) noexcept = default;

FitResult GraphTrainer::fit(const std::function<void(const EpochStats&)>& on_epoch) {
  Impl& s = *impl_;
  FitResult result = detail::run_epochs(s, s.options, s.model, s.state, s.best_buffers, on_epoch);
  result.val_nodes = static_cast<std::int64_t>(s.split.val.size());
  result.test_nodes = static_cast<std::int64_t>(s.split.test.size());
  if (!s.split.test.empty()) {
    const SplitMetrics test = evaluate(s.split.test);
    result.test_accuracy = test.accuracy;
    result.test_score = test.roc_auc.value_or(test.accuracy);
  }
  return result;
}

SplitMetrics graph_metrics(nn::Model& model, const GraphCollection& data,
                           std::span<const std::int64_t> graphs, Metric metric) {
  if (graphs.empty()) throw InvalidArgument("evaluate: no graphs to evaluate");
  const std::vector<std::int32_t> labels = labels_of(data, graphs);
  if (metric == Metric::kRocAuc && data.class_names.size() != 2) {
    throw InvalidArgument("evaluate: ROC AUC is for two-class tasks, " + data.name + " has " +
                          std::to_string(data.class_names.size()) + " classes");
  }
  if (model.options().classes != static_cast<std::int64_t>(data.class_names.size())) {
    throw InvalidArgument("evaluate: the model has " + std::to_string(model.options().classes) +
                          " classes, " + data.name + " " + std::to_string(data.class_names.size()));
  }
  return metrics_of(graph_logits(model, data, graphs), labels,
                    static_cast<std::int32_t>(data.class_names.size()), metric);
}

SplitMetrics GraphTrainer::evaluate(std::span<const std::int64_t> graphs) {
  return graph_metrics(impl_->model, *impl_->data, graphs, impl_->options.metric);
}

Checkpoint GraphTrainer::checkpoint() const {
  const Impl& s = *impl_;
  Checkpoint checkpoint = detail::capture_run(s.options, s.data->name, s.data->class_names,
                                              s.model, s.optimizer, s.state, s.rng);
  checkpoint.data = s.record();
  return checkpoint;
}

nn::Model& GraphTrainer::model() noexcept { return impl_->model; }
const TrainOptions& GraphTrainer::options() const noexcept { return impl_->options; }
const GraphSplit& GraphTrainer::split() const noexcept { return impl_->split; }

}  // namespace maskgat::train
