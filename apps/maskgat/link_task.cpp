#include "link_task.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/io/node_pairs.hpp"
#include "maskgat/io/output_file.hpp"
#include "maskgat/nn/spec.hpp"
#include "maskgat/train/link_trainer.hpp"
#include "outputs.hpp"
#include "plot.hpp"

namespace maskgat::app {
namespace {

// Refuses the settings of other tasks that a link task would otherwise ignore.
void refuse_other_options(const TrainCommandOptions& options) {
  const std::pair<bool, const char*> others[] = {
      {options.partitions.has_value(), "--partitions"},
      {options.folds.has_value(), "--folds"},
      {options.fold.has_value(), "--fold"},
      {options.same_split, "--same-split"},
      {options.whole_graph, "--whole-graph (link tasks always are)"},
      {options.batch_size.has_value(), "--batch-size"},
      {!options.fanouts.empty(), "--fanout"},
      {options.metric.has_value(), "--metric (link tasks follow the validation ROC AUC)"},
      {options.selection.has_value(), "--select"},
      {options.recipe.has_value(), "--recipe (link tasks start from their own)"}};
  for (const auto& [given, name] : others) {
    if (given) throw InvalidArgument(std::string(name) + " is not for --task link");
  }
  if (options.models.size() > 1) {
    throw InvalidArgument("--model: " + std::to_string(options.models.size()) +
                          " models given; a link task trains one");
  }
  if (options.edge_split && (options.val_fraction || options.test_fraction)) {
    throw InvalidArgument(
        "--edge-split reads the split; --val-fraction and --test-fraction draw one: give one or "
        "the other");
  }
  if (options.resume) {
    check_resume_options(options);
    if (!options.models.empty() || options.out_dim || options.decoder || options.decoder_hidden) {
      throw InvalidArgument(
          "--resume continues the saved run with its own model; drop --model, --out-dim, "
          "--decoder and --decoder-hidden");
    }
  }
}

// The edge split of a run: read from `file`, or drawn from `seed` with the shares.
EdgeSplit split_for(const Dataset& dataset, const std::optional<std::filesystem::path>& file,
                    double val, double test, std::uint64_t seed, const ReadOptions& read) {
  const bool undirected = dataset.preparation.undirected;
  if (file) return read_edge_split(*file, dataset.graph, dataset.node_names, undirected, read);
  EdgeSplitOptions options;
  options.val_fraction = val;
  options.test_fraction = test;
  options.undirected = undirected;
  options.seed = seed;
  return split_edges(dataset.graph, options);
}

nlohmann::ordered_json metrics_json(const train::LinkMetrics& m) {
  return {{"pairs", m.positives},
          {"loss", m.loss},
          {"accuracy", m.accuracy},
          {"roc_auc", m.roc_auc},
          {"average_precision", m.average_precision},
          {"hits_at_10", m.hits_at_10},
          {"hits_at_50", m.hits_at_50},
          {"hits_at_100", m.hits_at_100}};
}

std::string metrics_line(const train::LinkMetrics& m) {
  return "roc_auc " + fixed(m.roc_auc, 4) + " ap " + fixed(m.average_precision, 4) + " hits@10 " +
         fixed(m.hits_at_10, 4) + " hits@50 " + fixed(m.hits_at_50, 4) + " hits@100 " +
         fixed(m.hits_at_100, 4);
}

// The link model of a checkpoint and every node's state on `graph`.
struct LinkModel {
  nn::Model model;
  RowMatrix<float> states;
};

LinkModel link_model(const std::filesystem::path& path, const train::Checkpoint& checkpoint,
                     const Dataset& dataset, const Graph& graph) {
  try {
    train::check_input_width(checkpoint, dataset);
  } catch (const InvalidArgument& error) {
    throw Error("model " + path.string() + ": " + error.what());  // the data does not fit
  }
  LinkModel loaded{train::load_model(checkpoint), {}};
  loaded.states =
      train::node_states(loaded.model, graph, train::model_input(dataset, checkpoint.options));
  return loaded;
}

}  // namespace

int run_train_links(TrainCommandOptions& options) {
  refuse_other_options(options);
  const RunOptions& output = options.run;
  std::vector<std::pair<std::string, std::filesystem::path>> inputs;
  if (options.edge_split) inputs.emplace_back("--edge-split", *options.edge_split);
  std::optional<train::Checkpoint> resumed = check_run_files(options, inputs);
  const auto threads = limit_threads(output);
  if (resumed && resumed->options.task != train::Task::kLink) {
    throw InvalidArgument("--resume: " + options.resume->string() + " holds a " +
                          train::task_name(resumed->options.task) + " task, not a link task");
  }
  const Dataset dataset =
      resumed ? load_data_for_model(options.data, resumed->data, /*with_split=*/false,
                                    options.resume->string(), /*offers_as_given=*/false, output)
              : load_model_data(options.data, output);
  const EdgeSplitOptions shares;
  const double val = options.val_fraction.value_or(shares.val_fraction);
  const double test = options.test_fraction.value_or(shares.test_fraction);

  std::vector<train::FitResult> results;
  std::vector<train::LinkMetrics> tests;
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  std::vector<train::EpochStats> curves;
  train::TrainOptions last;
  for (std::int64_t run = 0; run < options.runs; ++run) {
    const train::TrainOptions train_options =
        resumed
            ? resumed->options
            : recipe(options, options.data.load.seed + static_cast<std::uint64_t>(run),
                     options.models.empty() ? std::nullopt : std::optional(options.models.front()));
    EdgeSplit split = split_for(dataset, options.edge_split, val, test, train_options.seed,
                                options.data.load.read);
    const std::int64_t test_pairs = split.test.size();
    train::LinkTrainer trainer = [&] {
      try {
        if (resumed) {
          return train::LinkTrainer(dataset, std::move(split), *resumed,
                                    options.epochs.value_or(resumed->options.epochs));
        }
        return train::LinkTrainer(dataset, std::move(split), train_options);
      } catch (const InvalidArgument& error) {
        throw Error(error.what());  // data the model cannot train on is a data error
      }
    }();
    last = trainer.options();  // the model's widths resolved
    if (run == 0 && options.split_out) {
      write_edge_split(*options.split_out, dataset.node_names, trainer.split(), output.force);
      say(output, "wrote the edge split to " + options.split_out->string());
    }
    const train::FitResult result =
        fit_run(trainer, output, run, options.runs, trainer.options(), curves);
    results.push_back(result);
    nlohmann::ordered_json entry = {
        {"seed", train_options.seed},
        {"epochs", result.epochs},
        {"best_epoch", result.best_epoch},
        {"val_roc_auc", result.val_nodes > 0 ? nlohmann::ordered_json(result.val_score)
                                             : nlohmann::ordered_json(nullptr)},
        {"test", nullptr},
        {"ms_per_epoch", result.ms_per_epoch}};
    if (test_pairs > 0) {
      tests.push_back(trainer.evaluate(trainer.split().test, trainer.split().test_negatives));
      entry["test"] = metrics_json(tests.back());
    }
    runs.push_back(std::move(entry));
    if (options.save) {
      train::save_checkpoint(*options.save, trainer.checkpoint(), output.force);
      say(output, "saved the model to " + options.save->string());
    }
    if (!output.quiet && !output.json) {
      std::cout << "run " << run + 1 << " seed " << train_options.seed << ": test "
                << (test_pairs > 0 ? metrics_line(tests.back()) : std::string("none"))
                << " val_roc_auc " << (result.val_nodes > 0 ? fixed(result.val_score, 4) : "none")
                << " best_epoch " << result.best_epoch << " epochs " << result.epochs << " "
                << fixed(result.ms_per_epoch, 2) << " ms/epoch\n";
    }
  }

  const auto over_runs = [&](double train::LinkMetrics::*value) {
    std::vector<double> values;
    for (const auto& m : tests) values.push_back(m.*value);
    return spread(values);
  };
  std::vector<double> ms;
  for (const auto& result : results) ms.push_back(result.ms_per_epoch);
  nlohmann::ordered_json summary = nullptr;
  if (!tests.empty()) {
    summary = nlohmann::ordered_json::object();
    for (const auto& [key, value] :
         {std::pair{"roc_auc", &train::LinkMetrics::roc_auc},
          std::pair{"average_precision", &train::LinkMetrics::average_precision},
          std::pair{"hits_at_10", &train::LinkMetrics::hits_at_10},
          std::pair{"hits_at_50", &train::LinkMetrics::hits_at_50},
          std::pair{"hits_at_100", &train::LinkMetrics::hits_at_100}}) {
      const auto [mean, std] = over_runs(value);
      summary[std::string(key) + "_mean"] = mean;
      summary[std::string(key) + "_std"] = std;
    }
  }
  if (!output.json) {
    const std::string model = last.spec ? "spec" : nn::attention_kind_name(last.model.attention);
    std::cout << dataset.name << " " << model << " link: test ";
    if (tests.empty()) {
      std::cout << "none (no test pairs)";
    } else {
      const auto show = [&](double train::LinkMetrics::*value) {
        const auto [mean, std] = over_runs(value);
        return fixed(mean, 4) + " ± " + fixed(std, 4);
      };
      std::cout << "ROC AUC " << show(&train::LinkMetrics::roc_auc) << ", AP "
                << show(&train::LinkMetrics::average_precision) << ", Hits@50 "
                << show(&train::LinkMetrics::hits_at_50);
    }
    std::cout << " over " << results.size() << (results.size() == 1 ? " run" : " runs") << ", "
              << fixed(spread(ms).first, 2) << " ms per epoch\n";
  }
  const nlohmann::ordered_json out = {
      {"command", "train"},
      {"task", "link"},
      {"dataset", dataset.name},
      {"model", last.spec ? nlohmann::ordered_json::parse(nn::model_spec_json(*last.spec))
                          : nlohmann::ordered_json("paper")},
      {"out_dim", last.model.classes},
      {"decoder", last.decoder_hidden > 0 ? "mlp" : "dot"},
      {"decoder_hidden", last.decoder_hidden > 0 ? nlohmann::ordered_json(last.decoder_hidden)
                                                 : nlohmann::ordered_json(nullptr)},
      {"lr", last.optimizer.learning_rate},
      {"weight_decay", last.optimizer.weight_decay},
      {"epochs", last.epochs},
      {"patience", last.patience},
      {"edge_split", options.edge_split ? nlohmann::ordered_json(options.edge_split->string())
                                        : nlohmann::ordered_json({{"val", val}, {"test", test}})},
      {"runs", std::move(runs)},
      {"test", std::move(summary)}};
  report_json(out, options.metrics_json, output);
  if (options.plot) {
    plot_training_curves(curves, results.back().best_epoch, dataset.name + " link", *options.plot,
                         output);
  }
  return 0;
}

int run_evaluate_links(EvaluateOptions& options, train::Checkpoint checkpoint) {
  if (options.split_out || options.batch_size || options.metric) {
    throw InvalidArgument(
        "a link model reports ROC AUC, AP and Hits@K on its edge split; --split-out, "
        "--batch-size and --metric are for node models");
  }
  if (options.edge_split && (options.val_fraction || options.test_fraction)) {
    throw InvalidArgument(
        "--edge-split reads the split; --val-fraction and --test-fraction draw one: give one or "
        "the other");
  }
  const EdgeSplitOptions shares;
  const RunOptions& run = options.run;
  const auto threads = limit_threads(run);
  const Dataset dataset = load_data_for_model(options.data, checkpoint.data, /*with_split=*/false,
                                              options.model.string(), true, run);
  const EdgeSplit split =
      split_for(dataset, options.edge_split, options.val_fraction.value_or(shares.val_fraction),
                options.test_fraction.value_or(shares.test_fraction), checkpoint.options.seed,
                options.data.load.read);
  if (!checkpoint.data || train::edge_split_fingerprint(split) != checkpoint.data->split_hash) {
    throw Error("model " + options.model.string() + " was trained on another edge split than " +
                (options.edge_split ? options.edge_split->string()
                                    : "the one its seed draws with these shares") +
                "; give the shares it trained with (--val-fraction, --test-fraction) or its "
                "split (--edge-split; train --split-out writes it)");
  }
  const LinkModel loaded = link_model(options.model, checkpoint, dataset, split.train);
  nlohmann::ordered_json parts = nlohmann::ordered_json::object();
  for (const auto& [name, positives, negatives] :
       {std::tuple{"val", &split.val, &split.val_negatives},
        std::tuple{"test", &split.test, &split.test_negatives}}) {
    if (positives->size() == 0) {
      if (!run.json) std::cout << name << ": pairs 0 (no metrics)\n";
      parts[name] = nullptr;
      continue;
    }
    const train::LinkMetrics m =
        train::link_metrics(loaded.model, loaded.states, *positives, *negatives);
    if (!run.json) {
      std::cout << name << ": pairs " << m.positives << " loss " << fixed(m.loss, 4) << " "
                << metrics_line(m) << '\n';
    }
    parts[name] = metrics_json(m);
  }
  const nlohmann::ordered_json out = {{"command", "evaluate"},
                                      {"task", "link"},
                                      {"model", options.model.string()},
                                      {"dataset", dataset.name},
                                      {"splits", parts}};
  report_json(out, options.metrics_json, run);
  return 0;
}

int run_predict_links(PredictOptions& options, train::Checkpoint checkpoint) {
  if (options.attention_out || !options.plot_attention.empty() || !options.nodes.empty() ||
      options.batch_size) {
    throw InvalidArgument(
        "a link model scores node pairs (--pairs) or recommends nodes (--recommend); "
        "--attention-out, --plot-attention, --nodes and --batch-size are for node models");
  }
  if (options.pairs.has_value() == options.recommend.has_value()) {
    throw InvalidArgument("a link model needs --pairs FILE or --recommend NODE (one of them)");
  }
  const RunOptions& run = options.run;
  const auto threads = limit_threads(run);
  const Dataset dataset = load_data_for_model(options.data, checkpoint.data, /*with_split=*/false,
                                              options.model.string(), true, run);
  const auto& names = dataset.node_names;
  NodePairs pairs;
  NodeId asked = 0;
  if (options.pairs) {
    pairs = read_node_pairs(*options.pairs, names, options.data.load.read);
  } else {
    const auto found = std::find(names.begin(), names.end(), *options.recommend);
    if (found == names.end()) {
      throw InvalidArgument("--recommend: no node '" + *options.recommend + "' in the data");
    }
    asked = static_cast<NodeId>(found - names.begin());
  }
  // Every node's state, with every edge of the data known.
  const LinkModel loaded = link_model(options.model, checkpoint, dataset, dataset.graph);
  std::ostringstream csv;
  csv.precision(6);
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  const auto rounded = [](double p) { return std::round(1e6 * p) / 1e6; };
  if (options.pairs) {
    const std::vector<double> scores = train::pair_scores(loaded.model, loaded.states, pairs);
    csv << "source,target,score\n";
    for (std::size_t k = 0; k < scores.size(); ++k) {
      const std::string& source = names[static_cast<std::size_t>(pairs.sources[k])];
      const std::string& target = names[static_cast<std::size_t>(pairs.targets[k])];
      csv << csv_field(source) << ',' << csv_field(target) << ',' << scores[k] << '\n';
      rows.push_back({{"source", source}, {"target", target}, {"score", rounded(scores[k])}});
    }
  } else {
    const std::int64_t candidates = train::recommendation_candidates(dataset.graph, asked);
    if (options.top_k > candidates) {
      throw InvalidArgument("--top-k " + std::to_string(options.top_k) + ": node '" +
                            *options.recommend + "' has " + std::to_string(candidates) +
                            " nodes it has no edge to, so at most " + std::to_string(candidates) +
                            " to recommend");
    }
    const std::vector<train::ScoredNode> best =
        train::recommend(loaded.model, loaded.states, dataset.graph, asked, options.top_k);
    csv << "rank,node,score\n";
    for (std::size_t r = 0; r < best.size(); ++r) {
      const std::string& node = names[static_cast<std::size_t>(best[r].node)];
      csv << r + 1 << ',' << csv_field(node) << ',' << best[r].score << '\n';
      rows.push_back({{"rank", r + 1}, {"node", node}, {"score", rounded(best[r].score)}});
    }
  }
  if (options.output) {
    write_file_atomically(*options.output, csv.str(), run.force);
    say(run, "wrote " + std::to_string(rows.size()) + " rows to " + options.output->string());
  }
  if (run.json) {
    nlohmann::ordered_json out = {{"command", "predict"},
                                  {"task", "link"},
                                  {"model", options.model.string()},
                                  {"dataset", dataset.name}};
    if (options.recommend) out["recommend"] = *options.recommend;
    out[options.pairs ? "pairs" : "recommendations"] = std::move(rows);
    std::cout << json_text(out, run) << '\n';
  }
  return 0;
}

}  // namespace maskgat::app
