#include "maskgat/train/link_trainer.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <string>
#include <utility>

#include "core/detail/binary_record.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/graph/masks.hpp"
#include "maskgat/nn/link_decoder.hpp"
#include "maskgat/nn/spec.hpp"
#include "maskgat/train/metrics.hpp"
#include "train/detail/fit_loop.hpp"

namespace maskgat::train {
namespace {

void check_encoder(const nn::Model& model, const char* where) {
  if (model.graph_level()) {
    throw InvalidArgument(std::string(where) +
                          ": the model ends in a readout (one output per graph); a link task "
                          "needs one row of states per node");
  }
  if (model.edge_feature_width() > 0) {
    throw InvalidArgument(std::string(where) +
                          ": the model reads edge features, which a link task does not give it "
                          "(held-out edges have none in the training graph)");
  }
}

void check_nodes(const NodePairs& pairs, std::int64_t nodes, const char* where) {
  if (pairs.sources.size() != pairs.targets.size()) {
    throw InvalidArgument(std::string(where) + ": " + std::to_string(pairs.sources.size()) +
                          " sources for " + std::to_string(pairs.targets.size()) + " targets");
  }
  for (const auto* side : {&pairs.sources, &pairs.targets}) {
    for (const NodeId node : *side) {
      if (node < 0 || node >= nodes) {
        throw IndexError(std::string(where) + ": node " + std::to_string(node) +
                         " is outside [0, " + std::to_string(nodes) + ")");
      }
    }
  }
}

// The decoder's logits of positives followed by negatives, and their 0/1 labels.
struct Scored {
  std::vector<float> logits;
  std::vector<std::int32_t> labels;
};

Scored score_both(const nn::Model& model, const RowMatrix<float>& states,
                  const NodePairs& positives, const NodePairs& negatives) {
  const std::optional<nn::MlpDecoder> mlp = nn::find_mlp_decoder(model.parameters());
  Scored scored;
  for (const auto& [pairs, label] : {std::pair{&positives, 1}, std::pair{&negatives, 0}}) {
    const std::vector<float> logits = nn::pair_logits(
        states, model.parameters(), mlp ? &*mlp : nullptr, pairs->sources, pairs->targets);
    scored.logits.insert(scored.logits.end(), logits.begin(), logits.end());
    scored.labels.insert(scored.labels.end(), logits.size(), label);
  }
  return scored;
}

double accuracy_of(const Scored& scored) {
  std::int64_t right = 0;
  for (std::size_t k = 0; k < scored.logits.size(); ++k) {
    right += static_cast<std::int64_t>((scored.logits[k] > 0.0F) == (scored.labels[k] == 1));
  }
  return static_cast<double>(right) / static_cast<double>(scored.logits.size());
}

Graph mask_of(const nn::Model& model, const Graph& graph) {
  return masks::from_graph(graph, model.mask_self_loops());
}

constexpr std::uint64_t kFirstTrainingStream = 2;  // 0 and 1: the split's fixed negatives

// Whether `recommend` may return `v` for `node`: not `node` itself, nor a node it has an edge to.
bool is_candidate(const Graph& graph, NodeId node, NodeId v) {
  return v != node && !graph.has_edge(node, v);
}

}  // namespace

TrainOptions link_recipe() {
  TrainOptions options;
  options.task = Task::kLink;
  options.spec = nn::parse_model_spec(R"({"modules": [
    {"type": "dropout", "p": 0.7},
    {"type": "gat", "heads": 1, "channels": "classes", "concat": false, "residual": true}]})",
                                      "link_recipe");
  options.model.classes = 128;
  options.optimizer.learning_rate = 0.005;
  options.optimizer.weight_decay = 0.0;
  options.epochs = 1000;
  options.metric = Metric::kRocAuc;
  options.selection = Selection::kMetric;
  return options;
}

std::uint64_t edge_split_fingerprint(const EdgeSplit& split) {
  maskgat::detail::RecordWriter out;
  out.scalar(split.train.num_nodes());
  for (const NodePairs* pairs :
       {&split.train_edges, &split.val, &split.test, &split.val_negatives, &split.test_negatives}) {
    out.scalar(pairs->size());
    for (std::size_t k = 0; k < pairs->sources.size(); ++k) {
      out.scalar(pairs->sources[k]);
      out.scalar(pairs->targets[k]);
    }
  }
  return maskgat::detail::fnv1a(out.bytes());
}

RowMatrix<float> node_states(nn::Model& model, const Graph& graph, const FeatureMatrix& input) {
  check_encoder(model, "node_states");
  if (input.rows() != graph.num_nodes()) {
    throw InvalidArgument("node_states: " + std::to_string(input.rows()) +
                          " input rows for a graph of " + std::to_string(graph.num_nodes()) +
                          " nodes");
  }
  Rng unused(0);  // evaluation draws nothing
  return model.forward(mask_of(model, graph), input.view(), nn::Mode::kEval, unused);
}

