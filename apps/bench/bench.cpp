// maskgat-bench: training epochs (forward, backward, Adam step; not the validation pass) and
// inference passes (evaluation forward and softmax) of the GAT paper's model, per dataset,
// attention kind and thread count, each measured in its own child process so its peak RSS is
// its own. One JSON line per measurement on stdout, a table on stderr.
//
//   maskgat-bench [--dataset NAME[,NAME...]] [--attention gat|gatv2|dot[,...]] [--threads 1,2]
//                 [--epochs N] [--data-dir DIR] [--model SPEC [--torch STATE_DICT.pt]]
//
// With --torch the model of --model is imported from a PyTorch state dict (`read_state_dict`,
// `import_state_dict`) and only its inference is timed, as `train::Predictor` serves it
// (`ms_inference`; `ms_import` is the reading and loading).
//
// Datasets: cora, citeseer, pubmed-shaped (PubMed's graph and labels with random sparse 500-wide
// features at PubMed's density, since its features are not in the local mirror) and
// amazon-computers, amazon-photo and coauthor-cs (Shchur et al.'s npz graphs, on their largest
// component with a 20,30-per-class split, seed 0) and synthetic:N (the foundation's generator: N
// nodes, average degree 10, 128 features, 10 classes).
// The pseudo-dataset `limits` measures the machine instead: a STREAM-like copy (GB/s), an Eigen
// GEMM (GFLOP/s) and random gathers of 64-float rows from 256 MB (rows/s) on the given threads,
// the ceilings the other figures are compared with.
//
// Training epochs are timed twice: as the trainer runs them by default, on the training nodes'
// receptive field (`ms_per_epoch`), and over the whole graph, as the peer does
// (`ms_per_epoch_graph`); `ms_per_epoch_validated` is the default one with the validation pass
// that follows it (on the validation nodes' field when it is small), what `maskgat train` reports
// per epoch. Besides times and peak RSS, each measurement reports the forward
// attention op alone (the GAT layer's 8 heads x 8 channels on the dataset's mask, in edges per
// second) and the least work a training epoch needs (multiply-adds x 2 of the projections and
// attention, and the bytes of the feature reads and per-edge gathers), so a run can be set against
// the `limits`. `ms_inference_node` is the inference of node 0 alone, on its receptive field
// (`Trainer::predict_probabilities(nodes)`), as a service answering for one node would run it.
//
// tu:NAME (with --model, a spec with a readout) times a graph classifier on the TU collection
// tu/NAME.zip: training epochs over every graph in batches of 32 and inference over every graph,
// with `graphs_per_s_train` and `graphs_per_s_inference`.
//
// link:NAME (NAME any dataset above) times link prediction (`LinkTrainer`) on the GAE split of
// NAME's edges (85 / 5 / 10, seed 0), with --model's encoder (default: `link_recipe`'s):
// training epochs (negatives drawn, the encoder's forward and backward on the training graph, the
// dot-product decoder and the loss over the training positives and as many negatives, the Adam
// step; `ms_per_epoch`) and with the validation pass (`ms_per_epoch_validated`).
// recommend:N times serving on the synthetic graph of N nodes: every node's state from an
// untrained encoder (`node_states`, `ms_states`) and the exact top 10 of one node over all N
// (`recommend`, median over nodes 0, 1, ...; `ms_recommend`).
//
// Graphs beyond whole-graph training, on the synthetic graph of N nodes (in-degree 10, 128
// features, 10 classes) with 10 % of its nodes for training and 1 % each for validation and test,
// kept as a binary graph store under --store-dir (built by `store:N` first):
//   store:N     writes the store (`write_synthetic_store`): seconds, bytes, peak RSS;
//   open:N      maps it (`open_store`, every check but the features' checksums) and, beside it,
//               parses the same graph from a text edge list (written once next to the store);
//   sampled:N   mini-batch training epochs (batch 1024, fanouts 10,10) on the store: training
//               nodes per second, feature bytes gathered per second, peak RSS, and the sampler
//               alone over an epoch's batches (`sampler_train_nodes_per_s`);
//   layerwise:N layer-wise inference over all N nodes (chunks of 16384 rows), peak RSS.

#include <sys/mman.h>
#include <sys/resource.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "../common/allocator.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/graph/masks.hpp"
#include "maskgat/graph/sampler.hpp"
#include "maskgat/io/dataset.hpp"
#include "maskgat/io/splits.hpp"
#include "maskgat/io/store.hpp"
#include "maskgat/io/synthetic.hpp"
#include "maskgat/io/torch_file.hpp"
#include "maskgat/nn/dot_attention_conv.hpp"
#include "maskgat/nn/gat_conv.hpp"
#include "maskgat/nn/gatv2_conv.hpp"
#include "maskgat/ops/attention.hpp"
#include "maskgat/ops/matmul.hpp"
#include "maskgat/train/graph_trainer.hpp"
#include "maskgat/train/layerwise.hpp"
#include "maskgat/train/link_trainer.hpp"
#include "maskgat/train/predictor.hpp"
#include "maskgat/train/torch_state.hpp"
#include "maskgat/train/trainer.hpp"
#include "maskgat/transforms/positional.hpp"

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
  std::string store_dir;
  std::string model;  // a model spec file, or empty: the GAT paper's model
  std::string torch;  // a torch.save state dict for `model`: inference of the imported model
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

// Shchur et al.'s graphs, measured as they are evaluated: on the largest component, with a random
// split of 20 training and 30 validation nodes per class (seed 0), as the peer's `graphdata` runs.
bool is_shchur_graph(const std::string& name) {
  return name == "amazon-computers" || name == "amazon-photo" || name == "coauthor-cs";
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
  options.normalize_features = maskgat::FeatureNormalization::kRows;
  if (is_shchur_graph(m.dataset)) {
    options.largest_component = true;
    options.split_sizes = maskgat::per_class_split(20, 30);
  }
  return maskgat::load_dataset(m.dataset, options);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : 0.5 * (values[middle - 1] + values[middle]);
}

