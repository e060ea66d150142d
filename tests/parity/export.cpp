// Writes MaskGAT's outputs and gradients of every attention layer and of models built from specs,
// with the inputs and weights that produced them, as JSON cases for reference.py to recompute
// with PyTorch.
//
// usage: maskgat-parity-export OUT_DIR [DATA_DIR]
//        maskgat-parity-export --import DIR DATA_DIR   (the state dict parity, state_dicts.py)
// Cases: a small random graph with dense features (every layer, concat and mean, with and
// without the additive terms; input gradients too); models from specs on small random graphs
// (residual blocks with LayerNorm and a learned skip, BatchNorm in training and evaluation, linear
// layers and activations, edge features in GAT and GATv2 scores); and, when DATA_DIR holds Cora,
// Cora's graph with its sparse row-normalised features (every layer with the GAT paper's hidden
// shape).

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "maskgat/io/dataset.hpp"
#include "maskgat/io/torch_file.hpp"
#include "maskgat/nn/dot_attention_conv.hpp"
#include "maskgat/nn/gat_conv.hpp"
#include "maskgat/nn/gatv2_conv.hpp"
#include "maskgat/nn/model.hpp"
#include "maskgat/nn/spec.hpp"
#include "maskgat/train/torch_state.hpp"
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

// The mask's edges (`num_nodes`, `src`, `dst`, in destination-major order) and the input `x`
// (dense, or sparse as triplets), as fields of the case being written.
void write_graph_and_input(JsonWriter& json, const Graph& graph, InputRef<float> x) {
  json.raw("\"num_nodes\":" + std::to_string(graph.num_nodes()) + ",");
  const auto sources = graph.in_sources();
  const auto destinations = graph.edge_destinations();
  json.key("src");
  json.numbers(sources.data(), static_cast<std::int64_t>(sources.size()));
  json.raw(",");
  json.key("dst");
  json.numbers(destinations.data(), static_cast<std::int64_t>(destinations.size()));
  json.raw(",");
  json.key("x");
  if (x.is_sparse()) {
    const auto sparse = x.sparse();
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
    json.matrix(x.dense());
  }
}

// What `write_store` writes of each tensor: `{"name": matrix}`, `{"name": {"value": ...}}` or
// `{"name": {"value": ..., "grad": ...}}`.
enum class StoreFields { kMatrices, kValues, kValuesAndGrads };

void write_store(JsonWriter& json, const nn::ParameterStore<float>& store, StoreFields fields) {
  json.raw("{");
  bool first = true;
  for (const auto& entry : store.entries()) {
    json.raw(first ? "" : ",");
    first = false;
    json.key(entry.name);
    if (fields == StoreFields::kMatrices) {
      json.matrix(store.value(entry.parameter));
      continue;
    }
    json.raw("{\"value\":");
    json.matrix(store.value(entry.parameter));
    if (fields == StoreFields::kValuesAndGrads) {
      json.raw(",\"grad\":");
      json.matrix(store.grad(entry.parameter));
    }
    json.raw("}");
  }
  json.raw("}");
}

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
  json.raw("{\"name\":\"" + name + "\",\"layer\":\"" + kind + "\",\"options\":" + options_json +
           ",");
  write_graph_and_input(json, *c.graph, c.x);
  json.raw(",\"parameters\":");
  write_store(json, store, StoreFields::kValuesAndGrads);
  json.raw(",");
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

// How a model case runs: in training mode (batch statistics, running statistics updated), or in
// evaluation mode after its running statistics were set to random values.
enum class ModelMode { kTrain, kEvalWithStatistics };

