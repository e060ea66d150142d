// maskgat-microbench: every attention op and layer, forward and backward, on a synthetic graph
// (the foundation's generator: 10^5 nodes, average in-degree 10, 128 features, plus self-loops),
// reported as edges per second. `--nodes=N` changes the graph size; every other flag is Google
// Benchmark's (`--benchmark_filter`, `--benchmark_min_time`, `--benchmark_format=json`, ...).
// Threads: oneTBB's default (all cores); set `--threads=T` to limit them.

#include <benchmark/benchmark.h>
#include <tbb/global_control.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "maskgat/core/random.hpp"
#include "maskgat/graph/masks.hpp"
#include "maskgat/io/synthetic.hpp"
#include "maskgat/nn/dot_attention_conv.hpp"
#include "maskgat/nn/dropout.hpp"
#include "maskgat/nn/gat_conv.hpp"
#include "maskgat/nn/gatv2_conv.hpp"
#include "maskgat/ops/attention.hpp"
#include "maskgat/ops/matmul.hpp"

namespace {

using maskgat::Graph;
using maskgat::RowMatrix;
namespace ops = maskgat::ops;
namespace nn = maskgat::nn;

constexpr std::int64_t kHeads = 8;
constexpr std::int64_t kChannels = 8;
constexpr std::int64_t kWidth = kHeads * kChannels;
std::int64_t g_nodes = 100000;

RowMatrix<float> random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  maskgat::Rng rng(seed);
  RowMatrix<float> matrix(rows, cols);
  for (std::int64_t k = 0; k < matrix.size(); ++k) {
    matrix.data()[k] = static_cast<float>(2.0 * rng.uniform() - 1.0);
  }
  return matrix;
}

// Sparse features shaped like Cora's bag-of-words rows: 1433 columns, about 18 entries per row.
constexpr std::int64_t kSparseWidth = 1433;
constexpr std::int64_t kSparseRowEntries = 18;

maskgat::SparseFeatures random_sparse(std::int64_t rows, std::int64_t cols,
                                      std::int64_t row_entries, std::uint64_t seed) {
  maskgat::Rng rng(seed);
  std::vector<Eigen::Triplet<float>> entries;
  entries.reserve(static_cast<std::size_t>(rows * row_entries));
  for (std::int64_t row = 0; row < rows; ++row) {
    for (std::int64_t k = 0; k < row_entries; ++k) {
      entries.emplace_back(static_cast<int>(row), static_cast<int>(rng.uniform_int(cols)),
                           static_cast<float>(rng.uniform()));
    }
  }
  maskgat::SparseFeatures matrix(rows, cols);
  matrix.setFromTriplets(entries.begin(), entries.end(),
                         [](float, float second) { return second; });
  return matrix;
}

// The graph, its features, and inputs of every op, built once.
struct Inputs {
  Graph mask;
  RowMatrix<float> x;
  RowMatrix<float> values = random_matrix(g_nodes, kWidth, 1);
  RowMatrix<float> other = random_matrix(g_nodes, kWidth, 2);
  RowMatrix<float> src = random_matrix(g_nodes, kHeads, 3);
  RowMatrix<float> dst = random_matrix(g_nodes, kHeads, 4);
  RowMatrix<float> att = random_matrix(kHeads, kChannels, 5);
  RowMatrix<float> grad_out = random_matrix(g_nodes, kWidth, 6);
  RowMatrix<float> weight = random_matrix(128, kWidth, 7);
  maskgat::SparseFeatures sparse_x = random_sparse(g_nodes, kSparseWidth, kSparseRowEntries, 9);
  RowMatrix<float> sparse_weight = random_matrix(kSparseWidth, kWidth, 10);
  RowMatrix<float> scores, alpha, grad_edges;

