#include "maskgat/nn/spec.hpp"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "maskgat/core/error.hpp"

namespace maskgat::nn {
namespace {

using Json = nlohmann::ordered_json;

// The deepest nesting of residual blocks a spec may have (bounds the reader's recursion).
constexpr int kMaxDepth = 16;

// Reads the fields of one module's JSON object into its options: each present field is checked
// for its JSON type and taken; fields the options do not have are refused afterwards.
class FieldReader {
 public:
  FieldReader(const Json& object, std::string where) : object_(object), where_(std::move(where)) {}

  void flag(const char* key, bool& value) {
    if (const Json* field = find(key, "true or false", &Json::is_boolean))
      value = field->get<bool>();
  }
  void number(const char* key, double& value) {
    if (const Json* field = find(key, "a number", &Json::is_number)) value = field->get<double>();
  }
  void count(const char* key, std::int64_t& value) {
    if (const Json* field = find(key, "an integer", &Json::is_number_integer)) {
      value = field->get<std::int64_t>();
    }
  }
  // A count whose default 0 means "none" (written only when set).
  void optional_count(const char* key, std::int64_t& value) { count(key, value); }
  // A width: an integer, or "classes" where `classes_allowed`.
  void width(const char* key, std::int64_t& value, bool classes_allowed) {
    const auto is_width = [classes_allowed](const Json& field) {
      return field.is_number_integer() || (classes_allowed && field == "classes");
    };
    const Json* field = take(key);
    if (field == nullptr) return;
    if (!is_width(*field)) {
      fail(std::string(key) + " is " + field->dump() + ", expected an integer" +
           (classes_allowed ? " or \"classes\"" : ""));
    }
    value = field->is_string() ? kClassesWidth : field->get<std::int64_t>();
  }
  // Refuses any field no call above asked for.
  void finish() const {
    for (const auto& [key, value] : object_.items()) {
      if (key != "type" && key != "name" && key != "modules" && !used_.contains(key)) {
        std::string known;
        for (const auto& name : known_) known += (known.empty() ? "" : ", ") + name;
        fail("unknown field '" + key + "'" + (known.empty() ? "" : ", expected " + known));
      }
    }
  }
  [[noreturn]] void fail(const std::string& message) const {
    throw InvalidArgument(where_ + message);
  }

 private:
  // The field `key`, if present, marked as known.
  const Json* take(const char* key) {
    known_.emplace_back(key);
    if (!object_.contains(key)) return nullptr;
    used_.insert(key);
    return &object_.at(key);
  }
  const Json* find(const char* key, const char* expected, bool (Json::*is_kind)() const noexcept) {
    const Json* field = take(key);
    if (field != nullptr && !(field->*is_kind)()) {
      fail(std::string(key) + " is " + field->dump() + ", expected " + expected);
    }
    return field;
  }

  const Json& object_;
  std::string where_;
  std::set<std::string, std::less<>> used_;
  std::vector<std::string> known_;
};

// Writes the same fields into a JSON object, in the order the reader asks for them.
class FieldWriter {
 public:
  explicit FieldWriter(Json& object) : object_(object) {}
  void flag(const char* key, bool value) { object_[key] = value; }
  void number(const char* key, double value) { object_[key] = value; }
  void count(const char* key, std::int64_t value) { object_[key] = value; }
  void optional_count(const char* key, std::int64_t value) {
    if (value != 0) object_[key] = value;
  }
  void width(const char* key, std::int64_t value, bool /*classes_allowed*/) {
    if (value == kClassesWidth) {
      object_[key] = "classes";
    } else {
      object_[key] = value;
    }
  }