// Median milliseconds of `passes` calls of fn, after `warmup` untimed ones.
template <typename Fn>
double median_ms(std::int64_t passes, Fn&& fn, std::int64_t warmup = 1) {
  for (std::int64_t k = 0; k < warmup; ++k) fn();
  std::vector<double> ms;
  for (std::int64_t k = 0; k < passes; ++k) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  return median(ms);
}

// Rows of 64 floats (the hidden layer's 8 heads x 8 channels) gathered per second in random
// order from 10^6 of them (256 MB, a 10^6-node graph's values), 11 rows summed per destination
// (the synthetic graphs' in-degree with the self-loop) and the sum stored, as the aggregation
// does, with the same prefetch (16 rows ahead): the ceiling of any kernel that reads a row per
// edge of a graph that large. The table sits on transparent huge pages, as the library's large
// buffers do, so the figure is the memory system's, not the TLB's.
double gather_rows_per_s(std::int64_t passes) {
  constexpr std::int64_t kRows = 1000000;
  constexpr std::int64_t kWidth = 64;
  constexpr std::int64_t kPerDestination = 11;
  constexpr std::int64_t kAhead = 16;
  constexpr std::int64_t kGrain = 8192 / kPerDestination;
  using Row = Eigen::Array<float, kWidth, 1>;
  constexpr std::size_t kBytes = std::size_t{kRows * kWidth} * sizeof(float);
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  const std::unique_ptr<float, decltype(&std::free)> table(
      static_cast<float*>(std::aligned_alloc(kHugePage, kBytes)), &std::free);
  if (!table) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  madvise(table.get(), kBytes, MADV_HUGEPAGE);
#endif
  std::fill(table.get(), table.get() + kRows * kWidth, 1.0F);
  std::vector<std::int32_t> ids(static_cast<std::size_t>(kRows * kPerDestination));
  std::uint64_t state = 0x9E3779B97F4A7C15ULL;
  for (auto& id : ids) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    id = static_cast<std::int32_t>(state % kRows);
  }
  maskgat::RowMatrix<float> out(kRows, kWidth);
  const auto total = static_cast<std::int64_t>(ids.size());
  const double ms = median_ms(passes, [&] {
    tbb::parallel_for(
        tbb::blocked_range<std::int64_t>(0, kRows, kGrain),
        [&](const tbb::blocked_range<std::int64_t>& range) {
          for (std::int64_t i = range.begin(); i < range.end(); ++i) {
            Row sum = Row::Zero();
            for (std::int64_t k = i * kPerDestination; k < (i + 1) * kPerDestination; ++k) {
              if (k + kAhead < total) {
                const float* next = table.get() + std::int64_t{ids[k + kAhead]} * kWidth;
                for (std::int64_t c = 0; c < kWidth; c += 16) __builtin_prefetch(next + c);
              }
              sum += Eigen::Map<const Row, Eigen::Aligned64>(table.get() +
                                                             std::int64_t{ids[k]} * kWidth);
            }
            Eigen::Map<Row>(out.row(i).data()) = sum;
          }
        },
        tbb::simple_partitioner());
  });
  return static_cast<double>(total) / ms * 1e3;
}

// The machine's ceilings on this many threads: copy bandwidth (bytes read + written per second,
// as STREAM counts them) over 2 x 256 MB, the GEMM rate of Eigen on 2048 x 2048 blocks split over
// the threads by rows, and the random row gathers above.
int measure_limits(std::int64_t threads, std::int64_t passes) {
  const tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                                  static_cast<std::size_t>(threads));
  constexpr std::size_t kCopy = std::size_t{64} << 20;  // floats: 256 MB
  std::vector<float> from(kCopy, 1.0F);
  std::vector<float> to(kCopy, 0.0F);
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  const double copy_ms = median_ms(passes, [&] {
    tbb::parallel_for(std::size_t{0}, kCopy / kChunk, [&](std::size_t chunk) {
      std::memcpy(to.data() + chunk * kChunk, from.data() + chunk * kChunk, kChunk * sizeof(float));
    });
  });
  constexpr std::int64_t kSize = 2048;
  constexpr std::int64_t kBlock = 256;
  const maskgat::RowMatrix<float> a = maskgat::RowMatrix<float>::Random(kSize, kSize);
  const maskgat::RowMatrix<float> b = maskgat::RowMatrix<float>::Random(kSize, kSize);
  maskgat::RowMatrix<float> c(kSize, kSize);
  const double gemm_ms = median_ms(std::max<std::int64_t>(passes / 4, 3), [&] {
    tbb::parallel_for(std::int64_t{0}, kSize / kBlock, [&](std::int64_t block) {
      c.middleRows(block * kBlock, kBlock).noalias() = a.middleRows(block * kBlock, kBlock) * b;
    });
  });
  const nlohmann::ordered_json line = {
      {"bench", "limits"},
      {"threads", threads},
      {"copy_gb_per_s", 2.0 * static_cast<double>(kCopy * sizeof(float)) / copy_ms / 1e6},
      {"gemm_gflop_per_s", 2.0 * std::pow(static_cast<double>(kSize), 3) / gemm_ms / 1e6},
      {"gather_rows_per_s", gather_rows_per_s(std::max<std::int64_t>(passes / 4, 3))}};
  std::cout << line.dump() << std::endl;
  return 0;
}

