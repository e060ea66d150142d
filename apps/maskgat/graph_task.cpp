#include "graph_task.hpp"

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/io/output_file.hpp"
#include "maskgat/nn/spec.hpp"
#include "maskgat/train/checkpoint.hpp"
#include "maskgat/train/graph_trainer.hpp"
#include "outputs.hpp"
#include "plot.hpp"

namespace maskgat::app {
namespace {

// The settings of a node task that a graph task refuses rather than ignores.
void refuse_node_options(const TrainCommandOptions& options) {
  const std::pair<bool, const char*> node_only[] = {
      {options.partitions.has_value(), "--partitions"},
      {options.runs != 1, "--runs (graph tasks run --folds)"},
      {options.same_split, "--same-split"},
      {options.positional.has_value(), "--pe"},
      {options.whole_graph, "--whole-graph"},
      {!options.fanouts.empty(), "--fanout"},
      {options.split_out.has_value(), "--split-out"},
      {options.recipe.has_value(), "--recipe (graph tasks start from their own)"}};
  for (const auto& [given, name] : node_only) {
    if (given) throw InvalidArgument(std::string(name) + " is for node tasks, not --task graph");
  }
  if (options.resume) {
    check_resume_options(options);
    if (!options.models.empty()) {
      throw InvalidArgument("--resume continues the saved run with its own model; drop --model");
    }
  } else if (options.models.empty()) {
    throw InvalidArgument(
        "--task graph needs --model: a spec whose attention layers end in a readout, e.g. "
        "docs/specs/graph-gat-sum.json");
  }
}

// One fold's outcome: the candidate kept on its validation graphs, and its scores.
struct FoldResult {
  std::int64_t fold = 0;  // 1-based
  std::string model;      // the kept candidate's spec file
  train::FitResult fit;
  std::vector<double> candidate_scores;  // each candidate's validation score, in --model order
  double train_graphs_per_second = 0.0;
};

nlohmann::ordered_json fold_json(const FoldResult& result, train::Metric metric) {
  const auto metric_or_null = [](std::int64_t graphs, double value) {
    return graphs > 0 ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
  };
  nlohmann::ordered_json out = {
      {"fold", result.fold},
      {"model", result.model},
      {"candidate_val_scores", result.candidate_scores},
      {"epochs", result.fit.epochs},
      {"best_epoch", result.fit.best_epoch},
      {"val_graphs", result.fit.val_nodes},
      {"test_graphs", result.fit.test_nodes},
      {"val_acc", metric_or_null(result.fit.val_nodes, result.fit.val_accuracy)},
      {"test_acc", metric_or_null(result.fit.test_nodes, result.fit.test_accuracy)}};
  if (metric == train::Metric::kRocAuc) {
    out["val_roc_auc"] = metric_or_null(result.fit.val_nodes, result.fit.val_score);
    out["test_roc_auc"] = metric_or_null(result.fit.test_nodes, result.fit.test_score);
  }
  out["ms_per_epoch"] = result.fit.ms_per_epoch;
  out["train_graphs_per_second"] = result.train_graphs_per_second;
  return out;
}

// The graph names of a collection in predictions: the 1-based ids of its graph indicator.
std::vector<std::string> graph_names(std::span<const std::int64_t> graphs) {
  std::vector<std::string> names;
  for (const std::int64_t g : graphs) names.push_back(std::to_string(g + 1));
  return names;
}

// The graph classifier saved in `path`, checked to be one.
train::Checkpoint load_graph_model(const std::filesystem::path& path, const DataOptions& data) {
  train::Checkpoint checkpoint = train::load_checkpoint(path, data.load.read.limits);
  if (checkpoint.options.task != train::Task::kGraph) {
    throw InvalidArgument("model " + path.string() + " is of a " +
                          train::task_name(checkpoint.options.task) +
                          " task: give it one graph (--dataset, --graph, --npz or --store), not "
                          "a collection of graphs");
  }
  return checkpoint;
}

// The graph classifier of --load and the collection it is applied to, once the outputs
// registered in `outputs` are checked against them.
std::pair<train::Checkpoint, GraphCollection> open_graph_model(OutputPlan& outputs,
                                                               const std::filesystem::path& model,
                                                               const DataOptions& data,
                                                               const RunOptions& run) {
  outputs.add_input("--load", model);
  add_inputs(outputs, data);
  outputs.check();
  train::Checkpoint checkpoint = load_graph_model(model, data);
  return {std::move(checkpoint), load_collection(data, run)};
}

}  // namespace

int run_train_graphs(const TrainCommandOptions& options) {
  refuse_node_options(options);
  const std::int64_t folds = options.folds.value_or(10);
  const bool every_fold = options.folds.has_value() && !options.fold.has_value();
  if (options.fold && *options.fold > folds) {
    throw InvalidArgument("--fold " + std::to_string(*options.fold) + ": there are " +
                          std::to_string(folds) + " folds (--folds)");
  }
  if ((options.save || options.plot || options.resume) && every_fold) {
    throw InvalidArgument(
        "--save, --resume and --plot work on one fold; add --fold k to train fold k alone");
  }
  const RunOptions& output = options.run;
  OutputPlan outputs(output.force);
  if (options.plot) add_plot_outputs(outputs, "--plot", *options.plot);
  if (options.metrics_json) outputs.add_output("--metrics-json", *options.metrics_json);
  if (options.save) outputs.add_output("--save", *options.save);
  if (options.resume) outputs.add_input("--resume", *options.resume);
  for (const std::string& model : options.models) outputs.add_input("--model", model);
  add_inputs(outputs, options.data);
  outputs.check();
  const auto threads = limit_threads(output);
  std::optional<train::Checkpoint> resumed;
  if (options.resume) resumed = load_graph_model(*options.resume, options.data);
  const GraphCollection data = load_collection(options.data, output);
  const std::uint64_t seed = options.data.seed.value_or(0);
  const std::vector<train::GraphSplit> splits = train::stratified_folds(data.labels, folds, seed);
  std::vector<std::int64_t> chosen_folds;
  for (std::int64_t k = 1; k <= folds; ++k) {
    if (every_fold || k == options.fold.value_or(1)) chosen_folds.push_back(k);
  }

  // A resumed run continues its one model, named by its file; otherwise each candidate's
  // settings, read once for every fold.
  const std::vector<std::string> candidates =
      resumed ? std::vector<std::string>{options.resume->string()} : options.models;
  std::vector<train::TrainOptions> settings;
  for (const std::string& model : candidates) {
    settings.push_back(resumed ? resumed->options : recipe(options, seed, model));
  }
  const train::Metric metric = settings.front().metric;
  std::vector<FoldResult> results;
  std::vector<train::EpochStats> curves;  // of the kept candidate of the last fold
  for (const std::int64_t k : chosen_folds) {
    const train::GraphSplit& split = splits[static_cast<std::size_t>(k - 1)];
    // Each candidate trains with the test fold held back; the one best on validation is scored
    // on it, once.
    train::GraphSplit selection = split;
    selection.test.clear();
    std::optional<train::GraphTrainer> kept;
    FoldResult result;
    result.fold = k;
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      const std::string& model = candidates[c];
      const train::TrainOptions& train_options = settings[c];
      train::GraphTrainer trainer = [&] {
        try {
          if (resumed) {
            return train::GraphTrainer(data, selection, *resumed,
                                       options.epochs.value_or(resumed->options.epochs));
          }
          return train::GraphTrainer(data, selection, train_options);
        } catch (const InvalidArgument& error) {
          throw Error(error.what());  // data the model cannot train on is a data error
        }
      }();
      Progress progress(output,
                        "fold " + std::to_string(k) + "/" + std::to_string(folds) + " " + model,
                        train_options);
      std::vector<train::EpochStats> stats;
      double train_ms = 0.0;
      const train::FitResult fit = trainer.fit([&](const train::EpochStats& epoch) {
        progress(epoch);
        stats.push_back(epoch);
        train_ms += epoch.train_milliseconds;
      });
      progress.finish();
      result.candidate_scores.push_back(fit.val_score);
      if (!kept || fit.val_score > result.fit.val_score) {
        kept.emplace(std::move(trainer));
        result.model = model;
        result.fit = fit;
        result.train_graphs_per_second =
            train_ms > 0.0
                ? static_cast<double>(split.train.size() * stats.size()) / (train_ms / 1000.0)
                : 0.0;
        curves = std::move(stats);
      }
    }
    result.fit.test_nodes = static_cast<std::int64_t>(split.test.size());
    if (!split.test.empty()) {
      const train::SplitMetrics test = kept->evaluate(split.test);
      result.fit.test_accuracy = test.accuracy;
      result.fit.test_score = test.roc_auc.value_or(test.accuracy);
    }
    if (options.save) {
      train::save_checkpoint(*options.save, kept->checkpoint(), output.force);
      say(output, "saved the model to " + options.save->string());
    }
    if (!output.quiet && !output.json) {
      const std::string key = metric_key(metric);
      std::cout << "fold " << k << "/" << folds << ": test_" << key << " "
                << fixed(result.fit.test_score, 4) << " val_" << key << " "
                << fixed(result.fit.val_score, 4) << " model " << result.model << " best_epoch "
                << result.fit.best_epoch << " epochs " << result.fit.epochs << " "
                << fixed(result.fit.ms_per_epoch, 2) << " ms/epoch\n";
    }
    results.push_back(std::move(result));
  }

