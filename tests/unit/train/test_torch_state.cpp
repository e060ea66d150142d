// PyG-named state dicts into models and out of them: the names and layouts of every module kind,
// the strict checks (every missing key, unexpected key and size mismatch listed at once), the
// copies PyG saves, renames, the widths read from the tensors, and the round trip.

#include <doctest/doctest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/core/random.hpp"
#include "maskgat/nn/spec.hpp"
#include "maskgat/train/torch_state.hpp"

namespace {

using maskgat::NamedTensor;
using maskgat::StateDict;
namespace nn = maskgat::nn;
namespace train = maskgat::train;

// Every module kind with parameters, and a block whose body changes the width.
constexpr const char* kSpec = R"({"modules": [
  {"type": "linear", "name": "enc", "out": 6},
  {"type": "layer_norm", "name": "ln"},
  {"type": "gat", "name": "g", "heads": 2, "channels": 3, "edge_dim": 2, "residual": true},
  {"type": "batch_norm", "name": "bn"},
  {"type": "residual", "name": "blk", "modules": [
    {"type": "gatv2", "name": "v", "heads": 2, "channels": 2, "share_weights": true}]},
  {"type": "dot", "name": "d", "heads": 1, "channels": "classes"}]})";

nn::ModelSpec spec(std::int64_t in = 5, std::int64_t classes = 3) {
  nn::ModelSpec s = nn::parse_model_spec(kSpec, "spec");
  s.in_features = in;
  s.classes = classes;
  return s;
}

// A model of `spec()` whose every parameter and statistic holds its own value.
nn::Model numbered_model() {
  maskgat::Rng rng(1);
  nn::Model model(spec(), rng);
  float next = 0.5F;
  for (float& value : model.parameters().values()) value = next += 0.25F;
  for (float& value : model.buffers().values()) value = next += 0.25F;
  return model;
}

std::vector<std::string> names(const StateDict& state) {
  std::vector<std::string> out;
  for (const NamedTensor& tensor : state.tensors) out.push_back(tensor.name);
  return out;
}

