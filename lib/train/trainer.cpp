#include "maskgat/train/trainer.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iomanip>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>

#include "core/detail/parallel.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/graph/masks.hpp"
#include "maskgat/graph/sampler.hpp"
#include "maskgat/nn/link_decoder.hpp"
#include "maskgat/nn/loss.hpp"
#include "maskgat/train/checkpoint.hpp"
#include "maskgat/train/halo_exchange.hpp"
#include "maskgat/train/layerwise.hpp"
#include "train/detail/fit_loop.hpp"

namespace maskgat::train {

const char* task_name(Task task) noexcept {
  switch (task) {
    case Task::kGraph:
      return "graph";
    case Task::kLink:
      return "link";
    case Task::kNode:
      break;
  }
  return "node";
}

Task parse_task(std::string_view name) {
  for (const Task task : {Task::kNode, Task::kGraph, Task::kLink}) {
    if (name == task_name(task)) return task;
  }
  throw InvalidArgument("task must be node, graph or link, got '" + std::string(name) + "'");
}

TrainOptions paper_recipe(std::string_view dataset) {
  TrainOptions options;
  std::string name(dataset);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (name == "pubmed") {
    options.model.output_heads = 8;
    options.optimizer.learning_rate = 0.01;
    options.optimizer.weight_decay = 1e-3;
  }
  return options;
}

TrainOptions shchur_recipe() {
  TrainOptions options;
  options.optimizer.weight_decay = 0.0;
  return options;
}

TrainOptions graph_recipe() {
  TrainOptions options;
  options.task = Task::kGraph;
  options.optimizer.learning_rate = 0.001;
  options.optimizer.weight_decay = 0.0;
  options.batch_size = 32;
  options.epochs = 500;
  return options;
}

FeatureMatrix model_input(const Dataset& dataset, const TrainOptions& options) {
  dataset.require_features();
  if (options.positional.kind == transforms::EncodingKind::kNone) return dataset.features;
  return transforms::append_columns(
      dataset.features, transforms::positional_encoding(dataset.graph, options.positional));
}

namespace {

// Laplacian eigenvectors have no sign of their own, so training shows the model a random sign of
// every column at every step, and evaluation the stored one (Dwivedi et al.).
bool flips_signs(const TrainOptions& options) {
  return options.positional.kind == transforms::EncodingKind::kLaplacian;
}

// `options` with the model's input and output widths those of `dataset`, after checking the
// model's size.
TrainOptions with_widths(const Dataset& dataset, TrainOptions options) {
  check_model_size(options, dataset);
  options.model.in_features = dataset.features.cols() + options.positional.dims;
  options.model.classes = dataset.num_classes();
  if (options.spec) {
    options.spec->in_features = options.model.in_features;
    options.spec->classes = options.model.classes;
    options.spec->schedule = options.model.schedule;
  }
  return options;
}

// Some nodes' receptive field in the whole graph (`masks::receptive_subgraph`): the subgraph, the
// rows of the input and of the labels on it (none without labels), and where the nodes
// themselves lie in it.
struct Field {
  Field(masks::Subgraph subgraph_in, const FeatureMatrix& all_input,
        std::span<const std::int32_t> all_labels, std::span<const NodeId> all_nodes)
      : subgraph(std::move(subgraph_in)), input(all_input.select_rows(subgraph.nodes)) {
    if (!all_labels.empty()) {
      for (const NodeId node : subgraph.nodes)
        labels.push_back(all_labels[static_cast<std::size_t>(node)]);
    }
    for (const NodeId node : all_nodes) {
      const auto at = std::lower_bound(subgraph.nodes.begin(), subgraph.nodes.end(), node);
      nodes.push_back(static_cast<NodeId>(at - subgraph.nodes.begin()));
    }
  }

  masks::Subgraph subgraph;
  FeatureMatrix input;
  std::vector<std::int32_t> labels;
  std::vector<NodeId> nodes;
};

// The fanouts mini-batches sample with: the options', or every in-neighbour in every layer.
std::vector<std::int64_t> batch_fanouts(const TrainOptions& options) {
  const std::int64_t layers = options.model.layers;
  if (options.fanouts.empty())
    return std::vector<std::int64_t>(static_cast<std::size_t>(layers), -1);
  if (static_cast<std::int64_t>(options.fanouts.size()) != layers) {
    throw InvalidArgument("train: " + std::to_string(options.fanouts.size()) +
                          " fanouts for a model of " + std::to_string(layers) +
                          " layers, expected one per layer");
  }
  return options.fanouts;
}

// Whether running on `field` pays against running on all of `mask`: it holds at most half of
// the mask's entries. A larger one would save little and cost a second set of buffers nearly the
// graph's size.
bool worth_running_on(const masks::Subgraph& field, const Graph& mask) {
  return 2 * field.masks.front().num_edges() <= mask.num_edges();
}

// The field of `nodes` when `options` asks for fields and it is worth running on.
std::optional<Field> node_field(const TrainOptions& options, const Graph& mask,
                                std::span<const NodeId> nodes, const FeatureMatrix& input,
                                std::span<const std::int32_t> labels) {
  if (!options.receptive_field || nodes.empty()) return std::nullopt;
  masks::Subgraph subgraph = masks::receptive_subgraph(mask, nodes, options.model.layers);
  if (!worth_running_on(subgraph, mask)) return std::nullopt;
  return Field(std::move(subgraph), input, labels, nodes);
}

// What training steps confined to the training nodes' field run on: that field and a model of
// its own, whose buffers are sized for it (so neither it nor the evaluation's model reallocates
// from step to step). Its parameters are only a copy of the trained model's, refreshed before
// every step; it starts from a throwaway random initialisation, not from the trainer's stream.
struct TrainingField {
  TrainingField(Field field_in, const TrainOptions& options)
      : field(std::move(field_in)), model(make_model(options, initialisation)) {}

