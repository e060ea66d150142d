#include "maskgat/train/torch_state.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <type_traits>
#include <variant>

#include "maskgat/core/error.hpp"
#include "maskgat/core/random.hpp"

namespace maskgat::train {
namespace {

using nn::ModuleSpec;

// How a MaskGAT tensor (rows x cols) is laid out in PyTorch.
enum class Layout : std::uint8_t {
  kTransposed,  // a torch.nn.Linear weight: [cols, rows]
  kHeads,       // an attention vector: [1, rows (heads), cols (channels)]
  kVector,      // a bias, a norm's scale or statistic: [cols], rows == 1
};

std::vector<std::int64_t> torch_shape(Layout layout, std::int64_t rows, std::int64_t cols) {
  switch (layout) {
    case Layout::kTransposed:
      return {cols, rows};
    case Layout::kHeads:
      return {1, rows, cols};
    case Layout::kVector:
      break;
  }
  return {cols};
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t d = 0; d < shape.size(); ++d) {
    text += (d > 0 ? ", " : "") + std::to_string(shape[d]);
  }
  return text + "]";
}

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

template <typename Options>
constexpr bool kIs(const ModuleSpec& module) {
  return std::holds_alternative<Options>(module.module);
}

// Every module of a spec in the order the model names them (a block before its body), with the
// name the model gives it: its own, or its kind and its place among the modules of that kind
// (docs/model-specs.md, Names).
std::vector<std::pair<std::string, const ModuleSpec*>> named_modules(
    const std::vector<ModuleSpec>& modules) {
  std::vector<std::pair<std::string, const ModuleSpec*>> out;
  std::map<std::string, std::int64_t> counts;
  const auto walk = [&](const auto& self, const std::vector<ModuleSpec>& list) -> void {
    for (const ModuleSpec& module : list) {
      const char* kind = std::visit(
          [](const auto& options) -> const char* {
            using Options = std::decay_t<decltype(options)>;
            if constexpr (std::is_same_v<Options, nn::GatConvOptions> ||
                          std::is_same_v<Options, nn::GatV2ConvOptions> ||
                          std::is_same_v<Options, nn::DotAttentionConvOptions>) {
              return "conv";
            }
            if constexpr (std::is_same_v<Options, nn::LinearOptions>) return "lin";
            if constexpr (std::is_same_v<Options, nn::LayerNormOptions> ||
                          std::is_same_v<Options, nn::BatchNormOptions>) {
              return "norm";
            }
            if constexpr (std::is_same_v<Options, nn::ResidualOptions>) return "block";
            return nullptr;
          },
          module.module);
      if (kind == nullptr) continue;
      const std::int64_t n = ++counts[kind];
      out.emplace_back(module.name.empty() ? kind + std::to_string(n) : module.name, &module);
      if (const auto* block = std::get_if<nn::ResidualOptions>(&module.module)) {
        self(self, block->modules);
      }
    }
  };
  walk(walk, modules);
  return out;
}

// The PyG key of a MaskGAT tensor `suffix` (after the module's name) of `module`.
std::string torch_suffix(const ModuleSpec& module, std::string_view suffix) {
  if (kIs<nn::GatConvOptions>(module) && suffix == "weight") return "lin.weight";
  if (kIs<nn::DotAttentionConvOptions>(module)) {
    for (const std::string_view part : {"query.", "key.", "value.", "skip."}) {
      if (suffix.starts_with(part)) return "lin_" + std::string(suffix);
    }
  }
  return std::string(suffix);
}

Layout layout_of(const ModuleSpec& module, std::string_view suffix) {
  if (suffix.starts_with("att")) return Layout::kHeads;
  if (suffix.ends_with(".weight")) return Layout::kTransposed;
  if (suffix == "weight" && (kIs<nn::GatConvOptions>(module) || kIs<nn::LinearOptions>(module))) {
    return Layout::kTransposed;
  }
  return Layout::kVector;
}

// A state dict's tensors under their keys after the renames.
class RenamedState {
 public:
  RenamedState(const StateDict& state, const StateDictOptions& options) {
    for (const NamedTensor& tensor : state.tensors) {
      std::string key = tensor.name;
      for (const auto& [from, to] : options.renames) {
        if (key.starts_with(from)) {
          key = to + key.substr(from.size());
          break;
        }
      }
      if (!tensors_.emplace(key, &tensor).second) {
        throw Error("state dict: the renames map two keys to " + in_quotes(key) + " (one is " +
                    in_quotes(tensor.name) + ")");
      }
      order_.push_back(key);
    }
  }

