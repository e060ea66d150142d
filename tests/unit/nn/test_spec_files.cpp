// The example specs of docs/specs, which docs/model-specs.md shows: each must read and build a
// model, so that the page cannot describe a file the library refuses.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "maskgat/graph/masks.hpp"
#include "maskgat/nn/model.hpp"
#include "maskgat/nn/spec.hpp"
#include "maskgat/train/link_trainer.hpp"
#include "support/random_data.hpp"

namespace fs = std::filesystem;
namespace nn = maskgat::nn;
using maskgat::Rng;
using maskgat::RowMatrix;

namespace {

const fs::path kSpecDir = fs::path(MASKGAT_DOCS_DIR) / "specs";

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot open " << path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The spec in `path`, for 10 input features and 2 classes.
nn::ModelSpec read_spec(const fs::path& path) {
  nn::ModelSpec spec = nn::parse_model_spec(read_text(path), path.string());
  spec.in_features = 10;
  spec.classes = 2;
  return spec;
}

// Whether every attention layer of `modules` adds self-loops (then the mask should hold them).
bool adds_self_loops(const std::vector<nn::ModuleSpec>& modules) {
  return std::all_of(modules.begin(), modules.end(), [](const nn::ModuleSpec& module) {
    if (const auto* block = std::get_if<nn::ResidualOptions>(&module.module)) {
      return adds_self_loops(block->modules);
    }
    if (const auto* gat = std::get_if<nn::GatConvOptions>(&module.module)) {
      return gat->add_self_loops;
    }
    if (const auto* v2 = std::get_if<nn::GatV2ConvOptions>(&module.module)) {
      return v2->add_self_loops;
    }
    return true;
  });
}

std::vector<std::string> parameter_names(const nn::Model& model) {
  std::vector<std::string> names;
  for (const auto& entry : model.parameters().entries()) names.push_back(entry.name);
  return names;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("model specs: every example in docs/specs reads, builds and runs a model") {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(kSpecDir)) {
      if (entry.path().extension() == ".json") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    std::vector<std::string> names;
    for (const auto& file : files) names.push_back(file.filename().string());
    // The four the page shows, and any other example put beside them.
    for (const char* shown :
         {"gat-sep.json", "gatv2-edge-features.json", "paper.json", "residual-layernorm.json",
          "graph-gat-sum.json", "graph-gat-mean.json", "graph-gat-attention.json",
          "graph-gat-sum-edges.json", "graph-gat-mean-edges.json", "graph-gat-attention-edges.json",
          "graph-gat-sum-input-bn.json", "graph-gat-mean-input-bn.json",
          "graph-gat-attention-input-bn.json"}) {
      CHECK(std::find(names.begin(), names.end(), shown) != names.end());
    }
    const auto graph = maskgat::test::random_graph(12, 3, 5);
    const RowMatrix<float> x = maskgat::test::random_matrix<float>(12, 10, 6);
    for (const auto& file : files) {
      CAPTURE(file);
      const nn::ModelSpec spec = read_spec(file);
      Rng rng(1);
      nn::Model model(spec, rng);
      CHECK(model.parameters().size() > 0);
      // Written back and read again, the spec is the same.
      const std::string json = nn::model_spec_json(spec);
      CHECK(nn::model_spec_json(nn::parse_model_spec(json, "again.json")) == json);
      const auto mask = maskgat::masks::from_graph(graph, adds_self_loops(spec.modules));
      const RowMatrix<float> edge_features =
          maskgat::test::random_matrix<float>(mask.num_edges(), model.edge_feature_width(), 7);
      if (model.edge_feature_width() > 0) model.set_edge_features(&edge_features);
      // A graph classifier reads the 12 nodes as two graphs, of 5 and 7 nodes.
      const std::vector<std::int64_t> graphs{0, 5, 12};
      model.set_graph_offsets(graphs);
      const RowMatrix<float>& logits = model.forward(mask, x, nn::Mode::kTrain, rng);
      CHECK(logits.rows() == (model.graph_level() ? 2 : 12));
      CHECK(logits.cols() == 2);
      CHECK(logits.allFinite());
    }
  }

  TEST_CASE("model specs: docs/specs/paper.json is the GAT paper's model (nn::paper_spec)") {
    nn::ModelOptions cora;
    cora.in_features = 10;
    cora.classes = 2;
    CHECK(nn::model_spec_json(read_spec(kSpecDir / "paper.json")) ==
          nn::model_spec_json(nn::paper_spec(cora)));
  }

  TEST_CASE("model specs: docs/specs/link-gat.json is the link recipe's encoder") {
    const maskgat::train::TrainOptions link = maskgat::train::link_recipe();
    REQUIRE(link.spec);
    nn::ModelSpec recipe = *link.spec;
    recipe.in_features = 10;
    recipe.classes = 2;
    CHECK(nn::model_spec_json(read_spec(kSpecDir / "link-gat.json")) ==
          nn::model_spec_json(recipe));
  }

  TEST_CASE("model specs: the residual examples have the parameters docs/model-specs.md lists") {
    Rng rng(1);
    const nn::Model residual(read_spec(kSpecDir / "residual-layernorm.json"), rng);
    std::vector<std::string> expected{"encoder.weight", "encoder.bias"};
    for (const char* block : {"1", "2", "3"}) {
      const std::string norm = std::string("norm") + block;
      const std::string conv = std::string("conv") + block;
      const std::string lin = std::string("lin") + std::to_string(std::stoi(block) + 1);
      for (const std::string& name :
           {norm + ".weight", norm + ".bias", conv + ".weight", conv + ".att_src",
            conv + ".att_dst", conv + ".bias", lin + ".weight", lin + ".bias"}) {
        expected.push_back(name);
      }
    }
    for (const char* name : {"norm4.weight", "norm4.bias", "head.weight", "head.bias"}) {
      expected.emplace_back(name);
    }
    CHECK(parameter_names(residual) == expected);
    CHECK(residual.options().layers == 3);
    CHECK(residual.parameters().size() == 401'666);

    // GAT-sep: the same, each attention layer with its root weight (`convN.res.weight`).
    const nn::Model sep(read_spec(kSpecDir / "gat-sep.json"), rng);
    std::vector<std::string> sep_names = parameter_names(sep);
    CHECK(sep_names.size() == expected.size() + 3);
    for (const char* name : {"conv1.res.weight", "conv2.res.weight", "conv3.res.weight"}) {
      CHECK(std::find(sep_names.begin(), sep_names.end(), name) != sep_names.end());
    }
    CHECK(sep.parameters().size() == 401'666 + 3 * 256 * 256);
  }
}