  Field field;
  Rng initialisation{0};
  nn::Model model;
};

// `fitted_nodes` of the whole graph whose part `data` is: every part's own, gathered. Collective.
std::vector<std::uint64_t> every_part_fitted(Communicator& comm, const Dataset& data) {
  std::vector<std::uint64_t> mine = fitted_nodes(data);  // a part's halo nodes are in no split
  const auto count = static_cast<std::int64_t>(mine.size());
  const std::vector<std::int64_t> counts = all_gather<std::int64_t>(comm, std::span(&count, 1));
  mine.resize(static_cast<std::size_t>(*std::max_element(counts.begin(), counts.end())));
  const std::vector<std::uint64_t> all = all_gather<std::uint64_t>(comm, mine);
  std::vector<std::uint64_t> fitted;
  for (std::size_t q = 0; q < counts.size(); ++q) {
    const auto first = all.begin() + static_cast<std::ptrdiff_t>(q * mine.size());
    fitted.insert(fitted.end(), first, first + counts[q]);
  }
  std::sort(fitted.begin(), fitted.end());
  fitted.erase(std::unique(fitted.begin(), fitted.end()), fitted.end());
  return fitted;
}

}  // namespace

void check_model_size(const TrainOptions& options, const Dataset& dataset) {
  dataset.require_features();
  transforms::check_positional_encoding(options.positional);
  const nn::ModelOptions& model = options.model;
  if (model.layers > nn::kMaxLayers) {
    throw InvalidArgument("train: layers is " + std::to_string(model.layers) +
                          ", expected at most " + std::to_string(nn::kMaxLayers));
  }
  // In double: the products of hostile widths overflow any integer type.
  const double features = static_cast<double>(dataset.features.cols() + options.positional.dims);
  const auto number = [](double value) {
    std::ostringstream text;
    text << std::setprecision(3) << value;
    return text.str();
  };
  double weights = 0.0;
  double widest = 0.0;  // the widest layer output
  std::string shape;
  if (options.spec) {
    nn::ModelSpec spec = *options.spec;
    spec.in_features = dataset.features.cols() + options.positional.dims;
    spec.classes = dataset.num_classes();
    const nn::SpecSize size = nn::spec_size(spec);
    weights = size.weights;
    widest = size.widest;
    shape = " (a spec of " + std::to_string(options.spec->modules.size()) + " modules on " +
            number(features) + " features)";
  } else {
    const double hidden = static_cast<double>(model.heads) * static_cast<double>(model.hidden);
    const double output =
        static_cast<double>(model.output_heads) * static_cast<double>(dataset.num_classes());
    const double layers = static_cast<double>(std::max<std::int64_t>(model.layers, 1));
    weights = layers == 1.0
                  ? features * output
                  : features * hidden + (layers - 2.0) * hidden * hidden + hidden * output;
    widest = std::max(layers == 1.0 ? output : hidden, output);
    shape = " (" + number(features) + " features, " + std::to_string(model.layers) + " layers of " +
            std::to_string(model.heads) + " heads x " + std::to_string(model.hidden) + " hidden, " +
            std::to_string(model.output_heads) + " output heads x " +
            std::to_string(dataset.num_classes()) + " classes)";
  }
  if (weights > static_cast<double>(options.max_parameters)) {
    throw InvalidArgument("train: the model's projections hold " + number(weights) + " weights" +
                          shape + ", over the limit of " + std::to_string(options.max_parameters) +
                          " (raise it with --max-parameters)");
  }
  const double activations = static_cast<double>(dataset.graph.num_nodes()) * widest;
  if (activations > static_cast<double>(options.max_activations)) {
    throw InvalidArgument(
        "train: a layer's output over the " + std::to_string(dataset.graph.num_nodes()) +
        " nodes holds " + number(activations) + " values" + shape + ", over the limit of " +
        std::to_string(options.max_activations) + " (raise it with --max-activations)");
  }
}

nn::Model make_model(const TrainOptions& options, Rng& rng) {
  nn::Model model = options.spec ? nn::Model(*options.spec, rng) : nn::Model(options.model, rng);
  if (options.task == Task::kLink && options.decoder_hidden > 0) {
    static_cast<void>(nn::add_mlp_decoder(model.parameters(), model.options().classes,
                                          options.decoder_hidden, rng));
  }
  return model;
}

RowMatrix<float> mask_edge_features(const nn::Model& model, const Dataset& data,
                                    const Graph& mask) {
  const std::int64_t width = model.edge_feature_width();
  if (width == 0) return {};
  const RowMatrix<float>& features = data.edge_features;
  if (features.cols() != width || features.rows() != data.graph.num_edges()) {
    throw InvalidArgument(
        "the model's attention layers read " + std::to_string(width) +
        " features per edge (edge_dim), but " + data.name + " has " +
        (features.size() == 0 ? std::string("none")
                              : std::to_string(features.cols()) + " per edge") +
        ": give them with --edge-features beside the edge list (FileSources::edge_features)");
  }
  return masks::edge_features(data.graph, features, mask);
}

RowMatrix<float> logits_at(nn::Model& model, const Graph& mask, const FeatureMatrix& input,
                           std::span<const NodeId> nodes) {
  if (input.rows() != mask.num_nodes()) {
    throw InvalidArgument("logits_at: input has " + std::to_string(input.rows()) +
                          " rows, the mask has " + std::to_string(mask.num_nodes()) + " nodes");
  }
  RowMatrix<float> logits(static_cast<Eigen::Index>(nodes.size()), model.options().classes);
  if (nodes.empty()) return logits;
  Rng unused(0);  // evaluation draws nothing
  // Edge features are set on the whole mask's entries: a model that reads them runs on it.
  masks::Subgraph subgraph = model.edge_feature_width() > 0
                                 ? masks::Subgraph{}
                                 : masks::receptive_subgraph(mask, nodes, model.options().layers);
  const auto row_of = [&](Eigen::Index r) { return nodes[static_cast<std::size_t>(r)]; };
  if (model.edge_feature_width() > 0 || !worth_running_on(subgraph, mask)) {
    const RowMatrix<float>& all = model.forward(mask, input.view(), nn::Mode::kEval, unused);
    for (Eigen::Index r = 0; r < logits.rows(); ++r) logits.row(r) = all.row(row_of(r));
    return logits;
  }
  const Field field(std::move(subgraph), input, {}, nodes);
  const RowMatrix<float>& field_logits =
      model.forward(field.subgraph.masks, field.input.view(), nn::Mode::kEval, unused);
  for (Eigen::Index r = 0; r < logits.rows(); ++r) {
    logits.row(r) = field_logits.row(field.nodes[static_cast<std::size_t>(r)]);
  }
  return logits;
}

struct Trainer::Impl {
  Impl(const Dataset& data, const TrainOptions& train_options,
       std::unique_ptr<HaloExchange> exchange, Communicator* group)
      : dataset(&data),
        comm(group),
        halo(std::move(exchange)),
        options(train_options),
        rng(train_options.seed),
        model(make_model(with_widths(data, train_options), rng)),
        optimizer(model.parameters().size(), train_options.optimizer),
        train_nodes(data.nodes_in(SplitPart::kTrain)),
        val_nodes(data.nodes_in(SplitPart::kVal)),
        test_nodes(data.nodes_in(SplitPart::kTest)) {
    options.model = model.options();  // with the dataset's feature width and classes
    if (options.spec) options.spec = model.spec();
    if (options.task == Task::kLink) {
      throw InvalidArgument(
          "train: the run is of a link task; train it with LinkTrainer (maskgat train --task "
          "link)");
    }
    if (options.task != Task::kNode || model.graph_level()) {
      throw InvalidArgument(
          "train: the model ends in a readout (one output per graph), a graph task; train it on "
          "a collection of graphs (GraphTrainer, maskgat train --task graph)");
    }
    if (!model.buffers().entries().empty()) {
      if (options.batch_size != 0 || comm != nullptr) {
        throw InvalidArgument(
            "train: a model with batch normalisation trains on the whole graph, not on "
            "mini-batches or parts of it");
      }
      options.receptive_field = false;  // its statistics are over every node
    }
    if (model.edge_feature_width() > 0) {
      if (options.batch_size != 0 || comm != nullptr) {
        throw InvalidArgument(
            "train: a model with edge features trains on the whole graph, not on mini-batches "
            "or parts of it");
      }
      options.receptive_field = false;  // its edge features are on the whole mask's entries
      edge_features = mask_edge_features(model, data, whole_mask());
      model.set_edge_features(&edge_features);
    }
    train_count = count(train_nodes);
    val_count = count(val_nodes);
    test_count = count(test_nodes);
    if (comm != nullptr) {
      if (options.batch_size != 0 || options.positional.kind != transforms::EncodingKind::kNone) {
        throw InvalidArgument(
            "train: mini-batches and positional encodings do not run on a partition; train on "
            "the whole graph for them");
      }
      if (!model.mask_self_loops()) {
        throw InvalidArgument(
            "train: attention layers without self-loops do not run on a partition (its parts "
            "number their attention entries with every self-loop); train on the whole graph");
      }
      model.set_halo(halo.get());
      fitted = every_part_fitted(*comm, data);
      // Each layer forms the part's own rows (the halo's are their owners' to form); with
      // `receptive_field`, only those the training (validation) nodes of every part need,
      // bitwise as at all of them (a part takes the whole graph's steps, never a field's).
      const auto rows_for = [&](std::span<const NodeId> nodes) {
        if (options.receptive_field) {
          return halo->receptive_rows(whole_mask(), nodes, options.model.layers);
        }
        const auto own = halo->own_rows();
        return std::vector<std::vector<std::uint8_t>>(
            static_cast<std::size_t>(options.model.layers),
            std::vector<std::uint8_t>(own.begin(), own.end()));
      };
      train_rows = rows_for(train_nodes);
      val_rows = rows_for(val_nodes);
      if (options.receptive_field) {
        // On fields small enough on every part: the training steps (and the validation passes)
        // on each part's field of those rows, their halo rows exchanged by the field's own plan.
        if (auto field = part_field(train_rows, train_nodes)) {
          training = std::make_unique<TrainingField>(std::move(field->first), options);
          training_halo = std::move(field->second);
          training->model.set_halo(training_halo.get());
          // As in one process: validation on its field only when the trained model's buffers
          // are free for it between epochs.
          if (auto val = part_field(val_rows, val_nodes)) {
            val_field = std::move(val->first);
            val_halo = std::move(val->second);
          }
        }
      }
    }
    if (options.positional.kind != transforms::EncodingKind::kNone) {
      input = model_input(data, options);
      if (flips_signs(options)) {
        signs.assign(static_cast<std::size_t>(options.positional.dims), 1.0F);
        ratios.resize(signs.size());
        step_signs = RowMatrix<float>(1, options.positional.dims);
      }
    }
    if (options.batch_size > 0) {
      // Evaluation then runs layer by layer (`layerwise_logits`): the whole graph's mask and
      // activations are never formed unless attention is asked for.
      sampler.emplace(data.graph, batch_fanouts(options), options.seed);
    } else if (comm != nullptr) {
      // the part's rows, above
    } else if (auto field = node_field(options, whole_mask(), train_nodes,
                                       features(nn::Mode::kEval), data.labels)) {
      training = std::make_unique<TrainingField>(std::move(*field), options);
      // Validation then runs the evaluation's model on the validation nodes' field, if small,
      // which nothing else runs between epochs, so its buffers keep their size.
      val_field =
          node_field(options, whole_mask(), val_nodes, features(nn::Mode::kEval), data.labels);
    } else if (options.receptive_field) {
      if (!train_nodes.empty()) {
        train_rows = masks::receptive_rows(whole_mask(), train_nodes, options.model.layers);
      }
      if (!val_nodes.empty()) {
        val_rows = masks::receptive_rows(whole_mask(), val_nodes, options.model.layers);
      }
    }
    if (flips_signs(options) && !training) train_input = input;
    detail::check_loop_options(options);
    if (train_count == 0) throw InvalidArgument("train: the split has no training nodes");
    const auto values = model.parameters().values();
    state.best_values.assign(values.begin(), values.end());
    if (options.patience > 0 && val_count == 0) {
      throw InvalidArgument(
          "train: the split has no validation nodes, which early stopping needs (use patience 0)");
    }
    if (options.metric == Metric::kRocAuc) {
      if (comm != nullptr) {
        throw InvalidArgument(
            "train: ROC AUC is not computed on a partition; train on the "
            "whole graph for it");
      }
      if (data.num_classes() != 2) {
        throw InvalidArgument("train: ROC AUC is for two-class tasks, " + data.name + " has " +
                              std::to_string(data.num_classes()) + " classes");
      }
      if (!val_nodes.empty()) require_both_classes(data.labels, val_nodes, "the validation nodes");
      if (!test_nodes.empty()) require_both_classes(data.labels, test_nodes, "the test nodes");
    }
  }