// A model built from `spec_json` (exported as written, so that reference.py applies PyTorch's
// defaults, names and widths itself), every parameter moved off its initial value (biases, scales
// and shifts start at 0 or 1), run once on `graph` and `x`; the gradients are those of
// L = sum(logits .* R) for a random R (`grad_out`); without `gradients`, the logits alone.
// Without dropout, so the run is deterministic.
void export_model_case(const std::filesystem::path& dir, const std::string& name,
                       const char* spec_json, const Graph& graph, InputRef<float> x,
                       std::int64_t classes, ModelMode mode, std::uint64_t seed,
                       const RowMatrix<float>* edge_features = nullptr, bool gradients = true) {
  nn::ModelSpec spec = nn::parse_model_spec(spec_json, name);
  spec.in_features = x.cols();
  spec.classes = classes;
  maskgat::Rng rng(seed);
  nn::Model model(spec, rng);
  for (float& value : model.parameters().values()) {
    value += static_cast<float>(rng.uniform() - 0.5);
  }
  auto& buffers = model.buffers();
  if (mode == ModelMode::kEvalWithStatistics) {
    for (const auto& entry : buffers.entries()) {
      // Means in [-0.5, 0.5), variances in [0.5, 1.5).
      const bool variance = entry.name.ends_with(".running_var");
      for (float& value : buffers.value(entry.parameter).reshaped()) {
        value = static_cast<float>(rng.uniform() - (variance ? -0.5 : 0.5));
      }
    }
  }
  JsonWriter json(dir / (name + ".json"));
  json.raw("{\"name\":\"" + name + "\",\"model\":" + spec_json + ",\"mode\":\"" +
           (mode == ModelMode::kTrain ? "train" : "eval") +
           "\",\"classes\":" + std::to_string(classes) + ",");
  write_graph_and_input(json, graph, x);
  if (edge_features != nullptr) {
    json.raw(",");
    json.key("edge_attr");
    json.matrix(*edge_features);
    model.set_edge_features(edge_features);
  }
  json.raw(",\"buffers_before\":");
  write_store(json, buffers, StoreFields::kMatrices);

  maskgat::Rng unused(seed + 1);  // no dropout: nothing is drawn
  const RowMatrix<float> logits = model.forward(
      graph, x, mode == ModelMode::kTrain ? nn::Mode::kTrain : nn::Mode::kEval, unused);
  json.raw(",\"buffers\":");
  write_store(json, buffers, StoreFields::kMatrices);
  if (gradients) {
    const RowMatrix<float> grad_out =
        maskgat::test::random_matrix<float>(logits.rows(), logits.cols(), seed + 2);
    model.parameters().zero_grad();
    model.backward(graph, x, grad_out);
    json.raw(",\"parameters\":");
    write_store(json, model.parameters(), StoreFields::kValuesAndGrads);
    json.raw(",");
    json.key("grad_out");
    json.matrix(grad_out);
  } else {
    json.raw(",\"parameters\":");
    write_store(json, model.parameters(), StoreFields::kValues);
  }
  json.raw(",");
  json.key("out");
  json.matrix(logits);
  json.raw("}\n");
}

// (a) A GAT in the style of Platonov et al.: a linear encoder, a residual block of LayerNorm ->
// GAT -> GELU -> linear, a residual block of LayerNorm -> GATv2 without self-loops beside its
// root weight and narrower than its input (a learned skip), LeakyReLU and a linear head.
constexpr const char* kResidualLayerNormSpec = R"({"modules": [
  {"type": "linear", "name": "encoder", "out": 8},
  {"type": "residual", "modules": [
    {"type": "layer_norm"},
    {"type": "gat", "heads": 2, "channels": 4},
    {"type": "gelu"},
    {"type": "linear", "out": 8}]},
  {"type": "residual", "modules": [
    {"type": "layer_norm", "features": 8},
    {"type": "gatv2", "heads": 2, "channels": 3, "add_self_loops": false, "residual": true}]},
  {"type": "leaky_relu", "negative_slope": 0.1},
  {"type": "linear", "name": "head", "out": "classes"}]})";

// (b) Attention, batch normalisation and ELU, then attention averaged over its heads.
constexpr const char* kBatchNormSpec = R"({"modules": [
  {"type": "gat", "heads": 2, "channels": 3},
  {"type": "batch_norm"},
  {"type": "elu", "alpha": 0.7},
  {"type": "gat", "heads": 3, "channels": "classes", "concat": false}]})";

