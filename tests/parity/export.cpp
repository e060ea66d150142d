// Writes MaskGAT's outputs and gradients of every attention layer, with the inputs and weights
// that produced them, as JSON cases for reference.py to recompute with PyTorch.
//
// usage: maskgat-parity-export OUT_DIR [DATA_DIR]
// Cases: a small random graph with dense features (every layer, concat and mean, with and
// without the additive terms; input gradients too) and, when DATA_DIR holds Cora, Cora's graph
// with its sparse row-normalised features (every layer with the GAT paper's hidden shape).

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "maskgat/io/dataset.hpp"
#include "maskgat/nn/dot_attention_conv.hpp"
#include "maskgat/nn/gat_conv.hpp"
#include "maskgat/nn/gatv2_conv.hpp"
#include "support/random_data.hpp"

namespace {

using maskgat::Graph;
using maskgat::InputRef;
using maskgat::RowMatrix;
namespace nn = maskgat::nn;

class JsonWriter {
 public:
  explicit JsonWriter(const std::filesystem::path& path) : out_(path) {}
  void raw(const std::string& text) { out_ << text; }
  void key(const std::string& name) { out_ << '"' << name << "\":"; }
  template <typename T>
  void numbers(const T* data, std::int64_t count) {
    out_ << '[';
    char buffer[32];
    for (std::int64_t k = 0; k < count; ++k) {
      std::snprintf(buffer, sizeof(buffer), "%.9g", static_cast<double>(data[k]));
      out_ << (k ? "," : "") << buffer;
    }
    out_ << ']';
  }
  void matrix(const RowMatrix<float>& m) {
    out_ << "{\"rows\":" << m.rows() << ",\"cols\":" << m.cols() << ",\"values\":";
    numbers(m.data(), m.size());
    out_ << '}';
  }

 private:
  std::ofstream out_;
};

struct Case {
  std::string name;
  const Graph* graph;
  InputRef<float> x;
};

template <typename Layer, typename Options>
void export_case(const std::filesystem::path& dir, const Case& c, const std::string& kind,
                 const Options& options, const std::string& options_json, std::uint64_t seed) {
  nn::ParameterStore<float> store;
  maskgat::Rng rng(seed);
  const Layer layer(store, "conv", options, rng);
  typename Layer::Cache cache;
  RowMatrix<float> out;
  layer.forward(*c.graph, c.x, nn::Mode::kEval, rng, cache, out);
  const RowMatrix<float> grad_out =
      maskgat::test::random_matrix<float>(out.rows(), out.cols(), seed + 1);
  RowMatrix<float> grad_x;
  store.zero_grad();
  layer.backward(*c.graph, c.x, cache, grad_out, c.x.is_sparse() ? nullptr : &grad_x);

  const std::string name = c.name + "_" + kind + "_" + std::to_string(seed);
  JsonWriter json(dir / (name + ".json"));
  json.raw("{\"name\":\"" + name + "\",\"layer\":\"" + kind + "\",\"options\":" + options_json);
  json.raw(",\"num_nodes\":" + std::to_string(c.graph->num_nodes()) + ",");
  const auto sources = c.graph->in_sources();
  const auto destinations = c.graph->edge_destinations();
  json.key("src");
  json.numbers(sources.data(), static_cast<std::int64_t>(sources.size()));
  json.raw(",");
  json.key("dst");
  json.numbers(destinations.data(), static_cast<std::int64_t>(destinations.size()));
  json.raw(",");
  json.key("x");
  if (c.x.is_sparse()) {
    const auto sparse = c.x.sparse();
    RowMatrix<float> triplets(sparse.nonZeros(), 3);
    std::int64_t k = 0;
    for (std::int64_t row = 0; row < sparse.outerSize(); ++row) {
      for (decltype(sparse)::InnerIterator it(sparse, row); it; ++it, ++k) {
        triplets(k, 0) = static_cast<float>(it.row());
        triplets(k, 1) = static_cast<float>(it.col());
        triplets(k, 2) = it.value();
      }
    }
    json.raw("{\"rows\":" + std::to_string(sparse.rows()) +
             ",\"cols\":" + std::to_string(sparse.cols()) + ",\"triplets\":");
    json.matrix(triplets);
    json.raw("}");
  } else {
    json.matrix(c.x.dense());
  }
  json.raw(",\"parameters\":{");
  bool first = true;
  for (const auto& entry : store.entries()) {
    json.raw(first ? "" : ",");
    first = false;
    json.key(entry.name);
    json.raw("{\"value\":");
    json.matrix(store.value(entry.parameter));
    json.raw(",\"grad\":");
    json.matrix(store.grad(entry.parameter));
    json.raw("}");
  }
  json.raw("},");
  json.key("grad_out");
  json.matrix(grad_out);
  json.raw(",");
  json.key("out");
  json.matrix(out);
  if (!c.x.is_sparse()) {
    json.raw(",");
    json.key("grad_x");
    json.matrix(grad_x);
  }
  json.raw("}\n");
}

std::string flag(bool value) { return value ? "true" : "false"; }

void export_layers(const std::filesystem::path& dir, const Case& c, std::int64_t heads,
                   std::int64_t channels, bool concat, bool extras, std::uint64_t seed) {
  const std::string shape = "\"in\":" + std::to_string(c.x.cols()) +
                            ",\"out\":" + std::to_string(channels) +
                            ",\"heads\":" + std::to_string(heads) + ",\"concat\":" + flag(concat);
  // The fields every layer's options share.
  const auto shaped = [&](auto options) {
    options.in_features = c.x.cols();
    options.out_features = channels;
    options.heads = heads;
    options.concat = concat;
    return options;
  };
  auto gat = shaped(nn::GatConvOptions{});
  gat.residual = extras;
  export_case<nn::GatConv>(dir, c, "gat", gat,
                           "{" + shape + ",\"negative_slope\":0.2,\"add_self_loops\":true," +
                               "\"bias\":true,\"residual\":" + flag(extras) + "}",
                           seed);
  auto v2 = shaped(nn::GatV2ConvOptions{});
  v2.residual = extras;
  v2.share_weights = !extras;
  export_case<nn::GatV2Conv>(dir, c, "gatv2", v2,
                             "{" + shape + ",\"negative_slope\":0.2,\"add_self_loops\":true," +
                                 "\"bias\":true,\"residual\":" + flag(extras) +
                                 ",\"share_weights\":" + flag(!extras) + "}",
                             seed);
  auto dot = shaped(nn::DotAttentionConvOptions{});
  dot.root_weight = extras;
  export_case<nn::DotAttentionConv>(
      dir, c, "dot", dot, "{" + shape + ",\"root_weight\":" + flag(extras) + ",\"bias\":true}",
      seed);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: maskgat-parity-export OUT_DIR [DATA_DIR]\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  const Graph small = maskgat::test::random_graph(30, 5, 11);
  const RowMatrix<float> x = maskgat::test::random_matrix<float>(30, 7, 12);
  const Case small_case{"small", &small, x};
  export_layers(dir, small_case, 3, 4, true, true, 1);
  export_layers(dir, small_case, 3, 4, false, false, 2);
  if (argc == 3) {
    maskgat::DatasetOptions load;
    load.data_dir = argv[2];
    load.normalize_features = maskgat::FeatureNormalization::kRows;
    const maskgat::Dataset cora = maskgat::load_dataset("cora", load);
    const Case cora_case{"cora", &cora.graph, cora.features.view()};
    export_layers(dir, cora_case, 8, 8, true, true, 3);
  }
  return 0;
}
