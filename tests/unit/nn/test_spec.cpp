// Models built from specs: the JSON form, the checks before anything is built, and models of
// linear layers, normalisations, activations and residual blocks with exact gradients.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/graph/masks.hpp"
#include "maskgat/nn/loss.hpp"
#include "maskgat/nn/model.hpp"
#include "support/dense_attention.hpp"
#include "support/model_gradients.hpp"
#include "support/random_data.hpp"

using maskgat::Graph;
using maskgat::InvalidArgument;
using maskgat::NodeId;
using maskgat::ParseError;
using maskgat::Rng;
using maskgat::RowMatrix;
namespace nn = maskgat::nn;
namespace test = maskgat::test;

namespace {

constexpr std::int64_t kNodes = 12;

// A GAT in the style of Platonov et al.: a linear encoder, residual blocks of LayerNorm ->
// attention -> GELU -> dropout -> linear, the second without self-loops beside a root weight and
// narrower than its input (a learned skip), then a linear head.
constexpr const char* kResidualSpec = R"({"modules": [
  {"type": "linear", "name": "encoder", "out": 8},
  {"type": "residual", "modules": [
    {"type": "layer_norm"},
    {"type": "gat", "heads": 2, "channels": 4},
    {"type": "gelu"},
    {"type": "dropout", "p": 0.2},
    {"type": "linear", "out": 8}]},
  {"type": "residual", "modules": [
    {"type": "layer_norm", "features": 8},
    {"type": "gatv2", "heads": 2, "channels": 3, "add_self_loops": false, "residual": true}]},
  {"type": "leaky_relu", "negative_slope": 0.1},
  {"type": "linear", "name": "head", "out": "classes"}]})";

// Attention, batch normalisation, ELU and dropout, as PyG's examples with BatchNorm1d.
constexpr const char* kBatchNormSpec = R"({"modules": [
  {"type": "gat", "heads": 2, "channels": 3, "dropout": 0.3},
  {"type": "batch_norm"},
  {"type": "elu"},
  {"type": "dropout", "p": 0.4},
  {"type": "gat", "heads": 2, "channels": "classes", "concat": false}]})";

nn::ModelSpec spec_of(const char* json, std::int64_t in_features = 5) {
  nn::ModelSpec spec = nn::parse_model_spec(json, "spec.json");
  spec.in_features = in_features;
  spec.classes = 3;
  return spec;
}

std::string build_error(const char* json) {
  try {
    Rng rng(1);
    const nn::BasicModel<double> model(spec_of(json), rng);
  } catch (const InvalidArgument& error) {
    return error.what();
  }
  return "(no error)";
}

std::string parse_error(const char* json) {
  try {
    (void)nn::parse_model_spec(json, "spec.json");
  } catch (const ParseError& error) {
    return error.what();
  }
  return "(no error)";
}