// (c) Dot-product attention under an MLP head: ReLU, a linear layer without bias, identity,
// dropout that drops nothing, a linear output.
constexpr const char* kMlpHeadSpec = R"({"modules": [
  {"type": "dot", "heads": 2, "channels": 5},
  {"type": "relu"},
  {"type": "linear", "name": "hidden", "out": 6, "bias": false},
  {"type": "identity"},
  {"type": "dropout", "p": 0.0},
  {"type": "relu"},
  {"type": "linear", "out": "classes"}]})";

// (d) Edge features in the scores: GAT with 3 per edge (the loops it adds take their node's mean)
// and GATv2 without self-loops reading the same, between ELUs.
constexpr const char* kEdgeFeaturesSpec = R"({"modules": [
  {"type": "gat", "heads": 2, "channels": 4, "edge_dim": 3},
  {"type": "elu"},
  {"type": "gatv2", "heads": 2, "channels": 3, "edge_dim": 3, "add_self_loops": false},
  {"type": "elu"},
  {"type": "gat", "heads": 1, "channels": "classes", "edge_dim": 3}]})";

// Models with PyG's names for the state dict parity (state_dicts.py): on Cora, in evaluation
// mode (their logits only: the gradients are checked on the cases above), each a stack PyG
// users build. (e) The GAT paper's stack, concatenated heads then
// averaged ones. (f) GATv2 and GAT reading edge features, a GAT layer with a residual
// projection. (g) A linear encoder, LayerNorm, GAT, BatchNorm with running statistics and a
// linear head.
constexpr const char* kImportGatSpec = R"({"modules": [
  {"type": "gat", "name": "conv1", "heads": 8, "channels": 8},
  {"type": "elu"},
  {"type": "gat", "name": "conv2", "heads": 2, "channels": "classes", "concat": false}]})";
constexpr const char* kImportEdgeSpec = R"({"modules": [
  {"type": "gatv2", "name": "conv1", "heads": 4, "channels": 8, "edge_dim": 3},
  {"type": "elu"},
  {"type": "gat", "name": "conv2", "heads": 2, "channels": 8, "edge_dim": 3, "residual": true},
  {"type": "elu"},
  {"type": "gat", "name": "conv3", "heads": 1, "channels": "classes"}]})";
constexpr const char* kImportNormsSpec = R"({"modules": [
  {"type": "linear", "name": "encoder", "out": 32},
  {"type": "layer_norm", "name": "norm"},
  {"type": "gat", "name": "conv", "heads": 4, "channels": 8},
  {"type": "batch_norm", "name": "bn"},
  {"type": "relu"},
  {"type": "linear", "name": "head", "out": "classes"}]})";

struct ImportCase {
  const char* name;
  const char* spec;
};
constexpr std::array kImportCases{ImportCase{"cora_import_gat", kImportGatSpec},
                                  ImportCase{"cora_import_edge", kImportEdgeSpec},
                                  ImportCase{"cora_import_norms", kImportNormsSpec}};
constexpr std::uint64_t kCoraEdgeFeatureSeed = 31;

void export_import_cases(const std::filesystem::path& dir, const maskgat::Dataset& cora) {
  const RowMatrix<float> edge_features =
      maskgat::test::random_matrix<float>(cora.graph.num_edges(), 3, kCoraEdgeFeatureSeed);
  std::uint64_t seed = 40;
  for (const ImportCase& c : kImportCases) {
    const bool edges = std::string_view(c.spec).find("edge_dim") != std::string_view::npos;
    export_model_case(dir, c.name, c.spec, cora.graph, cora.features.view(), cora.num_classes(),
                      ModelMode::kEvalWithStatistics, seed++, edges ? &edge_features : nullptr,
                      false);
  }
}

