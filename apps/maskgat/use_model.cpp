#include "use_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graph_task.hpp"
#include "link_task.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/graph/masks.hpp"
#include "maskgat/io/output_file.hpp"
#include "maskgat/nn/loss.hpp"
#include "maskgat/train/checkpoint.hpp"
#include "maskgat/train/metrics.hpp"
#include "maskgat/train/predictor.hpp"
#include "maskgat/train/trainer.hpp"
#include "outputs.hpp"
#include "plot.hpp"
#include "ranks.hpp"

namespace maskgat::app {
namespace {

// The data a saved model is applied to, prepared as its training data was, and the model on it
// (`train::Predictor`). `with_split`: the data's split is used (evaluate), so it must be the
// model's on its own nodes.
class Applied {
 public:
  Applied(const std::filesystem::path& path, train::Checkpoint checkpoint, DataOptions& data,
          const ModelLimits& limits, std::optional<std::int64_t> chunk_rows, const RunOptions& run,
          bool with_split)
      : dataset(load_data_for_model(data, node_model(path, checkpoint).data, with_split,
                                    path.string(), /*offers_as_given=*/true, run)),
        predictor(predict_with(path, std::move(checkpoint), dataset, limits, chunk_rows)) {}

  Dataset dataset;
  train::Predictor predictor;

 private:
  // `checkpoint`, once it is known to classify nodes.
  static const train::Checkpoint& node_model(const std::filesystem::path& path,
                                             const train::Checkpoint& checkpoint) {
    if (checkpoint.options.task == train::Task::kGraph) {
      throw InvalidArgument("model " + path.string() +
                            " classifies graphs (train --task graph): give it a collection of "
                            "graphs with --tu FILE or --dataset tu:NAME");
    }
    if (checkpoint.options.task == train::Task::kLink) {
      throw InvalidArgument("model " + path.string() +
                            " predicts links (train --task link), it classifies nothing");
    }
    return checkpoint;
  }