  // On a partition: the field of the part's `rows` (`masks::rows_subgraph`) at `nodes`, with its
  // exchange, when every part's is worth running on (the parts agree, as the exchanges are
  // collective). Collective.
  std::optional<std::pair<Field, std::unique_ptr<HaloExchange>>> part_field(
      std::span<const std::vector<std::uint8_t>> rows, std::span<const NodeId> nodes) {
    masks::Subgraph subgraph = masks::rows_subgraph(whole_mask(), rows);
    const std::uint8_t worth = worth_running_on(subgraph, whole_mask()) ? 1 : 0;
    const std::vector<std::uint8_t> every = all_gather<std::uint8_t>(*comm, std::span(&worth, 1));
    if (std::find(every.begin(), every.end(), 0) != every.end()) return std::nullopt;
    std::unique_ptr<HaloExchange> exchange = halo->field(whole_mask(), rows, subgraph.nodes);
    return std::pair(Field(std::move(subgraph), features(nn::Mode::kEval), dataset->labels, nodes),
                     std::move(exchange));
  }

  // The number of `nodes`, over every part on a partition.
  std::int64_t count(std::span<const NodeId> nodes) const {
    std::int64_t total = static_cast<std::int64_t>(nodes.size());
    if (comm != nullptr) sum_in_rank_order<std::int64_t>(*comm, std::span(&total, 1));
    return total;
  }