// Forward attention alone (inference mode) on `mask` with the GAT recipe's hidden layer shape,
// in edges per second. Its inputs come out of the library's own projection of the dataset's
// features, as in a layer, so they sit in the same kind of buffers (huge pages when large) that
// the layers' attention reads: with rows gathered at random from hundreds of megabytes, ordinary
// pages would measure the TLB rather than the kernel.
double attention_edges_per_s(const maskgat::Graph& mask, const Dataset& dataset,
                             std::int64_t passes) {
  constexpr std::int64_t kHeads = 8;
  constexpr std::int64_t kChannels = 8;
  const maskgat::InputRef<float> features = dataset.features.view();
  const maskgat::RowMatrix<float> weight =
      maskgat::RowMatrix<float>::Random(features.cols(), kHeads * kChannels);
  const maskgat::RowMatrix<float> src_weight =
      maskgat::RowMatrix<float>::Random(kHeads * kChannels, kHeads);
  const maskgat::RowMatrix<float> dst_weight =
      maskgat::RowMatrix<float>::Random(kHeads * kChannels, kHeads);
  maskgat::RowMatrix<float> values;
  maskgat::RowMatrix<float> src;
  maskgat::RowMatrix<float> dst;
  maskgat::ops::matmul<float>(features, weight, values);
  maskgat::ops::matmul<float>(values, src_weight, src);
  maskgat::ops::matmul<float>(values, dst_weight, dst);
  maskgat::RowMatrix<float> alpha;
  maskgat::RowMatrix<float> out;
  const maskgat::ops::AdditiveScore<float> score{src, dst, 0.2F};
  const double ms = median_ms(passes, [&] {
    maskgat::ops::attention(mask, score, values, maskgat::DropoutKey{}, alpha, out);
  });
  return static_cast<double>(mask.num_edges()) / ms * 1e3;
}

// The least work of one training epoch of the paper's model, counted generously low: 2 flops per
// multiply-add of the projections (forward, and the weight gradient; the input gradient too past
// the first layer) and of the attention (aggregation forward; dot product and aggregation
// backward), and the bytes of reading the (dropped) features twice and of gathering a 64-wide
// float row per edge three times (aggregation, its two gradients).
struct Work {
  double gflop = 0.0;
  double gbyte = 0.0;
};

// The memory model of training the paper's model (float): bytes per mask entry (edge with the
// added self-loops) and per node, from the buffers the library keeps (see the README).
//   per edge: 16 for the mask's CSR (in-sources, out-targets, out-edge ids) and 16 for the
//             dataset's own graph, and per layer of h heads 4h for alpha and 5h for the
//             backward's workspace (a float of gradient and a byte of dropout mask per head)
//   per node: the features and their dropped copy (4F + 4F dense; 8 + 8 bytes per stored entry
//             sparse), 5 rows of H*C floats (values, output, value gradient, next layer's input
//             and the hidden gradient), 4 rows of H floats (scores and their gradients), a byte
//             per layer (the backward's rows of zero gradient), and per output layer of h heads
//             x K classes 4 rows of h*K, 4 of h and 3 of K floats
double model_mb(const Dataset& dataset, const maskgat::train::TrainOptions& options,
                std::int64_t mask_edges) {
  const auto& model = options.model;
  const auto n = static_cast<double>(dataset.graph.num_nodes());
  const auto heads = static_cast<double>(model.heads);
  const double width = heads * static_cast<double>(model.hidden);
  const auto out_heads = static_cast<double>(model.output_heads);
  const auto classes = static_cast<double>(dataset.num_classes());
  const double features =
      dataset.features.is_sparse()
          ? 16.0 * static_cast<double>(dataset.features.view().sparse().nonZeros())
          : 8.0 * n * static_cast<double>(dataset.features.cols());
  const double per_edge = 32.0 + 9.0 * (heads + out_heads);
  const double per_node = 20.0 * width + 16.0 * heads + 16.0 * out_heads * classes +
                          16.0 * out_heads + 12.0 * classes + 2.0;
  return (features + n * per_node + static_cast<double>(mask_edges) * per_edge) / (1 << 20);
}

Work epoch_work(const Dataset& dataset, const maskgat::train::TrainOptions& options,
                std::int64_t mask_edges) {
  const auto& model = options.model;
  const auto n = static_cast<double>(dataset.graph.num_nodes());
  const auto e = static_cast<double>(mask_edges);
  const double width = static_cast<double>(model.heads * model.hidden);
  const double out_width = static_cast<double>(model.output_heads * dataset.num_classes());
  const double keep = 1.0 - model.dropout;
  const double feature_entries =
      dataset.features.is_sparse()
          ? static_cast<double>(dataset.features.view().sparse().nonZeros()) * keep
          : n * static_cast<double>(dataset.features.cols());
  const double feature_bytes = dataset.features.is_sparse() ? 8.0 : 4.0;
  Work work;
  work.gflop = (2.0 * 2.0 * feature_entries * width + 3.0 * 2.0 * n * width * out_width +
                3.0 * 2.0 * e * (width + out_width)) /
               1e9;
  work.gbyte = (2.0 * feature_entries * feature_bytes + 3.0 * e * 4.0 * width) / 1e9;
  return work;
}

// Sequence attention: one layer over n positions with `sequence:full:N` (every position sees
// every other, N^2 entries) or `sequence:window:N` (w = 16 neighbours, 8 on each side, plus
// itself: at most 17 entries per row). One head of 64 channels on 64-wide sinusoidal position
// encodings, without dropout; the forward alone (inference) and a training step (forward and
// backward with every input gradient) are timed, in milliseconds.
constexpr std::int64_t kSequenceWidth = 64;
constexpr std::int64_t kSequenceHalfWindow = 8;

