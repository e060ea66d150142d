// Two trained PyTorch Geometric models nobody here wrote (`$MASKGAT_DATA_DIR/models`, fetched by
// datasets/fetch.sh; datasets/README.md names their sources): every key, dtype and shape, values
// pinned against torch.load's, and each loaded into the model its key names imply.

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "maskgat/io/torch_file.hpp"
#include "maskgat/nn/spec.hpp"
#include "maskgat/train/torch_state.hpp"
#include "support/paths.hpp"

namespace {

using maskgat::NamedTensor;
using maskgat::StateDict;

struct Key {
  std::string name;
  std::vector<std::int64_t> shape;
};

void check_keys(const StateDict& state, const std::vector<Key>& keys) {
  REQUIRE(state.tensors.size() == keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    CAPTURE(keys[i].name);
    CHECK(state.tensors[i].name == keys[i].name);
    CHECK(state.tensors[i].shape == keys[i].shape);
    const bool count = keys[i].name.ends_with("num_batches_tracked");
    CHECK(state.tensors[i].dtype ==
          (count ? maskgat::TorchDtype::kInt64 : maskgat::TorchDtype::kFloat32));
  }
}

// Element `index` (row-major) of tensor `name`.
double at(const StateDict& state, const std::string& name, std::size_t index) {
  const NamedTensor* tensor = state.find(name);
  REQUIRE(tensor != nullptr);
  return tensor->values.at(index);
}

}  // namespace

TEST_SUITE("integration") {
  TEST_CASE("torch models: the Elliptic GAT (saved from cuda:0) reads and loads") {
    const StateDict state =
        maskgat::read_state_dict(maskgat::test::data_dir() / "models/elliptic_gat.pt", {});
    check_keys(state, {{"conv1.att_src", {1, 4, 64}},
                       {"conv1.att_dst", {1, 4, 64}},
                       {"conv1.bias", {256}},
                       {"conv1.lin.weight", {256, 166}},
                       {"conv2.att_src", {1, 1, 64}},
                       {"conv2.att_dst", {1, 1, 64}},
                       {"conv2.bias", {64}},
                       {"conv2.lin.weight", {64, 256}},
                       {"classifier.weight", {2, 64}},
                       {"classifier.bias", {2}}});
    // torch.load(..., map_location="cpu") gives these values.
    CHECK(at(state, "conv1.att_src", 0) == 0.28121018409729004);
    CHECK(at(state, "conv1.lin.weight", 255 * 166 + 165) == -0.09648959338665009);
    CHECK(at(state, "classifier.bias", 1) == -0.032739557325839996);
    const auto spec = maskgat::nn::parse_model_spec(R"({"modules": [
      {"type": "gat", "name": "conv1", "heads": 4, "channels": 64}, {"type": "elu"},
      {"type": "gat", "name": "conv2", "heads": 1, "channels": 64}, {"type": "elu"},
      {"type": "linear", "name": "classifier", "out": "classes"}]})",
                                                    "elliptic");
    const maskgat::nn::Model model = maskgat::train::import_state_dict(spec, state);
    CHECK(model.options().in_features == 166);
    CHECK(model.options().classes == 2);
    // conv1.weight is lin.weight transposed: its (165, 255) is the file's [255, 165].
    const auto weight = model.parameters().value(*model.parameters().find("conv1.weight"));
    CHECK(static_cast<double>(weight(165, 255)) == -0.09648959338665009);
  }

  TEST_CASE("torch models: the solubility GAT with batch norms reads and loads") {
    const StateDict state =
        maskgat::read_state_dict(maskgat::test::data_dir() / "models/solubility_gat.pt", {});
    std::vector<Key> keys;
    for (const std::string conv : {"conv1", "conv2"}) {
      const std::int64_t in = conv == "conv1" ? 9 : 128;
      const std::string norm = conv == "conv1" ? "bn1" : "bn2";
      keys.insert(keys.end(), {{conv + ".att_src", {1, 4, 32}},
                               {conv + ".att_dst", {1, 4, 32}},
                               {conv + ".bias", {128}},
                               {conv + ".lin.weight", {128, in}},
                               {norm + ".weight", {128}},
                               {norm + ".bias", {128}},
                               {norm + ".running_mean", {128}},
                               {norm + ".running_var", {128}},
                               {norm + ".num_batches_tracked", {}}});
    }
    keys.insert(keys.end(), {{"out.weight", {1, 128}}, {"out.bias", {1}}});
    check_keys(state, keys);
    CHECK(at(state, "bn1.running_var", 5) == 0.174287810921669);
    CHECK(at(state, "bn1.num_batches_tracked", 0) == 150000.0);
    CHECK(at(state, "out.weight", 127) == -0.17879153788089752);
    // A graph-level model: without its pooling step (no weights), the node-level stack of the
    // same modules takes every tensor, the shapes checked.
    const auto spec = maskgat::nn::parse_model_spec(R"({"modules": [
      {"type": "gat", "name": "conv1", "heads": 4, "channels": 32},
      {"type": "batch_norm", "name": "bn1"}, {"type": "relu"},
      {"type": "gat", "name": "conv2", "heads": 4, "channels": 32},
      {"type": "batch_norm", "name": "bn2"}, {"type": "relu"},
      {"type": "linear", "name": "out", "out": "classes"}]})",
                                                    "solubility");
    const maskgat::nn::Model model = maskgat::train::import_state_dict(spec, state);
    CHECK(model.options().in_features == 9);
    CHECK(model.options().classes == 1);
    const auto var = model.buffers().value(*model.buffers().find("bn1.running_var"));
    CHECK(static_cast<double>(var(0, 5)) == 0.174287810921669);
  }
}
