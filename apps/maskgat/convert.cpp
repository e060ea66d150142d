#include "convert.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "maskgat/io/store.hpp"
#include "maskgat/io/synthetic.hpp"
#include "outputs.hpp"

namespace maskgat::app {
namespace {

// Whether the data is a synthetic graph the generator can write straight into the store: no
// preparation beyond its own split (largest component, split files and feature rules need the
// dataset in memory).
bool streams(const DataOptions& data) {
  std::string prefix = data.dataset.substr(0, 10);
  std::transform(prefix.begin(), prefix.end(), prefix.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return prefix == "synthetic:" && !data.load.largest_component && data.files.split.empty();
}

}  // namespace

void add_convert_command(CLI::App& app, ConvertOptions& options) {
  auto* command = app.add_subcommand(
      "convert",
      "Write any input as a binary graph store that --store maps instead of parsing");
  add_data_options(*command, options.data);
  command->add_option("--out", options.out, "The store's directory (created)")->required();
  add_run_options(*command, options.run, true);
  command->footer(
      "The store holds the graph and its transpose, the features, labels, split and names as\n"
      "prepared by the options (direction, normalisation, largest component, split). A synthetic\n"
      "graph is written a block of nodes at a time, so graphs larger than memory can be built.\n"
      "--force replaces an existing store, never another directory.\n\n"
      "Examples:\n"
      "  maskgat convert --dataset cora --out cora.store\n"
      "  maskgat convert --dataset synthetic:nodes=10000000,degree=10 --split-sizes 100000,10000,"
      "10000 --out big.store\n"
      "  maskgat convert --graph edges.txt --features f.csv --labels l.txt --out own.store\n"
      "  maskgat train --store cora.store --epochs 200");
}

int run_convert(ConvertOptions& options) {
  const RunOptions& run = options.run;
  OutputPlan inputs(run.force);
  add_inputs(inputs, options.data);
  inputs.check();
  const auto threads = limit_threads(run);
  const auto start = std::chrono::steady_clock::now();
  std::int64_t nodes = 0;
  std::int64_t edges = 0;
  if (streams(options.data)) {
    DataOptions& data = options.data;
    // The split options as load_data reads them.
    if (!data.split_sizes.empty()) {
      data.load.split_sizes =
          RandomSplitSizes{data.split_sizes[0], data.split_sizes[1], data.split_sizes[2]};
    }
    if (!data.split_per_class.empty()) {
      data.load.split_sizes = per_class_split(data.split_per_class[0], data.split_per_class[1]);
    }
    const SyntheticOptions synthetic = parse_synthetic_spec(data.dataset);
    edges = write_synthetic_store(synthetic, data.load, options.out, run.force);
    nodes = synthetic.nodes;
  } else {
    const Dataset dataset = load_data(options.data, run);
    write_store(dataset, options.out, run.force);
    nodes = dataset.graph.num_nodes();
    edges = dataset.graph.num_edges();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (run.json) {
    const nlohmann::ordered_json out = {{"command", "convert"},
                                        {"store", options.out.string()},
                                        {"nodes", nodes},
                                        {"edges", edges},
                                        {"seconds", seconds}};
    std::cout << json_text(out, run) << '\n';
  } else {
    say(run, "wrote a store of " + std::to_string(nodes) + " nodes and " + std::to_string(edges) +
                 " edges to " + options.out.string() + " in " + fixed(seconds, 1) + " s");
  }
  return 0;
}

}  // namespace maskgat::app