  // The model on `dataset`, once it is known to fit the data and the limits.
  static train::Predictor predict_with(const std::filesystem::path& path,
                                       train::Checkpoint checkpoint, const Dataset& dataset,
                                       const ModelLimits& limits,
                                       std::optional<std::int64_t> chunk_rows) {
    try {
      train::check_input_width(checkpoint, dataset);
    } catch (const InvalidArgument& error) {
      throw Error("model " + path.string() + ": " + error.what());  // the data does not fit
    }
    // Its parameters are in memory already; its activations on this data must fit the limit.
    train::TrainOptions sized = checkpoint.options;
    sized.max_parameters =
        std::max(limits.max_parameters, static_cast<std::int64_t>(checkpoint.values.size()));
    sized.max_activations = limits.max_activations;
    train::check_model_size(sized, dataset);
    try {
      return train::Predictor(std::move(checkpoint), dataset, chunk_rows);
    } catch (const InvalidArgument& error) {
      throw Error(path.string() + ": " + error.what());  // a bad file, not bad usage
    }
  }
};

// The ids of the nodes named `names`, in that order; `option` names the flag they came from.
std::vector<NodeId> node_ids(const std::string& option, const std::vector<std::string>& names,
                             const std::vector<std::string>& node_names) {
  std::unordered_map<std::string_view, NodeId> id_of;
  for (std::size_t i = 0; i < node_names.size(); ++i)
    id_of.emplace(node_names[i], static_cast<NodeId>(i));
  std::vector<NodeId> ids;
  for (const std::string& name : names) {
    const auto found = id_of.find(name);
    if (found == id_of.end()) {
      throw InvalidArgument(option + ": no node '" + name + "' in the data");
    }
    ids.push_back(found->second);
  }
  return ids;
}

// Registers `--batch-size`, the chunk of layer-wise inference.
void add_layerwise_option(CLI::App& command, std::optional<std::int64_t>& chunk_rows) {
  command
      .add_option("--batch-size", chunk_rows,
                  "Run the model layer by layer over chunks of this many nodes, never forming the "
                  "whole graph's activations (the default for models trained in mini-batches, "
                  "in chunks of 16384)")
      ->check(integer_at_least(1));
}

}  // namespace

void add_evaluate_command(CLI::App& app, EvaluateOptions& options) {
  auto* command = app.add_subcommand(
      "evaluate", "Accuracy, macro-F1 and the test confusion matrix of a saved model");
  command->add_option("--load", options.model, "Model file written by train --save")->required();
  auto* partitions = command->add_option(
      "--partitions", options.partitions,
      "Evaluate across processes under mpirun -np P: rank r on DIR/part-r of the P parts "
      "maskgat partition wrote");
  add_data_options(*command, options.data, partitions);
  add_data_as_given(*command, options.data);
  command->add_option("--metrics-json", options.metrics_json,
                      "Also write the metrics to this file, as --json prints them");
  command->add_option("--split-out", options.split_out,
                      "Write the split used to this file, as --split reads it");
  command
      ->add_option("--metric", options.metric,
                   "Also report this score: accuracy, or roc-auc for two-class tasks (default: "
                   "the metric the model was trained with)")
      ->check(CLI::IsMember({"accuracy", "roc-auc"}));
  command->add_option("--edge-split", options.edge_split,
                      "A link model: score it on the edge split in this file (train --split-out "
                      "wrote it; default: the split its seed draws with the shares below)");
  command
      ->add_option("--val-fraction", options.val_fraction,
                   "A link model: the validation share it trained with (default 0.05)")
      ->check(number_above(0.0, true, 1.0));
  command
      ->add_option("--test-fraction", options.test_fraction,
                   "A link model: the test share it trained with (default 0.10)")
      ->check(number_above(0.0, true, 1.0));
  add_layerwise_option(*command, options.batch_size);
  add_model_limits(*command, options.limits, false);
  add_run_options(*command, options.run, true);
  command->footer(
      "The data is prepared as the model's was (direction, feature normalisation, split); data\n"
      "prepared otherwise is refused, naming the difference, unless --data-as-given.\n\n"
      "Examples:\n"
      "  maskgat evaluate --load cora.ckpt --dataset cora\n"
      "  maskgat evaluate --load cora.ckpt --dataset cora --json\n"
      "  maskgat evaluate --load cora-link.ckpt --dataset cora   # a link model\n"
      "  mpirun -np 4 maskgat evaluate --load cora.ckpt --partitions cora.parts\n"
      "  maskgat evaluate --load own.ckpt --graph g.txt --features f.csv --labels l.txt "
      "--split s.txt");
}

void add_predict_command(CLI::App& app, PredictOptions& options) {
  auto* command = app.add_subcommand(
      "predict", "Class probabilities of every node (and attention weights) from a saved model");
  command->add_option("--load", options.model, "Model file written by train --save")->required();
  auto* partitions = command->add_option(
      "--partitions", options.partitions,
      "Predict across processes under mpirun -np P: rank r on DIR/part-r of the P parts maskgat "
      "partition wrote; rank 0 writes every node's row");
  add_data_options(*command, options.data, partitions);
  add_data_as_given(*command, options.data);
  command->add_option("--output", options.output,
                      "CSV: node,predicted_class,p_<class>... one row per node (for a graph "
                      "classifier on --tu or tu:NAME, graph,... one row per graph)");
  command->add_option("--attention-out", options.attention_out,
                      "CSV: layer,src,dst,head,alpha for every edge, self-loops included");
  command
      ->add_option("--plot-attention", options.plot_attention,
                   "NODE FILE: draw NODE's neighbours with edge widths by their first-layer "
                   "attention (mean over heads) into FILE (.svg or .png, gnuplot) and write "
                   "the CSV beside it")
      ->expected(2);
  command
      ->add_option("--nodes", options.nodes,
                   "NAME[,NAME...]: score these nodes alone, in this order, on their receptive "
                   "field (a few nodes of a large graph cost their neighbourhoods, not the "
                   "graph); for a graph classifier, these graphs by their 1-based ids")
      ->delimiter(',')
      ->excludes("--attention-out")
      ->excludes("--plot-attention");
  command->add_option("--pairs", options.pairs,
                      "A link model: score the node pairs of this file (one \"source target\" "
                      "per line, nodes named as in the data); --output gets source,target,score");
  command->add_option("--recommend", options.recommend,
                      "A link model: list the --top-k nodes NODE has no edge to with the highest "
                      "scores (exact, over every node); --output gets rank,node,score");
  command->add_option("--top-k", options.top_k, "How many nodes --recommend lists")
      ->check(integer_at_least(1))
      ->capture_default_str();
  add_layerwise_option(*command, options.batch_size);
  add_model_limits(*command, options.limits, false);
  add_run_options(*command, options.run, true);
  command->callback([&options] {
    if (!options.output && !options.run.json) throw CLI::RequiredError("--output or --json");
  });
  command->footer(
      "Labels and split are optional: a model applies to any graph with its feature width. The\n"
      "data is prepared as the model's was (direction, feature normalisation) unless\n"
      "--data-as-given.\n\n"
      "Examples:\n"
      "  maskgat predict --load cora.ckpt --dataset cora --output cora_predictions.csv\n"
      "  maskgat predict --load own.ckpt --graph new.txt --features new.csv --output p.csv "
      "--attention-out a.csv\n"
      "  maskgat predict --load cora.ckpt --dataset cora --output p.csv --plot-attention 35 "
      "node35.svg\n"
      "  maskgat predict --load cora.ckpt --dataset cora --json > predictions.json\n"
      "  maskgat predict --load cora.ckpt --dataset cora --nodes 35,1033 --json\n"
      "  maskgat predict --load cora-link.ckpt --dataset cora --recommend 35 --top-k 5 --json\n"
      "  maskgat predict --load cora-link.ckpt --dataset cora --pairs pairs.txt --output s.csv\n"
      "  mpirun -np 4 maskgat predict --load cora.ckpt --partitions cora.parts --output p.csv");
}

namespace {

constexpr std::array<SplitPart, 3> kSplitParts = {SplitPart::kTrain, SplitPart::kVal,
                                                  SplitPart::kTest};

// What `evaluate` reports: each split part's metrics (none over no nodes) and the test
// confusion matrix, as text or JSON, and into --metrics-json.
// With ROC AUC (`metric`), each part also has its `roc_auc`.
}  // namespace

nlohmann::ordered_json report_confusion(const train::ConfusionMatrix& confusion,
                                        const std::vector<std::string>& class_names,
                                        const RunOptions& run) {
  nlohmann::ordered_json matrix = nlohmann::ordered_json::array();
  if (!run.json) std::cout << "test confusion (rows: true class, columns: predicted)\n";
  for (std::int32_t truth = 0; truth < confusion.classes(); ++truth) {
    nlohmann::ordered_json row = nlohmann::ordered_json::array();
    for (std::int32_t guess = 0; guess < confusion.classes(); ++guess) {
      row.push_back(confusion.count(truth, guess));
    }
    if (!run.json) {
      std::cout << "  " << class_names[static_cast<std::size_t>(truth)] << ':';
      for (const auto& count : row) std::cout << ' ' << count;
      std::cout << '\n';
    }
    matrix.push_back(row);
  }
  return matrix;
}

namespace {

void report_evaluation(const EvaluateOptions& options, const RunOptions& run,
                       const std::string& dataset, const std::vector<std::string>& class_names,
                       const std::array<std::optional<train::SplitMetrics>, 3>& metrics,
                       train::Metric metric) {
  const bool roc_auc = metric == train::Metric::kRocAuc;
  nlohmann::ordered_json splits = nlohmann::ordered_json::object();
  for (std::size_t k = 0; k < kSplitParts.size(); ++k) {
    const char* name = split_part_name(kSplitParts[k]);
    if (!metrics[k]) {  // no metric over no nodes
      if (!run.json) std::cout << name << ": nodes 0 (no metrics)\n";
      splits[name] = {
          {"nodes", 0}, {"loss", nullptr}, {"accuracy", nullptr}, {"macro_f1", nullptr}};
      if (roc_auc) splits[name]["roc_auc"] = nullptr;
      continue;
    }
    const train::SplitMetrics& m = *metrics[k];
    if (!run.json) {
      std::cout << name << ": nodes " << m.nodes << " loss " << fixed(m.loss, 4) << " accuracy "
                << fixed(m.accuracy, 4) << " macro_f1 " << fixed(m.macro_f1, 4)
                << (m.roc_auc ? " roc_auc " + fixed(*m.roc_auc, 4) : std::string()) << '\n';
    }
    splits[name] = {
        {"nodes", m.nodes}, {"loss", m.loss}, {"accuracy", m.accuracy}, {"macro_f1", m.macro_f1}};
    if (m.roc_auc) splits[name]["roc_auc"] = *m.roc_auc;
  }
  nlohmann::ordered_json matrix = nlohmann::ordered_json::array();
  if (const auto& test = metrics.back())
    matrix = report_confusion(test->confusion, class_names, run);
  const nlohmann::ordered_json out = {
      {"command", "evaluate"},   {"model", options.model.string()},      {"dataset", dataset},
      {"classes", class_names},  {"metric", train::metric_name(metric)}, {"splits", splits},
      {"test_confusion", matrix}};
  report_json(out, options.metrics_json, run);
}

// Runs `body(comm, run, part, trainer, class_names)` on each rank of an mpirun job: rank r's part
// of `partitions`, and a trainer holding the model of `model` on it (within `limits`). `output`,
// when set, is the file rank 0 writes (the option `flag`). An error on any rank ends the job.
template <typename Body>
int with_model_on_parts(const std::filesystem::path& partitions, const std::filesystem::path& model,
                        const DataOptions& data, const ModelLimits& limits, const RunOptions& given,
                        const char* flag, const std::optional<std::filesystem::path>& output,
                        Body&& body) {
  const std::unique_ptr<Communicator> comm = start_mpi(data);
  const RunOptions run = rank_output(given, *comm);
  try {
    OutputPlan outputs(run.force);
    if (comm->rank() == 0 && output) outputs.add_output(flag, *output);
    outputs.add_input("--load", model);
    outputs.check();
    const auto threads = limit_threads(run);
    const GraphPart part = open_rank_part(partitions, *comm, data);
    train::Checkpoint checkpoint = train::load_checkpoint(model, data.load.read.limits);
    // Parts report accuracy: ROC AUC is not computed on a partition.
    checkpoint.options.metric = train::Metric::kAccuracy;
    checkpoint.options.max_parameters =
        std::max(limits.max_parameters, static_cast<std::int64_t>(checkpoint.values.size()));
    checkpoint.options.max_activations = limits.max_activations;
    train::check_model_size(checkpoint.options, part.data);
    train::Trainer trainer(part, *comm, checkpoint, checkpoint.options.epochs);
    body(*comm, run, part, trainer, checkpoint.class_names);
    return 0;
  } catch (const std::exception& error) {
    fail_rank(*comm, error);
  }
}

// `evaluate --partitions DIR` under mpirun: rank r evaluates the model on DIR/part-r, the metrics
// are over every part's nodes, rank 0 alone reports and writes.
int run_evaluate_on_partitions(EvaluateOptions& options) {
  if (options.data.as_given || options.split_out || options.batch_size || options.metric) {
    throw InvalidArgument(
        "--partitions evaluates on the parts as partitioned and reports accuracy; "
        "--data-as-given, --split-out, --batch-size and --metric are not available with it");
  }
  return with_model_on_parts(
      *options.partitions, options.model, options.data, options.limits, options.run,
      "--metrics-json", options.metrics_json,
      [&](Communicator& comm, const RunOptions& run, const GraphPart& part, train::Trainer& trainer,
          const std::vector<std::string>& class_names) {
        std::array<std::optional<train::SplitMetrics>, 3> metrics;
        for (std::size_t k = 0; k < kSplitParts.size(); ++k) {
          auto nodes = static_cast<std::int64_t>(part.data.nodes_in(kSplitParts[k]).size());
          sum_in_rank_order<std::int64_t>(comm, std::span(&nodes, 1));
          if (nodes > 0) metrics[k] = trainer.evaluate(kSplitParts[k]);
        }
        if (comm.rank() == 0) {
          report_evaluation(options, run, part.data.name, class_names, metrics,
                            train::Metric::kAccuracy);
        }
      });
}

}  // namespace

void report_predictions(const PredictOptions& options, const RunOptions& run,
                        const std::string& dataset, const std::vector<std::string>& class_names,
                        const std::vector<std::string>& names, const RowMatrix<float>& logits,
                        const char* key) {
  if (options.output) {
    write_file_atomically(*options.output, train::predictions_csv(names, class_names, logits, key),
                          run.force);
    say(run,
        "wrote " + std::to_string(logits.rows()) + " predictions to " + options.output->string());
  }
  if (!run.json) return;
  RowMatrix<float> probabilities;
  nn::softmax(logits, probabilities);
  const std::vector<std::int32_t> predicted = train::predict_classes(logits);
  nlohmann::ordered_json predictions = nlohmann::ordered_json::array();
  for (std::int64_t i = 0; i < probabilities.rows(); ++i) {
    nlohmann::ordered_json row = nlohmann::ordered_json::array();
    for (std::int64_t k = 0; k < probabilities.cols(); ++k) {
      // Six decimals, as in the CSV, not the float's 17 significant digits.
      row.push_back(std::round(1e6 * double{probabilities(i, k)}) / 1e6);
    }
    predictions.push_back(
        {{key, names[static_cast<std::size_t>(i)]},
         {"class", class_names[static_cast<std::size_t>(predicted[static_cast<std::size_t>(i)])]},
         {"probabilities", row}});
  }
  const nlohmann::ordered_json out = {{"command", "predict"},
                                      {"model", options.model.string()},
                                      {"dataset", dataset},
                                      {"classes", class_names},
                                      {"predictions", predictions}};
  std::cout << json_text(out, run) << '\n';
}

namespace {

// Every rank's `mine`, on rank 0 in rank order (elsewhere nothing). Collective.
template <typename T>
std::vector<std::vector<T>> gather_at_zero(Communicator& comm, std::vector<T> mine) {
  std::vector<std::vector<T>> send(static_cast<std::size_t>(comm.size()));
  if (comm.rank() != 0) send[0] = std::move(mine);
  std::vector<std::vector<T>> received;
  exchange(comm, send, received);  // sends nothing to the rank itself
  if (comm.rank() != 0) return {};
  received[0] = std::move(mine);
  return received;
}

// `predict --partitions DIR` under mpirun: rank r computes its own nodes' logits on DIR/part-r and
// sends them, with the nodes' ids and names, to rank 0, which reports every node in the whole
// graph's order.
int run_predict_on_partitions(PredictOptions& options) {
  if (options.data.as_given || options.attention_out || !options.plot_attention.empty() ||
      !options.nodes.empty() || options.batch_size) {
    throw InvalidArgument(
        "--partitions predicts every node of the parts as partitioned; --data-as-given, "
        "--attention-out, --plot-attention, --nodes and --batch-size are not available with it");
  }
  return with_model_on_parts(
      *options.partitions, options.model, options.data, options.limits, options.run, "--output",
      options.output,
      [&](Communicator& comm, const RunOptions& run, const GraphPart& part, train::Trainer& trainer,
          const std::vector<std::string>& class_names) {
        const RowMatrix<float>& logits = trainer.logits();
        // The trainer's rows are the part's nodes (its store's, in the whole graph's order).
        std::vector<NodeId> ids;  // the own nodes' ids, their logits and names (ended by '\0')
        std::vector<float> values;
        std::vector<char> name_bytes;
        for (std::size_t r = 0; r < part.origins.size(); ++r) {
          if (!part.is_own(static_cast<NodeId>(r))) continue;
          ids.push_back(part.origins[r]);
          const auto row = logits.row(static_cast<Eigen::Index>(r));
          values.insert(values.end(), row.data(), row.data() + row.size());
          const std::string& name = part.data.node_names[r];
          name_bytes.insert(name_bytes.end(), name.begin(), name.end());
          name_bytes.push_back('\0');
        }
        const auto all_ids = gather_at_zero(comm, std::move(ids));
        const auto all_values = gather_at_zero(comm, std::move(values));
        const auto all_names = gather_at_zero(comm, std::move(name_bytes));
        if (comm.rank() != 0) return;
        const auto classes = static_cast<Eigen::Index>(class_names.size());
        RowMatrix<float> whole(part.global_nodes, classes);
        std::vector<std::string> names(static_cast<std::size_t>(part.global_nodes));
        std::vector<std::uint8_t> seen(names.size(), 0);
        for (std::size_t q = 0; q < all_ids.size(); ++q) {
          const std::string_view bytes(all_names[q].data(), all_names[q].size());
          std::size_t at = 0;
          for (std::size_t k = 0; k < all_ids[q].size(); ++k) {
            const NodeId id = all_ids[q][k];
            const std::size_t end = bytes.find('\0', at);
            if (id < 0 || id >= part.global_nodes || seen[static_cast<std::size_t>(id)] != 0 ||
                end == std::string_view::npos ||
                all_values[q].size() != all_ids[q].size() * static_cast<std::size_t>(classes)) {
              throw Error("predict: rank " + std::to_string(q) + " sent node " +
                          std::to_string(id) +
                          " outside the graph, twice or without its "
                          "name or logits; the part files are not of one partition");
            }
            seen[static_cast<std::size_t>(id)] = 1;
            whole.row(id) = Eigen::Map<const Eigen::RowVectorXf>(
                all_values[q].data() + k * static_cast<std::size_t>(classes), classes);
            names[static_cast<std::size_t>(id)] = bytes.substr(at, end - at);
            at = end + 1;
          }
        }
        if (std::find(seen.begin(), seen.end(), 0) != seen.end()) {
          throw Error("predict: the parts hold fewer than the graph's " +
                      std::to_string(part.global_nodes) + " nodes");
        }
        report_predictions(options, run, part.data.name, class_names, names, whole, "node");
      });
}

}  // namespace

int run_evaluate(EvaluateOptions& options) {
  if (options.partitions) return run_evaluate_on_partitions(options);
  if (names_collection(options.data)) return run_evaluate_graphs(options);
  const RunOptions& run = options.run;
  OutputPlan outputs(run.force);
  if (options.metrics_json) outputs.add_output("--metrics-json", *options.metrics_json);
  if (options.split_out) outputs.add_output("--split-out", *options.split_out);
  outputs.add_input("--load", options.model);
  if (options.edge_split) outputs.add_input("--edge-split", *options.edge_split);
  add_inputs(outputs, options.data);
  outputs.check();
  train::Checkpoint checkpoint =
      train::load_checkpoint(options.model, options.data.load.read.limits);
  if (checkpoint.options.task == train::Task::kLink) {
    return run_evaluate_links(options, std::move(checkpoint));
  }
  if (options.edge_split || options.val_fraction || options.test_fraction) {
    throw InvalidArgument("--edge-split, --val-fraction and --test-fraction are for link models");
  }
  const auto threads = limit_threads(run);
  Applied applied(options.model, std::move(checkpoint), options.data, options.limits,
                  options.batch_size, run, true);
  const Dataset& dataset = applied.dataset;
  if (dataset.class_names != applied.predictor.checkpoint().class_names) {
    throw Error("model " + options.model.string() + " was trained on " +
                std::to_string(applied.predictor.checkpoint().class_names.size()) +
                " classes that differ from the data's " +
                std::to_string(dataset.class_names.size()));
  }
  if (options.split_out) write_split_out(*options.split_out, dataset, run);
  const auto labels = std::span<const std::int32_t>(dataset.labels);
  const RowMatrix<float>& logits = applied.predictor.logits();
  const std::vector<std::int32_t> predicted = train::predict_classes(logits);
  const train::Metric metric = options.metric ? train::parse_metric(*options.metric)
                                              : applied.predictor.checkpoint().options.metric;
  std::array<std::optional<train::SplitMetrics>, 3> metrics;
  for (std::size_t k = 0; k < kSplitParts.size(); ++k) {
    const std::vector<NodeId> nodes = dataset.nodes_in(kSplitParts[k]);
    if (nodes.empty()) continue;
    train::ConfusionMatrix confusion(dataset.num_classes(), labels, predicted, nodes);
    if (metric == train::Metric::kRocAuc && dataset.num_classes() == 2) {
      train::require_both_classes(labels, nodes,
                                  std::string("the ") + split_part_name(kSplitParts[k]) + " nodes");
    }
    metrics[k] = train::SplitMetrics{static_cast<std::int64_t>(nodes.size()),
                                     nn::nll_loss<float>(logits, labels, nodes),
                                     confusion.accuracy(),
                                     confusion.macro_f1(),
                                     std::move(confusion),
                                     metric == train::Metric::kRocAuc
                                         ? std::optional(train::roc_auc(logits, labels, nodes))
                                         : std::nullopt};
  }
  report_evaluation(options, run, dataset.name, dataset.class_names, metrics, metric);
  return 0;
}

int run_predict(PredictOptions& options) {
  if (options.partitions) return run_predict_on_partitions(options);
  if (names_collection(options.data)) return run_predict_graphs(options);
  const RunOptions& run = options.run;
  OutputPlan outputs(run.force);
  if (options.output) outputs.add_output("--output", *options.output);
  if (options.attention_out) outputs.add_output("--attention-out", *options.attention_out);
  std::optional<std::filesystem::path> attention_plot;
  if (!options.plot_attention.empty()) {
    attention_plot = options.plot_attention[1];
    add_plot_outputs(outputs, "--plot-attention", *attention_plot);
  }
  outputs.add_input("--load", options.model);
  if (options.pairs) outputs.add_input("--pairs", *options.pairs);
  add_inputs(outputs, options.data);
  outputs.check();
  train::Checkpoint checkpoint =
      train::load_checkpoint(options.model, options.data.load.read.limits);
  if (checkpoint.options.task == train::Task::kLink) {
    return run_predict_links(options, std::move(checkpoint));
  }
  if (options.pairs || options.recommend) {
    throw InvalidArgument("--pairs and --recommend are for link models (train --task link)");
  }
  const auto threads = limit_threads(run);
  Applied applied(options.model, std::move(checkpoint), options.data, options.limits,
                  options.batch_size, run, false);
  const auto& class_names = applied.predictor.checkpoint().class_names;
  const auto& node_names = applied.dataset.node_names;
  // The scored nodes: every node, or those of --nodes alone, on their receptive field.
  std::vector<NodeId> chosen;
  RowMatrix<float> chosen_logits;
  if (!options.nodes.empty()) chosen = node_ids("--nodes", options.nodes, node_names);
  // Every argument is checked before anything is written.
  const NodeId plotted =
      attention_plot ? node_ids("--plot-attention", {options.plot_attention[0]}, node_names).front()
                     : NodeId{-1};
  if (!chosen.empty()) chosen_logits = applied.predictor.logits(chosen);
  const RowMatrix<float>& logits = chosen.empty() ? applied.predictor.logits() : chosen_logits;
  const auto node_of = [&](std::int64_t row) {
    return chosen.empty() ? static_cast<std::size_t>(row)
                          : static_cast<std::size_t>(chosen[static_cast<std::size_t>(row)]);
  };
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(logits.rows()));
  for (std::int64_t i = 0; i < logits.rows(); ++i) names.push_back(node_names[node_of(i)]);
  report_predictions(options, run, applied.dataset.name, class_names, names, logits, "node");
  std::vector<nn::AttentionWeights<float>> weights;
  if (options.attention_out || attention_plot) weights = applied.predictor.attention();
  if (options.attention_out) {
    std::ostringstream attention;
    attention << "layer,src,dst,head,alpha\n" << std::setprecision(6);
    for (std::size_t layer = 0; layer < weights.size(); ++layer) {
      const auto& w = weights[layer];
      for (std::size_t e = 0; e < w.sources.size(); ++e) {
        for (std::int64_t h = 0; h < w.alpha.cols(); ++h) {
          attention << layer + 1 << ','
                    << csv_field(node_names[static_cast<std::size_t>(w.sources[e])]) << ','
                    << csv_field(node_names[static_cast<std::size_t>(w.destinations[e])]) << ','
                    << h << ',' << w.alpha(static_cast<std::int64_t>(e), h) << '\n';
        }
      }
    }
    write_file_atomically(*options.attention_out, attention.str(), run.force);
    say(run, "wrote the attention weights to " + options.attention_out->string());
  }
  if (attention_plot) {
    const std::string& node = options.plot_attention[0];
    const nn::AttentionWeights<float>& first = weights.front();
    std::vector<std::string> neighbours;
    std::vector<double> alpha;
    const auto [begin, end] = first.in_edges(plotted);  // its row of the mask
    for (std::size_t e = begin; e < end; ++e) {
      neighbours.push_back(node_names[static_cast<std::size_t>(first.sources[e])]);
      alpha.push_back(first.alpha.row(static_cast<std::int64_t>(e)).mean());
    }
    plot_attention(node, neighbours, alpha, *attention_plot, run);
  }
  return 0;
}

}  // namespace maskgat::app