  Inputs() {
    maskgat::SyntheticOptions options;
    options.nodes = g_nodes;
    options.degree = 10.0;
    options.features = 128;
    auto dataset = maskgat::make_synthetic(options, {});
    mask = maskgat::masks::from_graph(dataset.graph, true);
    x = dataset.features.dense();
    ops::sddmm(mask, additive(), scores);
    ops::edge_softmax(mask, scores, alpha);
    grad_edges = random_matrix(mask.num_edges(), kHeads, 8);
  }
  [[nodiscard]] ops::AdditiveScore<float> additive() const { return {src, dst, 0.2F}; }
  [[nodiscard]] ops::DotScore<float> dot() const {
    return {values, other, kHeads, 1.0F / std::sqrt(static_cast<float>(kChannels))};
  }
  [[nodiscard]] ops::GatV2Score<float> gatv2() const { return {values, other, att, 0.2F}; }
};

const Inputs& inputs() {
  static const Inputs instance;
  return instance;
}

// Reports edges per second next to the time.
void count_edges(benchmark::State& state) {
  state.counters["edges/s"] = benchmark::Counter(static_cast<double>(inputs().mask.num_edges()),
                                                 benchmark::Counter::kIsIterationInvariantRate);
  state.counters["edges"] = static_cast<double>(inputs().mask.num_edges());
}

// Owned gradient buffers of each score type.
struct Grads {
  RowMatrix<float> a, b, c;
  ops::AdditiveScoreGrad<float> view(const ops::AdditiveScore<float>&) { return {a, b}; }
  ops::DotScoreGrad<float> view(const ops::DotScore<float>&) { return {a, b}; }
  ops::GatV2ScoreGrad<float> view(const ops::GatV2Score<float>&) { return {a, b, c}; }
};

template <typename MakeScore>
void bm_sddmm(benchmark::State& state, MakeScore make_score) {
  const auto& in = inputs();
  const auto score = make_score(in);
  RowMatrix<float> scores;
  for (auto _ : state) ops::sddmm(in.mask, score, scores);
  count_edges(state);
}

template <typename MakeScore>
void bm_sddmm_backward(benchmark::State& state, MakeScore make_score) {
  const auto& in = inputs();
  const auto score = make_score(in);
  Grads grads;
  auto view = grads.view(score);
  for (auto _ : state) ops::sddmm_backward(in.mask, score, in.grad_edges, view);
  count_edges(state);
}

template <typename MakeScore>
void bm_attention(benchmark::State& state, MakeScore make_score) {
  const auto& in = inputs();
  const auto score = make_score(in);
  RowMatrix<float> alpha;
  RowMatrix<float> out;
  for (auto _ : state) ops::attention(in.mask, score, in.values, {}, alpha, out);
  count_edges(state);
}

// Backward from the alpha the forward kept (the strategy MaskGAT uses), or, with `recompute`,
// after recomputing alpha from the scores as a max-and-sum strategy would have to.
template <typename MakeScore>
void bm_attention_backward(benchmark::State& state, MakeScore make_score, bool recompute) {
  const auto& in = inputs();
  const auto score = make_score(in);
  RowMatrix<float> alpha;
  RowMatrix<float> out;
  ops::attention(in.mask, score, in.values, {}, alpha, out);
  RowMatrix<float> scores;
  Grads grads;
  auto view = grads.view(score);
  RowMatrix<float> grad_values;
  RowMatrix<float> workspace;
  for (auto _ : state) {
    if (recompute) {
      ops::sddmm(in.mask, score, scores);
      ops::edge_softmax(in.mask, scores, alpha);
    }
    ops::attention_backward(in.mask, score, in.values, alpha, {}, in.grad_out, view, grad_values,
                            workspace);
  }
  count_edges(state);
}

void bm_edge_softmax(benchmark::State& state) {
  const auto& in = inputs();
  RowMatrix<float> alpha;
  for (auto _ : state) ops::edge_softmax(in.mask, in.scores, alpha);
  count_edges(state);
}

void bm_edge_softmax_backward(benchmark::State& state) {
  const auto& in = inputs();
  RowMatrix<float> grad_scores;
  for (auto _ : state) ops::edge_softmax_backward(in.mask, in.alpha, in.grad_edges, grad_scores);
  count_edges(state);
}