  std::vector<double> accuracies;
  std::vector<double> scores;
  nlohmann::ordered_json entries = nlohmann::ordered_json::array();
  for (const FoldResult& result : results) {
    accuracies.push_back(result.fit.test_accuracy);
    scores.push_back(result.fit.test_score);
    entries.push_back(fold_json(result, metric));
  }
  const auto accuracy = spread(accuracies);
  const auto score = spread(scores);
  const bool roc_auc = metric == train::Metric::kRocAuc;
  if (!output.json) {
    std::cout << data.name << (roc_auc ? ": test ROC AUC " : ": test accuracy ")
              << (roc_auc ? fixed(score.first, 4) + " ± " + fixed(score.second, 4)
                          : fixed(100.0 * accuracy.first, 2) + " ± " +
                                fixed(100.0 * accuracy.second, 2) + " %")
              << " over " << results.size() << (results.size() == 1 ? " fold" : " folds") << " of "
              << folds << " (stratified, seed " << seed << ")\n";
  }
  nlohmann::ordered_json out = {{"command", "train"},
                                {"task", "graph"},
                                {"dataset", data.name},
                                {"graphs", data.num_graphs()},
                                {"folds", folds},
                                {"seed", seed},
                                {"metric", train::metric_name(metric)},
                                {"models", candidates},
                                {"runs", std::move(entries)},
                                {"test_acc_mean", accuracy.first},
                                {"test_acc_std", accuracy.second}};
  if (roc_auc) {
    out["test_roc_auc_mean"] = score.first;
    out["test_roc_auc_std"] = score.second;
  }
  report_json(out, options.metrics_json, output);
  if (options.plot) {
    plot_training_curves(curves, results.back().fit.best_epoch, data.name + " graphs",
                         *options.plot, output);
  }
  return 0;
}

