#include "train.hpp"

#include <sys/resource.h>
#include <tbb/global_control.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "graph_task.hpp"
#include "link_task.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/io/output_file.hpp"
#include "maskgat/io/partition.hpp"
#include "maskgat/nn/spec.hpp"
#include "maskgat/train/checkpoint.hpp"
#include "maskgat/train/link_trainer.hpp"
#include "maskgat/train/trainer.hpp"
#include "outputs.hpp"
#include "plot.hpp"
#include "ranks.hpp"

namespace maskgat::app {

std::string metric_key(train::Metric metric) {
  return metric == train::Metric::kRocAuc ? "roc_auc" : "acc";
}

namespace {

// How result lines name the model: its attention kind, or `spec` for a model from a spec file.
std::string model_label(const train::TrainOptions& options) {
  return options.spec ? "spec" : nn::attention_kind_name(options.model.attention);
}

// The one model a node task trains: --model's, or the paper's without it.
std::optional<std::string> single_model(const TrainCommandOptions& options) {
  if (options.models.size() > 1) {
    throw InvalidArgument("--model: " + std::to_string(options.models.size()) +
                          " models given; several are candidates of a graph task (--task graph), "
                          "a node task trains one");
  }
  return options.models.empty() ? std::nullopt : std::optional(options.models.front());
}

}  // namespace

std::optional<train::Checkpoint> check_run_files(
    const TrainCommandOptions& options,
    const std::vector<std::pair<std::string, std::filesystem::path>>& inputs) {
  if ((options.save || options.resume || options.plot) && options.runs != 1) {
    throw InvalidArgument("--save, --resume and --plot work on one run; got --runs " +
                          std::to_string(options.runs));
  }
  OutputPlan outputs(options.run.force);
  if (options.plot) add_plot_outputs(outputs, "--plot", *options.plot);
  if (options.metrics_json) outputs.add_output("--metrics-json", *options.metrics_json);
  if (options.save) outputs.add_output("--save", *options.save);
  if (options.split_out) outputs.add_output("--split-out", *options.split_out);
  if (options.resume) outputs.add_input("--resume", *options.resume);
  for (const auto& [option, path] : inputs) outputs.add_input(option, path);
  add_inputs(outputs, options.data);
  outputs.check();
  if (!options.resume) return std::nullopt;
  train::Checkpoint resumed =
      train::load_checkpoint(*options.resume, options.data.load.read.limits);
  resumed.options.max_parameters = options.limits.max_parameters;  // limits are not saved
  resumed.options.max_activations = options.limits.max_activations;
  return resumed;
}

void check_resume_options(const TrainCommandOptions& options) {
  const bool recipe_given = options.recipe || options.attention || options.positional ||
                            options.layers || options.heads || options.hidden ||
                            options.output_heads || options.patience || options.dropout ||
                            options.attention_dropout || options.learning_rate ||
                            options.weight_decay || options.whole_graph || options.batch_size ||
                            !options.fanouts.empty() || options.metric || options.selection;
  if (recipe_given) {
    throw InvalidArgument(
        "--resume continues the saved run with its own model and recipe; only --epochs may be "
        "given with it");
  }
}

train::TrainOptions recipe(const TrainCommandOptions& cli, std::uint64_t seed,
                           const std::optional<std::string>& model) {
  train::TrainOptions options = cli.task == "graph"      ? train::graph_recipe()
                                : cli.task == "link"     ? train::link_recipe()
                                : cli.recipe == "shchur" ? train::shchur_recipe()
                                                         : train::paper_recipe(cli.data.dataset);
  if (cli.out_dim) options.model.classes = *cli.out_dim;
  if (cli.decoder_hidden && cli.decoder != "mlp") {
    throw InvalidArgument("--decoder-hidden sizes the MLP decoder: add --decoder mlp");
  }
  if (cli.decoder == "mlp")
    options.decoder_hidden = cli.decoder_hidden.value_or(options.model.classes);
  if (cli.attention) options.model.attention = nn::parse_attention_kind(*cli.attention);
  if (cli.layers) options.model.layers = *cli.layers;
  if (cli.heads) options.model.heads = *cli.heads;
  if (cli.hidden) options.model.hidden = *cli.hidden;
  if (cli.output_heads) options.model.output_heads = *cli.output_heads;
  if (cli.dropout) options.model.dropout = *cli.dropout;
  if (cli.attention_dropout) options.model.attention_dropout = *cli.attention_dropout;
  const bool shaped = cli.attention || cli.layers || cli.heads || cli.hidden || cli.output_heads ||
                      cli.dropout || cli.attention_dropout;
  if (model == "paper") options.spec.reset();  // the link recipe's encoder is a spec
  if (!model && options.spec && shaped) {
    throw InvalidArgument(
        "--attention, --layers, --heads, --hidden, --output-heads, --dropout and --attn-dropout "
        "shape the paper's model; the link recipe's encoder is a spec (docs/specs/link-gat.json): "
        "add --model paper to shape the paper's model instead");
  }
  if (model && *model != "paper") {
    const std::pair<bool, const char*> paper_options[] = {
        {cli.attention.has_value(), "--attention"},
        {cli.layers.has_value(), "--layers"},
        {cli.heads.has_value(), "--heads"},
        {cli.hidden.has_value(), "--hidden"},
        {cli.output_heads.has_value(), "--output-heads"},
        {cli.dropout.has_value(), "--dropout"},
        {cli.attention_dropout.has_value(), "--attn-dropout"}};
    for (const auto& [given, name] : paper_options) {
      if (given) {
        throw InvalidArgument(std::string(name) + " shapes the paper's model, not a spec's (" +
                              *model + "): set it in the spec");
      }
    }
    options.spec = train::read_model_spec(*model);
  }
  if (cli.learning_rate) options.optimizer.learning_rate = *cli.learning_rate;
  if (cli.weight_decay) options.optimizer.weight_decay = *cli.weight_decay;
  if (cli.epochs) options.epochs = *cli.epochs;
  if (cli.patience) options.patience = *cli.patience;
  if (cli.positional) options.positional = transforms::parse_positional_encoding(*cli.positional);
  if (cli.whole_graph) options.receptive_field = false;
  if (cli.batch_size) options.batch_size = *cli.batch_size;
  if (cli.metric) options.metric = train::parse_metric(*cli.metric);
  if (cli.selection) options.selection = train::parse_selection(*cli.selection);
  if (!cli.fanouts.empty() && !options.spec &&
      static_cast<std::int64_t>(cli.fanouts.size()) != options.model.layers) {
    throw InvalidArgument("--fanout: " + std::to_string(cli.fanouts.size()) +
                          " fanouts for a model of " + std::to_string(options.model.layers) +
                          " layers, expected one per layer");
  }
  options.fanouts = cli.fanouts;
  options.seed = seed;
  options.max_parameters = cli.limits.max_parameters;
  options.max_activations = cli.limits.max_activations;
  return options;
}

Progress::Progress(const RunOptions& output, std::string prefix, const train::TrainOptions& options)
    : quiet_(output.quiet),
      every_(output.verbose ? 1 : 50),
      terminal_(isatty(fileno(stderr)) != 0),
      prefix_(std::move(prefix)),
      epochs_(options.epochs),
      patience_(options.patience),
      score_key_("val_" + metric_key(options.metric)) {}

void Progress::operator()(const train::EpochStats& stats) {
  elapsed_ms_ += stats.milliseconds;
  waiting_ = stats.improved ? 0 : waiting_ + 1;
  if (stats.checkpoint) best_ = stats.val_score;
  if (quiet_) return;
  std::int64_t remaining = epochs_ - stats.epoch;
  if (patience_ > 0) remaining = std::min(remaining, patience_ - waiting_);
  const double eta_s =
      static_cast<double>(remaining) * elapsed_ms_ / static_cast<double>(stats.epoch) / 1000.0;
  const std::string line = prefix_ + ": epoch " + std::to_string(stats.epoch) + " loss " +
                           fixed(stats.train_loss, 4) + " " + score_key_ + " " +
                           fixed(stats.val_score, 4) + " best " + fixed(best_, 4) + " elapsed " +
                           fixed(elapsed_ms_ / 1000.0, 1) + " s ETA " + fixed(eta_s, 1) + " s";
  if (terminal_) {
    std::cerr << '\r' << line << "\x1b[K" << std::flush;
  } else if (stats.epoch % every_ == 0) {
    std::cerr << line << '\n';
  }
}

void Progress::finish() const {
  if (!quiet_ && terminal_) std::cerr << '\n';
}

namespace {

// How the graph was read: its edges as given or both ways, and how many nodes receive no message
// (no in-edge but their self-loop). Read as given, an undirected graph's edge list leaves many
// nodes without one and costs accuracy, so every result line and metrics file says it. On a part,
// of its own nodes.
struct GraphReading {
  bool undirected = false;
  std::int64_t nodes = 0;
  std::int64_t without_messages = 0;