  // The mean loss and the confusion matrix of `logits` at `nodes` and, with `grad`, dL/dlogits
  // of that mean loss; on a partition over every part's nodes, `total` of them.
  std::pair<double, ConfusionMatrix> score(const RowMatrix<float>& logits,
                                           std::span<const std::int32_t> labels,
                                           std::span<const NodeId> nodes, std::int64_t total,
                                           RowMatrix<float>* grad) {
    ConfusionMatrix confusion(dataset->num_classes(), labels, predict_classes(logits), nodes);
    if (comm == nullptr) return {nn::nll_loss(logits, labels, nodes, grad), std::move(confusion)};
    double loss = 0.0;
    if (!nodes.empty()) {
      loss = nn::nll_loss(logits, labels, nodes, grad, total);
    } else if (grad != nullptr) {
      grad->setZero(logits.rows(), logits.cols());
    }
    sum_in_rank_order<double>(*comm, std::span(&loss, 1));
    confusion.sum_over(*comm);
    return {loss, std::move(confusion)};
  }

  // The model's input on the whole graph in evaluation (the stored encoding) and in training
  // (with this step's signs once `flip_for_step` has run).
  const FeatureMatrix& features(nn::Mode mode) const {
    if (options.positional.kind == transforms::EncodingKind::kNone) return dataset->features;
    return mode == nn::Mode::kTrain && flips_signs(options) ? train_input : input;
  }