int run_evaluate_graphs(const EvaluateOptions& options) {
  const RunOptions& run = options.run;
  if (options.split_out || options.batch_size) {
    throw InvalidArgument("--split-out and --batch-size are for node tasks, not graph models");
  }
  OutputPlan outputs(run.force);
  if (options.metrics_json) outputs.add_output("--metrics-json", *options.metrics_json);
  const auto threads = limit_threads(run);
  const auto [checkpoint, data] = open_graph_model(outputs, options.model, options.data, run);
  if (checkpoint.class_names != data.class_names) {
    throw Error("model " + options.model.string() + " was trained on " +
                std::to_string(checkpoint.class_names.size()) +
                " classes that differ from the collection's " +
                std::to_string(data.class_names.size()));
  }
  // Scores on graphs the model trained or was validated on would not be test scores.
  std::vector<std::int64_t> all(static_cast<std::size_t>(data.num_graphs()));
  std::iota(all.begin(), all.end(), std::int64_t{0});
  const std::vector<std::int64_t> fitted = checkpoint.data
                                               ? train::fitted_graphs(*checkpoint.data, data, all)
                                               : std::vector<std::int64_t>{};
  std::vector<std::int64_t> scored;
  std::set_difference(all.begin(), all.end(), fitted.begin(), fitted.end(),
                      std::back_inserter(scored));
  if (scored.empty()) {
    throw Error("every graph of " + data.name + " was among the graphs model " +
                options.model.string() + " trained or was validated on: none is left to test");
  }
  if (!fitted.empty()) {
    say(run, "note: " + std::to_string(fitted.size()) + " of the " +
                 std::to_string(data.num_graphs()) +
                 " graphs were fitted (trained or validated "
                 "on) by the model and are not scored");
  }
  nn::Model model = train::load_model(checkpoint);
  const train::Metric metric =
      options.metric ? train::parse_metric(*options.metric) : checkpoint.options.metric;
  const train::SplitMetrics m = [&] {
    try {
      return train::graph_metrics(model, data, scored, metric);
    } catch (const InvalidArgument& error) {
      throw Error("model " + options.model.string() + ": " + error.what());
    }
  }();
  if (!run.json) {
    std::cout << "test: graphs " << m.nodes << " loss " << fixed(m.loss, 4) << " accuracy "
              << fixed(m.accuracy, 4) << " macro_f1 " << fixed(m.macro_f1, 4)
              << (m.roc_auc ? " roc_auc " + fixed(*m.roc_auc, 4) : std::string()) << '\n';
  }
  nlohmann::ordered_json test = {{"graphs", m.nodes},
                                 {"fitted_graphs_left_out", fitted.size()},
                                 {"loss", m.loss},
                                 {"accuracy", m.accuracy},
                                 {"macro_f1", m.macro_f1}};
  if (m.roc_auc) test["roc_auc"] = *m.roc_auc;
  const nlohmann::ordered_json out = {
      {"command", "evaluate"},
      {"task", "graph"},
      {"model", options.model.string()},
      {"dataset", data.name},
      {"classes", data.class_names},
      {"metric", train::metric_name(metric)},
      {"test", test},
      {"test_confusion", report_confusion(m.confusion, data.class_names, run)}};
  report_json(out, options.metrics_json, run);
  return 0;
}