// The import side of the state dict parity: every `<case>.<variant>.pt` in `dir` that
// state_dicts.py wrote is read (`--key model_state_dict` for the `wrapped` variant), loaded into
// the model of `<case>.spec.json` and run on Cora in evaluation mode; its logits go to
// `<case>.<variant>.logits.json`; the model of the `f32` file is exported to `<case>.export.pt`.
void import_state_dicts(const std::filesystem::path& dir, const maskgat::Dataset& cora) {
  const RowMatrix<float> edge_features =
      maskgat::test::random_matrix<float>(cora.graph.num_edges(), 3, kCoraEdgeFeatureSeed);
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".pt") files.push_back(entry.path());
  }
  for (const std::filesystem::path& path : files) {
    const std::string stem = path.stem().string();  // <case>.<variant>
    const std::string case_name = stem.substr(0, stem.find('.'));
    maskgat::TorchReadOptions read;
    if (stem.ends_with(".wrapped")) read.key = "model_state_dict";
    std::ifstream spec_file(dir / (case_name + ".spec.json"));
    const std::string spec_json((std::istreambuf_iterator<char>(spec_file)),
                                std::istreambuf_iterator<char>());
    nn::Model model = maskgat::train::import_state_dict(nn::parse_model_spec(spec_json, case_name),
                                                        maskgat::read_state_dict(path, read));
    if (model.edge_feature_width() > 0) model.set_edge_features(&edge_features);
    maskgat::Rng unused(0);
    const RowMatrix<float>& logits =
        model.forward(cora.graph, cora.features.view(), nn::Mode::kEval, unused);
    JsonWriter json(dir / (stem + ".logits.json"));
    json.raw("{");
    json.key("out");
    json.matrix(logits);
    json.raw("}\n");
    if (stem.ends_with(".f32")) {
      maskgat::write_state_dict(dir / (case_name + ".export.pt"),
                                maskgat::train::export_state_dict(model), true);
    }
  }
}

void export_models(const std::filesystem::path& dir) {
  // The graph's own edges, no self-loops, are the mask: the GATv2 layer without add_self_loops
  // attends over them alone, the other GAT layers add the loops on each call.
  const Graph graph = maskgat::test::random_graph(40, 5, 21);
  const RowMatrix<float> x = maskgat::test::random_matrix<float>(40, 6, 22);
  export_model_case(dir, "model_residual_layernorm", kResidualLayerNormSpec, graph, x, 3,
                    ModelMode::kTrain, 4);
  export_model_case(dir, "model_batchnorm_train", kBatchNormSpec, graph, x, 3, ModelMode::kTrain,
                    5);
  export_model_case(dir, "model_batchnorm_eval", kBatchNormSpec, graph, x, 3,
                    ModelMode::kEvalWithStatistics, 6);
  export_model_case(dir, "model_mlp_head", kMlpHeadSpec, graph, x, 4, ModelMode::kTrain, 7);
  const RowMatrix<float> edge_features =
      maskgat::test::random_matrix<float>(graph.num_edges(), 3, 23);
  export_model_case(dir, "model_edge_features", kEdgeFeaturesSpec, graph, x, 3, ModelMode::kTrain,
                    8, &edge_features);
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

maskgat::Dataset load_cora(const char* data_dir) {
  maskgat::DatasetOptions load;
  load.data_dir = data_dir;
  load.normalize_features = maskgat::FeatureNormalization::kRows;
  return maskgat::load_dataset("cora", load);
}

int main(int argc, char** argv) {
  if (argc == 4 && std::string_view(argv[1]) == "--import") {
    import_state_dicts(argv[2], load_cora(argv[3]));
    return 0;
  }
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: maskgat-parity-export OUT_DIR [DATA_DIR]\n"
                 "       maskgat-parity-export --import DIR DATA_DIR\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  const Graph small = maskgat::test::random_graph(30, 5, 11);
  const RowMatrix<float> x = maskgat::test::random_matrix<float>(30, 7, 12);
  const Case small_case{"small", &small, x};
  export_layers(dir, small_case, 3, 4, true, true, 1);
  export_layers(dir, small_case, 3, 4, false, false, 2);
  export_models(dir);
  if (argc == 3) {
    const maskgat::Dataset cora = load_cora(argv[2]);
    const Case cora_case{"cora", &cora.graph, cora.features.view()};
    export_layers(dir, cora_case, 8, 8, true, true, 3);
    export_import_cases(dir, cora);
  }
  return 0;
}