  // What a training step runs on: the receptive field's masks (one per layer), input, labels,
  // training nodes and model, or the whole graph's (one mask for every layer).
  struct Step {
    const Graph& mask;                   // the first layer's
    std::span<const Graph> layer_masks;  // empty: `mask` for every layer
    InputRef<float> input;
    std::span<const std::int32_t> labels;
    std::span<const NodeId> train_nodes;
    nn::Model& model;
    std::span<const std::vector<std::uint8_t>> rows;  // on the whole graph: the rows formed

    const RowMatrix<float>& forward(Rng& rng) const {
      if (!layer_masks.empty()) return model.forward(layer_masks, input, nn::Mode::kTrain, rng);
      if (!rows.empty()) return model.forward(mask, rows, input, nn::Mode::kTrain, rng);
      return model.forward(mask, input, nn::Mode::kTrain, rng);
    }
    void backward(const RowMatrix<float>& grad_logits) const {
      if (layer_masks.empty()) {
        model.backward(mask, input, grad_logits);
      } else {
        model.backward(layer_masks, input, grad_logits);
      }
    }
  };

  Step step() {
    if (training) {
      const Field& field = training->field;
      return {field.subgraph.masks.front(),
              field.subgraph.masks,
              field.input.view(),
              field.labels,
              field.nodes,
              training->model,
              {}};
    }
    const InputRef<float> features_in = features(nn::Mode::kTrain).view();
    return {whole_mask(), {}, features_in, dataset->labels, train_nodes, model, train_rows};
  }

  // Gives the training input's encoding columns the signs of `epoch`'s step, drawn from the seed
  // and the epoch (so a resumed run draws the same ones), by scaling each column by the ratio of
  // its new sign to its current one.
  void flip_for_step(std::int64_t epoch) {
    if (!flips_signs(options)) return;
    step_signs.setOnes();
    transforms::flip_signs(step_signs, options.seed, static_cast<std::uint64_t>(epoch));
    for (std::size_t c = 0; c < signs.size(); ++c) {
      const float next = step_signs(0, static_cast<std::int64_t>(c));
      ratios[c] = next * signs[c];
      signs[c] = next;
    }
    (training ? training->field.input : train_input)
        .scale_columns(dataset->features.cols(), ratios);
  }

  using Update = detail::EpochTraining;

  // One Adam step on `step`: forward, loss over its training nodes, backward, and the update of
  // the trained model's parameters (copied into the step's model first when it has its own).
  // `where` names the step in errors, e.g. "epoch 3".
  Update optimize(const Step& step, const std::string& where) {
    auto& step_parameters = step.model.parameters();
    const auto values = model.parameters().values();
    if (&step.model != &model) {
      std::copy(values.begin(), values.end(), step_parameters.values().begin());
    }
    step_parameters.zero_grad();
    const RowMatrix<float>& logits = step.forward(rng);
    Update update;
    const auto [loss, confusion] =
        score(logits, step.labels, step.train_nodes, train_count, &grad_logits);
    update.loss = loss;
    if (!std::isfinite(update.loss)) {
      throw Error("train: the training loss is " + std::to_string(update.loss) + " at " + where +
                  "; lower the learning rate or check the features");
    }
    update.accuracy = confusion.accuracy();
    step.backward(grad_logits);
    const auto grads = step_parameters.grads();
    if (comm != nullptr) sum_in_rank_order(*comm, grads);
    if (!std::all_of(grads.begin(), grads.end(), [](float g) { return std::isfinite(g); })) {
      throw Error("train: a gradient is not finite at " + where +
                  "; lower the learning rate or check the features");
    }
    optimizer.step(values, grads);
    update.input_rows = step.input.rows();
    return update;
  }

  Update optimize(const Step& step, std::int64_t epoch) {
    return optimize(step, "epoch " + std::to_string(epoch));
  }