template <typename Layer, typename Options>
std::pair<double, double> time_layer(const maskgat::Graph& mask, Options options,
                                     std::int64_t passes) {
  options.in_features = kSequenceWidth;
  options.out_features = kSequenceWidth;
  options.heads = 1;
  maskgat::nn::ParameterStore<float> store;
  maskgat::Rng rng(0);
  const Layer layer(store, "attention", options, rng);
  const maskgat::RowMatrix<float> x =
      maskgat::transforms::sinusoidal_encoding(mask.num_nodes(), kSequenceWidth);
  typename Layer::Cache cache;
  maskgat::RowMatrix<float> out;
  maskgat::RowMatrix<float> grad_x;
  const double forward_ms =
      median_ms(passes, [&] { layer.forward(mask, x, maskgat::nn::Mode::kEval, rng, cache, out); });
  const maskgat::RowMatrix<float> grad_out =
      maskgat::RowMatrix<float>::Constant(mask.num_nodes(), kSequenceWidth, 1.0F);
  const double step_ms = median_ms(passes, [&] {
    layer.forward(mask, x, maskgat::nn::Mode::kTrain, rng, cache, out);
    layer.backward(mask, x, cache, grad_out, &grad_x);
  });
  return {forward_ms, step_ms};
}

int measure_sequence(const Measurement& m) {
  const tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                                  static_cast<std::size_t>(m.threads));
  const std::string spec = m.dataset.substr(std::string("sequence:").size());
  const std::size_t colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  if (colon == std::string::npos || (kind != "full" && kind != "window")) {
    throw maskgat::InvalidArgument("sequence benchmark '" + m.dataset +
                                   "': expected sequence:full:N or sequence:window:N");
  }
  const std::int64_t n = std::stoll(spec.substr(colon + 1));
  const maskgat::Graph mask =
      kind == "full" ? maskgat::masks::full(n) : maskgat::masks::window(n, kSequenceHalfWindow);
  std::pair<double, double> ms;
  if (m.attention == "dot") {
    maskgat::nn::DotAttentionConvOptions options;
    options.root_weight = false;
    ms = time_layer<maskgat::nn::DotAttentionConv>(mask, options, m.epochs);
  } else if (m.attention == "gatv2") {
    maskgat::nn::GatV2ConvOptions options;
    options.add_self_loops = false;
    ms = time_layer<maskgat::nn::GatV2Conv>(mask, options, m.epochs);
  } else {
    maskgat::nn::GatConvOptions options;
    options.add_self_loops = false;
    ms = time_layer<maskgat::nn::GatConv>(mask, options, m.epochs);
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double edges = static_cast<double>(mask.num_edges());
  const nlohmann::ordered_json line = {
      {"bench", "sequence"},
      {"mask", kind},
      {"attention", m.attention},
      {"positions", n},
      {"entries", mask.num_edges()},
      {"threads", m.threads},
      {"ms_forward", ms.first},
      {"ms_train_step", ms.second},
      {"ns_per_entry_step", ms.second * 1e6 / edges},
      {"peak_rss_mb", static_cast<double>(usage.ru_maxrss) / 1024.0}};
  std::cout << line.dump() << std::endl;
  return 0;
}

// The large-graph measurements: the synthetic graph of `nodes` nodes in a store.
constexpr std::int64_t kBatchSize = 1024;

maskgat::SyntheticOptions large_graph(std::int64_t nodes) {
  maskgat::SyntheticOptions options;
  options.nodes = nodes;
  options.degree = 10.0;
  options.features = 128;
  options.classes = 10;
  return options;
}