  // `; edges read ..., K of N nodes receive no message`, for the result line.
  [[nodiscard]] std::string phrase() const {
    return std::string("; edges read ") +
           (undirected ? "both ways (undirected)" : "as given (directed)") + ", " +
           std::to_string(without_messages) + " of " + std::to_string(nodes) +
           " nodes receive no message" +
           (!undirected && without_messages > 0 ? " (--undirected reads every edge both ways)"
                                                : "");
  }
  [[nodiscard]] nlohmann::ordered_json json() const {
    return {
        {"undirected", undirected}, {"nodes", nodes}, {"nodes_without_messages", without_messages}};
  }
};

GraphReading graph_reading(const Dataset& data, const GraphPart* part = nullptr) {
  GraphReading reading{data.preparation.undirected};
  for (NodeId node = 0; node < data.graph.num_nodes(); ++node) {
    if (part != nullptr && !part->is_own(node)) continue;
    const auto sources = data.graph.in_neighbors(node);
    ++reading.nodes;
    if (std::all_of(sources.begin(), sources.end(), [node](NodeId j) { return j == node; })) {
      ++reading.without_messages;
    }
  }
  return reading;
}

// One run's entry in the metrics JSON; a metric over no nodes is null. With ROC AUC its values
// follow the accuracies (`val_roc_auc`, `test_roc_auc`).
nlohmann::ordered_json run_json(std::uint64_t seed, const Dataset& data,
                                const train::FitResult& result, train::Metric chosen) {
  const auto metric = [](std::int64_t nodes, double value) {
    return nodes > 0 ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
  };
  const DataPreparation& preparation = data.preparation;
  nlohmann::ordered_json run = {
      {"seed", seed},
      {"split_seed", preparation.random_split ? nlohmann::ordered_json(preparation.split_seed)
                                              : nlohmann::ordered_json(nullptr)},
      {"split_index", preparation.fixed_split >= 0 ? nlohmann::ordered_json(preparation.fixed_split)
                                                   : nlohmann::ordered_json(nullptr)},
      {"epochs", result.epochs},
      {"best_epoch", result.best_epoch},
      {"val_acc", metric(result.val_nodes, result.val_accuracy)},
      {"test_acc", metric(result.test_nodes, result.test_accuracy)}};
  if (chosen == train::Metric::kRocAuc) {
    run["val_roc_auc"] = metric(result.val_nodes, result.val_score);
    run["test_roc_auc"] = metric(result.test_nodes, result.test_score);
  }
  run["ms_per_epoch"] = result.ms_per_epoch;
  return run;
}

// The metrics JSON of `train`, the same on one process and on parts (which add `parts` and
// `ranks`): docs/cli.md lists its fields. `accuracy` and `score` are the test accuracy's and the
// chosen metric's mean and standard deviation over the runs, unset without test nodes.
nlohmann::ordered_json train_json(const std::string& dataset, const train::TrainOptions& last,
                                  const GraphReading& graph, nlohmann::ordered_json runs,
                                  const std::optional<std::pair<double, double>>& accuracy,
                                  const std::optional<std::pair<double, double>>& score) {
  const auto or_null = [](const std::optional<double>& value) {
    return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
  };
  // The paper's model by its shape options; a spec's model by the spec itself.
  nlohmann::ordered_json shape = nlohmann::ordered_json::object();
  if (!last.spec) {
    shape = {{"layers", last.model.layers},   {"heads", last.model.heads},
             {"hidden", last.model.hidden},   {"output_heads", last.model.output_heads},
             {"dropout", last.model.dropout}, {"attention_dropout", last.model.attention_dropout}};
  }
  nlohmann::ordered_json recipe = {
      {"lr", last.optimizer.learning_rate},
      {"weight_decay", last.optimizer.weight_decay},
      {"epochs", last.epochs},
      {"patience", last.patience},
      {"receptive_field", last.receptive_field},
      {"batch_size", last.batch_size > 0 ? nlohmann::ordered_json(last.batch_size)
                                         : nlohmann::ordered_json(nullptr)},
      {"fanouts", last.fanouts}};
  shape.update(recipe);
  nlohmann::ordered_json out = {
      {"command", "train"},
      {"dataset", dataset},
      {"metric", train::metric_name(last.metric)},
      {"selection", train::selection_name(last.selection)},
      {"model", last.spec ? nlohmann::ordered_json::parse(nn::model_spec_json(*last.spec))
                          : nlohmann::ordered_json("paper")},
      {"attention", last.spec
                        ? nlohmann::ordered_json(nullptr)
                        : nlohmann::ordered_json(nn::attention_kind_name(last.model.attention))},
      {"positional_encoding", transforms::positional_encoding_name(last.positional)},
      {"hyperparameters", std::move(shape)},
      {"runs", std::move(runs)},
      {"test_acc_mean", or_null(accuracy ? std::optional(accuracy->first) : std::nullopt)},
      {"test_acc_std", or_null(accuracy ? std::optional(accuracy->second) : std::nullopt)}};
  if (last.metric == train::Metric::kRocAuc) {
    out["test_roc_auc_mean"] = or_null(score ? std::optional(score->first) : std::nullopt);
    out["test_roc_auc_std"] = or_null(score ? std::optional(score->second) : std::nullopt);
  }
  out["graph"] = graph.json();
  return out;
}

// `train --partitions DIR` under mpirun: rank r trains on DIR/part-r (`maskgat partition`
// writes them), every rank computing its own nodes; rank 0 alone reports and writes. An error on
// any rank is printed with the rank and ends the whole job (MPI_Abort), so no rank waits on one
// that has stopped.
int run_train_on_partitions(const TrainCommandOptions& options) {
  const DataOptions& data = options.data;
  if (options.runs != 1 || options.plot || options.split_out || options.batch_size ||
      options.positional) {
    throw InvalidArgument(
        "--partitions trains one run on the whole graph; --runs, --plot, --split-out, "
        "--batch-size and --pe are not available with it");
  }
  if (options.resume) check_resume_options(options);
  const std::unique_ptr<Communicator> comm = start_mpi(data);
  const int rank = comm->rank();
  const RunOptions output = rank_output(options.run, *comm);
  try {
    OutputPlan outputs(output.force);
    if (rank == 0 && options.metrics_json) {
      outputs.add_output("--metrics-json", *options.metrics_json);
    }
    if (rank == 0 && options.save) outputs.add_output("--save", *options.save);
    if (options.resume) outputs.add_input("--resume", *options.resume);
    outputs.check();
    const auto threads = limit_threads(output);
    const GraphPart part = open_rank_part(*options.partitions, *comm, data);
    std::optional<train::Checkpoint> resumed;
    if (options.resume) {
      resumed = train::load_checkpoint(*options.resume, data.load.read.limits);
      resumed->options.max_parameters = options.limits.max_parameters;
      resumed->options.max_activations = options.limits.max_activations;
    }
    const train::TrainOptions train_options =
        resumed ? resumed->options : recipe(options, data.load.seed, single_model(options));
    train::check_model_size(train_options, part.data);
    train::Trainer trainer = resumed
                                 ? train::Trainer(part, *comm, *resumed,
                                                  options.epochs.value_or(resumed->options.epochs))
                                 : train::Trainer(part, *comm, train_options);
    Progress progress(output, "run 1/1 seed " + std::to_string(train_options.seed), train_options);
    const std::int64_t first_epoch = resumed ? resumed->state.epoch : 0;
    const std::int64_t bytes_before = comm->bytes_sent();
    const double communicating_before = comm->seconds_communicating();
    const auto start = std::chrono::steady_clock::now();
    const train::FitResult result = trainer.fit(progress);
    progress.finish();
    // What each rank measured over the training (its epochs and the final evaluation): peak RSS,
    // bytes sent per epoch, and the share of the time spent in communication calls.
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto epochs_trained =
        static_cast<double>(std::max<std::int64_t>(result.epochs - first_epoch, 1));
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const std::array<double, 3> mine = {
        static_cast<double>(usage.ru_maxrss) * 1024.0,
        static_cast<double>(comm->bytes_sent() - bytes_before) / epochs_trained,
        (comm->seconds_communicating() - communicating_before) / seconds};
    const std::vector<double> ranks = all_gather<double>(*comm, mine);
    GraphReading graph = graph_reading(part.data, &part);
    std::array<std::int64_t, 2> counts = {graph.nodes, graph.without_messages};
    sum_in_rank_order<std::int64_t>(*comm, counts);
    graph.nodes = counts[0];
    graph.without_messages = counts[1];
    if (rank != 0) return 0;
    if (options.save) {
      train::save_checkpoint(*options.save, trainer.checkpoint(), output.force);
      say(output, "saved the model to " + options.save->string());
    }
    const std::string name = part.data.name + " " + model_label(train_options);
    nlohmann::ordered_json out = train_json(
        part.data.name, train_options, graph,
        nlohmann::ordered_json::array(
            {run_json(train_options.seed, part.data, result, train_options.metric)}),
        result.test_nodes > 0 ? std::optional(std::pair(result.test_accuracy, 0.0)) : std::nullopt,
        std::nullopt);
    out["parts"] = part.parts;
    nlohmann::ordered_json per_rank = nlohmann::ordered_json::array();
    for (std::size_t r = 0; r * 3 < ranks.size(); ++r) {
      per_rank.push_back({{"rank", r},
                          {"peak_rss_mb", ranks[3 * r] / 1e6},
                          {"bytes_sent_per_epoch", ranks[3 * r + 1]},
                          {"communication_share", ranks[3 * r + 2]}});
    }
    out["ranks"] = per_rank;
    const std::string json = json_text(out, output);
    if (output.json) {
      std::cout << json << '\n';
    } else {
      std::cout << name << " on " << part.parts << (part.parts == 1 ? " part" : " parts")
                << ": test accuracy "
                << (result.test_nodes > 0 ? fixed(100.0 * result.test_accuracy, 2) + " %"
                                          : std::string("none (no test nodes)"))
                << ", " << result.epochs << " epochs, best epoch " << result.best_epoch << ", "
                << fixed(result.ms_per_epoch, 2) << " ms per epoch" << graph.phrase() << '\n';
    }
    if (!output.json && !output.quiet) {
      for (std::size_t r = 0; r * 3 < ranks.size(); ++r) {
        std::cout << "rank " << r << ": peak RSS " << fixed(ranks[3 * r] / 1e6, 0) << " MB, "
                  << fixed(ranks[3 * r + 1] / 1e6, 3) << " MB sent per epoch, "
                  << fixed(100.0 * ranks[3 * r + 2], 1) << " % of the time communicating\n";
      }
    }
    write_metrics(options.metrics_json, json, output);
    return 0;
  } catch (const std::exception& error) {
    fail_rank(*comm, error);
  }
}

}  // namespace

void add_train_command(CLI::App& app, TrainCommandOptions& options) {
  auto* command = app.add_subcommand(
      "train",
      "Train a graph attention network: node classification (the GAT paper's recipe), graph "
      "classification on a collection (--task graph), or link prediction (--task link)");
  auto* partitions = command->add_option(
      "--partitions", options.partitions,
      "Train across processes under mpirun -np P: rank r trains on DIR/part-r of the P parts "
      "maskgat partition wrote");
  add_data_options(*command, options.data, partitions);
  command
      ->add_option("--recipe", options.recipe,
                   "Settings the other options start from: paper (the GAT paper's for the "
                   "dataset) or shchur (for Shchur et al.'s graphs: no weight decay); default "
                   "paper")
      ->check(CLI::IsMember({"paper", "shchur"}));
  command
      ->add_option("--attention", options.attention,
                   "Attention layer: gat, gatv2 or dot (default gat)")
      ->check(CLI::IsMember({"gat", "gatv2", "dot"}));
  command
      ->add_option("--pe", options.positional,
                   "Append a positional encoding of the graph to the features: lap:K (the K "
                   "Laplacian eigenvectors after each component's null one, signs flipped at "
                   "random every step) or rw:K (random-walk return probabilities after 1..K "
                   "steps); saved with the model (default none)")
      ->check([](const std::string& spec) {
        try {
          (void)transforms::parse_positional_encoding(spec);
          return std::string();
        } catch (const InvalidArgument& error) {
          return std::string(error.what());
        }
      });
  command
      ->add_option("--model", options.models,
                   "The model: paper (the GAT paper's, shaped by --attention, --layers, "
                   "--heads, --hidden, --output-heads, --dropout, --attn-dropout; the "
                   "default) or a JSON spec file of its modules (docs/model-specs.md); with "
                   "--task graph one or more specs with a readout, A,B,...: each fold keeps the "
                   "one best on its validation graphs")
      ->delimiter(',');
  command
      ->add_option("--task", options.task,
                   "node (classify the nodes of one graph; the default), graph (classify the "
                   "graphs of a collection, --tu or --dataset tu:NAME; the model needs a "
                   "readout) or link (predict held-out edges of one graph from the dot product "
                   "of the model's node states)")
      ->check(CLI::IsMember({"node", "graph", "link"}));
  command
      ->add_option("--out-dim", options.out_dim,
                   "With --task link: the width of the node states the model outputs (its "
                   "\"classes\"; default 128)")
      ->check(integer_at_least(1));
  command
      ->add_option("--decoder", options.decoder,
                   "With --task link: how a pair is scored from its nodes' states: dot (their "
                   "dot product, the default) or mlp (an MLP with one hidden ReLU layer on "
                   "their elementwise product)")
      ->check(CLI::IsMember({"dot", "mlp"}));
  command
      ->add_option("--decoder-hidden", options.decoder_hidden,
                   "With --decoder mlp: its hidden units (default: --out-dim)")
      ->check(integer_at_least(1));
  command
      ->add_option("--val-fraction", options.val_fraction,
                   "With --task link: the share of edges held out for validation (default 0.05)")
      ->check(number_above(0.0, true, 1.0));
  command
      ->add_option("--test-fraction", options.test_fraction,
                   "With --task link: the share of edges held out for test (default 0.10)")
      ->check(number_above(0.0, true, 1.0));
  command->add_option("--edge-split", options.edge_split,
                      "With --task link: train on the edge split in this file (as --split-out "
                      "writes it) instead of drawing one");
  command
      ->add_option("--folds", options.folds,
                   "With --task graph: train on every fold of K stratified folds (Errica et "
                   "al.'s protocol: fold k tests, a stratified tenth of the rest validates) and "
                   "report the mean and standard deviation (default: fold 1 of 10 alone)")
      ->check(integer_at_least(2));
  command
      ->add_option("--fold", options.fold,
                   "With --task graph: train on fold k (1-based) of --folds (default 10) alone")
      ->check(integer_at_least(1));
  command->add_option("--layers", options.layers, "Attention layers (default 2)")
      ->check(integer_at_least(1));
  command->add_option("--heads", options.heads, "Heads of every hidden layer (default 8)")
      ->check(integer_at_least(1));
  command->add_option("--hidden", options.hidden, "Features per head of hidden layers (default 8)")
      ->check(integer_at_least(1));
  command
      ->add_option("--output-heads", options.output_heads,
                   "Heads of the output layer, averaged (default 1; PubMed 8)")
      ->check(integer_at_least(1));
  command->add_option("--dropout", options.dropout, "Dropout on layer inputs (default 0.6)")
      ->check(number_above(0.0, true, 1.0));
  command
      ->add_option("--attn-dropout", options.attention_dropout,
                   "Dropout on attention coefficients (default 0.6)")
      ->check(number_above(0.0, true, 1.0));
  command
      ->add_option("--lr", options.learning_rate, "Adam learning rate (default 0.005; PubMed 0.01)")
      ->check(number_above(0.0, false));
  command
      ->add_option("--weight-decay", options.weight_decay,
                   "L2 weight decay added to the gradients (default 5e-4; PubMed 1e-3)")
      ->check(number_above(0.0, true));
  command->add_flag("--whole-graph", options.whole_graph,
                    "Run training steps and validation over the whole graph, not only the "
                    "training and validation nodes' receptive fields");
  auto* batch_size =
      command
          ->add_option("--batch-size", options.batch_size,
                       "Train on mini-batches of this many training nodes, each with the "
                       "in-neighbours --fanout samples, one Adam step per batch (default: one "
                       "full-batch step per epoch); with --task graph, of this many graphs "
                       "(default 32)")
          ->check(integer_at_least(1));
  command
      ->add_option("--fanout", options.fanouts,
                   "F1,F2,...: in-neighbours each layer samples per node, the input layer's "
                   "first; -1 keeps all (default -1 for every layer)")
      ->delimiter(',')
      ->check(integer_at_least(-1))
      ->needs(batch_size);
  command->add_option("--epochs", options.epochs, "Maximum epochs (default 10000)")
      ->check(integer_at_least(1));
  command
      ->add_option("--patience", options.patience,
                   "Early-stopping patience in epochs; 0 trains exactly --epochs (default 100)")
      ->check(integer_at_least(0));
  command
      ->add_option("--metric", options.metric,
                   "Validation score that early stopping and the best epoch follow, reported on "
                   "the test nodes: accuracy, or roc-auc for two-class tasks (default accuracy)")
      ->check(CLI::IsMember({"accuracy", "roc-auc"}));
  command
      ->add_option("--select", options.selection,
                   "Which epoch's parameters a run keeps: gat (the GAT reference's: patience "
                   "resets when validation loss or --metric improves, parameters kept when both "
                   "do; the default) or metric (kept, and patience reset, when --metric beats "
                   "every earlier epoch)")
      ->check(CLI::IsMember({"gat", "metric"}));
  command
      ->add_option("--runs", options.runs,
                   "Runs with seeds seed, seed+1, ...; a random split is drawn again for each run "
                   "with its seed; on data with fixed splits run r trains on split r (from "
                   "--split-index)")
      ->check(integer_at_least(1))
      ->capture_default_str();
  command->add_flag("--same-split", options.same_split,
                    "With --runs: keep the first run's split (random or fixed), so runs differ "
                    "only in initialisation and dropout");
  add_model_limits(*command, options.limits, true);
  command->add_option("--metrics-json", options.metrics_json,
                      "Also write per-run and summary metrics to this file, as --json prints them");
  command->add_option("--split-out", options.split_out,
                      "Write the split used to this file, as --split reads it (with --task link: "
                      "the first run's edge split, as --edge-split reads it)");
  command->add_option("--save", options.save,
                      "Save the model and its training state to this file (one run only)");
  command->add_option("--resume", options.resume,
                      "Continue the run saved in this file; only --epochs may change");
  command->add_option("--plot", options.plot,
                      "Draw loss and accuracy per epoch into this .svg or .png (gnuplot) and "
                      "write the curves' CSV beside it (one run only)");
  add_run_options(*command, options.run, true);
  command->footer(
      "--seed seeds the first run (initialisation, dropout and a random split); run k uses\n"
      "seed+k for all three unless --same-split.\n"
      "Features with no negative entries are row-normalised, as in the paper.\n\n"
      "Examples:\n"
      "  maskgat train --dataset cora\n"
      "  maskgat train --dataset citeseer --runs 10 --metrics-json citeseer.json\n"
      "  maskgat train --dataset cora --attention gatv2 --threads 1\n"
      "  maskgat train --dataset cora --pe lap:8 --runs 10\n"
      "  maskgat train --dataset tolokers --metric roc-auc --runs 10   # its 10 fixed splits\n"
      "  maskgat train --dataset cora --epochs 50 --patience 0 --save cora.ckpt\n"
      "  maskgat train --dataset cora --plot curves.png   # and curves.csv\n"
      "  maskgat train --dataset cora --resume cora.ckpt --epochs 100 --save cora2.ckpt\n"
      "  maskgat train --dataset synthetic:nodes=1000000 --batch-size 1024 --fanout 10,10\n"
      "  mpirun -np 4 maskgat train --partitions cora.parts --epochs 200\n"
      "  maskgat train --task graph --dataset tu:PROTEINS --model docs/specs/graph-gat.json "
      "--folds 10\n"
      "  maskgat train --task link --dataset cora --runs 10\n"
      "  maskgat train --graph edges.txt --features features.csv --labels labels.txt "
      "--undirected");
}

int run_train(TrainCommandOptions& options) {
  if (options.task == "link") return run_train_links(options);
  if (options.out_dim || options.decoder || options.decoder_hidden || options.val_fraction ||
      options.test_fraction || options.edge_split) {
    throw InvalidArgument(
        "--out-dim, --decoder, --decoder-hidden, --val-fraction, --test-fraction and "
        "--edge-split are for --task link");
  }
  if (options.task == "graph") return run_train_graphs(options);
  if (names_collection(options.data)) {
    throw InvalidArgument(
        "a TU collection holds many graphs with a label each: train on it with --task graph");
  }
  if (options.folds || options.fold) {
    throw InvalidArgument(
        "--folds and --fold split a collection of graphs; they need --task graph");
  }
  if (options.partitions) return run_train_on_partitions(options);
  if (options.resume) check_resume_options(options);
  const RunOptions& output = options.run;
  std::optional<train::Checkpoint> resumed = check_run_files(options);
  const auto threads = limit_threads(output);
  const Dataset dataset =
      resumed ? load_data_for_model(options.data, resumed->data, /*with_split=*/true,
                                    options.resume->string(), /*offers_as_given=*/false, output)
              : load_model_data(options.data, output);
  const GraphReading graph = graph_reading(dataset);
  // On data that carries fixed splits, run r trains on the r-th from the chosen one.
  const std::int64_t first_split = dataset.preparation.fixed_split;
  const bool over_fixed_splits = first_split >= 0 && !options.same_split;
  if (over_fixed_splits) {
    const auto splits = static_cast<std::int64_t>(dataset.fixed_splits.size());
    const std::string from =
        first_split == 0 ? "r" : std::to_string(first_split) + " + r (--split-index)";
    if (first_split + options.runs > splits) {
      throw InvalidArgument("--runs " + std::to_string(options.runs) + ": " + dataset.name +
                            " carries " + std::to_string(splits) +
                            " fixed splits and run r trains on split " + from + ", so at most " +
                            std::to_string(splits - first_split) +
                            " runs; --same-split trains every run on one split");
    }
    if (options.runs > 1) {
      say(output, "note: " + dataset.name + " carries " + std::to_string(splits) +
                      " fixed splits: run r trains on split " + from);
    }
  }

  std::vector<train::FitResult> results;
  std::vector<nlohmann::ordered_json> run_entries;  // per run: its metrics JSON
  std::vector<train::EpochStats> curves;            // of the last run, for --plot (one run only)
  train::TrainOptions last;
  Dataset redrawn;  // a later run's own random split of the data, or its fixed split
  for (std::int64_t run = 0; run < options.runs; ++run) {
    const Dataset& data = [&]() -> const Dataset& {
      if (run > 0 && over_fixed_splits) {
        redrawn = dataset;
        use_fixed_split(redrawn, first_split + run);
        return redrawn;
      }
      if (run == 0 || options.same_split || !dataset.preparation.random_split) return dataset;
      redrawn = dataset;
      std::erase_if(redrawn.notes,
                    [](const std::string& note) { return note.starts_with("random split:"); });
      draw_split(redrawn, dataset.preparation.split_sizes,
                 dataset.preparation.split_seed + static_cast<std::uint64_t>(run));
      return redrawn;
    }();
    const train::TrainOptions train_options =
        resumed ? resumed->options
                : recipe(options, options.data.load.seed + static_cast<std::uint64_t>(run),
                         single_model(options));
    // A model too large for its limits is bad usage (the options asked for it), not bad data.
    train::check_model_size(train_options, data);
    last = train_options;
    train::Trainer trainer = [&] {
      try {
        if (resumed) {
          return train::Trainer(data, *resumed, options.epochs.value_or(resumed->options.epochs));
        }
        return train::Trainer(data, train_options);
      } catch (const InvalidArgument& error) {
        throw Error(error.what());  // data the model cannot train on is a data error
      }
    }();
    // Written once the first run's model is built on it: every argument has been checked.
    if (run == 0 && options.split_out) write_split_out(*options.split_out, dataset, output);
    const train::FitResult result =
        fit_run(trainer, output, run, options.runs, train_options, curves);
    results.push_back(result);
    run_entries.push_back(run_json(train_options.seed, data, result, train_options.metric));
    if (options.save) {
      train::save_checkpoint(*options.save, trainer.checkpoint(), output.force);
      say(output, "saved the model to " + options.save->string());
    }
    if (!output.quiet && !output.json) {
      const std::string key = metric_key(train_options.metric);
      std::cout << "run " << run + 1 << " seed " << train_options.seed
                << (data.preparation.fixed_split >= 0
                        ? " split " + std::to_string(data.preparation.fixed_split)
                        : std::string())
                << ": test_" << key << " "
                << (result.test_nodes > 0 ? fixed(result.test_score, 4) : "none") << " val_" << key
                << " " << (result.val_nodes > 0 ? fixed(result.val_score, 4) : "none")
                << " best_epoch " << result.best_epoch << " epochs " << result.epochs << " "
                << fixed(result.ms_per_epoch, 2) << " ms/epoch\n";
    }
  }

  // The mean and (population) standard deviation over the runs of one of their values.
  const auto count = static_cast<double>(results.size());
  const auto spread = [&](double train::FitResult::*value) {
    double mean = 0.0;
    for (const auto& result : results) mean += result.*value;
    mean /= count;
    double variance = 0.0;
    for (const auto& result : results) variance += std::pow(result.*value - mean, 2);
    return std::pair(mean, std::sqrt(variance / count));
  };
  const double ms = spread(&train::FitResult::ms_per_epoch).first;
  double epochs = 0.0;
  for (const auto& result : results) epochs += static_cast<double>(result.epochs);
  epochs /= count;
  const auto accuracy = spread(&train::FitResult::test_accuracy);
  const auto score = spread(&train::FitResult::test_score);
  // Every run's split has the same sizes, so all or none of them have test nodes.
  const bool tested = results.front().test_nodes > 0;
  const bool roc_auc = last.metric == train::Metric::kRocAuc;
  if (!tested) {
    say(output, std::string("note: the split has no test nodes, so there is no test ") +
                    (roc_auc ? "ROC AUC" : "accuracy"));
  }
  if (!output.json) {
    std::cout << dataset.name << " " << model_label(last)
              << (last.positional.kind == transforms::EncodingKind::kNone
                      ? ""
                      : " + " + transforms::positional_encoding_name(last.positional))
              << (roc_auc ? ": test ROC AUC " : ": test accuracy ")
              << (!tested   ? std::string("none (no test nodes)")
                  : roc_auc ? fixed(score.first, 4) + " ± " + fixed(score.second, 4)
                            : fixed(100.0 * accuracy.first, 2) + " ± " +
                                  fixed(100.0 * accuracy.second, 2) + " %")
              << " over " << results.size() << (results.size() == 1 ? " run" : " runs")
              << (over_fixed_splits && results.size() > 1 ? " (one per fixed split)" : "") << ", "
              << fixed(epochs, results.size() == 1 ? 0 : 1) << " epochs"
              << (results.size() == 1 ? "" : " on average") << ", " << fixed(ms, 2)
              << " ms per epoch" << graph.phrase() << '\n';
  }

  const nlohmann::ordered_json out =
      train_json(dataset.name, last, graph, nlohmann::ordered_json(run_entries),
                 tested ? std::optional(accuracy) : std::nullopt,
                 tested ? std::optional(score) : std::nullopt);
  report_json(out, options.metrics_json, output);
  // Last: the model and the metrics are written whatever happens to gnuplot.
  if (options.plot) {
    plot_training_curves(curves, results.back().best_epoch, dataset.name + " " + model_label(last),
                         *options.plot, output);
  }
  return 0;
}

}  // namespace maskgat::app