  // One epoch of mini-batches: the training nodes in `shuffled` order, `batch_size` at a time,
  // each batch sampled (the next one in a task of its own while this one trains) and stepped on.
  // The epoch's loss and accuracy are the batches' weighted by their sizes.
  Update train_batches(std::int64_t epoch) {
    const std::vector<NodeId> order =
        detail::shuffled(std::span<const NodeId>(train_nodes), options.seed, epoch);
    const auto size = static_cast<std::size_t>(options.batch_size);
    const std::size_t batches = (order.size() + size - 1) / size;
    const auto outputs = [&](std::size_t b) {
      return std::span<const NodeId>(order).subspan(b * size,
                                                    std::min(size, order.size() - b * size));
    };
    const FeatureMatrix& all_input = features(nn::Mode::kTrain);
    MiniBatch next;
    maskgat::detail::BackgroundTask sampling;
    const auto sample = [&](std::size_t b) {
      sampling.run(
          [&, b] { next = sampler->sample(outputs(b), static_cast<std::uint64_t>(epoch)); });
    };
    sample(0);
    Update total;
    std::vector<std::int32_t> labels;
    for (std::size_t b = 0; b < batches; ++b) {
      sampling.wait();
      const MiniBatch batch = std::move(next);
      if (b + 1 < batches) sample(b + 1);
      const FeatureMatrix batch_input = all_input.select_rows(batch.nodes);
      labels.resize(batch.nodes.size());
      for (std::size_t k = 0; k < labels.size(); ++k) {
        labels[k] = dataset->labels[static_cast<std::size_t>(batch.nodes[k])];
      }
      const Step step{
          batch.masks.front(), batch.masks, batch_input.view(), labels, batch.outputs, model, {}};
      const Update update =
          optimize(step, "epoch " + std::to_string(epoch) + ", batch " + std::to_string(b + 1) +
                             " of " + std::to_string(batches));
      const auto weight = static_cast<double>(batch.outputs.size());
      total.loss += update.loss * weight;
      total.accuracy += update.accuracy * weight;
      total.input_rows += update.input_rows;
    }
    total.loss /= static_cast<double>(order.size());
    total.accuracy /= static_cast<double>(order.size());
    return total;
  }

  // The mask evaluation runs on: the dataset's graph, with self-loops unless the model has an
  // attention layer without them, formed on first use.
  const Graph& whole_mask() const {
    if (!mask) mask = masks::from_graph(dataset->graph, model.mask_self_loops());
    return *mask;
  }

  // Evaluation-mode logits of every node: layer by layer with mini-batches, else a forward over
  // the whole graph.
  const RowMatrix<float>& evaluation_logits() {
    if (sampler) {
      layerwise = layerwise_logits(model, dataset->graph, features(nn::Mode::kEval));
      return layerwise;
    }
    return model.forward(whole_mask(), features(nn::Mode::kEval).view(), nn::Mode::kEval, rng);
  }

  // Evaluation-mode logits of `nodes` alone (row r is `nodes[r]`'s): layer by layer with
  // mini-batches, else on their receptive field or the whole graph (`logits_at`).
  RowMatrix<float> logits_of(std::span<const NodeId> nodes) {
    if (sampler) return layerwise_logits(model, dataset->graph, features(nn::Mode::kEval), nodes);
    if (comm != nullptr) {  // a part runs on its whole mask, collectively
      const RowMatrix<float>& all = evaluation_logits();
      RowMatrix<float> rows(static_cast<Eigen::Index>(nodes.size()), all.cols());
      for (std::size_t r = 0; r < nodes.size(); ++r)
        rows.row(static_cast<Eigen::Index>(r)) = all.row(nodes[r]);
      return rows;
    }
    return logits_at(model, whole_mask(), features(nn::Mode::kEval), nodes);
  }

  // The validation nodes' logits (evaluation mode), with the labels and positions to read them
  // by: on their field when there is one, else on the whole graph.
  struct Scores {
    const RowMatrix<float>& logits;
    std::span<const std::int32_t> labels;
    std::span<const NodeId> nodes;
  };
  Scores validation_scores() {
    if (sampler) {
      layerwise = layerwise_logits(model, dataset->graph, features(nn::Mode::kEval), val_nodes);
      if (val_labels.empty()) {
        for (std::size_t k = 0; k < val_nodes.size(); ++k) {
          val_labels.push_back(dataset->labels[static_cast<std::size_t>(val_nodes[k])]);
          val_rows_of.push_back(static_cast<NodeId>(k));
        }
      }
      return {layerwise, val_labels, val_rows_of};
    }
    if (!val_field && !val_rows.empty()) {
      return {model.forward(whole_mask(), val_rows, features(nn::Mode::kEval).view(),
                            nn::Mode::kEval, rng),
              dataset->labels, val_nodes};
    }
    if (!val_field) return {evaluation_logits(), dataset->labels, val_nodes};
    if (!val_halo) {
      return {
          model.forward(val_field->subgraph.masks, val_field->input.view(), nn::Mode::kEval, rng),
          val_field->labels, val_field->nodes};
    }
    // On a partition the model runs on the field with the field's exchange, then has the part's
    // back, also when the forward throws.
    struct PartHalo {
      nn::Model& model;
      HaloExchange* part;
      ~PartHalo() { model.set_halo(part); }
    } restore{model, halo.get()};
    model.set_halo(val_halo.get());
    return {model.forward(val_field->subgraph.masks, val_field->input.view(), nn::Mode::kEval, rng),
            val_field->labels, val_field->nodes};
  }