 private:
  Json& object_;
};

// The fields of each module, for reading and writing alike. `in`/`features` are the declared
// input widths (0: inferred).
template <typename Fields, typename Options>
void attention_fields(Fields& f, Options& o) {
  f.width("in", o.in_features, false);
  f.count("heads", o.heads);
  f.width("channels", o.out_features, true);
  f.flag("concat", o.concat);
  f.number("dropout", o.dropout);
  f.flag("bias", o.bias);
}
// GAT's and GATv2's: a LeakyReLU in the score, optional self-loops, a residual projection and
// edge features in the score (PyG's `edge_dim`).
template <typename Fields, typename Options>
void additive_fields(Fields& f, Options& o) {
  attention_fields(f, o);
  f.number("negative_slope", o.negative_slope);
  f.flag("add_self_loops", o.add_self_loops);
  f.flag("residual", o.residual);
  f.optional_count("edge_dim", o.edge_features);
}
template <typename Fields>
void fields(Fields& f, GatConvOptions& o) {
  additive_fields(f, o);
}
template <typename Fields>
void fields(Fields& f, GatV2ConvOptions& o) {
  additive_fields(f, o);
  f.flag("share_weights", o.share_weights);
}
template <typename Fields>
void fields(Fields& f, DotAttentionConvOptions& o) {
  attention_fields(f, o);
  f.flag("root_weight", o.root_weight);
}
template <typename Fields>
void fields(Fields& f, LinearOptions& o) {
  f.width("in", o.in_features, false);
  f.width("out", o.out_features, true);
  f.flag("bias", o.bias);
}
template <typename Fields>
void fields(Fields& f, LayerNormOptions& o) {
  f.width("features", o.features, false);
  f.number("eps", o.eps);
  f.flag("elementwise_affine", o.elementwise_affine);
  f.flag("bias", o.bias);
}
template <typename Fields>
void fields(Fields& f, BatchNormOptions& o) {
  f.width("features", o.features, false);
  f.number("eps", o.eps);
  f.number("momentum", o.momentum);
  f.flag("affine", o.affine);
  f.flag("track_running_stats", o.track_running_stats);
}
template <typename Fields>
void fields(Fields& f, ActivationOptions& o) {
  if (o.kind == ActivationKind::kLeakyRelu) f.number("negative_slope", o.negative_slope);
  if (o.kind == ActivationKind::kElu) f.number("alpha", o.alpha);
}
template <typename Fields>
void fields(Fields& f, DropoutOptions& o) {
  f.number("p", o.p);
}
template <typename Fields>
void fields(Fields& /*f*/, ResidualOptions& /*o*/) {}
template <typename Fields>
void fields(Fields& f, ReadoutOptions& o) {
  f.width("features", o.features, false);
  if (o.kind == ReadoutKind::kAttention) f.count("heads", o.heads);
}

constexpr std::array<std::pair<ReadoutKind, const char*>, 4> kReadoutTypes{{
    {ReadoutKind::kSum, "sum_pool"},
    {ReadoutKind::kMean, "mean_pool"},
    {ReadoutKind::kMax, "max_pool"},
    {ReadoutKind::kAttention, "attention_pool"},
}};

constexpr const char* kTypes =
    "gat, gatv2, dot, linear, layer_norm, batch_norm, identity, relu, elu, leaky_relu, gelu, "
    "dropout, residual, sum_pool, mean_pool, max_pool or attention_pool";

// The default options of the module type `type`.
ModuleSpec::Module default_module(const std::string& type, const FieldReader& reader) {
  if (type == "gat") return GatConvOptions{};
  if (type == "gatv2") return GatV2ConvOptions{};
  if (type == "dot") return DotAttentionConvOptions{};
  if (type == "linear") return LinearOptions{};
  if (type == "layer_norm") return LayerNormOptions{};
  if (type == "batch_norm") return BatchNormOptions{};
  if (type == "dropout") return DropoutOptions{};
  if (type == "residual") return ResidualOptions{};
  for (const auto& [kind, name] : kReadoutTypes) {
    if (type == name) return ReadoutOptions{kind};
  }
  for (const auto kind : {ActivationKind::kIdentity, ActivationKind::kRelu, ActivationKind::kElu,
                          ActivationKind::kLeakyRelu, ActivationKind::kGelu}) {
    if (type == activation_kind_name(kind)) return ActivationOptions{kind};
  }
  reader.fail("unknown type '" + type + "', expected " + kTypes);
}

std::vector<ModuleSpec> read_modules(const Json& modules, const std::string& where, int depth);

ModuleSpec read_module(const Json& object, const std::string& where, int depth) {
  if (!object.is_object()) {
    throw InvalidArgument(where + "is " + object.dump() + ", expected an object");
  }
  ModuleSpec spec;
  if (object.contains("name")) {
    if (!object.at("name").is_string()) {
      throw InvalidArgument(where + "name is " + object.at("name").dump() + ", expected a string");
    }
    spec.name = object.at("name").get<std::string>();
  }
  if (!object.contains("type") || !object.at("type").is_string()) {
    throw InvalidArgument(where + "type is " +
                          (object.contains("type") ? object.at("type").dump() : "missing") +
                          ", expected one of " + kTypes);
  }
  const std::string type = object.at("type").get<std::string>();
  const std::string inner = where + "(" + type + (spec.name.empty() ? "" : " " + spec.name) + "): ";
  FieldReader reader(object, inner);
  spec.module = default_module(type, reader);
  std::visit([&](auto& options) { fields(reader, options); }, spec.module);
  if (auto* residual = std::get_if<ResidualOptions>(&spec.module)) {
    if (!object.contains("modules")) reader.fail("modules is missing, expected a list of modules");
    if (depth >= kMaxDepth) {
      reader.fail("residual blocks nest deeper than " + std::to_string(kMaxDepth) + " levels");
    }
    residual->modules = read_modules(object.at("modules"), inner, depth + 1);
  } else if (object.contains("modules")) {
    reader.fail("unknown field 'modules' (only a residual block has modules)");
  }
  reader.finish();
  return spec;
}

std::vector<ModuleSpec> read_modules(const Json& modules, const std::string& where, int depth) {
  if (!modules.is_array()) {
    throw InvalidArgument(where + "modules is " + modules.dump() + ", expected a list");
  }
  std::vector<ModuleSpec> result;
  for (std::size_t k = 0; k < modules.size(); ++k) {
    result.push_back(read_module(modules[k], where + "modules[" + std::to_string(k) + "] ", depth));
  }
  return result;
}

Json write_modules(const std::vector<ModuleSpec>& modules) {
  Json list = Json::array();
  for (const ModuleSpec& module : modules) {
    Json object;
    object["type"] = module_type(module);
    if (!module.name.empty()) object["name"] = module.name;
    FieldWriter writer(object);
    std::visit(
        [&](auto options) {  // a copy: the fields are listed once, for reading and writing
          fields(writer, options);
        },
        module.module);
    if (const auto* residual = std::get_if<ResidualOptions>(&module.module)) {
      object["modules"] = write_modules(residual->modules);
    }
    list.push_back(std::move(object));
  }
  return list;
}

// Adds the projection weights of `modules` (an upper bound: an attention layer counted with a
// second projection, as GATv2's and residual layers have) to `weights`, from the input `width`
// on, and their widest output to `widest`; `width` ends as their output's.
void add_spec_size(const std::vector<ModuleSpec>& modules, double classes, double& width,
                   double& weights, double& widest) {
  const auto out = [classes](std::int64_t value) {
    return value == kClassesWidth ? classes : static_cast<double>(value);
  };
  for (const ModuleSpec& module : modules) {
    std::visit(
        [&](const auto& options) {
          using Options = std::decay_t<decltype(options)>;
          if constexpr (std::is_same_v<Options, LinearOptions>) {
            weights += width * out(options.out_features);
            width = out(options.out_features);
          } else if constexpr (std::is_same_v<Options, ResidualOptions>) {
            const double in = width;
            add_spec_size(options.modules, classes, width, weights, widest);
            if (width != in) weights += in * width;
          } else if constexpr (std::is_same_v<Options, ReadoutOptions>) {
            if (options.kind == ReadoutKind::kAttention)
              weights += width * static_cast<double>(options.heads);
          } else if constexpr (requires { options.heads; }) {
            const double heads = static_cast<double>(options.heads) * out(options.out_features);
            weights += 2.0 * width * heads;
            if constexpr (requires { options.edge_features; }) {
              weights += static_cast<double>(options.edge_features) * heads;
            }
            width = options.concat ? heads : out(options.out_features);
          }
          widest = std::max(widest, width);
        },
        module.module);
  }
}

}  // namespace

SpecSize spec_size(const ModelSpec& spec) {
  SpecSize size;
  double width = static_cast<double>(spec.in_features);
  add_spec_size(spec.modules, static_cast<double>(spec.classes), width, size.weights, size.widest);
  return size;
}

const char* module_type(const ModuleSpec& module) noexcept {
  struct Name {
    const char* operator()(const GatConvOptions&) const { return "gat"; }
    const char* operator()(const GatV2ConvOptions&) const { return "gatv2"; }
    const char* operator()(const DotAttentionConvOptions&) const { return "dot"; }
    const char* operator()(const LinearOptions&) const { return "linear"; }
    const char* operator()(const LayerNormOptions&) const { return "layer_norm"; }
    const char* operator()(const BatchNormOptions&) const { return "batch_norm"; }
    const char* operator()(const ActivationOptions& o) const {
      return activation_kind_name(o.kind);
    }
    const char* operator()(const DropoutOptions&) const { return "dropout"; }
    const char* operator()(const ResidualOptions&) const { return "residual"; }
    const char* operator()(const ReadoutOptions& o) const {
      for (const auto& [kind, name] : kReadoutTypes) {
        if (kind == o.kind) return name;
      }
      return "sum_pool";
    }
  };
  return std::visit(Name{}, module.module);
}

ModelSpec parse_model_spec(std::string_view text, const std::string& source) {
  Json json;
  try {
    json = Json::parse(text);
  } catch (const Json::parse_error& error) {
    // nlohmann's message: "[json.exception.parse_error.101] parse error at line 1, column 14:
    // ...": keep what follows "parse error at ".
    const std::string what = error.what();
    const auto at = what.find("parse error at ");
    throw ParseError("model_spec", source, 0,
                     "not JSON: " + (at == std::string::npos ? what : what.substr(at + 15)));
  }
  try {
    if (!json.is_object()) {
      throw InvalidArgument("the spec is " + json.dump().substr(0, 40) +
                            ", expected an object with a list \"modules\"");
    }
    for (const auto& [key, value] : json.items()) {
      if (key != "modules") throw InvalidArgument("unknown field '" + key + "', expected modules");
    }
    if (!json.contains("modules")) throw InvalidArgument("modules is missing, expected a list");
    ModelSpec spec;
    spec.modules = read_modules(json.at("modules"), "", 0);
    return spec;
  } catch (const InvalidArgument& error) {
    throw ParseError("model_spec", source, 0, error.what());
  }
}

std::string model_spec_json(const ModelSpec& spec) {
  return Json{{"modules", write_modules(spec.modules)}}.dump();
}

}  // namespace maskgat::nn