  [[nodiscard]] const NamedTensor* find(const std::string& key) const {
    const auto found = tensors_.find(key);
    return found == tensors_.end() ? nullptr : found->second;
  }
  [[nodiscard]] const std::vector<std::string>& keys() const noexcept { return order_; }

 private:
  std::map<std::string, const NamedTensor*, std::less<>> tensors_;
  std::vector<std::string> order_;
};

// One tensor of the model and where it comes from in the state dict.
struct Slot {
  nn::ParameterStore<float>* store = nullptr;
  nn::Parameter parameter;
  std::string key;  // the PyG key
  Layout layout = Layout::kVector;
};

class Matcher {
 public:
  Matcher(nn::Model& model, const RenamedState& state) : state_(state) {
    for (const auto& [name, module] : named_modules(model.spec().modules)) modules_[name] = module;
    add_slots(model.parameters());
    add_slots(model.buffers());
    accept_copies();
  }

  // Checks every slot and key; throws the whole list of what is wrong.
  void check() const {
    std::vector<std::string> missing;
    std::vector<std::string> mismatched;
    for (const Slot& slot : slots_) {
      const NamedTensor* tensor = state_.find(slot.key);
      if (tensor == nullptr) {
        missing.push_back(in_quotes(slot.key));
        continue;
      }
      const auto want = torch_shape(slot.layout, slot.parameter.rows, slot.parameter.cols);
      if (tensor->shape != want) {
        mismatched.push_back(in_quotes(slot.key) + " is " + shape_text(tensor->shape) +
                             " in the file, " + shape_text(want) + " in the model");
      }
    }
    std::vector<std::string> unexpected;
    for (const std::string& key : state_.keys()) {
      if (used_.count(key) == 0) unexpected.push_back(in_quotes(key));
    }
    const auto join = [](const std::vector<std::string>& items) {
      std::string text;
      for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
      return text;
    };
    std::string message;
    const auto add = [&](const char* what, const std::vector<std::string>& items) {
      if (items.empty()) return;
      message += (message.empty() ? "" : "; ") + std::string(what) + join(items);
    };
    add("missing keys: ", missing);
    add("unexpected keys: ", unexpected);
    add("size mismatch: ", mismatched);
    if (!message.empty()) throw Error("state dict: " + message);
    for (const auto& [copy, original] : copies_) {
      if (state_.find(copy)->values != state_.find(original)->values) {
        throw Error("state dict: " + in_quotes(copy) + " should be a copy of " +
                    in_quotes(original) +
                    " (the model shares one weight), but their values differ");
      }
    }
  }

  void copy() const {
    for (const Slot& slot : slots_) {
      const NamedTensor& tensor = *state_.find(slot.key);
      auto value = slot.store->value(slot.parameter);
      const std::int64_t rows = slot.parameter.rows;
      const std::int64_t cols = slot.parameter.cols;
      for (std::int64_t r = 0; r < rows; ++r) {
        for (std::int64_t c = 0; c < cols; ++c) {
          const std::int64_t at = slot.layout == Layout::kTransposed ? c * rows + r : r * cols + c;
          value(r, c) = static_cast<float>(tensor.values[static_cast<std::size_t>(at)]);
        }
      }
    }
  }

 private:
  void add_slots(nn::ParameterStore<float>& store) {
    for (const auto& entry : store.entries()) {
      const std::size_t dot = entry.name.find('.');
      const std::string module = entry.name.substr(0, dot);
      const std::string suffix = entry.name.substr(dot + 1);
      const ModuleSpec& spec = *modules_.at(module);
      Slot slot{&store, entry.parameter, module + "." + torch_suffix(spec, suffix),
                layout_of(spec, suffix)};
      used_.insert(slot.key);
      slots_.push_back(std::move(slot));
    }
  }