  const Dataset* dataset;
  Communicator* comm;                  // on a partition: the group of its parts; else null
  std::unique_ptr<HaloExchange> halo;  // on a partition
  TrainOptions options;
  TrainingState state;
  Rng rng;
  nn::Model model;
  // The model's running statistics at the best epoch (batch normalisation; empty without).
  std::vector<float> best_buffers;
  optim::Adam optimizer;
  mutable std::optional<Graph> mask;  // see whole_mask()
  RowMatrix<float> edge_features;     // on the entries of whole_mask(), when the model reads them
  std::vector<NodeId> train_nodes;
  std::vector<NodeId> val_nodes;
  std::vector<NodeId> test_nodes;
  // On a partition: the whole graph's `fitted_nodes`, for its checkpoints (collected when the
  // trainer is built, as every part does, so that a checkpoint needs no collective call).
  std::vector<std::uint64_t> fitted;
  // The training, validation and test nodes, over every part on a partition.
  std::int64_t train_count = 0;
  std::int64_t val_count = 0;
  std::int64_t test_count = 0;
  RowMatrix<float> grad_logits;
  FeatureMatrix input;        // with the positional encoding; 0 x 0 without one
  FeatureMatrix train_input;  // `input` with this step's sign flips (Laplacian encodings, no field)
  std::optional<NeighborSampler> sampler;  // with mini-batches
  // On a partition, with fields: the training and the validation fields' exchanges (declared
  // before the models that point to them).
  std::unique_ptr<HaloExchange> training_halo;
  std::unique_ptr<HaloExchange> val_halo;
  std::unique_ptr<TrainingField> training;  // when training steps run on a field
  std::optional<Field> val_field;           // the validation nodes', when validation runs on it
  // Without fields, with `receptive_field` set: the rows of the whole graph that the training and
  // the validation nodes' logits need (`masks::receptive_rows`), which the steps and the
  // validation passes form instead of every row.
  std::vector<std::vector<std::uint8_t>> train_rows;
  std::vector<std::vector<std::uint8_t>> val_rows;
  // With mini-batches: the last layer-wise logits, and the validation nodes' labels and rows in
  // its validation passes.
  RowMatrix<float> layerwise;
  std::vector<std::int32_t> val_labels;
  std::vector<NodeId> val_rows_of;
  std::vector<float> signs;   // the current sign of each encoding column in `train_input`
  std::vector<float> ratios;  // next sign over current sign, per column
  RowMatrix<float> step_signs;
};

Trainer::Trainer(const Dataset& dataset, const TrainOptions& options)
    : impl_(std::make_unique<Impl>(dataset, options, nullptr, nullptr)) {}
Trainer::Trainer(const GraphPart& part, Communicator& comm, const TrainOptions& options)
    : Trainer(std::make_unique<HaloExchange>(part, comm), comm, options) {}
Trainer::Trainer(std::unique_ptr<HaloExchange> halo, Communicator& comm,
                 const TrainOptions& options) {
  const Dataset& data = halo->data();
  impl_ = std::make_unique<Impl>(data, options, std::move(halo), &comm);
}
Trainer::~Trainer() = default;
Trainer::Trainer(Trainer&&) noexcept = default;
Trainer& Trainer::operator=(Trainer&&) noexcept = default;

FitResult Trainer::fit(const std::function<void(const EpochStats&)>& on_epoch) {
  // Node classification behind the one loop: an epoch is a full-batch step (on the whole graph,
  // a field or a part) or the epoch's mini-batches; validation scores the validation nodes.
  class NodeTask final : public detail::FitTask {
   public:
    explicit NodeTask(Impl& impl) : s_(impl) {}

    detail::EpochTraining train_epoch(std::int64_t epoch) override {
      s_.flip_for_step(epoch);
      return s_.sampler ? s_.train_batches(epoch) : s_.optimize(s_.step(), epoch);
    }

    std::optional<detail::Validation> validate() override {
      if (s_.val_count == 0) return std::nullopt;
      const Impl::Scores val = s_.validation_scores();
      const auto [loss, confusion] =
          s_.score(val.logits, val.labels, val.nodes, s_.val_count, nullptr);
      detail::Validation result{loss, confusion.accuracy(), confusion.accuracy()};
      if (s_.options.metric == Metric::kRocAuc) {
        result.score = roc_auc(val.logits, val.labels, val.nodes);
      }
      return result;
    }

   private:
    Impl& s_;
  };
  Impl& s = *impl_;
  NodeTask task(s);
  FitResult result =
      detail::run_epochs(task, s.options, s.model, s.state, s.best_buffers, on_epoch);
  result.val_nodes = s.val_count;
  result.test_nodes = s.test_count;
  if (s.test_count > 0) {
    const SplitMetrics test = evaluate(SplitPart::kTest);
    result.test_accuracy = test.accuracy;
    result.test_score = test.roc_auc.value_or(test.accuracy);
  }
  return result;
}

namespace {

// The options a resumed run trains with: the checkpoint's, with a new epoch limit.
TrainOptions resumed(const Checkpoint& checkpoint, const Dataset& dataset, std::int64_t epochs) {
  check_input_width(checkpoint, dataset);  // before the encoding is computed
  TrainOptions options = checkpoint.options;
  options.epochs = epochs;
  return options;
}

}  // namespace

Trainer::Trainer(const Dataset& dataset, const Checkpoint& checkpoint, std::int64_t epochs)
    : Trainer(dataset, resumed(checkpoint, dataset, epochs)) {
  if (checkpoint.data) {
    const std::vector<std::string> differences = data_differences(*checkpoint.data, dataset, true);
    if (!differences.empty()) {
      std::string message = "checkpoint: the dataset is not prepared as the run's was: ";
      for (std::size_t k = 0; k < differences.size(); ++k) {
        message += (k == 0 ? "" : "; ") + differences[k];
      }
      throw InvalidArgument(message);
    }
  }
  restore(checkpoint);
}

Trainer::Trainer(const GraphPart& part, Communicator& comm, const Checkpoint& checkpoint,
                 std::int64_t epochs)
    : Trainer(part, comm, resumed(checkpoint, part.data, epochs)) {
  if (checkpoint.data && (checkpoint.data->nodes != part.global_nodes ||
                          checkpoint.data->nodes_hash != part.whole.nodes ||
                          checkpoint.data->split_hash != part.whole.split)) {
    throw InvalidArgument(
        "checkpoint: the partition is not of the data the run was trained on (its " +
        std::to_string(part.global_nodes) +
        " nodes, their names, labels or split differ from "
        "the model's " +
        std::to_string(checkpoint.data->nodes) + ")");
  }
  restore(checkpoint);
}

void Trainer::restore(const Checkpoint& checkpoint) {
  Impl& s = *impl_;
  if (checkpoint.class_names != s.dataset->class_names) {
    throw InvalidArgument(
        "checkpoint: the model was trained on " + std::to_string(checkpoint.class_names.size()) +
        " classes that differ from the dataset's " + std::to_string(s.dataset->class_names.size()));
  }
  detail::restore_run(checkpoint, s.model, s.optimizer, s.state, s.rng);
}

Checkpoint Trainer::checkpoint() const {
  const Impl& s = *impl_;
  Checkpoint checkpoint = detail::capture_run(s.options, s.dataset->name, s.dataset->class_names,
                                              s.model, s.optimizer, s.state, s.rng);
  if (s.halo) {
    // The whole graph's record, as a run on it saves: the same on any number of parts.
    const GraphPart& part = s.halo->part();
    checkpoint.data = DataRecord{s.dataset->preparation, part.global_nodes, part.whole.nodes,
                                 part.whole.split, s.fitted};
  } else {
    checkpoint.data = record_data(*s.dataset);
  }
  return checkpoint;
}

SplitMetrics Trainer::evaluate(SplitPart part) {
  Impl& s = *impl_;
  const std::vector<NodeId> nodes = s.dataset->nodes_in(part);
  const std::int64_t total = s.count(nodes);
  if (total == 0) {
    throw InvalidArgument(std::string("evaluate: no node is in the ") + split_part_name(part) +
                          " split");
  }
  // The logits of the whole graph, or with mini-batches the part's alone (row r for nodes[r]),
  // computed layer by layer.
  std::vector<std::int32_t> part_labels;
  std::vector<NodeId> rows;
  if (s.sampler) {
    for (std::size_t r = 0; r < nodes.size(); ++r) {
      part_labels.push_back(s.dataset->labels[static_cast<std::size_t>(nodes[r])]);
      rows.push_back(static_cast<NodeId>(r));
    }
    s.layerwise = s.logits_of(nodes);
  }
  const RowMatrix<float>& logits = s.sampler ? s.layerwise : s.evaluation_logits();
  const std::span<const std::int32_t> labels =
      s.sampler ? std::span<const std::int32_t>(part_labels) : s.dataset->labels;
  const std::span<const NodeId> at = s.sampler ? std::span<const NodeId>(rows) : nodes;
  SplitMetrics metrics;
  std::tie(metrics.loss, metrics.confusion) = s.score(logits, labels, at, total, nullptr);
  metrics.nodes = metrics.confusion.total();
  metrics.accuracy = metrics.confusion.accuracy();
  metrics.macro_f1 = metrics.confusion.macro_f1();
  if (s.options.metric == Metric::kRocAuc) metrics.roc_auc = roc_auc(logits, labels, at);
  return metrics;
}

const RowMatrix<float>& Trainer::logits() { return impl_->evaluation_logits(); }

RowMatrix<float> Trainer::predict_probabilities() {
  RowMatrix<float> probabilities;
  nn::softmax(logits(), probabilities);
  return probabilities;
}

RowMatrix<float> Trainer::predict_probabilities(std::span<const NodeId> nodes) {
  RowMatrix<float> probabilities;
  nn::softmax(impl_->logits_of(nodes), probabilities);
  return probabilities;
}

std::vector<std::int32_t> Trainer::predicted_classes() {
  return train::predict_classes(impl_->evaluation_logits());
}

std::vector<nn::AttentionWeights<float>> Trainer::attention() {
  Impl& s = *impl_;
  const Graph& mask = s.whole_mask();
  (void)s.model.forward(mask, s.features(nn::Mode::kEval).view(), nn::Mode::kEval, s.rng);
  return s.model.attention(mask);
}

nn::Model& Trainer::model() noexcept { return impl_->model; }
const TrainOptions& Trainer::options() const noexcept { return impl_->options; }
const Graph& Trainer::mask() const { return impl_->whole_mask(); }
const Graph& Trainer::step_mask() const {
  return impl_->training ? impl_->training->field.subgraph.masks.front() : impl_->whole_mask();
}

}  // namespace maskgat::train
