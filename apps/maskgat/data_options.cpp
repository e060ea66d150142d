#include "data_options.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>

#include "maskgat/core/error.hpp"
#include "maskgat/io/npz.hpp"
#include "maskgat/io/store.hpp"

namespace maskgat::app {

void add_run_options(CLI::App& command, RunOptions& options, bool writes_files) {
  command.add_option("--threads", options.threads, "Worker threads (0: all cores)")
      ->check(integer_at_least(0))
      ->capture_default_str();
  if (writes_files) command.add_flag("--force", options.force, "Replace existing output files");
  command.add_flag("--json", options.json,
                   "Print the result as one JSON object on stdout instead of text (fields: "
                   "README, Machine-readable output)");
  auto* quiet = command.add_flag("--quiet,-q", options.quiet, "Print nothing on stderr but errors");
  command
      .add_flag("--verbose,-v", options.verbose,
                "Also print what was loaded, from where, and the threads used")
      ->excludes(quiet);
}

CLI::Validator integer_at_least(std::int64_t minimum) {
  const std::string expected = "an integer >= " + std::to_string(minimum);
  return {[expected, minimum](std::string& text) -> std::string {
            std::int64_t value = 0;
            const auto [end, error] =
                std::from_chars(text.data(), text.data() + text.size(), value);
            if (error != std::errc() || end != text.data() + text.size()) {
              return "must be " + expected + ", got '" + text + "'";
            }
            if (value < minimum) return "must be " + expected + ", got " + text;
            return {};
          },
          expected};
}

CLI::Validator number_above(double minimum, bool inclusive, std::optional<double> below) {
  std::string expected = std::string(inclusive ? ">= " : "> ") + fixed(minimum, 0);
  if (below) expected += " and < " + fixed(*below, 0);
  return {[=](std::string& text) -> std::string {
            char* end = nullptr;
            const double value = std::strtod(text.c_str(), &end);
            if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value)) {
              return "'" + text + "' is not a number (expected " + expected + ")";
            }
            const bool low = inclusive ? value < minimum : value <= minimum;
            if (low || (below && value >= *below)) {
              return "must be a number " + expected + ", got " + text;
            }
            return {};
          },
          "a number " + expected};
}

void add_model_limits(CLI::App& command, ModelLimits& limits, bool builds) {
  if (builds) {
    command
        .add_option("--max-parameters", limits.max_parameters,
                    "Limit: weights of the model's projections")
        ->check(integer_at_least(1))
        ->capture_default_str();
  }
  command
      .add_option("--max-activations", limits.max_activations,
                  "Limit: values of one layer's output over all nodes (nodes x heads x width)")
      ->check(integer_at_least(1))
      ->capture_default_str();
}

void say(const RunOptions& run, const std::string& line) {
  if (run.quiet) return;
  // A note is said once, however many steps of a command come upon the same thing.
  static std::set<std::string, std::less<>> said_notes;
  if (line.starts_with("note: ") && !said_notes.insert(line).second) return;
  std::cerr << line << '\n';
}

void say_verbose(const RunOptions& run, const std::string& line) {
  if (run.verbose) std::cerr << line << '\n';
}

