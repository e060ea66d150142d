#include "info.hpp"

#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "maskgat/io/dataset.hpp"
#include "outputs.hpp"

namespace maskgat::app {
namespace {

nlohmann::ordered_json degree_json(const DegreeSummary& degree) {
  return {{"min", degree.min}, {"median", degree.median}, {"max", degree.max}};
}

std::string degree_text(const DegreeSummary& degree) {
  return "min=" + std::to_string(degree.min) + " median=" + std::to_string(degree.median) +
         " max=" + std::to_string(degree.max);
}

void print_text(const Dataset& dataset, const Statistics& stats) {
  std::cout << "dataset: " << dataset.name << '\n'
            << "nodes: " << stats.nodes << '\n'
            << "edges: " << stats.edges << '\n'
            << "self_loops: " << stats.self_loops << '\n'
            << "isolated_nodes: " << stats.isolated_nodes << '\n'
            << "components: " << stats.components << '\n'
            << "in_degree: " << degree_text(stats.in_degree) << '\n'
            << "out_degree: " << degree_text(stats.out_degree) << '\n';
  if (dataset.missing_features.empty()) {
    std::cout << "features: " << stats.features << '\n'
              << "feature_density: " << fixed(stats.feature_density, 6) << '\n';
  } else {
    std::cout << "features: unavailable: " << dataset.missing_features << '\n';
  }
  std::cout << "classes: " << dataset.num_classes() << '\n' << "class_counts:";
  for (std::size_t c = 0; c < stats.class_counts.size(); ++c) {
    std::cout << ' ' << dataset.class_names[c] << '=' << stats.class_counts[c];
  }
  std::cout << '\n';
  std::cout << "unlabelled: " << stats.unlabelled << '\n'
            << "split: train=" << stats.train << " val=" << stats.val << " test=" << stats.test
            << '\n';
}

void print_json(const Dataset& dataset, const Statistics& stats, const RunOptions& run) {
  nlohmann::ordered_json classes = nlohmann::ordered_json::array();
  for (std::size_t c = 0; c < stats.class_counts.size(); ++c) {
    classes.push_back(
        {{"id", c}, {"name", dataset.class_names[c]}, {"count", stats.class_counts[c]}});
  }
  nlohmann::ordered_json out = {
      {"command", "info"},
      {"dataset", dataset.name},
      {"nodes", stats.nodes},
      {"edges", stats.edges},
      {"self_loops", stats.self_loops},
      {"isolated_nodes", stats.isolated_nodes},
      {"components", stats.components},
      {"in_degree", degree_json(stats.in_degree)},
      {"out_degree", degree_json(stats.out_degree)},
      {"features", dataset.missing_features.empty() ? nlohmann::ordered_json(stats.features)
                                                    : nlohmann::ordered_json(nullptr)},
      {"feature_density", stats.feature_density},
      {"features_unavailable", dataset.missing_features},
      {"classes", dataset.num_classes()},
      {"class_counts", classes},
      {"unlabelled", stats.unlabelled},
      {"split", {{"train", stats.train}, {"val", stats.val}, {"test", stats.test}}}};
  std::cout << json_text(out, run) << '\n';
}

}  // namespace

void add_info_command(CLI::App& app, InfoOptions& options) {
  auto* command = app.add_subcommand("info", "Print statistics of a dataset or of own graph files");
  command->footer(
      "Examples:\n"
      "  maskgat info --dataset cora\n"
      "  maskgat info --dataset citeseer --source linqs --json\n"
      "  maskgat info --graph edges.txt --features features.csv --labels labels.txt --undirected");
  add_data_options(*command, options.data);
  add_run_options(*command, options.run, false);
}

int run_info(InfoOptions& options) {
  // info reports what is there: PubMed without its features file still has a graph and labels.
  options.data.load.require_features = false;
  const auto threads = limit_threads(options.run);
  const Dataset dataset = load_data(options.data, options.run);
  const Statistics stats = compute_statistics(dataset);
  if (options.run.json) {
    print_json(dataset, stats, options.run);
  } else {
    print_text(dataset, stats);
  }
  return 0;
}

}  // namespace maskgat::app
