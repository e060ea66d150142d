// maskgat-bench: training epochs (forward, backward, Adam step; not the validation pass) and
// inference passes (evaluation forward and softmax) of the GAT paper's model, per dataset,
// attention kind and thread count, each measured in its own child process so its peak RSS is
// its own. One JSON line per measurement on stdout, a table on stderr.
//
//   maskgat-bench [--dataset NAME[,NAME...]] [--attention gat|gatv2|dot] [--threads 1,2]
//                 [--epochs N] [--data-dir DIR]
//
// Datasets: cora, citeseer, pubmed-shaped (PubMed's graph and labels with random sparse 500-wide
// features at PubMed's density, since its features are not in the local mirror) and
// synthetic:N (the foundation's generator: N nodes, average degree 10, 128 features, 10 classes).

#include <sys/resource.h>
#include <tbb/global_control.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/io/dataset.hpp"
#include "maskgat/io/synthetic.hpp"
#include "maskgat/train/trainer.hpp"

namespace {

using maskgat::Dataset;

// PubMed's features: 500 TF-IDF columns, about 50 stored entries per row.
constexpr std::int64_t kPubmedWidth = 500;
constexpr std::int64_t kPubmedRowEntries = 50;
constexpr std::int64_t kWarmup = 3;

struct Measurement {
  std::string dataset;
  std::string attention;
  std::int64_t threads = 1;
  std::int64_t epochs = 20;
  std::string data_dir;
};

Dataset pubmed_shaped(const std::string& data_dir) {
  maskgat::DatasetOptions load;
  load.data_dir = data_dir;
  load.require_features = false;
  Dataset dataset = maskgat::load_dataset("pubmed", load);
  const std::int64_t n = dataset.graph.num_nodes();
  std::vector<Eigen::Triplet<float>> entries;
  entries.reserve(static_cast<std::size_t>(n * kPubmedRowEntries));
  maskgat::Rng rng(0);
  for (std::int64_t row = 0; row < n; ++row) {
    for (std::int64_t k = 0; k < kPubmedRowEntries; ++k) {
      const auto column = static_cast<int>(rng.uniform_int(kPubmedWidth));
      entries.emplace_back(static_cast<int>(row), column, static_cast<float>(rng.uniform()));
    }
  }
  maskgat::SparseFeatures features(n, kPubmedWidth);
  features.setFromTriplets(entries.begin(), entries.end(),
                           [](float, float second) { return second; });
  dataset.features = maskgat::FeatureMatrix(std::move(features));
  dataset.missing_features.clear();
  dataset.name = "pubmed-shaped";
  return dataset;
}

Dataset load(const Measurement& m) {
  if (m.dataset == "pubmed-shaped") return pubmed_shaped(m.data_dir);
  if (m.dataset.rfind("synthetic:", 0) == 0) {
    maskgat::SyntheticOptions options;
    options.nodes = std::stoll(m.dataset.substr(10));
    options.degree = 10.0;
    options.features = 128;
    options.classes = 10;
    return maskgat::make_synthetic(options, {});
  }
  maskgat::DatasetOptions options;
  options.data_dir = m.data_dir;
  options.normalize_features = true;
  return maskgat::load_dataset(m.dataset, options);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : 0.5 * (values[middle - 1] + values[middle]);
}

// Runs one measurement in this process and prints its JSON line.
int measure(const Measurement& m) {
  const tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                                  static_cast<std::size_t>(m.threads));
  const Dataset dataset = load(m);
  maskgat::train::TrainOptions options =
      maskgat::train::paper_recipe(m.dataset == "pubmed-shaped" ? "pubmed" : m.dataset);
  options.model.attention = maskgat::nn::parse_attention_kind(m.attention);
  options.epochs = kWarmup + m.epochs;
  options.patience = 0;
  maskgat::train::Trainer trainer(dataset, options);
  std::vector<double> epoch_ms;
  trainer.fit([&](const maskgat::train::EpochStats& stats) {
    if (stats.epoch > kWarmup) epoch_ms.push_back(stats.train_milliseconds);
  });
  std::vector<double> inference_ms;
  for (std::int64_t k = 0; k < kWarmup + m.epochs; ++k) {
    const auto start = std::chrono::steady_clock::now();
    const auto probabilities = trainer.predict_probabilities();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (k >= kWarmup) inference_ms.push_back(ms);
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const nlohmann::ordered_json line = {
      {"bench", "maskgat"},
      {"dataset", m.dataset},
      {"attention", m.attention},
      {"nodes", dataset.graph.num_nodes()},
      {"edges", dataset.graph.num_edges()},
      {"features", dataset.features.cols()},
      {"heads", options.model.heads},
      {"threads", m.threads},
      {"ms_per_epoch", median(epoch_ms)},
      {"ms_inference", median(inference_ms)},
      {"peak_rss_mb", static_cast<double>(usage.ru_maxrss) / 1024.0}};
  std::cout << line.dump() << std::endl;
  return 0;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

std::string quote(const std::string& text) { return "'" + text + "'"; }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("maskgat-bench: training epochs and inference of the GAT paper's model",
               "maskgat-bench");
  std::string datasets = "cora,citeseer,pubmed-shaped,synthetic:10000,synthetic:100000";
  std::string attention = "gat";
  std::string threads = "1,2";
  std::int64_t epochs = 20;
  std::optional<std::string> data_dir;
  bool child = false;
  app.add_option("--dataset", datasets, "Datasets, comma-separated")->capture_default_str();
  app.add_option("--attention", attention, "gat, gatv2 or dot")
      ->check(CLI::IsMember({"gat", "gatv2", "dot"}))
      ->capture_default_str();
  app.add_option("--threads", threads, "Thread counts, comma-separated")->capture_default_str();
  app.add_option("--epochs", epochs, "Timed epochs and inference passes (after 3 warm-up ones)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--data-dir", data_dir, "Data directory (default: $MASKGAT_DATA_DIR, datasets/)");
  app.add_flag("--child", child, "Run one measurement in this process")->group("");
  CLI11_PARSE(app, argc, argv);

  const std::string dir =
      maskgat::resolve_data_dir(
          data_dir ? std::optional<std::filesystem::path>(*data_dir) : std::nullopt,
          MASKGAT_DEFAULT_DATA_DIR)
          .string();
  try {
    if (child) {
      return measure({datasets, attention, std::stoll(threads), epochs, dir});
    }
  } catch (const std::exception& error) {
    std::cerr << "maskgat-bench: " << error.what() << '\n';
    return 1;
  }

  std::cerr << std::left << std::setw(22) << "dataset" << std::setw(8) << "attn" << std::setw(9)
            << "threads" << std::setw(14) << "ms/epoch" << std::setw(16) << "ms/inference"
            << "peak RSS MB\n";
  int status = 0;
  for (const auto& dataset : split_list(datasets)) {
    for (const auto& count : split_list(threads)) {
      const std::string command = quote(argv[0]) + " --child --dataset " + quote(dataset) +
                                  " --attention " + attention + " --threads " + count +
                                  " --epochs " + std::to_string(epochs) + " --data-dir " +
                                  quote(dir);
      std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
      std::string output;
      char buffer[4096];
      while (pipe && std::fgets(buffer, sizeof(buffer), pipe.get()) != nullptr) output += buffer;
      const int code = pipe ? pclose(pipe.release()) : -1;
      if (code != 0 || output.empty()) {
        std::cerr << dataset << " threads " << count << ": measurement failed\n";
        status = 1;
        continue;
      }
      std::cout << output << std::flush;
      const auto line = nlohmann::json::parse(output);
      std::cerr << std::setw(22) << dataset << std::setw(8) << attention << std::setw(9) << count
                << std::setw(14) << std::fixed << std::setprecision(2)
                << line["ms_per_epoch"].get<double>() << std::setw(16)
                << line["ms_inference"].get<double>() << std::setprecision(0)
                << line["peak_rss_mb"].get<double>() << '\n';
    }
  }
  return status;
}