int run_predict_graphs(const PredictOptions& options) {
  const RunOptions& run = options.run;
  if (options.attention_out || !options.plot_attention.empty() || options.batch_size) {
    throw InvalidArgument(
        "--attention-out, --plot-attention and --batch-size are for node tasks, not graph "
        "models");
  }
  OutputPlan outputs(run.force);
  if (options.output) outputs.add_output("--output", *options.output);
  const auto threads = limit_threads(run);
  const auto [checkpoint, data] = open_graph_model(outputs, options.model, options.data, run);
  // --nodes names graphs here: their 1-based ids.
  std::vector<std::int64_t> graphs;
  for (const std::string& name : options.nodes) {
    std::size_t used = 0;
    long long id = 0;
    try {
      id = std::stoll(name, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != name.size() || id < 1 || id > data.num_graphs()) {
      throw InvalidArgument("--nodes: '" + name + "' is not a graph of " + data.name +
                            " (expected an id from 1 to " + std::to_string(data.num_graphs()) +
                            ")");
    }
    graphs.push_back(id - 1);
  }
  if (graphs.empty()) {
    graphs.resize(static_cast<std::size_t>(data.num_graphs()));
    std::iota(graphs.begin(), graphs.end(), std::int64_t{0});
  }
  nn::Model model = train::load_model(checkpoint);
  const RowMatrix<float> logits = [&] {
    try {
      return train::graph_logits(model, data, graphs);
    } catch (const InvalidArgument& error) {
      throw Error("model " + options.model.string() + ": " + error.what());
    }
  }();
  report_predictions(options, run, data.name, checkpoint.class_names, graph_names(graphs), logits,
                     "graph");
  return 0;
}

}  // namespace maskgat::app
