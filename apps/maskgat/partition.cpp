#include "partition.hpp"

#include <metis.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/io/partition.hpp"
#include "outputs.hpp"

namespace maskgat::app {
namespace {

// The part of every node: METIS k-way on the symmetrised graph without self-loops, balanced on
// three weights per node (1, its in-degree, and 1 for a training node), so parts hold about as
// many nodes, in-edges and training nodes each: the work of a step's layers and of its loss. A
// weight that is 0 on every node (no edges, no training nodes) is left out, as METIS refuses it.
// METIS is serial and seeded, so the parts depend only on the data and the seed.
std::vector<std::int32_t> metis_parts(const Dataset& data, std::int32_t parts, std::int64_t seed) {
  const Graph& graph = data.graph;
  const NodeId n = graph.num_nodes();
  std::vector<std::int32_t> owner(static_cast<std::size_t>(n), 0);
  if (parts == 1) return owner;
  if (parts > n) {
    throw InvalidArgument("partition: --parts " + std::to_string(parts) + " is more than the " +
                          std::to_string(n) + " nodes of the graph");
  }
  constexpr auto kLargest = static_cast<std::int64_t>(std::numeric_limits<idx_t>::max());
  if (n > kLargest || graph.num_edges() > kLargest) {
    throw LimitError("partition", "", 0,
                     "the graph has " + std::to_string(n) + " nodes and " +
                         std::to_string(graph.num_edges()) +
                         " edges, over the 2^31 - 1 of this METIS's " +
                         std::to_string(sizeof(idx_t) * 8) + "-bit indices");
  }
  const bool edges = graph.num_edges() > 0;
  const bool training =
      std::find(data.split.begin(), data.split.end(), SplitPart::kTrain) != data.split.end();
  idx_t constraints = 1 + (edges ? 1 : 0) + (training ? 1 : 0);
  // Each node's neighbours either way, ascending and distinct: its in-row and out-row merged.
  std::vector<idx_t> xadj{0};
  std::vector<idx_t> adjncy;
  std::vector<idx_t> weights;
  xadj.reserve(static_cast<std::size_t>(n) + 1);
  weights.reserve(static_cast<std::size_t>(n * constraints));
  for (NodeId v = 0; v < n; ++v) {
    const auto in = graph.in_neighbors(v);
    const auto out = graph.out_neighbors(v);
    const std::size_t row = adjncy.size();
    std::set_union(in.begin(), in.end(), out.begin(), out.end(), std::back_inserter(adjncy));
    adjncy.erase(std::remove(adjncy.begin() + static_cast<std::ptrdiff_t>(row), adjncy.end(), v),
                 adjncy.end());
    adjncy.erase(std::unique(adjncy.begin() + static_cast<std::ptrdiff_t>(row), adjncy.end()),
                 adjncy.end());
    if (adjncy.size() > static_cast<std::size_t>(kLargest)) {
      throw LimitError("partition", "", 0,
                       "the symmetrised graph has more than 2^31 - 1 adjacency entries, over "
                       "METIS's 32-bit indices");
    }
    xadj.push_back(static_cast<idx_t>(adjncy.size()));
    weights.push_back(1);
    if (edges) weights.push_back(static_cast<idx_t>(in.size()));
    if (training) {
      weights.push_back(data.split[static_cast<std::size_t>(v)] == SplitPart::kTrain ? 1 : 0);
    }
  }
  idx_t nodes = static_cast<idx_t>(n);
  idx_t count = parts;
  idx_t cut = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = static_cast<idx_t>(seed);
  options[METIS_OPTION_NUMBERING] = 0;
  std::vector<idx_t> part(static_cast<std::size_t>(n));
  const int status =
      METIS_PartGraphKway(&nodes, &constraints, xadj.data(), adjncy.data(), weights.data(), nullptr,
                          nullptr, &count, nullptr, nullptr, options, &cut, part.data());
  if (status != METIS_OK) {
    throw Error("partition: METIS_PartGraphKway failed (" +
                std::string(status == METIS_ERROR_MEMORY  ? "out of memory"
                            : status == METIS_ERROR_INPUT ? "input refused"
                                                          : "error") +
                ") on " + std::to_string(n) + " nodes into " + std::to_string(parts) + " parts");
  }
  std::copy(part.begin(), part.end(), owner.begin());
  return owner;
}

std::string per_part(const std::vector<std::int64_t>& values) {
  std::string text;
  for (const std::int64_t value : values)
    text += (text.empty() ? "" : ", ") + std::to_string(value);
  return text;
}

}  // namespace

void add_partition_command(CLI::App& app, PartitionOptions& options) {
  auto* command = app.add_subcommand(
      "partition", "Split a graph into METIS parts, one graph store per part with its halo");
  add_data_options(*command, options.data);
  command->add_option("--parts", options.parts, "Number of parts P")
      ->required()
      ->check(integer_at_least(1));
  command->add_option("--metis-seed", options.metis_seed, "METIS's seed (default 0)")
      ->check(integer_at_least(0));
  command->add_option("--out", options.out, "The partition's directory (created)")->required();
  add_run_options(*command, options.run, true);
  command->footer(
      "METIS k-way runs on the graph made symmetric, balanced on nodes, in-edges and training\n"
      "nodes. Nodes are renumbered so that each part's are contiguous, and DIR/part-<q> is a\n"
      "graph store of part q's nodes (features, labels, split, names, every in-edge) followed by\n"
      "its halo (the other parts' nodes its in-edges read, with their features and no in-edges),\n"
      "with a file `part` naming the halo's owners. Prints the edges cut, the halo sizes, the\n"
      "training nodes and the balance.\n"
      "--force replaces an existing partition, never another directory.\n\n"
      "Examples:\n"
      "  maskgat partition --dataset cora --parts 4 --out cora.parts\n"
      "  maskgat partition --store big.store --parts 2 --out big.parts --json");
}

int run_partition(PartitionOptions& options) {
  const RunOptions& run = options.run;
  OutputPlan inputs(run.force);
  add_inputs(inputs, options.data);
  inputs.check();
  const auto threads = limit_threads(run);
  const Dataset dataset = load_data(options.data, run);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::int32_t> owner = metis_parts(dataset, options.parts, options.metis_seed);
  const double metis_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const PartitionStats stats =
      write_partition(dataset, owner, options.parts, options.out, run.force);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const EdgeId edges = dataset.graph.num_edges();
  const double cut_share =
      edges == 0 ? 0.0 : static_cast<double>(stats.cut_edges) / static_cast<double>(edges);
  if (run.json) {
    const nlohmann::ordered_json out = {{"command", "partition"},
                                        {"partition", options.out.string()},
                                        {"parts", options.parts},
                                        {"nodes", dataset.graph.num_nodes()},
                                        {"edges", edges},
                                        {"cut_edges", stats.cut_edges},
                                        {"part_nodes", stats.nodes},
                                        {"part_in_edges", stats.in_edges},
                                        {"part_train_nodes", stats.train_nodes},
                                        {"halo", stats.halo},
                                        {"node_balance", stats.node_balance()},
                                        {"edge_balance", stats.edge_balance()},
                                        {"train_balance", stats.train_balance()},
                                        {"metis_seconds", metis_seconds},
                                        {"seconds", seconds}};
    std::cout << json_text(out, run) << '\n';
  } else {
    std::cout << "parts: " << options.parts << " of " << dataset.graph.num_nodes() << " nodes and "
              << edges << " edges\n"
              << "edges cut: " << stats.cut_edges << " (" << fixed(100.0 * cut_share, 1) << " %)\n"
              << "nodes per part: " << per_part(stats.nodes) << " (balance "
              << fixed(stats.node_balance(), 3) << ")\n"
              << "in-edges per part: " << per_part(stats.in_edges) << " (balance "
              << fixed(stats.edge_balance(), 3) << ")\n"
              << "training nodes per part: " << per_part(stats.train_nodes) << " (balance "
              << fixed(stats.train_balance(), 3) << ")\n"
              << "halo per part: " << per_part(stats.halo) << '\n';
    say(run, "wrote " + std::to_string(options.parts) + " part stores to " + options.out.string() +
                 " in " + fixed(seconds, 1) + " s (METIS " + fixed(metis_seconds, 1) + " s)");
  }
  return 0;
}

}  // namespace maskgat::app