void bm_spmm(benchmark::State& state) {
  const auto& in = inputs();
  RowMatrix<float> out;
  for (auto _ : state) ops::spmm(in.mask, in.alpha, in.values, {}, out);
  count_edges(state);
}

void bm_spmm_backward(benchmark::State& state) {
  const auto& in = inputs();
  RowMatrix<float> grad_alpha;
  RowMatrix<float> grad_values;
  RowMatrix<float> workspace;
  for (auto _ : state) {
    ops::spmm_backward(in.mask, in.alpha, in.values, {}, in.grad_out, grad_alpha, grad_values);
  }
  count_edges(state);
}

void bm_matmul(benchmark::State& state) {
  const auto& in = inputs();
  RowMatrix<float> out;
  for (auto _ : state) ops::matmul<float>(in.x, in.weight, out);
  count_edges(state);
}

void bm_matmul_backward(benchmark::State& state) {
  const auto& in = inputs();
  RowMatrix<float> grad_weight = RowMatrix<float>::Zero(128, kWidth);
  RowMatrix<float> grad_x = RowMatrix<float>::Zero(g_nodes, 128);
  for (auto _ : state) {
    ops::matmul_backward_weight<float>(in.x, in.grad_out, grad_weight);
    ops::matmul_backward_input<float>(in.grad_out, in.weight, grad_x);
  }
  count_edges(state);
}

// The first projection of a bag-of-words input (sparse x, 1433 x 64 weight) and its weight
// gradient, and input dropout on the sparse x (p = 0.6, as in the GAT paper's recipe).
void bm_sparse_matmul(benchmark::State& state) {
  const auto& in = inputs();
  RowMatrix<float> out;
  for (auto _ : state) ops::matmul<float>(in.sparse_x, in.sparse_weight, out);
}

void bm_sparse_matmul_backward_weight(benchmark::State& state) {
  const auto& in = inputs();
  RowMatrix<float> grad_weight = RowMatrix<float>::Zero(kSparseWidth, kWidth);
  for (auto _ : state) ops::matmul_backward_weight<float>(in.sparse_x, in.grad_out, grad_weight);
}

void bm_sparse_dropout(benchmark::State& state) {
  const auto& in = inputs();
  maskgat::SparseFeatures out;
  std::uint64_t step = 0;
  for (auto _ : state) nn::dropout<float>(in.sparse_x, {0.6, 1, step++}, out);
}

// A layer with 128 inputs, 8 heads of 8 channels, concatenated; `backward` adds a backward pass
// in training mode with attention dropout 0.6, as in the GAT paper's recipe.
template <typename Layer, typename Options>
void bm_layer(benchmark::State& state, bool backward) {
  const auto& in = inputs();
  Options options;
  options.in_features = 128;
  options.out_features = kChannels;
  options.heads = kHeads;
  options.dropout = 0.6;
  nn::ParameterStore<float> store;
  maskgat::Rng rng(0);
  const Layer layer(store, "conv", options, rng);
  typename Layer::Cache cache;
  RowMatrix<float> out;
  RowMatrix<float> grad_x;
  const nn::Mode mode = backward ? nn::Mode::kTrain : nn::Mode::kEval;
  for (auto _ : state) {
    layer.forward(in.mask, in.x, mode, rng, cache, out);
    if (backward) layer.backward(in.mask, in.x, cache, in.grad_out, &grad_x);
  }
  count_edges(state);
}

const auto kAdditive = [](const Inputs& in) { return in.additive(); };
const auto kDot = [](const Inputs& in) { return in.dot(); };
const auto kGatV2 = [](const Inputs& in) { return in.gatv2(); };