std::filesystem::path store_path(const Measurement& m, std::int64_t nodes) {
  return std::filesystem::path(m.store_dir) / ("synthetic-" + std::to_string(nodes) + ".store");
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

// Reader limits wide enough for the large graphs (10^8 edges, 1.28 x 10^9 feature values).
maskgat::Limits large_limits() {
  maskgat::Limits limits;
  limits.max_edges = std::int64_t{1} << 31;
  limits.max_array_elements = std::int64_t{1} << 34;
  return limits;
}

int measure_large(const Measurement& m) {
  const tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                                  static_cast<std::size_t>(m.threads));
  const std::size_t colon = m.dataset.find(':');
  const std::string kind = m.dataset.substr(0, colon);
  const std::int64_t nodes = std::stoll(m.dataset.substr(colon + 1));
  const std::filesystem::path store = store_path(m, nodes);
  nlohmann::ordered_json line = {{"bench", kind}, {"nodes", nodes}, {"threads", m.threads}};
  const auto start = std::chrono::steady_clock::now();
  if (kind == "store") {
    std::filesystem::create_directories(m.store_dir);
    maskgat::DatasetOptions load;
    load.read.limits = large_limits();
    load.split_sizes = maskgat::RandomSplitSizes{nodes / 100, nodes / 100, nodes / 100};
    const maskgat::EdgeId edges =
        maskgat::write_synthetic_store(large_graph(nodes), load, store, true);
    line["edges"] = edges;
    line["seconds"] = seconds_since(start);
    std::uintmax_t bytes = 0;
    for (const auto& file : std::filesystem::directory_iterator(store)) bytes += file.file_size();
    line["store_gb"] = static_cast<double>(bytes) / 1e9;
  } else if (kind == "open") {
    maskgat::StoreOptions options;
    options.limits = large_limits();
    const Dataset dataset = maskgat::open_store(store, options);
    line["edges"] = dataset.graph.num_edges();
    line["seconds"] = seconds_since(start);
    line["peak_rss_mb"] = peak_rss_mb();
    // The same graph as a text edge list, parsed as `maskgat --graph FILE --numeric-ids` does.
    const std::filesystem::path text = store.string() + ".edges.txt";
    if (!std::filesystem::exists(text)) {
      std::ofstream out(text);
      const auto offsets = dataset.graph.in_offsets();
      const auto sources = dataset.graph.in_sources();
      for (std::size_t i = 0; i + 1 < offsets.size(); ++i) {
        for (auto e = offsets[i]; e < offsets[i + 1]; ++e) {
          out << sources[static_cast<std::size_t>(e)] << ' ' << i << '\n';
        }
      }
    }
    maskgat::FileSources files;
    files.graph = text;
    files.numeric_ids = true;
    files.num_nodes = nodes;
    maskgat::DatasetOptions load;
    load.read.limits = large_limits();
    const auto parse_start = std::chrono::steady_clock::now();
    const Dataset parsed = maskgat::load_files(files, load);
    line["parse_seconds"] = seconds_since(parse_start);
    line["parse_edges"] = parsed.graph.num_edges();
  } else if (kind == "sampled" || kind == "layerwise") {
    maskgat::StoreOptions options;
    options.limits = large_limits();
    const Dataset dataset = maskgat::open_store(store, options);
    line["open_seconds"] = seconds_since(start);
    line["edges"] = dataset.graph.num_edges();
    maskgat::train::TrainOptions train = maskgat::train::paper_recipe("synthetic");
    train.batch_size = kBatchSize;
    train.fanouts = {10, 10};
    train.patience = 0;
    train.epochs = kind == "sampled" ? m.epochs : 1;
    maskgat::train::Trainer trainer(dataset, train);
    if (kind == "sampled") {
      std::vector<double> seconds;
      std::int64_t rows = 0;
      // Epochs only: the validation pass after each is not part of the figure.
      trainer.fit([&](const maskgat::train::EpochStats& stats) {
        seconds.push_back(stats.train_milliseconds / 1e3);
        rows = stats.input_rows;
      });
      const double epoch = median(seconds);
      const auto train_nodes =
          static_cast<double>(dataset.nodes_in(maskgat::SplitPart::kTrain).size());
      line["train_nodes"] = train_nodes;
      line["seconds_per_epoch"] = epoch;
      line["train_nodes_per_s"] = train_nodes / epoch;
      line["batch_rows"] = static_cast<double>(rows) / std::ceil(train_nodes / kBatchSize);
      line["gathered_gb_per_s"] = static_cast<double>(rows) *
                                  static_cast<double>(dataset.features.cols()) * 4.0 / epoch / 1e9;
      // The sampler alone over an epoch's batches, one after another (training overlaps each
      // batch's sampling with the previous batch's step): the rate it would cap training at.
      const std::vector<maskgat::NodeId> train_ids = dataset.nodes_in(maskgat::SplitPart::kTrain);
      maskgat::NeighborSampler sampler(dataset.graph, train.fanouts, train.seed);
      const auto sampling_start = std::chrono::steady_clock::now();
      for (std::size_t first = 0; first < train_ids.size(); first += kBatchSize) {
        const std::size_t count = std::min<std::size_t>(kBatchSize, train_ids.size() - first);
        [[maybe_unused]] const maskgat::MiniBatch batch =
            sampler.sample(std::span(train_ids).subspan(first, count), 0);
      }
      line["sampler_train_nodes_per_s"] = train_nodes / seconds_since(sampling_start);
    } else {
      const auto inference_start = std::chrono::steady_clock::now();
      const maskgat::RowMatrix<float> logits =
          maskgat::train::layerwise_logits(trainer.model(), dataset.graph, dataset.features);
      line["seconds"] = seconds_since(inference_start);
      line["rows"] = logits.rows();
    }
  }
  line["peak_rss_mb"] = std::max(line.value("peak_rss_mb", 0.0), peak_rss_mb());
  std::cout << line.dump() << std::endl;
  return 0;
}

// Runs one measurement in this process and prints its JSON line.
// Inference of a model imported from a PyTorch state dict (`--torch FILE --model SPEC`), as a C++
// program serves it: read the file, load it into the spec, and time the predictor's class
// probabilities of every node (its forward and softmax), the path of `maskgat predict`.
int measure_import(const Measurement& m) {
  const tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                                  static_cast<std::size_t>(m.threads));
  const Dataset dataset = load(m);
  const auto import_start = std::chrono::steady_clock::now();
  const maskgat::StateDict state = maskgat::read_state_dict(m.torch, {});
  const maskgat::nn::Model model =
      maskgat::train::import_state_dict(maskgat::train::read_model_spec(m.model), state);
  const double import_ms = 1e3 * seconds_since(import_start);
  maskgat::train::Predictor predictor(
      maskgat::train::checkpoint_of(model, dataset.class_names, m.torch), dataset);
  const double inference_ms = median_ms(
      m.epochs, [&] { const auto probabilities = predictor.probabilities(); }, kWarmup);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const nlohmann::ordered_json line = {
      {"bench", "maskgat"},
      {"dataset", m.dataset},
      {"model", m.model},
      {"torch", m.torch},
      {"nodes", dataset.graph.num_nodes()},
      {"edges", dataset.graph.num_edges()},
      {"features", dataset.features.cols()},
      {"parameters", model.parameters().size()},
      {"threads", m.threads},
      {"ms_import", import_ms},
      {"ms_inference", inference_ms},
      {"peak_rss_mb", static_cast<double>(usage.ru_maxrss) / 1024.0}};
  std::cout << line.dump() << std::endl;
  return 0;
}