void add_data_options(CLI::App& command, DataOptions& options, CLI::Option* instead) {
  auto& files = options.files;
  auto& load = options.load;
  auto& limits = load.read.limits;
  auto* dataset = command.add_option(
      "--dataset", options.dataset,
      "Built-in dataset: cora, citeseer, pubmed, amazon-computers, amazon-photo, coauthor-cs, "
      "the heterophily graphs actor, chameleon-filtered, squirrel-filtered, tolokers, cornell, "
      "texas, wisconsin, synthetic:nodes=N,degree=D,features=F,"
      "classes=K[,seed=S][,homophily=H], or a TU graph collection tu:MUTAG, tu:PROTEINS, "
      "tu:ENZYMES (datasets/fetch.sh tu)");
  command.add_option("--data-dir", options.data_dir,
                     "Data directory (default: $MASKGAT_DATA_DIR, else datasets/ of the source "
                     "tree for a maskgat run from its build tree, else "
                     "${XDG_DATA_HOME:-~/.local/share}/maskgat)");
  command.add_option("--source", options.source, "Files of the built-in datasets")
      ->check(CLI::IsMember({"planetoid", "linqs"}))
      ->capture_default_str();
  auto* graph = command.add_option(
      "--graph", files.graph,
      "Own graph file: .graphml, .dot/.gv, anything else an edge list 'src dst [weight]'");
  dataset->excludes(graph);
  auto* npz = command.add_option(
      "--npz", options.npz,
      "Graph in an npz archive (Shchur et al.'s layouts: plain arrays, or pickled scipy "
      "matrices; or the heterophily benchmark's, with fixed splits); nodes are named by their "
      "row");
  npz->excludes(dataset)->excludes(graph);
  auto* store = command.add_option(
      "--store", options.store,
      "A binary graph store written by maskgat convert: mapped, not parsed (--split, "
      "--split-sizes, --split-per-class, --seed and --largest-component still apply)");
  store->excludes(dataset)->excludes(graph)->excludes(npz);
  auto* tu = command.add_option(
      "--tu", options.tu,
      "A TU graph-classification collection (MUTAG.zip, ...): its zip or a folder of its files");
  tu->excludes(dataset)->excludes(graph)->excludes(npz)->excludes(store);
  command
      .add_flag("--verify", options.verify_store,
                "With --store: also verify the features' checksums, reading every page of them "
                "(the other arrays' are always verified)")
      ->needs(store);
  command.add_option("--format", files.format, "Graph file format")
      ->check(CLI::IsMember({"auto", "edgelist", "graphml", "dot"}))
      ->capture_default_str()
      ->needs(graph);
  command
      .add_option("--features", files.features,
                  "CSV/TSV features with a header 'node,<names...>'; defines the nodes")
      ->needs(graph);
  command.add_option("--labels", files.labels, "Labels file, 'node label' per line")->needs(graph);
  auto* split_file =
      command.add_option("--split", files.split,
                         "Split file, 'node train|val|test' per line, naming the nodes as "
                         "--split-out writes them (npz graphs: by their row)");
  command.add_flag("--undirected", files.undirected, "Add the reverse of every edge")->needs(graph);
  command
      .add_option("--edge-features", files.edge_features,
                  "Features of the edge list's edges, for models with edge_dim: a row of numbers "
                  "per edge in its order (CSV/TSV, a header line allowed), or an npz holding one "
                  "[E, D] array; a reverse edge --undirected adds takes its edge's row")
      ->needs(graph);
  command.add_flag("--numeric-ids", files.numeric_ids, "Node tokens are 0-based integer ids")
      ->needs(graph);
  command
      .add_option("--num-nodes", files.num_nodes,
                  "With --numeric-ids: the node count (default: largest id + 1)")
      ->check(integer_at_least(0))
      ->needs(graph);
  command.add_flag("--strict", load.read.strict,
                   "Treat merged or dropped input (duplicates, unknown citations) as errors");
  command.add_option("--seed", options.seed,
                     "Seed of random splits and, in train, of the model (default 0)");
  auto* sizes =
      command
          .add_option("--split-sizes", options.split_sizes,
                      "TRAIN_PER_CLASS,VAL,TEST: sizes of random splits (default 20,500,1000, "
                      "scaled down on graphs too small for them)")
          ->delimiter(',')
          ->expected(3)
          ->check(integer_at_least(0));
  auto* per_class =
      command
          .add_option(
              "--split-per-class", options.split_per_class,
              "TRAIN,VAL: random splits of TRAIN training and VAL validation nodes per class "
              "and every other labelled node for test (Shchur et al.: 20,30)")
          ->delimiter(',')
          ->expected(2)
          ->check(integer_at_least(0));
  per_class->excludes(sizes);
  command
      .add_option("--split-index", options.split_index,
                  "Of data that carries fixed splits (the heterophily graphs: 10), the one to use "
                  "(default 0; train --runs R uses splits K to K+R-1)")
      ->check(integer_at_least(0))
      ->excludes(sizes)
      ->excludes(per_class)
      ->excludes(split_file);
  command.add_flag("--largest-component", load.largest_component,
                   "Keep only the largest weakly connected component (as Shchur et al.); the "
                   "split is drawn on it");
  command.add_option("--max-nodes", limits.max_nodes, "Reader limit: nodes")
      ->check(integer_at_least(1))
      ->capture_default_str();
  command.add_option("--max-edges", limits.max_edges, "Reader limit: edges")
      ->check(integer_at_least(1))
      ->capture_default_str();
  command.add_option("--max-features", limits.max_features, "Reader limit: feature width")
      ->check(integer_at_least(1))
      ->capture_default_str();
  command.add_option("--max-classes", limits.max_classes, "Reader limit: distinct labels")
      ->check(integer_at_least(1))
      ->capture_default_str();
  command
      .add_option("--max-file-bytes", limits.max_file_bytes,
                  "Reader limit: size of files read whole (GraphML, DOT, pickles, checkpoints)")
      ->check(integer_at_least(1))
      ->capture_default_str();
  command
      .add_option("--max-line-bytes", limits.max_line_bytes,
                  "Reader limit: one line of a text file (edge lists, features, labels, splits)")
      ->check(integer_at_least(1))
      ->capture_default_str();
  command
      .add_option("--max-nesting-depth", limits.max_nesting_depth,
                  "Reader limit: nesting in GraphML and DOT files")
      ->check(integer_at_least(1))
      ->capture_default_str();
  if (instead != nullptr) {
    for (CLI::Option* source : {dataset, graph, npz, store, tu}) instead->excludes(source);
    command
        .add_option("--mpi-timeout", options.mpi_timeout,
                    "With " + instead->get_name() +
                        ": seconds one rank waits for another before it ends the job with an "
                        "error naming the rank that did not answer; 0 waits for ever")
        ->check(number_above(0.0, true))
        ->needs(instead)
        ->capture_default_str();
  }
  command.callback([dataset, graph, npz, store, tu, instead] {
    if (dataset->count() == 0 && graph->count() == 0 && npz->count() == 0 && store->count() == 0 &&
        tu->count() == 0 && (instead == nullptr || instead->count() == 0)) {
      throw CLI::RequiredError("--dataset, --graph, --npz, --store or --tu" +
                               (instead == nullptr ? "" : " (or " + instead->get_name() + ")"));
    }
  });
}

