#include "info.hpp"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "maskgat/io/dataset.hpp"
#include "maskgat/io/tu.hpp"
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

// Smallest, lower median, largest and mean of `values` (not empty).
struct Spread {
  std::int64_t min = 0;
  std::int64_t median = 0;
  std::int64_t max = 0;
  double mean = 0.0;
};

Spread spread(std::vector<std::int64_t> values) {
  std::sort(values.begin(), values.end());
  double sum = 0.0;
  for (const std::int64_t v : values) sum += static_cast<double>(v);
  return {values.front(), values[(values.size() - 1) / 2], values.back(),
          sum / static_cast<double>(values.size())};
}

std::string spread_text(const Spread& s) {
  return "min=" + std::to_string(s.min) + " median=" + std::to_string(s.median) +
         " max=" + std::to_string(s.max) + " mean=" + fixed(s.mean, 2);
}

nlohmann::ordered_json spread_json(const Spread& s) {
  return {{"min", s.min}, {"median", s.median}, {"max", s.max}, {"mean", s.mean}};
}

int run_collection_info(const InfoOptions& options) {
  const GraphCollection c = load_collection(options.data, options.run);
  const std::int64_t graphs = c.num_graphs();
  std::vector<std::int64_t> nodes(static_cast<std::size_t>(graphs));
  std::vector<std::int64_t> edges(static_cast<std::size_t>(graphs));
  for (std::int64_t g = 0; g < graphs; ++g) {
    const auto i = static_cast<std::size_t>(g);
    nodes[i] = c.offsets[i + 1] - c.offsets[i];
    for (NodeId v = static_cast<NodeId>(c.offsets[i]); v < c.offsets[i + 1]; ++v) {
      edges[i] += c.graph.in_degree(v);
    }
  }
  std::vector<std::int64_t> degrees(static_cast<std::size_t>(c.graph.num_nodes()));
  for (NodeId v = 0; v < c.graph.num_nodes(); ++v) {
    degrees[static_cast<std::size_t>(v)] = c.graph.in_degree(v);
  }
  std::vector<std::int64_t> counts(c.class_names.size(), 0);
  for (const std::int32_t label : c.labels) ++counts[static_cast<std::size_t>(label)];
  if (options.run.json) {
    nlohmann::ordered_json classes = nlohmann::ordered_json::array();
    for (std::size_t k = 0; k < counts.size(); ++k) {
      classes.push_back({{"id", k}, {"name", c.class_names[k]}, {"count", counts[k]}});
    }
    const nlohmann::ordered_json out = {{"command", "info"},
                                        {"collection", c.name},
                                        {"graphs", graphs},
                                        {"nodes", c.graph.num_nodes()},
                                        {"edges", c.graph.num_edges()},
                                        {"features", c.features.cols()},
                                        {"edge_features", c.edge_features.cols()},
                                        {"classes", c.class_names.size()},
                                        {"class_counts", classes},
                                        {"graph_nodes", spread_json(spread(nodes))},
                                        {"graph_edges", spread_json(spread(edges))},
                                        {"in_degree", spread_json(spread(degrees))}};
    std::cout << json_text(out, options.run) << '\n';
    return 0;
  }
  std::cout << "collection: " << c.name << '\n'
            << "graphs: " << graphs << '\n'
            << "nodes: " << c.graph.num_nodes() << '\n'
            << "edges: " << c.graph.num_edges() << '\n'
            << "features: " << c.features.cols() << '\n'
            << "edge_features: " << c.edge_features.cols() << '\n'
            << "classes: " << c.class_names.size() << '\n'
            << "class_counts:";
  for (std::size_t k = 0; k < counts.size(); ++k) {
    std::cout << ' ' << c.class_names[k] << '=' << counts[k];
  }
  std::cout << '\n'
            << "graph_nodes: " << spread_text(spread(nodes)) << '\n'
            << "graph_edges: " << spread_text(spread(edges)) << '\n'
            << "in_degree: " << spread_text(spread(degrees)) << '\n';
  return 0;
}

}  // namespace

void add_info_command(CLI::App& app, InfoOptions& options) {
  auto* command = app.add_subcommand("info", "Print statistics of a dataset or of own graph files");
  command->footer(
      "Examples:\n"
      "  maskgat info --dataset cora\n"
      "  maskgat info --dataset citeseer --source linqs --json\n"
      "  maskgat info --graph edges.txt --features features.csv --labels labels.txt --undirected\n"
      "  maskgat info --dataset tu:MUTAG\n"
      "  maskgat info --tu PROTEINS.zip --json");
  add_data_options(*command, options.data);
  add_run_options(*command, options.run, false);
}

int run_info(InfoOptions& options) {
  if (names_collection(options.data)) {
    return run_collection_info(options);
  }
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