// A graph classifier (--model, a spec with a readout) on a TU collection: training epochs over
// every graph in batches of 32 (`GraphTrainer`, a shuffle per epoch), and inference over every
// graph (`graph_logits`, batches of `kEvaluationBatch`), in graphs per second.
int measure_graphs(const Measurement& m) {
  const tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                                  static_cast<std::size_t>(m.threads));
  if (m.model.empty())
    throw maskgat::InvalidArgument("tu: datasets time a graph classifier: give --model");
  const std::string name = m.dataset.substr(3);
  const maskgat::GraphCollection data =
      maskgat::read_tu(std::filesystem::path(m.data_dir) / "tu" / (name + ".zip"), {});
  maskgat::train::GraphSplit every;
  every.train.resize(static_cast<std::size_t>(data.num_graphs()));
  std::iota(every.train.begin(), every.train.end(), std::int64_t{0});
  maskgat::train::TrainOptions options = maskgat::train::graph_recipe();
  options.spec = maskgat::train::read_model_spec(m.model);
  options.epochs = kWarmup + m.epochs;
  options.patience = 0;
  maskgat::train::GraphTrainer trainer(data, every, options);
  std::vector<double> epoch_ms;
  trainer.fit([&](const maskgat::train::EpochStats& stats) {
    if (stats.epoch > kWarmup) epoch_ms.push_back(stats.train_milliseconds);
  });
  const double inference_ms = median_ms(
      m.epochs,
      [&] { const auto logits = maskgat::train::graph_logits(trainer.model(), data, every.train); },
      kWarmup);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double graphs = static_cast<double>(data.num_graphs());
  const nlohmann::ordered_json line = {
      {"bench", "maskgat"},
      {"dataset", m.dataset},
      {"model", m.model},
      {"graphs", data.num_graphs()},
      {"nodes", data.graph.num_nodes()},
      {"edges", data.graph.num_edges()},
      {"features", data.features.cols()},
      {"parameters", trainer.model().parameters().size()},
      {"batch_size", options.batch_size},
      {"threads", m.threads},
      {"ms_per_epoch", median(epoch_ms)},
      {"ms_inference", inference_ms},
      {"graphs_per_s_train", 1e3 * graphs / median(epoch_ms)},
      {"graphs_per_s_inference", 1e3 * graphs / inference_ms},
      {"peak_rss_mb", static_cast<double>(usage.ru_maxrss) / 1024.0}};
  std::cout << line.dump() << std::endl;
  return 0;
}

// The settings of link:NAME and recommend:N: `link_recipe` with --model's encoder.
maskgat::train::TrainOptions link_options(const Measurement& m) {
  maskgat::train::TrainOptions options = maskgat::train::link_recipe();
  if (!m.model.empty()) options.spec = maskgat::train::read_model_spec(m.model);
  options.epochs = kWarmup + m.epochs;
  options.patience = 0;
  return options;
}

int measure_links(const Measurement& m) {
  const tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                                  static_cast<std::size_t>(m.threads));
  Measurement graph = m;
  graph.dataset = m.dataset.substr(5);
  const Dataset dataset = load(graph);
  maskgat::EdgeSplitOptions shares;
  shares.undirected = dataset.preparation.undirected;
  maskgat::train::LinkTrainer trainer(dataset, maskgat::split_edges(dataset.graph, shares),
                                      link_options(m));
  std::vector<double> step_ms;
  std::vector<double> validated_ms;
  trainer.fit([&](const maskgat::train::EpochStats& stats) {
    if (stats.epoch <= kWarmup) return;
    step_ms.push_back(stats.train_milliseconds);
    validated_ms.push_back(stats.milliseconds);
  });
  const nlohmann::ordered_json line = {{"bench", "maskgat"},
                                       {"dataset", m.dataset},
                                       {"model", m.model.empty() ? "link recipe" : m.model},
                                       {"nodes", dataset.graph.num_nodes()},
                                       {"edges", dataset.graph.num_edges()},
                                       {"train_pairs", trainer.split().train_edges.size()},
                                       {"features", dataset.features.cols()},
                                       {"parameters", trainer.model().parameters().size()},
                                       {"threads", m.threads},
                                       {"ms_per_epoch", median(step_ms)},
                                       {"ms_per_epoch_validated", median(validated_ms)},
                                       {"peak_rss_mb", peak_rss_mb()}};
  std::cout << line.dump() << std::endl;
  return 0;
}

int measure_recommend(const Measurement& m) {
  const tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                                  static_cast<std::size_t>(m.threads));
  const Dataset dataset =
      maskgat::make_synthetic(large_graph(std::stoll(m.dataset.substr(10))), {});
  maskgat::train::TrainOptions options = link_options(m);
  options.model.in_features = dataset.features.cols();
  if (options.spec) {
    options.spec->in_features = options.model.in_features;
    options.spec->classes = options.model.classes;
  }
  maskgat::Rng rng(0);
  maskgat::nn::Model model = maskgat::train::make_model(options, rng);
  const auto start = std::chrono::steady_clock::now();
  const maskgat::RowMatrix<float> states =
      maskgat::train::node_states(model, dataset.graph, dataset.features);
  const double states_ms = 1e3 * seconds_since(start);
  maskgat::NodeId node = 0;
  const double recommend_ms = median_ms(
      m.epochs,
      [&] {
        const auto best = maskgat::train::recommend(model, states, dataset.graph, node++, 10);
      },
      kWarmup);
  const nlohmann::ordered_json line = {{"bench", "maskgat"},
                                       {"dataset", m.dataset},
                                       {"model", m.model.empty() ? "link recipe" : m.model},
                                       {"nodes", dataset.graph.num_nodes()},
                                       {"edges", dataset.graph.num_edges()},
                                       {"state_width", states.cols()},
                                       {"threads", m.threads},
                                       {"ms_states", states_ms},
                                       {"ms_recommend", recommend_ms},
                                       {"peak_rss_mb", peak_rss_mb()}};
  std::cout << line.dump() << std::endl;
  return 0;
}