bool names_collection(const DataOptions& options) {
  return !options.tu.empty() || options.dataset.starts_with("tu:");
}

GraphCollection load_collection(const DataOptions& options, const RunOptions& run) {
  std::filesystem::path path = options.tu;
  if (path.empty()) {
    const std::string name = options.dataset.substr(3);
    path = resolve_data_dir(options.data_dir, default_data_dir()) / "tu" / (name + ".zip");
  }
  GraphCollection collection = read_tu(path, options.load.read);
  for (const std::string& note : collection.notes) say(run, "note: tu: " + note);
  say_verbose(run, "loaded " + collection.name + " from " + path.string());
  return collection;
}

std::filesystem::path default_data_dir() {
  std::error_code exe_error;
  std::error_code build_error;
  const auto exe = std::filesystem::canonical("/proc/self/exe", exe_error);
  const auto build = std::filesystem::canonical(MASKGAT_BUILD_DIR, build_error);
  if (!exe_error && !build_error &&
      std::mismatch(build.begin(), build.end(), exe.begin(), exe.end()).first == build.end()) {
    return MASKGAT_SOURCE_DATA_DIR;
  }
  const char* xdg = std::getenv("XDG_DATA_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::filesystem::path(xdg) / "maskgat";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') {
    return std::filesystem::path(home) / ".local" / "share" / "maskgat";
  }
  return {};
}

void add_data_as_given(CLI::App& command, DataOptions& options) {
  command.add_flag("--data-as-given", options.as_given,
                   "Use the data as the options give it, not prepared as the model's training "
                   "data was (direction, normalisation, split); differences become notes");
}

Dataset load_data_for_model(DataOptions& options, const std::optional<train::DataRecord>& trained,
                            bool with_split, const std::string& model, bool offers_as_given,
                            const RunOptions& run) {
  const bool follow = trained && !options.as_given;
  if (follow) {
    FileSources* files = options.files.graph.empty() ? nullptr : &options.files;
    for (const std::string& note : train::prepare_as_trained(*trained, files, options.load)) {
      say(run, "note: model " + model + ": " + note);
    }
  }
  // A random split is the options' own with a seed or sizes; a fixed split with an index, or
  // when sizes or a split file replace it.
  const bool own_sizes = !options.split_sizes.empty() || !options.split_per_class.empty() ||
                         !options.files.split.empty();
  const bool own_random_split = options.seed || own_sizes;
  const bool own_fixed_split = options.split_index || own_sizes;
  Dataset dataset = load_model_data(options, run, [&](Dataset& loaded) {
    const bool own_split = loaded.preparation.fixed_split >= 0 ? own_fixed_split : own_random_split;
    if (follow && with_split && !own_split) train::redraw_split_as_trained(*trained, loaded);
  });
  if (!trained) {
    say(run, "note: model " + model +
                 " holds no record of its data (imported, or saved by an older version); the "
                 "data is used "
                 "as given");
    return dataset;
  }
  const train::DataRecord given = train::record_data(dataset);
  if (with_split && (given.nodes != trained->nodes || given.nodes_hash != trained->nodes_hash)) {
    say(run, "note: model " + model + " was trained on other nodes (" +
                 std::to_string(trained->nodes) + "); " +
                 (trained->fitted.empty()
                      ? "it was saved by an older version, which does not record the nodes it "
                        "trained on, so test scores may include them"
                      : "its training and validation nodes are matched to this data's test "
                        "nodes by name"));
  }
  const std::vector<std::string> differences =
      train::data_differences(*trained, dataset, with_split);
  if (differences.empty()) return dataset;
  if (options.as_given) {
    for (const std::string& difference : differences) {
      say(run, "note: --data-as-given: model " + model + ": " + difference);
    }
    return dataset;
  }
  std::string message = "model " + model + " was trained on data prepared otherwise: ";
  for (std::size_t k = 0; k < differences.size(); ++k) {
    message += (k == 0 ? "" : "; ") + differences[k];
  }
  throw InvalidArgument(
      message + ". Leave out the options that differ" +
      (offers_as_given ? ", or pass --data-as-given to use the data as given" : ""));
}