NamedTensor& tensor(StateDict& state, const std::string& name) {
  for (NamedTensor& t : state.tensors) {
    if (t.name == name) return t;
  }
  throw std::runtime_error("no tensor " + name);
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const maskgat::Error& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("torch state: a model's tensors under PyG's names and shapes") {
    const nn::Model model = numbered_model();
    const StateDict state = train::export_state_dict(model);
    CHECK(names(state) == std::vector<std::string>{"enc.weight",
                                                   "enc.bias",
                                                   "ln.weight",
                                                   "ln.bias",
                                                   "g.lin.weight",
                                                   "g.att_src",
                                                   "g.att_dst",
                                                   "g.lin_edge.weight",
                                                   "g.att_edge",
                                                   "g.res.weight",
                                                   "g.bias",
                                                   "bn.weight",
                                                   "bn.bias",
                                                   "v.lin_l.weight",
                                                   "v.lin_l.bias",
                                                   "v.att",
                                                   "v.bias",
                                                   "blk.skip.weight",
                                                   "d.lin_query.weight",
                                                   "d.lin_query.bias",
                                                   "d.lin_key.weight",
                                                   "d.lin_key.bias",
                                                   "d.lin_value.weight",
                                                   "d.lin_value.bias",
                                                   "d.lin_skip.weight",
                                                   "d.lin_skip.bias",
                                                   "bn.running_mean",
                                                   "bn.running_var",
                                                   "bn.num_batches_tracked"});
    StateDict copy = state;
    CHECK(tensor(copy, "enc.weight").shape == std::vector<std::int64_t>{6, 5});  // [out, in]
    CHECK(tensor(copy, "g.att_src").shape == std::vector<std::int64_t>{1, 2, 3});
    CHECK(tensor(copy, "g.lin_edge.weight").shape == std::vector<std::int64_t>{6, 2});
    CHECK(tensor(copy, "g.bias").shape == std::vector<std::int64_t>{6});
    CHECK(tensor(copy, "blk.skip.weight").shape == std::vector<std::int64_t>{4, 6});
    CHECK(tensor(copy, "bn.num_batches_tracked").shape.empty());
    CHECK(tensor(copy, "bn.num_batches_tracked").dtype == maskgat::TorchDtype::kInt64);
    // Linear's weight is MaskGAT's x W transposed: the file's [o][i] is the model's (i, o).
    const auto w = model.parameters().value(*model.parameters().find("enc.weight"));
    CHECK(tensor(copy, "enc.weight").values[1 * 5 + 4] == static_cast<double>(w(4, 1)));
  }

  TEST_CASE("torch state: a state dict loads back bitwise, and a spec's widths come from it") {
    const nn::Model model = numbered_model();
    const StateDict state = train::export_state_dict(model);
    nn::ModelSpec unset = spec(0, 0);
    const nn::Model imported = train::import_state_dict(unset, state);
    CHECK(imported.options().in_features == 5);
    CHECK(imported.options().classes == 3);
    const auto a = model.parameters().values();
    const auto b = imported.parameters().values();
    CHECK(std::vector<float>(a.begin(), a.end()) == std::vector<float>(b.begin(), b.end()));
    const auto sa = model.buffers().values();
    const auto sb = imported.buffers().values();
    CHECK(std::vector<float>(sa.begin(), sa.end()) == std::vector<float>(sb.begin(), sb.end()));
    CHECK(error_of([&] { static_cast<void>(train::import_state_dict(spec(7, 3), state)); }) ==
          "state dict: the spec's input width is 7, the file's 'enc' has 5");
  }

  TEST_CASE("torch state: every missing key, unexpected key and size mismatch is listed") {
    StateDict state = train::export_state_dict(numbered_model());
    state.tensors.erase(state.tensors.begin() + 5);  // g.att_src
    state.tensors.erase(state.tensors.begin());      // enc.weight
    state.tensors.push_back({"g.att_source", maskgat::TorchDtype::kFloat32, {1, 2, 3}, {}});
    tensor(state, "ln.weight").shape = {};  // a 0-d tensor where a vector is wanted
    tensor(state, "g.lin.weight").shape = {5, 6};
    maskgat::Rng rng(2);
    nn::Model model(spec(), rng);
    const std::vector<float> before(model.parameters().values().begin(),
                                    model.parameters().values().end());
    CHECK(error_of([&] { train::load_state_dict(model, state); }) ==
          "state dict: missing keys: 'enc.weight', 'g.att_src'; unexpected keys: 'g.att_source'; "
          "size mismatch: 'ln.weight' is [] in the file, [6] in the model, 'g.lin.weight' is [5, "
          "6] in the file, [6, 6] in the model");
    // Nothing was changed.
    CHECK(std::vector<float>(model.parameters().values().begin(),
                             model.parameters().values().end()) == before);
  }

  TEST_CASE("torch state: renames, and the copies PyG saves of shared weights") {
    StateDict state = train::export_state_dict(numbered_model());
    for (NamedTensor& t : state.tensors) t.name = "module." + t.name;  // DataParallel's prefix
    maskgat::Rng rng(3);
    nn::Model model(spec(), rng);
    CHECK(error_of([&] {
            train::load_state_dict(model, state);
          }).starts_with("state dict: missing keys: 'enc.weight', "));
    train::StateDictOptions options;
    options.renames = {{"module.", ""}};
    train::load_state_dict(model, state, options);
    // GATv2 with share_weights: PyG saves lin_r as a copy of lin_l; equal copies are accepted.
    StateDict shared = train::export_state_dict(model);
    NamedTensor copy = tensor(shared, "v.lin_l.weight");
    copy.name = "v.lin_r.weight";
    shared.tensors.push_back(copy);
    train::load_state_dict(model, shared);
    shared.tensors.back().values[0] += 1.0;
    CHECK(error_of([&] { train::load_state_dict(model, shared); }) ==
          "state dict: 'v.lin_r.weight' should be a copy of 'v.lin_l.weight' (the model shares "
          "one weight), but their values differ");
    // GATConv's projection saved as equal source and destination weights (lin_src, lin_dst).
    StateDict split = train::export_state_dict(model);
    tensor(split, "g.lin.weight").name = "g.lin_src.weight";
    NamedTensor destination = tensor(split, "g.lin_src.weight");
    destination.name = "g.lin_dst.weight";
    split.tensors.push_back(destination);
    train::load_state_dict(model, split);
    // Two keys renamed onto one.
    options.renames = {{"module.enc.", "module.ln."}};
    CHECK(error_of([&] {
            train::load_state_dict(model, state, options);
          }).starts_with("state dict: the renames map two keys to 'module.ln.weight'"));
  }

  TEST_CASE("torch state: a spec none of whose modules the file holds, and bad class names") {
    StateDict state = train::export_state_dict(numbered_model());
    for (NamedTensor& t : state.tensors) t.name = "net." + t.name;
    CHECK(error_of([&] {
            static_cast<void>(train::import_state_dict(spec(0, 0), state));
          }).starts_with("state dict: none of its tensors belongs to a module of the spec"));
    const nn::Model model = numbered_model();
    CHECK(error_of([&] {
            static_cast<void>(train::checkpoint_of(model, {"a", "b"}, "f.pt"));
          }) == "checkpoint_of: 2 class names for a model of 3 classes");
    CHECK(error_of([&] {
            static_cast<void>(train::checkpoint_of(model, {"a", "b", "a"}, "f.pt"));
          }) == "checkpoint_of: the class names must be distinct and not empty");
    const train::Checkpoint checkpoint = train::checkpoint_of(model, {"a", "b", "c"}, "f.pt");
    CHECK(checkpoint.dataset == "f.pt");
    CHECK(checkpoint.values == checkpoint.state.best_values);
    CHECK(train::load_model(checkpoint).parameters().size() == model.parameters().size());
  }
}