std::vector<double> pair_scores(const nn::Model& model, const RowMatrix<float>& states,
                                const NodePairs& pairs) {
  check_nodes(pairs, states.rows(), "pair_scores");
  const std::optional<nn::MlpDecoder> mlp = nn::find_mlp_decoder(model.parameters());
  const std::vector<float> logits = nn::pair_logits(
      states, model.parameters(), mlp ? &*mlp : nullptr, pairs.sources, pairs.targets);
  std::vector<double> scores(logits.size());
  std::transform(logits.begin(), logits.end(), scores.begin(),
                 [](float x) { return 1.0 / (1.0 + std::exp(-static_cast<double>(x))); });
  return scores;
}

LinkMetrics link_metrics(const nn::Model& model, const RowMatrix<float>& states,
                         const NodePairs& positives, const NodePairs& negatives) {
  if (positives.size() == 0 || negatives.size() == 0) {
    throw InvalidArgument("link_metrics: " + std::to_string(positives.size()) + " positive and " +
                          std::to_string(negatives.size()) +
                          " negative pairs; both must be present");
  }
  check_nodes(positives, states.rows(), "link_metrics");
  check_nodes(negatives, states.rows(), "link_metrics");
  const Scored scored = score_both(model, states, positives, negatives);
  LinkMetrics metrics;
  metrics.loss = nn::binary_cross_entropy<float>(scored.logits, scored.labels, {});
  metrics.accuracy = accuracy_of(scored);
  const std::vector<double> logits(scored.logits.begin(), scored.logits.end());
  metrics.roc_auc = roc_auc(logits, scored.labels);
  metrics.average_precision = average_precision(logits, scored.labels);
  const auto split = static_cast<std::ptrdiff_t>(positives.size());
  const std::span<const double> positive(logits.data(), static_cast<std::size_t>(split));
  const std::span<const double> negative(logits.data() + split, logits.size() - positive.size());
  metrics.hits_at_10 = hits_at_k(positive, negative, 10);
  metrics.hits_at_50 = hits_at_k(positive, negative, 50);
  metrics.hits_at_100 = hits_at_k(positive, negative, 100);
  metrics.positives = positives.size();
  metrics.negatives = negatives.size();
  return metrics;
}

std::int64_t recommendation_candidates(const Graph& graph, NodeId node) {
  if (node < 0 || node >= graph.num_nodes()) {
    throw IndexError("recommendation_candidates: node " + std::to_string(node) +
                     " is outside [0, " + std::to_string(graph.num_nodes()) + ")");
  }
  std::int64_t count = 0;
  for (NodeId v = 0; v < graph.num_nodes(); ++v) count += is_candidate(graph, node, v) ? 1 : 0;
  return count;
}

std::vector<ScoredNode> recommend(const nn::Model& model, const RowMatrix<float>& states,
                                  const Graph& graph, NodeId node, std::int64_t k) {
  const std::int64_t n = states.rows();
  if (graph.num_nodes() != n) {
    throw InvalidArgument("recommend: states of " + std::to_string(n) + " nodes for a graph of " +
                          std::to_string(graph.num_nodes()));
  }
  if (node < 0 || node >= n) {
    throw IndexError("recommend: node " + std::to_string(node) + " is outside [0, " +
                     std::to_string(n) + ")");
  }
  std::vector<float> logits(static_cast<std::size_t>(n));
  if (const std::optional<nn::MlpDecoder> mlp = nn::find_mlp_decoder(model.parameters())) {
    constexpr std::int64_t kBlock = 1 << 14;  // pairs scored at once: bounded buffers
    for (std::int64_t first = 0; first < n; first += kBlock) {
      const std::int64_t count = std::min(kBlock, n - first);
      const std::vector<NodeId> sources(static_cast<std::size_t>(count), node);
      std::vector<NodeId> targets(static_cast<std::size_t>(count));
      std::iota(targets.begin(), targets.end(), static_cast<NodeId>(first));
      const std::vector<float> block =
          nn::pair_logits(states, model.parameters(), &*mlp, sources, targets);
      std::copy(block.begin(), block.end(), logits.begin() + first);
    }
  } else {
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, n, 4096), [&](const auto& range) {
      for (std::int64_t v = range.begin(); v < range.end(); ++v) {
        logits[static_cast<std::size_t>(v)] = states.row(v).dot(states.row(node));
      }
    });
  }
  // Candidates: every node but `node` and those it already has an edge to.
  std::vector<NodeId> candidates;
  candidates.reserve(static_cast<std::size_t>(n));
  for (NodeId v = 0; v < n; ++v) {
    if (is_candidate(graph, node, v)) candidates.push_back(v);
  }
  if (k < 1 || k > static_cast<std::int64_t>(candidates.size())) {
    throw InvalidArgument("recommend: top " + std::to_string(k) + " asked for, but node " +
                          std::to_string(node) + " has " + std::to_string(candidates.size()) +
                          " candidates (nodes it has no edge to), expected 1 to that");
  }
  const auto higher = [&](NodeId a, NodeId b) {
    const float sa = logits[static_cast<std::size_t>(a)];
    const float sb = logits[static_cast<std::size_t>(b)];
    return sa > sb || (sa == sb && a < b);
  };
  const auto top = candidates.begin() + static_cast<std::ptrdiff_t>(k);
  std::partial_sort(candidates.begin(), top, candidates.end(), higher);
  std::vector<ScoredNode> best;
  for (auto it = candidates.begin(); it != top; ++it) {
    const double logit = logits[static_cast<std::size_t>(*it)];
    best.push_back({*it, 1.0 / (1.0 + std::exp(-logit))});
  }
  return best;
}