namespace {

// The store --store names, prepared as the options ask: only its largest component, and a split
// drawn again when --seed, --split-sizes or --split-per-class is given (with the stored split's
// sizes when none are).
Dataset open_store_as_asked(const DataOptions& options) {
  const DatasetOptions& load = options.load;
  StoreOptions store;
  store.verify_features = options.verify_store;
  store.limits = load.read.limits;
  Dataset dataset = open_store(options.store, store);
  if (load.fixed_split) use_fixed_split(dataset, *load.fixed_split);  // a store carries none
  if (load.largest_component && !dataset.preparation.largest_component) {
    keep_largest_component(dataset);
  }
  if (options.seed || load.split_sizes) {
    std::optional<RandomSplitSizes> sizes = load.split_sizes;
    if (!sizes && dataset.preparation.random_split) sizes = dataset.preparation.split_sizes;
    std::erase_if(dataset.notes,
                  [](const std::string& note) { return note.starts_with("random split:"); });
    draw_split(dataset, sizes, load.seed);
  }
  return dataset;
}

}  // namespace

Dataset load_data(DataOptions& options, const RunOptions& run,
                  const std::function<void(Dataset&)>& prepare) {
  const auto start = std::chrono::steady_clock::now();
  auto& load = options.load;
  load.seed = options.seed.value_or(0);
  if (!options.split_sizes.empty()) {
    load.split_sizes =
        RandomSplitSizes{options.split_sizes[0], options.split_sizes[1], options.split_sizes[2]};
  }
  if (!options.split_per_class.empty()) {
    load.split_sizes = per_class_split(options.split_per_class[0], options.split_per_class[1]);
  }
  load.fixed_split = options.split_index;
  load.source = options.source == "linqs" ? DatasetSource::kLinqs : DatasetSource::kPlanetoid;
  load.data_dir = resolve_data_dir(options.data_dir, default_data_dir());
  std::string prefix = options.dataset.substr(0, 10);
  std::transform(prefix.begin(), prefix.end(), prefix.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const bool reads_files = !options.dataset.empty() && prefix != "synthetic:";
  if (reads_files && load.data_dir.empty()) {
    throw InvalidArgument(
        "no data directory for " + options.dataset +
        ": neither XDG_DATA_HOME nor HOME is set; pass --data-dir or set MASKGAT_DATA_DIR");
  }
  Dataset dataset = !options.dataset.empty() ? load_dataset(options.dataset, load)
                    : !options.npz.empty()
                        ? read_npz(options.npz, options.npz.filename().string(), load)
                    : !options.store.empty() ? open_store_as_asked(options)
                                             : load_files(options.files, load);
  if (options.files.graph.empty() && !options.files.split.empty()) {
    read_split_into(dataset, options.files.split, load.read);  // own files read theirs above
  }
  if (prepare) prepare(dataset);
  for (const auto& note : dataset.notes) say(run, "note: " + note);
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  say_verbose(run,
              "loaded " + dataset.name + " (" +
                  (!options.dataset.empty() ? options.source + " files in " + load.data_dir.string()
                   : !options.npz.empty()   ? std::string("npz archive")
                   : !options.store.empty() ? "store " + options.store.string()
                                            : std::string("own files")) +
                  "): " + std::to_string(dataset.graph.num_nodes()) + " nodes, " +
                  std::to_string(dataset.graph.num_edges()) + " edges, " +
                  std::to_string(dataset.features.cols()) + " features, " +
                  std::to_string(dataset.num_classes()) + " classes in " + fixed(took.count(), 0) +
                  " ms; " +
                  std::to_string(tbb::global_control::active_value(
                      tbb::global_control::max_allowed_parallelism)) +
                  " threads");
  return dataset;
}

Dataset load_model_data(DataOptions& options, const RunOptions& run,
                        const std::function<void(Dataset&)>& prepare) {
  Dataset dataset = load_data(options, run, prepare);
  dataset.require_features();
  return dataset;
}

void write_split_out(const std::filesystem::path& path, const Dataset& dataset,
                     const RunOptions& run) {
  write_split(path, dataset.node_names, dataset.split, run.force);
  say(run, "wrote the split to " + path.string());
}

std::optional<tbb::global_control> limit_threads(const RunOptions& run) {
  std::optional<tbb::global_control> control;
  if (run.threads > 0) {
    control.emplace(tbb::global_control::max_allowed_parallelism,
                    static_cast<std::size_t>(run.threads));
  }
  return control;
}

std::string fixed(double value, int digits) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(digits) << value;
  return text.str();
}

}  // namespace maskgat::app