int measure(const Measurement& m) {
  if (m.dataset == "limits") return measure_limits(m.threads, m.epochs);
  if (m.dataset.rfind("link:", 0) == 0) return measure_links(m);
  if (m.dataset.rfind("recommend:", 0) == 0) return measure_recommend(m);
  if (m.dataset.rfind("tu:", 0) == 0) return measure_graphs(m);
  if (!m.torch.empty()) return measure_import(m);
  if (m.dataset.rfind("sequence:", 0) == 0) return measure_sequence(m);
  for (const char* kind : {"store:", "open:", "sampled:", "layerwise:"}) {
    if (m.dataset.rfind(kind, 0) == 0) return measure_large(m);
  }
  const tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                                  static_cast<std::size_t>(m.threads));
  const Dataset dataset = load(m);
  maskgat::train::TrainOptions options =
      maskgat::train::paper_recipe(m.dataset == "pubmed-shaped" ? "pubmed" : m.dataset);
  options.model.attention = maskgat::nn::parse_attention_kind(m.attention);
  if (!m.model.empty()) options.spec = maskgat::train::read_model_spec(m.model);
  options.epochs = kWarmup + m.epochs;
  options.patience = 0;
  // Training epochs over the whole graph first (as the peer trains), then, in the trainer kept
  // for the rest, as the trainer runs them by default: on the training nodes' receptive field.
  // One trainer at a time, so the peak RSS is the larger of the two.
  // Each epoch's training step alone, and with the validation pass after it.
  struct EpochTimes {
    std::vector<double> step_ms;
    std::vector<double> validated_ms;
  };
  const auto train_epochs = [&](maskgat::train::Trainer& trainer) {
    EpochTimes times;
    trainer.fit([&](const maskgat::train::EpochStats& stats) {
      if (stats.epoch <= kWarmup) return;
      times.step_ms.push_back(stats.train_milliseconds);
      times.validated_ms.push_back(stats.milliseconds);
    });
    return times;
  };
  std::vector<double> graph_epoch_ms;
  {
    maskgat::train::TrainOptions whole = options;
    whole.receptive_field = false;
    maskgat::train::Trainer trainer(dataset, whole);
    graph_epoch_ms = train_epochs(trainer).step_ms;
  }
  maskgat::train::Trainer trainer(dataset, options);
  const EpochTimes epochs = train_epochs(trainer);
  const std::vector<double>& epoch_ms = epochs.step_ms;
  const double inference_ms = median_ms(
      m.epochs, [&] { const auto probabilities = trainer.predict_probabilities(); }, kWarmup);
  const std::vector<maskgat::NodeId> one_node{0};
  const double node_inference_ms = median_ms(
      m.epochs, [&] { const auto probabilities = trainer.predict_probabilities(one_node); },
      kWarmup);
  // Peak RSS of the training and inference above, before the attention-only measurement adds
  // its own buffers.
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  // A model from a spec is named by its file and its parameter count; the paper's model by its
  // attention and heads, with the work estimates (the paper model's) after the times.
  nlohmann::ordered_json line = {{"bench", "maskgat"}, {"dataset", m.dataset}};
  if (options.spec) {
    line["model"] = m.model;
  } else {
    line["attention"] = m.attention;
  }
  line["nodes"] = dataset.graph.num_nodes();
  line["edges"] = dataset.graph.num_edges();
  line["features"] = dataset.features.cols();
  if (options.spec) {
    line["parameters"] = trainer.model().parameters().size();
  } else {
    line["heads"] = options.model.heads;
  }
  line["threads"] = m.threads;
  line["ms_per_epoch"] = median(epoch_ms);
  line["ms_per_epoch_min"] = *std::min_element(epoch_ms.begin(), epoch_ms.end());
  line["ms_per_epoch_graph"] = median(graph_epoch_ms);
  line["ms_per_epoch_validated"] = median(epochs.validated_ms);
  line["ms_inference"] = inference_ms;
  line["ms_inference_node"] = node_inference_ms;
  line["peak_rss_mb"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
  if (!options.spec) {
    const Work work = epoch_work(dataset, options, trainer.mask().num_edges());
    line["model_mb"] = model_mb(dataset, options, trainer.mask().num_edges());
    line["attention_edges_per_s"] = attention_edges_per_s(trainer.mask(), dataset, m.epochs);
    line["epoch_gflop"] = work.gflop;
    line["epoch_gbyte"] = work.gbyte;
  }
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
  maskgat::app::keep_freed_memory();
  CLI::App app("maskgat-bench: training epochs and inference of the GAT paper's model",
               "maskgat-bench");
  std::string datasets = "limits,cora,citeseer,pubmed-shaped,synthetic:10000,synthetic:100000";
  std::string attention = "gat";
  std::string threads = "1,2";
  std::int64_t epochs = 20;
  std::optional<std::string> data_dir;
  bool child = false;
  app.add_option("--dataset", datasets, "Datasets, comma-separated")->capture_default_str();
  app.add_option("--attention", attention, "gat, gatv2 or dot, comma-separated")
      ->check([](const std::string& value) {
        for (const auto& kind : split_list(value)) {
          if (kind != "gat" && kind != "gatv2" && kind != "dot") {
            return "attention must be gat, gatv2 or dot, got '" + kind + "'";
          }
        }
        return std::string();
      })
      ->capture_default_str();
  app.add_option("--threads", threads, "Thread counts, comma-separated")->capture_default_str();
  app.add_option("--epochs", epochs, "Timed epochs and inference passes (after 3 warm-up ones)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--data-dir", data_dir, "Data directory (default: $MASKGAT_DATA_DIR, datasets/)");
  std::string store_dir =
      (std::filesystem::temp_directory_path() / "maskgat-bench-stores").string();
  app.add_option("--store-dir", store_dir,
                 "Where store:N writes the large graphs' stores and open:, sampled: and "
                 "layerwise: read them")
      ->capture_default_str();
  std::string model;
  app.add_option("--model", model,
                 "A model spec file (maskgat train --model) to time instead of the GAT paper's "
                 "model; --attention does not apply");
  std::string torch;
  app.add_option("--torch", torch,
                 "A PyTorch state dict (torch.save) for --model: time the inference of the model "
                 "imported from it")
      ->check(CLI::ExistingFile);
  app.add_flag("--child", child, "Run one measurement in this process")->group("");
  CLI11_PARSE(app, argc, argv);

  const std::string dir =
      maskgat::resolve_data_dir(
          data_dir ? std::optional<std::filesystem::path>(*data_dir) : std::nullopt,
          MASKGAT_DEFAULT_DATA_DIR)
          .string();
  try {
    if (child) {
      return measure(
          {datasets, attention, std::stoll(threads), epochs, dir, store_dir, model, torch});
    }
  } catch (const std::exception& error) {
    std::cerr << "maskgat-bench: " << error.what() << '\n';
    return 1;
  }

  std::cerr << std::left << std::setw(22) << "dataset" << std::setw(8) << "attn" << std::setw(9)
            << "threads" << std::setw(14) << "ms/epoch" << std::setw(18) << "whole graph ms"
            << std::setw(16) << "ms/inference" << std::setw(14) << "peak RSS MB"
            << "attention Medges/s\n";
  int status = 0;
  for (const auto& dataset : split_list(datasets)) {
    const bool limits = dataset == "limits";
    for (const auto& kind : limits ? std::vector<std::string>{"gat"} : split_list(attention)) {
      for (const auto& count : split_list(threads)) {
        const std::string command = quote(argv[0]) + " --child --dataset " + quote(dataset) +
                                    " --attention " + quote(kind) + " --threads " + count +
                                    " --epochs " + std::to_string(epochs) + " --data-dir " +
                                    quote(dir) + " --store-dir " + quote(store_dir) +
                                    (model.empty() ? "" : " --model " + quote(model)) +
                                    (torch.empty() ? "" : " --torch " + quote(torch));
        std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
        std::string output;
        char buffer[4096];
        while (pipe && std::fgets(buffer, sizeof(buffer), pipe.get()) != nullptr) output += buffer;
        const int code = pipe ? pclose(pipe.release()) : -1;
        if (code != 0 || output.empty()) {
          std::cerr << dataset << " " << kind << " threads " << count << ": measurement failed\n";
          status = 1;
          continue;
        }
        std::cout << output << std::flush;
        const auto line = nlohmann::json::parse(output);
        std::cerr << std::setw(22) << dataset << std::setw(8) << (limits ? "" : kind)
                  << std::setw(9) << count << std::fixed;
        if (line["bench"] == "sequence") {
          std::cerr << std::setw(14) << std::setprecision(2) << line["ms_train_step"].get<double>()
                    << std::setw(16) << line["ms_forward"].get<double>() << std::setw(14)
                    << std::setprecision(0) << line["peak_rss_mb"].get<double>() << "("
                    << line["entries"].get<std::int64_t>() << " entries)\n";
          continue;
        }
        if (line.contains("nodes") && !line.contains("dataset")) {
          // A large-graph measurement: its own fields.
          std::cerr << line.dump() << '\n';
          continue;
        }
        if (line.contains("graphs_per_s_train")) {
          std::cerr << std::setw(14) << std::setprecision(2) << line["ms_per_epoch"].get<double>()
                    << std::setw(18) << "" << std::setw(16) << line["ms_inference"].get<double>()
                    << std::setw(14) << std::setprecision(0) << line["peak_rss_mb"].get<double>()
                    << "(" << line["graphs_per_s_train"].get<double>() << " graphs/s training, "
                    << line["graphs_per_s_inference"].get<double>() << " inference)\n";
          continue;
        }
        if (line.contains("ms_recommend") || line.contains("train_pairs")) {
          std::cerr << line.dump() << '\n';
          continue;
        }
        if (line.contains("ms_import")) {
          std::cerr << std::setw(14) << "" << std::setw(18) << "" << std::setw(16)
                    << std::setprecision(2) << line["ms_inference"].get<double>() << std::setw(14)
                    << std::setprecision(0) << line["peak_rss_mb"].get<double>() << "(imported in "
                    << std::setprecision(1) << line["ms_import"].get<double>() << " ms)\n";
          continue;
        }
        if (limits) {
          std::cerr << "copy " << std::setprecision(1) << line["copy_gb_per_s"].get<double>()
                    << " GB/s, GEMM " << line["gemm_gflop_per_s"].get<double>()
                    << " GFLOP/s, gathers " << line["gather_rows_per_s"].get<double>() / 1e6
                    << " M rows/s\n";
          continue;
        }
        std::cerr << std::setw(14) << std::setprecision(2) << line["ms_per_epoch"].get<double>()
                  << std::setw(18) << line["ms_per_epoch_graph"].get<double>() << std::setw(16)
                  << line["ms_inference"].get<double>() << std::setw(14) << std::setprecision(0)
                  << line["peak_rss_mb"].get<double>() << std::setprecision(1)
                  << (line.contains("attention_edges_per_s")
                          ? line["attention_edges_per_s"].get<double>() / 1e6
                          : 0.0)
                  << '\n';
      }
    }
  }
  return status;
}