struct LinkTrainer::Impl final : detail::FitTask {
  Impl(const Dataset& dataset, EdgeSplit edge_split, const TrainOptions& given)
      : data(&dataset),
        split(std::move(edge_split)),
        options(with_task(given)),
        rng(options.seed),
        model(make_model(with_widths(dataset, options), rng)),
        optimizer(model.parameters().size(), options.optimizer),
        input(model_input(dataset, options)),
        mask(mask_of(model, split.train)),
        mlp(nn::find_mlp_decoder(model.parameters())) {
    options.model = model.options();
    if (options.spec) options.spec = model.spec();
    check_encoder(model, "train");
    detail::check_loop_options(options);
    if (split.train.num_nodes() != dataset.graph.num_nodes()) {
      throw InvalidArgument("train: the edge split is of a graph of " +
                            std::to_string(split.train.num_nodes()) + " nodes, " + dataset.name +
                            " has " + std::to_string(dataset.graph.num_nodes()));
    }
    for (const NodePairs* pairs : {&split.train_edges, &split.val, &split.test,
                                   &split.val_negatives, &split.test_negatives}) {
      check_nodes(*pairs, dataset.graph.num_nodes(), "train");
    }
    if (split.train_edges.size() == 0) {
      throw InvalidArgument("train: the edge split has no training pairs");
    }
    if (options.patience > 0 && split.val.size() == 0) {
      throw InvalidArgument(
          "train: the edge split has no validation pairs, which early stopping needs (use "
          "patience 0)");
    }
    if (!model.buffers().entries().empty()) options.receptive_field = false;
    const auto values = model.parameters().values();
    state.best_values.assign(values.begin(), values.end());
  }

  static TrainOptions with_task(TrainOptions options) {
    if (options.batch_size != 0 || !options.fanouts.empty()) {
      throw InvalidArgument(
          "train: a link task takes full-graph steps; mini-batches and fanouts are for node "
          "tasks");
    }
    options.task = Task::kLink;
    options.metric = Metric::kRocAuc;
    options.receptive_field = false;  // every node's state enters the loss
    if (options.model.classes < 1 || options.decoder_hidden < 0) {
      throw InvalidArgument(
          "train: a link model's states need at least 1 column and its "
          "decoder 0 or more hidden units, got " +
          std::to_string(options.model.classes) + " and " + std::to_string(options.decoder_hidden));
    }
    return options;
  }

  // The options the model is built from: the dataset's feature width (with any positional
  // encoding), the states' width kept.
  static TrainOptions with_widths(const Dataset& dataset, TrainOptions options) {
    dataset.require_features();
    options.model.in_features = dataset.features.cols() + options.positional.dims;
    if (options.spec) {
      options.spec->in_features = options.model.in_features;
      options.spec->classes = options.model.classes;
      options.spec->schedule = options.model.schedule;
    }
    return options;
  }