  // Keys PyG saves beside the ones the model reads: a batch norm's step count, GATv2's shared
  // weights saved twice, and GAT's projection saved as equal source and destination weights.
  void accept_copies() {
    for (const auto& [name, module] : modules_) {
      if (const auto* norm = std::get_if<nn::BatchNormOptions>(&module->module)) {
        if (norm->track_running_stats) used_.insert(name + ".num_batches_tracked");
      }
      if (const auto* v2 = std::get_if<nn::GatV2ConvOptions>(&module->module)) {
        if (v2->share_weights) {
          accept_copy(name + ".lin_r.weight", name + ".lin_l.weight");
          if (v2->bias) accept_copy(name + ".lin_r.bias", name + ".lin_l.bias");
        }
      }
      if (kIs<nn::GatConvOptions>(*module) && state_.find(name + ".lin.weight") == nullptr &&
          state_.find(name + ".lin_src.weight") != nullptr) {
        for (Slot& slot : slots_) {
          if (slot.key == name + ".lin.weight") slot.key = name + ".lin_src.weight";
        }
        used_.erase(name + ".lin.weight");
        used_.insert(name + ".lin_src.weight");
        if (state_.find(name + ".lin_dst.weight") != nullptr) {
          accept_copy(name + ".lin_dst.weight", name + ".lin_src.weight");
        }
      }
    }
  }

  void accept_copy(const std::string& copy, const std::string& original) {
    if (state_.find(copy) == nullptr || state_.find(original) == nullptr) return;
    used_.insert(copy);
    copies_.emplace_back(copy, original);
  }

  const RenamedState& state_;
  std::map<std::string, const ModuleSpec*> modules_;
  std::vector<Slot> slots_;
  std::set<std::string> used_;
  std::vector<std::pair<std::string, std::string>> copies_;
};

// A tensor's dimension `d`, when the state dict holds `key` with more than `d` dimensions.
std::optional<std::int64_t> dimension(const RenamedState& state, const std::string& key,
                                      std::size_t d) {
  const NamedTensor* tensor = state.find(key);
  if (tensor == nullptr || tensor->shape.size() <= d) return std::nullopt;
  return tensor->shape[d];
}

// The widths a module's tensors in the state dict give it (input, output), where they tell.
struct Widths {
  std::optional<std::int64_t> in;
  std::optional<std::int64_t> out;
};

Widths widths_of(const std::string& name, const ModuleSpec& module, const RenamedState& state) {
  const auto heads_out = [&](const std::string& att, bool concat) -> std::optional<std::int64_t> {
    const auto heads = dimension(state, att, 1);
    const auto channels = dimension(state, att, 2);
    if (!heads || !channels) return std::nullopt;
    return concat ? *heads * *channels : *channels;
  };
  return std::visit(
      [&](const auto& options) -> Widths {
        using Options = std::decay_t<decltype(options)>;
        if constexpr (std::is_same_v<Options, nn::GatConvOptions>) {
          auto in = dimension(state, name + ".lin.weight", 1);
          if (!in) in = dimension(state, name + ".lin_src.weight", 1);
          return {in, heads_out(name + ".att_src", options.concat)};
        } else if constexpr (std::is_same_v<Options, nn::GatV2ConvOptions>) {
          return {dimension(state, name + ".lin_l.weight", 1),
                  heads_out(name + ".att", options.concat)};
        } else if constexpr (std::is_same_v<Options, nn::DotAttentionConvOptions>) {
          auto out = dimension(state, name + ".lin_query.weight", 0);
          if (out && !options.concat) *out /= std::max<std::int64_t>(options.heads, 1);
          return {dimension(state, name + ".lin_query.weight", 1), out};
        } else if constexpr (std::is_same_v<Options, nn::LinearOptions>) {
          return {dimension(state, name + ".weight", 1), dimension(state, name + ".weight", 0)};
        } else if constexpr (std::is_same_v<Options, nn::LayerNormOptions> ||
                             std::is_same_v<Options, nn::BatchNormOptions>) {
          for (const char* key : {".weight", ".bias", ".running_mean"}) {
            if (auto width = dimension(state, name + key, 0)) return {width, width};
          }
          return {};
        } else {
          return {};  // a block's widths are its body's
        }
      },
      module.module);
}

}  // namespace

void load_state_dict(nn::Model& model, const StateDict& state, const StateDictOptions& options) {
  const RenamedState renamed(state, options);
  const Matcher matcher(model, renamed);
  matcher.check();
  matcher.copy();
}