// The gradient check of a model built from `spec`, on a 12-node graph.
void check_spec_gradients(const nn::ModelSpec& spec) {
  const Graph mask = maskgat::masks::from_graph(test::random_graph(kNodes, 4, 41));
  const RowMatrix<double> x = test::random_matrix<double>(kNodes, spec.in_features, 42);
  Rng init(3);
  nn::BasicModel<double> model(spec, init);
  for (auto& value : model.parameters().values()) value += 0.2 * (init.uniform() - 0.5);
  test::check_model_gradients(model, mask, x);
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("model specs: JSON read back from what it writes; names and widths resolved") {
    const nn::ModelSpec spec = nn::parse_model_spec(kResidualSpec, "spec.json");
    const std::string json = nn::model_spec_json(spec);
    CHECK(nn::model_spec_json(nn::parse_model_spec(json, "again.json")) == json);
    Rng rng(1);
    const nn::Model model(spec_of(kResidualSpec), rng);
    std::vector<std::string> names;
    for (const auto& entry : model.parameters().entries()) names.push_back(entry.name);
    CHECK(names ==
          std::vector<std::string>{
              "encoder.weight",     "encoder.bias",     "norm1.weight",       "norm1.bias",
              "conv1.weight",       "conv1.att_src",    "conv1.att_dst",      "conv1.bias",
              "lin2.weight",        "lin2.bias",        "norm2.weight",       "norm2.bias",
              "conv2.lin_l.weight", "conv2.lin_l.bias", "conv2.lin_r.weight", "conv2.lin_r.bias",
              "conv2.att",          "conv2.res.weight", "conv2.bias",         "block2.skip.weight",
              "head.weight",        "head.bias"});
    CHECK(model.options().layers == 2);
    const auto& resolved = std::get<nn::LinearOptions>(model.spec().modules.back().module);
    CHECK(resolved.in_features == 6);
    CHECK(resolved.out_features == 3);
    // The paper's model as a spec: dropout, conv1, elu, dropout, conv2.
    nn::ModelOptions paper;
    paper.in_features = 5;
    paper.classes = 3;
    CHECK(nn::model_spec_json(nn::paper_spec(paper)) ==
          R"({"modules":[{"type":"dropout","p":0.6},{"type":"gat","name":"conv1","in":0,"heads":8,)"
          R"("channels":8,"concat":true,"dropout":0.6,"bias":true,"negative_slope":0.2,)"
          R"("add_self_loops":true,"residual":false},{"type":"elu","alpha":1.0},)"
          R"({"type":"dropout","p":0.6},{"type":"gat","name":"conv2","in":0,"heads":1,)"
          R"("channels":"classes","concat":false,"dropout":0.6,"bias":true,"negative_slope":0.2,)"
          R"("add_self_loops":true,"residual":false}]})");
  }

  TEST_CASE("model specs: readouts read back from what they write, and name their gates") {
    const char* text =
        R"({"modules": [{"type": "gat", "heads": 2, "channels": 4}, {"type": "elu"},)"
        R"( {"type": "attention_pool", "heads": 2}, {"type": "linear", "out": "classes"}]})";
    nn::ModelSpec spec = nn::parse_model_spec(text, "spec.json");
    const std::string json = nn::model_spec_json(spec);
    CHECK(json.find(R"({"type":"attention_pool","features":0,"heads":2})") != std::string::npos);
    CHECK(nn::model_spec_json(nn::parse_model_spec(json, "again.json")) == json);
    for (const char* type : {"sum_pool", "mean_pool", "max_pool"}) {
      const std::string other =
          std::string(R"({"modules": [{"type": "gat"}, {"type": ")") + type + R"("}]})";
      CHECK(nn::module_type(nn::parse_model_spec(other, "s.json").modules[1]) == std::string(type));
    }
    spec.in_features = 5;
    spec.classes = 3;
    Rng rng(1);
    const nn::Model model(spec, rng);
    CHECK(model.graph_level());
    std::vector<std::string> names;
    for (const auto& entry : model.parameters().entries()) names.push_back(entry.name);
    CHECK(names == std::vector<std::string>{"conv1.weight", "conv1.att_src", "conv1.att_dst",
                                            "conv1.bias", "pool1.gate.weight", "lin1.weight",
                                            "lin1.bias"});
  }

  TEST_CASE(
      "model specs: residual blocks, LayerNorm, GELU, root weight and linear layers have "
      "exact gradients") {
    check_spec_gradients(spec_of(kResidualSpec));
  }

  TEST_CASE("model specs: BatchNorm between attention layers has exact gradients in training") {
    check_spec_gradients(spec_of(kBatchNormSpec));
    Rng rng(2);
    nn::BasicModel<double> model(spec_of(kBatchNormSpec), rng);
    REQUIRE(model.buffers().entries().size() == 2);
    CHECK(model.buffers().entries()[0].name == "norm1.running_mean");
    const Graph mask = maskgat::masks::from_graph(test::random_graph(kNodes, 4, 41));
    const RowMatrix<double> x = test::random_matrix<double>(kNodes, 5, 42);
    const std::vector<std::vector<std::uint8_t>> rows(2, std::vector<std::uint8_t>(kNodes, 1));
    CHECK_THROWS_WITH_AS(model.forward(mask, rows, x, nn::Mode::kTrain, rng),
                         "model.forward: row sets with batch normalisation, which needs every row "
                         "of its batch",
                         InvalidArgument);
  }

  TEST_CASE("model specs: a sampled step's per-layer masks give the whole graph's outputs") {
    const Graph mask = maskgat::masks::from_graph(test::random_graph(300, 2, 17));
    const RowMatrix<double> x = test::random_matrix<double>(300, 5, 18);
    const std::vector<NodeId> outputs{4, 40, 41, 250};
    nn::ModelSpec spec = spec_of(kResidualSpec);
    std::get<nn::DropoutOptions>(
        std::get<nn::ResidualOptions>(spec.modules[1].module).modules[3].module)
        .p = 0.0;
    const auto field = maskgat::masks::receptive_subgraph(mask, outputs, 2);
    REQUIRE(field.nodes.size() < 300);
    RowMatrix<double> x_field(static_cast<std::int64_t>(field.nodes.size()), 5);
    for (std::size_t k = 0; k < field.nodes.size(); ++k) {
      x_field.row(static_cast<std::int64_t>(k)) = x.row(field.nodes[k]);
    }
    Rng init(5);
    nn::BasicModel<double> whole(spec, init);
    Rng init_again(5);
    nn::BasicModel<double> part(spec, init_again);
    Rng rng(1);
    const RowMatrix<double> logits = whole.forward(mask, x, nn::Mode::kTrain, rng);
    const RowMatrix<double> logits_field =
        part.forward(field.masks, x_field, nn::Mode::kTrain, rng);
    RowMatrix<double> grad = RowMatrix<double>::Zero(logits.rows(), logits.cols());
    RowMatrix<double> grad_field = RowMatrix<double>::Zero(logits_field.rows(), 3);
    for (const NodeId node : outputs) {
      const auto at = std::lower_bound(field.nodes.begin(), field.nodes.end(), node);
      const auto row = static_cast<std::int64_t>(at - field.nodes.begin());
      CHECK((logits.row(node) - logits_field.row(row)).norm() < 1e-12);
      grad.row(node) = logits.row(node);
      grad_field.row(row) = logits_field.row(row);
    }
    whole.backward(mask, x, grad);
    part.backward(field.masks, x_field, grad_field);
    const auto a = whole.parameters().grads();
    const auto b = part.parameters().grads();
    double largest = 0.0;
    for (std::size_t k = 0; k < a.size(); ++k) largest = std::max(largest, std::abs(a[k] - b[k]));
    CHECK(largest < 1e-12);
    CHECK(RowMatrix<double>(
              Eigen::Map<const RowMatrix<double>>(a.data(), 1, static_cast<std::int64_t>(a.size())))
              .norm() > 0.0);
  }

  TEST_CASE("model specs: bad files and bad specs are refused, naming the module and the field") {
    CHECK(parse_error("{\"modules\": [") ==
          "model_spec: spec.json: not JSON: line 1, column 14: syntax error while parsing value "
          "- unexpected end of input; expected '[', '{', or a literal");
    CHECK(parse_error(R"({"layers": []})") ==
          "model_spec: spec.json: unknown field 'layers', expected modules");
    CHECK(parse_error(R"({"modules": [{"type": "tanh"}]})") ==
          "model_spec: spec.json: modules[0] (tanh): unknown type 'tanh', expected gat, gatv2, "
          "dot, linear, layer_norm, batch_norm, identity, relu, elu, leaky_relu, gelu, dropout, "
          "residual, sum_pool, mean_pool, max_pool or attention_pool");
    CHECK(parse_error(R"({"modules": [{"type": "sum_pool", "heads": 2}]})") ==
          "model_spec: spec.json: modules[0] (sum_pool): unknown field 'heads', expected "
          "features");
    CHECK(parse_error(R"({"modules": [{"type": "gat", "name": "c", "head": 2}]})") ==
          "model_spec: spec.json: modules[0] (gat c): unknown field 'head', expected in, heads, "
          "channels, concat, dropout, bias, negative_slope, add_self_loops, residual, edge_dim");
    CHECK(parse_error(R"({"modules": [{"type": "gat", "heads": 2.5}]})") ==
          "model_spec: spec.json: modules[0] (gat): heads is 2.5, expected an integer");
    CHECK(parse_error(R"({"modules": [{"type": "linear", "in": "classes"}]})") ==
          "model_spec: spec.json: modules[0] (linear): in is \"classes\", expected an integer");
    CHECK(
        parse_error(
            R"({"modules": [{"type": "residual", "modules": [{"type": "gat", "concat": 1}]}]})") ==
        "model_spec: spec.json: modules[0] (residual): modules[0] (gat): concat is 1, expected "
        "true or false");

    CHECK(build_error(R"({"modules": [{"type": "gat", "channels": 4, "edge_dim": 3},
                                      {"type": "gatv2", "channels": "classes", "edge_dim": 2}]})") ==
          "model: modules[1] (gatv2 conv2): edge_dim is 2, but an earlier layer's is 3: every "
          "layer reads the same edge features");
    CHECK(build_error(R"({"modules": [{"type": "gat", "channels": "classes", "edge_dim": -1}]})") ==
          "model: modules[0] (gat conv1): gat_conv: edge_features -1 is negative (0: no edge "
          "features)");
    CHECK(build_error(R"({"modules": [{"type": "gat", "heads": 0, "channels": "classes"}]})") ==
          "model: modules[0] (gat conv1): gat_conv: heads is 0, expected a positive count");
    CHECK(build_error(R"({"modules": [{"type": "dropout", "p": 1.5},
                                      {"type": "gat", "channels": "classes"}]})") ==
          "model: modules[0] (dropout): dropout: dropout 1.500000 is outside [0, 1)");
    CHECK(build_error(R"({"modules": [{"type": "gat", "channels": 4},
                                      {"type": "layer_norm", "features": 8},
                                      {"type": "gat", "channels": "classes"}]})") ==
          "model: modules[1] (layer_norm norm1): features is 8, but its input is 4 wide");
    CHECK(build_error(R"({"modules": [{"type": "gat", "channels": 4}]})") ==
          "model: the last module's output is 4 wide, expected the 3 classes");
    CHECK(build_error(R"({"modules": [{"type": "linear", "out": "classes"}]})") ==
          "model: the spec has no attention layer, expected at least one");
    CHECK(build_error(R"({"modules": [{"type": "residual", "modules": [
                                        {"type": "gat", "channels": 5},
                                        {"type": "gat", "channels": 5}]},
                                      {"type": "linear", "out": "classes"}]})") ==
          "model: modules[0].modules[1] (gat conv2): a residual block holds a second attention "
          "layer, expected at most one");
    CHECK(build_error(R"({"modules": [{"type": "gat", "name": "a", "channels": 4},
                                      {"type": "linear", "name": "a", "out": "classes"}]})") ==
          "model: two modules are named 'a'");
    CHECK(build_error(R"({"modules": [{"type": "gat", "name": "a.b", "channels": "classes"}]})") ==
          "model: module name 'a.b' has a character other than a letter, digit or _");
    CHECK(build_error(R"({"modules": [{"type": "residual", "modules": []},
                                      {"type": "gat", "channels": "classes"}]})") ==
          "model: modules[0] (residual block1): modules is empty, expected at least one module");
  }
}