  detail::EpochTraining train_epoch(std::int64_t epoch) override {
    const NodePairs negatives =
        sample_negatives(data->graph, split.train_edges.size(), data->preparation.undirected,
                         options.seed, kFirstTrainingStream + static_cast<std::uint64_t>(epoch));
    auto& parameters = model.parameters();
    parameters.zero_grad();
    const RowMatrix<float>& states = model.forward(mask, input.view(), nn::Mode::kTrain, rng);
    const Scored scored = score_both(model, states, split.train_edges, negatives);
    std::vector<float> grad(scored.logits.size());
    const double loss = nn::binary_cross_entropy<float>(scored.logits, scored.labels, grad);
    const std::string where = "epoch " + std::to_string(epoch);
    if (!std::isfinite(loss)) {
      throw Error("train: the training loss is " + std::to_string(loss) + " at " + where +
                  "; lower the learning rate or check the features");
    }
    RowMatrix<float> grad_states = RowMatrix<float>::Zero(states.rows(), states.cols());
    const auto positives = static_cast<std::size_t>(split.train_edges.size());
    const nn::MlpDecoder* decoder = mlp ? &*mlp : nullptr;
    nn::pair_logits_backward<float>(states, parameters, decoder, split.train_edges.sources,
                                    split.train_edges.targets,
                                    std::span<const float>(grad).first(positives), grad_states);
    nn::pair_logits_backward<float>(states, parameters, decoder, negatives.sources,
                                    negatives.targets,
                                    std::span<const float>(grad).subspan(positives), grad_states);
    model.backward(mask, input.view(), grad_states);
    const auto grads = parameters.grads();
    if (!std::all_of(grads.begin(), grads.end(), [](float g) { return std::isfinite(g); })) {
      throw Error("train: a gradient is not finite at " + where +
                  "; lower the learning rate or check the features");
    }
    optimizer.step(parameters.values(), grads);
    return {loss, accuracy_of(scored), mask.num_nodes()};
  }

  std::optional<detail::Validation> validate() override {
    if (split.val.size() == 0) return std::nullopt;
    const LinkMetrics metrics = link_metrics(model, states(), split.val, split.val_negatives);
    return detail::Validation{metrics.loss, metrics.accuracy, metrics.roc_auc};
  }

  RowMatrix<float> states() {
    Rng unused(0);  // evaluation draws nothing
    return model.forward(mask, input.view(), nn::Mode::kEval, unused);
  }

  DataRecord record() const {
    DataRecord record = record_data(*data);
    record.split_hash = edge_split_fingerprint(split);
    record.fitted.clear();
    return record;
  }

  const Dataset* data;
  EdgeSplit split;
  TrainOptions options;
  TrainingState state;
  Rng rng;
  nn::Model model;
  optim::Adam optimizer;
  FeatureMatrix input;
  Graph mask;
  std::optional<nn::MlpDecoder> mlp;  // none: the dot product
  std::vector<float> best_buffers;
};

LinkTrainer::LinkTrainer(const Dataset& data, EdgeSplit split, const TrainOptions& options)
    : impl_(std::make_unique<Impl>(data, std::move(split), options)) {}

LinkTrainer::LinkTrainer(const Dataset& data, EdgeSplit split, const Checkpoint& checkpoint,
                         std::int64_t epochs)
    : LinkTrainer(data, std::move(split), [&] {
        if (checkpoint.options.task != Task::kLink) {
          throw InvalidArgument("checkpoint: the model was trained on a " +
                                std::string(task_name(checkpoint.options.task)) +
                                " task, not a link task");
        }
        TrainOptions options = checkpoint.options;
        options.epochs = epochs;
        return options;
      }()) {
  Impl& s = *impl_;
  const DataRecord mine = s.record();
  if (!checkpoint.data || checkpoint.data->nodes_hash != mine.nodes_hash ||
      checkpoint.data->split_hash != mine.split_hash) {
    throw InvalidArgument(
        "checkpoint: the run was trained on other nodes or another edge split than these (their "
        "fingerprints differ)");
  }
  detail::restore_run(checkpoint, s.model, s.optimizer, s.state, s.rng);
}

LinkTrainer::~LinkTrainer() = default;
LinkTrainer::LinkTrainer(LinkTrainer&&) noexcept = default;
LinkTrainer& LinkTrainer::operator=(LinkTrainer&&) noexcept = default;

FitResult LinkTrainer::fit(const std::function<void(const EpochStats&)>& on_epoch) {
  Impl& s = *impl_;
  FitResult result = detail::run_epochs(s, s.options, s.model, s.state, s.best_buffers, on_epoch);
  result.val_nodes = s.split.val.size();
  result.test_nodes = s.split.test.size();
  if (s.split.test.size() > 0) {
    const LinkMetrics test = evaluate(s.split.test, s.split.test_negatives);
    result.test_accuracy = test.accuracy;
    result.test_score = test.roc_auc;
  }
  return result;
}

LinkMetrics LinkTrainer::evaluate(const NodePairs& positives, const NodePairs& negatives) {
  return link_metrics(impl_->model, impl_->states(), positives, negatives);
}

RowMatrix<float> LinkTrainer::states() { return impl_->states(); }

Checkpoint LinkTrainer::checkpoint() const {
  const Impl& s = *impl_;
  Checkpoint checkpoint =
      detail::capture_run(s.options, s.data->name, {}, s.model, s.optimizer, s.state, s.rng);
  checkpoint.data = s.record();
  return checkpoint;
}

nn::Model& LinkTrainer::model() noexcept { return impl_->model; }
const TrainOptions& LinkTrainer::options() const noexcept { return impl_->options; }
const EdgeSplit& LinkTrainer::split() const noexcept { return impl_->split; }

}  // namespace maskgat::train