void register_all() {
  const auto add = [](const std::string& name, auto fn) {
    benchmark::RegisterBenchmark(name.c_str(), fn)->Unit(benchmark::kMillisecond)->UseRealTime();
  };
  add("ops/sddmm/additive", [](benchmark::State& s) { bm_sddmm(s, kAdditive); });
  add("ops/sddmm/dot", [](benchmark::State& s) { bm_sddmm(s, kDot); });
  add("ops/sddmm/gatv2", [](benchmark::State& s) { bm_sddmm(s, kGatV2); });
  add("ops/sddmm_backward/additive", [](benchmark::State& s) { bm_sddmm_backward(s, kAdditive); });
  add("ops/sddmm_backward/dot", [](benchmark::State& s) { bm_sddmm_backward(s, kDot); });
  add("ops/sddmm_backward/gatv2", [](benchmark::State& s) { bm_sddmm_backward(s, kGatV2); });
  add("ops/edge_softmax", bm_edge_softmax);
  add("ops/edge_softmax_backward", bm_edge_softmax_backward);
  add("ops/spmm", bm_spmm);
  add("ops/spmm_backward", bm_spmm_backward);
  add("ops/attention/additive", [](benchmark::State& s) { bm_attention(s, kAdditive); });
  add("ops/attention/dot", [](benchmark::State& s) { bm_attention(s, kDot); });
  add("ops/attention/gatv2", [](benchmark::State& s) { bm_attention(s, kGatV2); });
  for (const bool recompute : {false, true}) {
    const std::string suffix = recompute ? "/recompute_alpha" : "/stored_alpha";
    add("ops/attention_backward/additive" + suffix,
        [recompute](benchmark::State& s) { bm_attention_backward(s, kAdditive, recompute); });
    add("ops/attention_backward/dot" + suffix,
        [recompute](benchmark::State& s) { bm_attention_backward(s, kDot, recompute); });
    add("ops/attention_backward/gatv2" + suffix,
        [recompute](benchmark::State& s) { bm_attention_backward(s, kGatV2, recompute); });
  }
  add("ops/matmul/128x64", bm_matmul);
  add("ops/matmul_backward/128x64", bm_matmul_backward);
  add("ops/matmul/sparse", bm_sparse_matmul);
  add("ops/matmul_backward_weight/sparse", bm_sparse_matmul_backward_weight);
  add("nn/dropout/sparse", bm_sparse_dropout);
  for (const bool backward : {false, true}) {
    const std::string suffix = backward ? "/forward_backward" : "/forward";
    add("nn/GatConv" + suffix, [backward](benchmark::State& s) {
      bm_layer<nn::GatConv, nn::GatConvOptions>(s, backward);
    });
    add("nn/GatV2Conv" + suffix, [backward](benchmark::State& s) {
      bm_layer<nn::GatV2Conv, nn::GatV2ConvOptions>(s, backward);
    });
    add("nn/DotAttentionConv" + suffix, [backward](benchmark::State& s) {
      bm_layer<nn::DotAttentionConv, nn::DotAttentionConvOptions>(s, backward);
    });
  }
}

// Parses a positive integer flag value, or exits with a usage error.
std::int64_t parse_count(std::string_view flag, std::string_view text) {
  char* end = nullptr;
  const std::string value(text);
  const long long parsed = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || parsed <= 0) {
    std::cerr << "maskgat-microbench: " << flag << " must be a positive integer, got '" << value
              << "'\n";
    std::exit(2);
  }
  return parsed;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::optional<tbb::global_control> threads;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--nodes=")) {
      g_nodes = parse_count("--nodes", arg.substr(8));
    } else if (arg.starts_with("--threads=")) {
      threads.emplace(tbb::global_control::max_allowed_parallelism,
                      static_cast<std::size_t>(parse_count("--threads", arg.substr(10))));
    } else {
      std::cerr << "maskgat-microbench: unknown argument '" << arg
                << "'; expected --nodes=N, --threads=T or Google Benchmark's --benchmark_* flags\n";
      return 2;
    }
  }
  benchmark::AddCustomContext("nodes", std::to_string(g_nodes));
  benchmark::AddCustomContext("threads", std::to_string(tbb::global_control::active_value(
                                             tbb::global_control::max_allowed_parallelism)));
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