nn::Model import_state_dict(nn::ModelSpec spec, const StateDict& state,
                            const StateDictOptions& options) {
  const RenamedState renamed(state, options);
  std::optional<std::int64_t> in;
  std::optional<std::int64_t> out;
  std::string first;
  std::string last;
  for (const auto& [name, module] : named_modules(spec.modules)) {
    const Widths widths = widths_of(name, *module, renamed);
    if (!in && widths.in) {
      in = widths.in;
      first = name;
    }
    if (widths.out) {
      out = widths.out;
      last = name;
    }
  }
  if (!in || !out) {
    throw Error(
        "state dict: none of its tensors belongs to a module of the spec with weights, so the "
        "input width and the classes cannot be read from it (are the spec's module names the "
        "PyG model's attribute names? --rename maps other names)");
  }
  const auto agree = [](std::int64_t& field, std::int64_t value, const char* what,
                        const std::string& module) {
    if (field != 0 && field != value) {
      throw Error("state dict: the spec's " + std::string(what) + " is " + std::to_string(field) +
                  ", the file's " + in_quotes(module) + " has " + std::to_string(value));
    }
    field = value;
  };
  agree(spec.in_features, *in, "input width", first);
  agree(spec.classes, *out, "class count", last);
  Rng rng(0);
  nn::Model model(spec, rng);
  load_state_dict(model, state, options);
  return model;
}

StateDict export_state_dict(const nn::Model& model) {
  std::map<std::string, const ModuleSpec*> modules;
  for (const auto& [name, module] : named_modules(model.spec().modules)) modules[name] = module;
  StateDict state;
  const auto add = [&](const nn::ParameterStore<float>& store) {
    for (const auto& entry : store.entries()) {
      const std::size_t dot = entry.name.find('.');
      const std::string module = entry.name.substr(0, dot);
      const std::string suffix = entry.name.substr(dot + 1);
      const ModuleSpec& spec = *modules.at(module);
      const Layout layout = layout_of(spec, suffix);
      const std::int64_t rows = entry.parameter.rows;
      const std::int64_t cols = entry.parameter.cols;
      NamedTensor tensor;
      tensor.name = module + "." + torch_suffix(spec, suffix);
      tensor.shape = torch_shape(layout, rows, cols);
      const auto value = store.value(entry.parameter);
      tensor.values.reserve(static_cast<std::size_t>(rows * cols));
      if (layout == Layout::kTransposed) {
        for (std::int64_t c = 0; c < cols; ++c) {
          for (std::int64_t r = 0; r < rows; ++r) tensor.values.push_back(value(r, c));
        }
      } else {
        for (std::int64_t r = 0; r < rows; ++r) {
          for (std::int64_t c = 0; c < cols; ++c) tensor.values.push_back(value(r, c));
        }
      }
      state.tensors.push_back(std::move(tensor));
    }
  };
  add(model.parameters());
  add(model.buffers());
  for (const auto& [name, module] : modules) {
    const auto* norm = std::get_if<nn::BatchNormOptions>(&module->module);
    if (norm != nullptr && norm->track_running_stats) {
      state.tensors.push_back({name + ".num_batches_tracked", TorchDtype::kInt64, {}, {0.0}});
    }
  }
  return state;
}

Checkpoint checkpoint_of(const nn::Model& model, std::vector<std::string> class_names,
                         std::string source) {
  if (static_cast<std::int64_t>(class_names.size()) != model.options().classes) {
    throw InvalidArgument("checkpoint_of: " + std::to_string(class_names.size()) +
                          " class names for a model of " + std::to_string(model.options().classes) +
                          " classes");
  }
  const std::set<std::string> distinct(class_names.begin(), class_names.end());
  if (distinct.size() != class_names.size() || distinct.count("") != 0) {
    throw InvalidArgument("checkpoint_of: the class names must be distinct and not empty");
  }
  Checkpoint checkpoint;
  checkpoint.options.model = model.options();
  checkpoint.options.spec = model.spec();
  checkpoint.dataset = std::move(source);
  checkpoint.class_names = std::move(class_names);
  for (const auto& entry : model.parameters().entries()) {
    checkpoint.parameters.push_back({entry.name, entry.parameter.rows, entry.parameter.cols});
  }
  const auto values = model.parameters().values();
  checkpoint.values.assign(values.begin(), values.end());
  checkpoint.buffers.assign(model.buffers().values().begin(), model.buffers().values().end());
  checkpoint.state.best_values = checkpoint.values;
  return checkpoint;
}

}  // namespace maskgat::train
