#pragma once
// The input options every subcommand shares (a built-in dataset or own files) and loading them.

#include <tbb/global_control.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "maskgat/io/dataset.hpp"
#include "maskgat/io/tu.hpp"
#include "maskgat/train/checkpoint.hpp"
#include "maskgat/train/trainer.hpp"

namespace maskgat::app {

struct DataOptions {
  std::string dataset;
  std::filesystem::path npz;    // --npz: a graph in an npz archive
  std::filesystem::path store;  // --store: a binary graph store, mapped
  std::filesystem::path tu;     // --tu: a TU graph-classification collection, zip or folder
  bool verify_store = false;    // --verify: also check the store's feature checksums
  std::optional<std::filesystem::path> data_dir;
  std::string source = "planetoid";
  FileSources files;
  DatasetOptions load;
  std::optional<std::uint64_t> seed;      // --seed (default 0; a model's split seed when applied)
  std::vector<std::int64_t> split_sizes;  // --split-sizes: train per class, val, test; or empty
  std::vector<std::int64_t> split_per_class;  // --split-per-class: train, val per class; or empty
  std::optional<std::int64_t> split_index;    // --split-index: of data that carries fixed splits
  bool as_given = false;  // --data-as-given: a model's preparation is not applied
  double mpi_timeout =
      600.0;  // --mpi-timeout: seconds a rank waits for another (with --partitions)
};

// How a subcommand runs and reports; the same options on every subcommand.
struct RunOptions {
  std::int64_t threads = 0;  // worker threads, 0: all cores
  bool force = false;        // replace existing output files
  bool json = false;         // stdout holds one JSON object and nothing else
  bool quiet = false;        // nothing on stderr but errors
  bool verbose = false;      // also what was loaded, from where, with how many threads
};

// Checks of an option's value that name what is allowed and what was given, e.g.
// `--heads: must be an integer >= 1, got 0` or `--lr: 'abc' is not a number (expected > 0)`.
CLI::Validator integer_at_least(std::int64_t minimum);
// A real number above `minimum` (at least it when `inclusive`), and below `below` when given.
CLI::Validator number_above(double minimum, bool inclusive, std::optional<double> below = {});

// Limits on the model a command builds (train) or applies (evaluate, predict).
struct ModelLimits {
  std::int64_t max_parameters = train::TrainOptions{}.max_parameters;
  std::int64_t max_activations = train::TrainOptions{}.max_activations;
};

// Registers `--max-activations` on `command`, and `--max-parameters` when it `builds` a model.
void add_model_limits(CLI::App& command, ModelLimits& limits, bool builds);

// Registers `--threads`, `--json`, `--quiet`, `--verbose` and, for a subcommand that writes
// files, `--force` on `command`.
void add_run_options(CLI::App& command, RunOptions& options, bool writes_files);

// `line` on stderr unless --quiet (notes, what was written).
void say(const RunOptions& run, const std::string& line);

// `line` on stderr with --verbose only.
void say_verbose(const RunOptions& run, const std::string& line);

// Registers `--dataset`, `--data-dir`, `--source`, `--graph`, `--npz`, `--store`, `--tu`,
// `--verify`,
// `--format`, `--features`, `--labels`, `--split`, `--undirected`, `--numeric-ids`,
// `--num-nodes`, `--strict`, `--seed`, the split options and the reader limits on `command`.
// `instead`, when given, is an option that reads the data another way (--partitions): it
// excludes the four sources and satisfies the need for one, and `--mpi-timeout` needs it.
void add_data_options(CLI::App& command, DataOptions& options, CLI::Option* instead = nullptr);

// The data directory when neither `--data-dir` nor $MASKGAT_DATA_DIR gives one: the source
// tree's datasets/ for a maskgat run from its build tree, else ${XDG_DATA_HOME:-~/.local/share}/
// maskgat (which the installed `maskgat-fetch` fills); empty when neither XDG_DATA_HOME
// (absolute) nor HOME is set.
std::filesystem::path default_data_dir();

// Loads what the options name, runs `prepare` on it (when given), and prints the loaders' notes to
// stderr as `note:` lines (unless --quiet; with --verbose also what was loaded from where, and
// how long it took).
Dataset load_data(DataOptions& options, const RunOptions& run,
                  const std::function<void(Dataset&)>& prepare = {});

// Registers `--data-as-given` on a command that applies a saved model (evaluate, predict).
void add_data_as_given(CLI::App& command, DataOptions& options);

// Loads the data a saved model (`model`, its record `trained`) is applied to or resumes on,
// prepared as its training data was unless --data-as-given: own edges read both ways when its
// were, feature rows normalised (when no entry is negative) or not as its were, and, when
// `with_split` and the data has the model's nodes, the model's random split drawn again unless
// --seed, --split-sizes or --split ask for another (of data that carries fixed splits, the model's
// fixed split taken unless --split-index, --split-sizes or --split ask for another). Then refuses
// (InvalidArgument) data prepared otherwise (`train::data_differences`), naming every difference
// and what to do; with
// --data-as-given says the differences as notes. `offers_as_given`: the command has the option.
Dataset load_data_for_model(DataOptions& options, const std::optional<train::DataRecord>& trained,
                            bool with_split, const std::string& model, bool offers_as_given,
                            const RunOptions& run);

// Whether the options name a collection of graphs (`--tu FILE` or `--dataset tu:NAME`) rather
// than one graph.
bool names_collection(const DataOptions& options);

// Reads the collection the options name: `--tu`'s zip or folder, or `tu/NAME.zip` in the data
// directory for `--dataset tu:NAME`; prints its reader's notes (unless --quiet).
GraphCollection load_collection(const DataOptions& options, const RunOptions& run);

// Loads the data a model trains on or is applied to: features required.
Dataset load_model_data(DataOptions& options, const RunOptions& run,
                        const std::function<void(Dataset&)>& prepare = {});

// Writes `dataset`'s split to `path` (--split-out) and says so.
void write_split_out(const std::filesystem::path& path, const Dataset& dataset,
                     const RunOptions& run);

// Limits the worker threads to --threads for the lifetime of the returned object (0: all cores).
std::optional<tbb::global_control> limit_threads(const RunOptions& run);

// `value` with `digits` digits after the point, for printed metrics.
std::string fixed(double value, int digits);

}  // namespace maskgat::app
