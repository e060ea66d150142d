#include "maskgat/nn/model.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <variant>

#include "core/detail/parallel.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/nn/dot_attention_conv.hpp"
#include "maskgat/nn/dropout.hpp"
#include "maskgat/nn/gat_conv.hpp"
#include "maskgat/nn/gatv2_conv.hpp"
#include "maskgat/nn/normalization.hpp"
#include "maskgat/nn/readout.hpp"
#include "nn/detail/layer_common.hpp"
#include "ops/detail/buffer.hpp"

namespace maskgat::nn {

const char* attention_kind_name(AttentionKind kind) noexcept {
  switch (kind) {
    case AttentionKind::kGat:
      return "gat";
    case AttentionKind::kGatV2:
      return "gatv2";
    case AttentionKind::kDot:
      return "dot";
  }
  return "gat";
}

AttentionKind parse_attention_kind(std::string_view name) {
  for (const auto kind : {AttentionKind::kGat, AttentionKind::kGatV2, AttentionKind::kDot}) {
    if (name == attention_kind_name(kind)) return kind;
  }
  throw InvalidArgument("attention must be gat, gatv2 or dot, got '" + std::string(name) + "'");
}

namespace {

using maskgat::detail::kRowBlock;

// A dropout module and its place among the model's dropouts (its key's stream).
struct DropoutStep {
  double p = 0.0;
  std::uint64_t stream = 0;
};
// The start of a residual block; its input is the block's skip.
struct BlockBegin {
  std::size_t end = 0;  // the step of its BlockEnd
};
// The end of a residual block: adds the skip (through `skip` when the widths differ).
struct BlockEnd {
  std::size_t begin = 0;  // the step of its BlockBegin
  std::optional<Projection> skip;
};

template <typename T>
using Op = std::variant<BasicGatConv<T>, BasicGatV2Conv<T>, BasicDotAttentionConv<T>,
                        BasicLinear<T>, BasicLayerNorm<T>, BasicBatchNorm<T>, BasicActivation<T>,
                        DropoutStep, BlockBegin, BlockEnd, BasicReadout<T>>;
template <typename T>
using OpCache =
    std::variant<std::monostate, typename BasicGatConv<T>::Cache, typename BasicGatV2Conv<T>::Cache,
                 typename BasicDotAttentionConv<T>::Cache, typename BasicLayerNorm<T>::Cache,
                 typename BasicBatchNorm<T>::Cache, DropoutKey, typename BasicReadout<T>::Cache>;

// One step of a model's flattened modules, with what its last forward kept.
template <typename T>
struct Step {
  Op<T> op;
  OpCache<T> cache;
  std::size_t level = 0;  // the attention level it belongs to
  // Nonzero on the first step after the top-level module holding attention layer l (< L - 1):
  // l + 1, whose mask's nodes are the rows the step and those after it keep (the layers after
  // read only those rows of layer l's output).
  std::size_t truncate = 0;
  bool grad_input = false;           // whether a step before it has parameters (needs dL/dinput)
  std::optional<InputRef<T>> input;  // its input in the last forward
  RowMatrix<T> out;                  // its output, when it writes one
  RowSparse<T> sparse_out;           // dropout of sparse features
  RowMatrix<T> skip_grad;            // a BlockBegin's: dL/dinput through the skip
};

template <typename T>
InputRef<T> top_rows(InputRef<T> view, std::int64_t rows) {
  if (view.rows() == rows) return view;
  return typename InputRef<T>::DenseMap(view.dense().data(), rows, view.cols());
}

template <typename Options>
constexpr bool kAttentionOptions =
    std::is_same_v<Options, GatConvOptions> || std::is_same_v<Options, GatV2ConvOptions> ||
    std::is_same_v<Options, DotAttentionConvOptions>;

// What a built model asks of the masks and data it runs on.
struct Traits {
  bool batch_norm = false;         // it normalises over nodes: whole-graph steps only
  bool self_loops = true;          // every attention layer adds self-loops
  std::int64_t edge_features = 0;  // the width of the edge features its layers read
  bool readout = false;            // it ends in one row per graph (a batch of graphs)
};

// Builds the steps of a spec: names every module, infers and checks widths, and constructs the
// modules in order, drawing their weights from `rng`.
template <typename T>
class Builder {
 public:
  Builder(ParameterStore<T>& store, ParameterStore<T>& buffers, const ModelSpec& spec, Rng& rng)
      : store_(store), buffers_(buffers), spec_(spec), rng_(rng) {}

  std::vector<Step<T>> build(ModelSpec& resolved) {
    width_ = spec_.in_features;
    resolved.modules = add(spec_.modules, "modules", 0);
    if (attention_ == 0) fail("model: the spec has no attention layer, expected at least one");
    if (width_ != spec_.classes) {
      fail("model: the last module's output is " + std::to_string(width_) + " wide, expected the " +
           std::to_string(spec_.classes) + " classes");
    }
    return std::move(steps_);
  }

  // What the built model needs of its callers, known once `build` has run.
  [[nodiscard]] const Traits& traits() const noexcept { return traits_; }

 private:
  [[noreturn]] static void fail(const std::string& message) { throw InvalidArgument(message); }

  std::vector<ModuleSpec> add(const std::vector<ModuleSpec>& modules, const std::string& path,
                              int depth) {
    std::vector<ModuleSpec> resolved;
    for (std::size_t k = 0; k < modules.size(); ++k) {
      const std::string where = path + "[" + std::to_string(k) + "]";
      resolved.push_back(add(modules[k], where, depth));
    }
    return resolved;
  }

  ModuleSpec add(const ModuleSpec& module, const std::string& where, int depth) {
    if (++count_ > kMaxModules) {
      fail("model: " + where + ": more than " + std::to_string(kMaxModules) + " modules");
    }
    ModuleSpec resolved = module;
    resolved.name = name_of(module);
    const std::string label = "model: " + where + " (" + module_type(module) +
                              (resolved.name.empty() ? "" : " " + resolved.name) + "): ";
    const std::size_t index = steps_.size();
    try {
      std::visit([&](auto& options) { add_step(resolved.name, options, label, where, depth); },
                 resolved.module);
    } catch (const InvalidArgument& error) {
      if (std::string_view(error.what()).starts_with("model: ")) throw;
      fail(label + error.what());
    }
    if (depth == 0) {
      if (index < steps_.size()) steps_[index].truncate = truncate_next_;
      truncate_next_ = 0;
      // A top-level module holding an attention layer starts a level: all its steps belong to
      // it, and the next top-level module keeps the rows of the level after it.
      if (level_started_) {
        for (std::size_t k = index; k < steps_.size(); ++k) {
          steps_[k].level = static_cast<std::size_t>(attention_ - 1);
        }
        truncate_next_ = static_cast<std::size_t>(attention_);
        level_started_ = false;
      }
    }
    return resolved;
  }

  std::string name_of(const ModuleSpec& module) {
    const auto counter = [&](const char* prefix, std::int64_t& n) {
      return module.name.empty() ? prefix + std::to_string(++n) : (++n, module.name);
    };
    std::string name = std::visit(
        [&](const auto& options) -> std::string {
          using Options = std::decay_t<decltype(options)>;
          if constexpr (kAttentionOptions<Options>) return counter("conv", convs_);
          if constexpr (std::is_same_v<Options, LinearOptions>) return counter("lin", linears_);
          if constexpr (std::is_same_v<Options, LayerNormOptions> ||
                        std::is_same_v<Options, BatchNormOptions>) {
            return counter("norm", norms_);
          }
          if constexpr (std::is_same_v<Options, ResidualOptions>) return counter("block", blocks_);
          if constexpr (std::is_same_v<Options, ReadoutOptions>) return counter("pool", pools_);
          return module.name;
        },
        module.module);
    if (name.empty()) return name;
    const bool valid = std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
    });
    if (!valid) {
      fail("model: module name '" + name + "' has a character other than a letter, digit or _");
    }
    if (!names_.insert(name).second) fail("model: two modules are named '" + name + "'");
    return name;
  }

  // Checks a declared input width (0: none) against the width the module receives.
  void declared(const char* field, std::int64_t& value) const {
    if (value != 0 && value != width_) {
      fail(std::string(field) + " is " + std::to_string(value) + ", but its input is " +
           std::to_string(width_) + " wide");
    }
    value = width_;
  }
  // An output width field: positive, or "classes".
  static std::int64_t width_field(const char* field, std::int64_t value) {
    if (value <= 0 && value != kClassesWidth) {
      fail(std::string(field) + " is " + std::to_string(value) +
           ", expected a positive count or \"classes\"");
    }
    return value;
  }
  std::int64_t output(std::int64_t width) const {
    return width == kClassesWidth ? spec_.classes : width;
  }

  Step<T>& push(Op<T> op, OpCache<T> cache = {}) {
    Step<T> step{std::move(op), std::move(cache), 0, false, false, std::nullopt, {}, {}, {}};
    step.level = attention_ == 0 ? 0 : static_cast<std::size_t>(attention_ - 1);  // see add
    step.grad_input = has_parameters_;
    steps_.push_back(std::move(step));
    return steps_.back();
  }

  template <typename Options>
  void add_step(const std::string& name, Options& options, const std::string& label,
                const std::string& where, int depth) {
    if constexpr (kAttentionOptions<Options>) {
      if (traits_.readout) fail(label + "an attention layer after the readout, expected it before");
      if (in_block_ && block_attention_)
        fail(label + "a residual block holds a second attention layer, expected at most one");
      block_attention_ = in_block_;
      declared("in", options.in_features);
      options.out_features = output(width_field("channels", options.out_features));
      options.schedule = spec_.schedule;
      if constexpr (requires { options.add_self_loops; }) {
        traits_.self_loops = traits_.self_loops && options.add_self_loops;
      }
      if constexpr (requires { options.edge_features; }) {
        std::int64_t& width = traits_.edge_features;
        if (options.edge_features > 0 && width > 0 && options.edge_features != width) {
          fail(label + "edge_dim is " + std::to_string(options.edge_features) +
               ", but an earlier layer's is " + std::to_string(width) +
               ": every layer reads the same edge features");
        }
        if (options.edge_features > 0) width = options.edge_features;
      }
      ++attention_;
      if (attention_ > kMaxLayers) {
        fail("model: more than " + std::to_string(kMaxLayers) + " attention layers");
      }
      level_started_ = true;
      using Layer =
          std::conditional_t<std::is_same_v<Options, GatConvOptions>, BasicGatConv<T>,
                             std::conditional_t<std::is_same_v<Options, GatV2ConvOptions>,
                                                BasicGatV2Conv<T>, BasicDotAttentionConv<T>>>;
      auto& step = push(Layer(store_, name, options, rng_), typename Layer::Cache{});
      width_ = std::get<Layer>(step.op).output_features();
      has_parameters_ = true;
    } else if constexpr (std::is_same_v<Options, LinearOptions>) {
      declared("in", options.in_features);
      options.out_features = output(width_field("out", options.out_features));
      push(BasicLinear<T>(store_, name, options, rng_));
      width_ = options.out_features;
      has_parameters_ = true;
    } else if constexpr (std::is_same_v<Options, LayerNormOptions>) {
      declared("features", options.features);
      push(BasicLayerNorm<T>(store_, name, options), typename BasicLayerNorm<T>::Cache{});
      has_parameters_ = has_parameters_ || options.elementwise_affine;
    } else if constexpr (std::is_same_v<Options, BatchNormOptions>) {
      declared("features", options.features);
      push(BasicBatchNorm<T>(store_, buffers_, name, options), typename BasicBatchNorm<T>::Cache{});
      has_parameters_ = has_parameters_ || options.affine;
      traits_.batch_norm = true;
    } else if constexpr (std::is_same_v<Options, ActivationOptions>) {
      push(BasicActivation<T>(options));
    } else if constexpr (std::is_same_v<Options, DropoutOptions>) {
      detail::check_dropout("dropout", options.p);
      push(DropoutStep{options.p, dropouts_++}, DropoutKey{});
    } else if constexpr (std::is_same_v<Options, ReadoutOptions>) {
      if (depth > 0)
        fail(label + "a readout inside a residual block, expected it at the top level");
      if (traits_.readout) fail(label + "a second readout, expected at most one");
      if (attention_ == 0) fail(label + "a readout before any attention layer, expected one after");
      declared("features", options.features);
      push(BasicReadout<T>(store_, name, options, rng_), typename BasicReadout<T>::Cache{});
      has_parameters_ = has_parameters_ || options.kind == ReadoutKind::kAttention;
      traits_.readout = true;
    } else {
      if (options.modules.empty()) fail(label + "modules is empty, expected at least one module");
      if (in_block_) fail(label + "a residual block inside another, expected blocks side by side");
      const std::int64_t in = width_;
      const std::size_t begin = steps_.size();
      push(BlockBegin{});
      in_block_ = true;
      block_attention_ = false;
      options.modules = add(options.modules, where + ".modules", depth + 1);
      in_block_ = false;
      std::optional<Projection> skip;
      if (width_ != in) {
        skip = detail::add_projection(store_, name + ".skip", in, width_, false, rng_);
        has_parameters_ = true;
      }
      std::get<BlockBegin>(steps_[begin].op).end = steps_.size();
      push(BlockEnd{begin, skip});
    }
  }

  ParameterStore<T>& store_;
  ParameterStore<T>& buffers_;
  const ModelSpec& spec_;
  Rng& rng_;
  std::vector<Step<T>> steps_;
  std::set<std::string, std::less<>> names_;
  std::int64_t width_ = 0;
  std::int64_t count_ = 0;
  std::int64_t attention_ = 0;
  std::int64_t convs_ = 0, linears_ = 0, norms_ = 0, blocks_ = 0, pools_ = 0;
  std::uint64_t dropouts_ = 0;
  bool has_parameters_ = false;
  bool level_started_ = false;
  std::size_t truncate_next_ = 0;
  bool in_block_ = false;
  bool block_attention_ = false;
  Traits traits_;
};

}  // namespace

ModelSpec paper_spec(const ModelOptions& options) {
  ModelSpec spec;
  spec.in_features = options.in_features;
  spec.classes = options.classes;
  spec.schedule = options.schedule;
  for (std::int64_t index = 0; index < options.layers; ++index) {
    const bool output = index + 1 == options.layers;
    if (index > 0) spec.modules.push_back({"", ActivationOptions{ActivationKind::kElu}});
    if (options.dropout > 0.0) spec.modules.push_back({"", DropoutOptions{options.dropout}});
    const auto layer = [&](auto layer_options) {
      layer_options.out_features = output ? kClassesWidth : options.hidden;
      layer_options.heads = output ? options.output_heads : options.heads;
      layer_options.concat = !output;
      layer_options.dropout = options.attention_dropout;
      return ModuleSpec{"conv" + std::to_string(index + 1), layer_options};
    };
    switch (options.attention) {
      case AttentionKind::kGat:
        spec.modules.push_back(layer(GatConvOptions{}));
        break;
      case AttentionKind::kGatV2:
        spec.modules.push_back(layer(GatV2ConvOptions{}));
        break;
      case AttentionKind::kDot:
        spec.modules.push_back(layer(DotAttentionConvOptions{}));
        break;
    }
  }
  return spec;
}

template <typename T>
struct BasicModel<T>::Impl {
  ModelOptions options;
  ModelSpec spec;
  std::unique_ptr<ParameterStore<T>> store = std::make_unique<ParameterStore<T>>();
  std::unique_ptr<ParameterStore<T>> buffers = std::make_unique<ParameterStore<T>>();
  std::vector<Step<T>> steps;
  std::size_t levels = 0;
  bool batch_norm = false;
  bool self_loops = true;
  bool readout = false;
  std::int64_t edge_feature_width = 0;
  const RowMatrix<T>* edge_features = nullptr;  // see set_edge_features
  std::span<const std::int64_t> graph_offsets;  // see set_graph_offsets
  RowMatrix<T> result;                          // forward_layer's output when no step owns it
  std::array<RowMatrix<T>, 2> grad_buffers;     // see run_backward
  std::vector<const Graph*> masks;              // of the current forward or backward, per level
  // The rows each level forms in the current forward, one vector per level (none: every row).
  std::span<const std::vector<std::uint8_t>> rows;
  std::vector<std::vector<std::uint8_t>> mask_rows;  // see use(masks)
  BasicHalo<T>* halo = nullptr;                      // see set_halo
  // With a halo: the whole graph's number of each row's first element, per dense width.
  std::vector<std::pair<std::int64_t, std::vector<std::int64_t>>> row_numbers;

  Impl(const ModelSpec& given, Rng& rng) {
    Builder<T> builder(*store, *buffers, given, rng);
    spec = given;
    steps = builder.build(spec);
    const Traits traits = builder.traits();
    batch_norm = traits.batch_norm;
    self_loops = traits.self_loops;
    readout = traits.readout;
    edge_feature_width = traits.edge_features;
    for (const auto& step : steps) levels = std::max(levels, step.level + 1);
    // The modules after the last attention layer keep its rows.
    for (auto& step : steps) {
      if (step.truncate >= levels) step.truncate = 0;
    }
    options.in_features = given.in_features;
    options.classes = given.classes;
    options.layers = static_cast<std::int64_t>(levels);
    options.schedule = given.schedule;
  }

  // The numbers feature dropout gives the rows of a layer input `x` (none on a whole graph).
  std::span<const std::int64_t> numbers_of(InputRef<T> x) {
    if (halo == nullptr) return {};
    if (x.is_sparse()) return halo->first_entries();
    const std::int64_t width = x.cols();
    for (const auto& [known, numbers] : row_numbers) {
      if (known == width) return numbers;
    }
    std::vector<std::int64_t> numbers;
    for (const NodeId origin : halo->origins()) numbers.push_back(origin * width);
    row_numbers.emplace_back(width, std::move(numbers));
    return row_numbers.back().second;
  }

  // Points every level at `mask`, on every row.
  void use(const Graph& mask) {
    masks.assign(levels, &mask);
    rows = {};
  }

  // Points level l at `given[l]`, after checking there is one per level, each on at most the
  // nodes of the one before.
  void use(std::span<const Graph> given, const char* where) {
    if (given.size() != levels) {
      throw InvalidArgument(std::string(where) + ": " + std::to_string(given.size()) +
                            " masks for a model of " + std::to_string(levels) + " layers");
    }
    masks.clear();
    for (const Graph& mask : given) {
      if (!masks.empty() && mask.num_nodes() > masks.back()->num_nodes()) {
        throw InvalidArgument(std::string(where) + ": mask " + std::to_string(masks.size()) +
                              " has " + std::to_string(mask.num_nodes()) +
                              " nodes, more than mask " + std::to_string(masks.size() - 1) + "'s " +
                              std::to_string(masks.back()->num_nodes()));
      }
      masks.push_back(&mask);
    }
    // Level l's output is read only at the first nodes of mask l + 1, so it forms only those
    // (each row bitwise as over every row): a sampled batch's input layer forms about a seventh
    // of its rows. Not with batch normalisation or a readout, which read every row.
    mask_rows.resize(levels);
    for (std::size_t level = 0; level < levels; ++level) {
      std::vector<std::uint8_t>& formed = mask_rows[level];
      formed.clear();
      if (batch_norm || readout || level + 1 == levels) continue;
      formed.assign(static_cast<std::size_t>(masks[level]->num_nodes()), 0);
      std::fill_n(formed.begin(), masks[level + 1]->num_nodes(), std::uint8_t{1});
    }
    rows = mask_rows;
  }

  // Refuses a run on part of a batch's rows (`what`), which batch normalisation and a readout
  // need whole.
  void refuse_row_subsets(const char* where, const char* what) const {
    refuse_readout(where, what);
    if (!batch_norm) return;
    throw InvalidArgument(std::string(where) + ": " + what +
                          " with batch normalisation, which needs every row of its batch");
  }
  void refuse_readout(const char* where, const char* what) const {
    if (!readout) return;
    throw InvalidArgument(std::string(where) + ": " + what +
                          " with a readout, which needs every node of each graph of its batch");
  }

  // The graphs a readout pools over, checked against the rows it receives.
  std::span<const std::int64_t> offsets_for(std::int64_t count) const {
    if (graph_offsets.empty()) {
      throw InvalidArgument(
          "model.forward: the model ends in a readout, but no graph offsets were set "
          "(set_graph_offsets)");
    }
    if (graph_offsets.back() != count) {
      throw InvalidArgument("model.forward: the graph offsets cover " +
                            std::to_string(graph_offsets.back()) + " nodes, the readout has " +
                            std::to_string(count) + " rows");
    }
    return graph_offsets;
  }

  // Runs steps [first, last) from `view`; returns the last step's output.
  InputRef<T> run(std::size_t first, std::size_t last, InputRef<T> view, Mode mode, Rng& rng) {
    for (std::size_t k = first; k < last; ++k) {
      Step<T>& step = steps[k];
      if (step.truncate != 0) view = top_rows(view, masks[step.truncate]->num_nodes());
      step.input = view;
      view = std::visit([&](auto& op) { return forward_step(k, op, view, mode, rng); }, step.op);
    }
    return view;
  }

  template <typename Op>
  InputRef<T> forward_step(std::size_t k, const Op& op, InputRef<T> view, Mode mode, Rng& rng) {
    Step<T>& step = steps[k];
    const char* where = "model.forward";
    if constexpr (std::is_same_v<Op, DropoutStep>) {
      auto& key = std::get<DropoutKey>(step.cache);
      key = mode == Mode::kTrain && op.p > 0.0 ? DropoutKey{op.p, rng.next_u64(), op.stream}
                                               : DropoutKey{};
      if (key.probability == 0.0) return view;
      key.numbers = numbers_of(view);
      if (view.is_sparse()) {
        dropout(view.sparse(), key, step.sparse_out);
        return step.sparse_out;
      }
      // In place over the step before's output, which no backward reads.
      const bool in_place = k > 0 && !std::holds_alternative<BlockBegin>(steps[k - 1].op) &&
                            steps[k - 1].out.data() == view.dense().data() &&
                            steps[k - 1].out.rows() == view.rows();
      RowMatrix<T>& out = in_place ? steps[k - 1].out : step.out;
      dropout(view.dense(), key, out);
      return out;
    } else if constexpr (std::is_same_v<Op, BlockBegin>) {
      return view;
    } else if constexpr (std::is_same_v<Op, BasicReadout<T>>) {
      if (view.is_sparse()) {
        throw InvalidArgument(std::string(where) +
                              ": a readout reads the sparse features; put a linear or attention "
                              "layer before it");
      }
      op.forward(view.dense(), offsets_for(view.rows()), std::get<typename Op::Cache>(step.cache),
                 step.out);
      return step.out;
    } else if constexpr (std::is_same_v<Op, BlockEnd>) {
      const InputRef<T> skip = *steps[op.begin].input;
      if (op.skip) {
        detail::project(*store, *op.skip, skip, step.out);
      } else if (skip.is_sparse()) {
        throw InvalidArgument(std::string(where) +
                              ": a residual block adds its sparse input; put a linear or "
                              "attention layer before the block");
      } else {
        step.out = skip.dense();
      }
      step.out += view.dense();
      return step.out;
    } else {
      if constexpr (kIsAttentionOp<Op>) {
        auto& cache = std::get<typename Op::Cache>(step.cache);
        cache.dropout.numbers =
            halo != nullptr ? halo->first_edges() : std::span<const std::int64_t>();
        const std::span<const std::uint8_t> level_rows =
            rows.empty() ? std::span<const std::uint8_t>() : std::span(rows[step.level]);
        BasicHalo<T>* level_halo = step.level > 0 ? halo : nullptr;
        if constexpr (kReadsEdgeFeatures<Op>) {
          op.forward(*masks[step.level], view, mode, rng, cache, step.out, level_rows, level_halo,
                     edge_features_of(op));
        } else {
          op.forward(*masks[step.level], view, mode, rng, cache, step.out, level_rows, level_halo);
        }
      } else if constexpr (std::is_same_v<Op, BasicLinear<T>>) {
        op.forward(view, step.out);
      } else {
        if (view.is_sparse()) {
          throw InvalidArgument(std::string(where) +
                                ": a normalisation or activation reads the sparse features; put a "
                                "linear or attention layer before it");
        }
        if constexpr (std::is_same_v<Op, BasicActivation<T>>) {
          op.forward(view.dense(), step.out);
        } else if constexpr (std::is_same_v<Op, BasicLayerNorm<T>>) {
          op.forward(view.dense(), std::get<typename Op::Cache>(step.cache), step.out);
        } else {
          op.forward(view.dense(), mode, std::get<typename Op::Cache>(step.cache), step.out);
        }
      }
      return step.out;
    }
  }

  // dL/d(input) of step k from dL/d(output) `grad`, into `into` (or `grad` itself when the step
  // passes it through); null when nothing before the step needs it.
  template <typename Op>
  const RowMatrix<T>* backward_step(std::size_t k, const Op& op, const RowMatrix<T>& grad,
                                    RowMatrix<T>& into) {
    Step<T>& step = steps[k];
    const InputRef<T> input = *step.input;
    RowMatrix<T>* grad_x = step.grad_input ? &into : nullptr;
    if constexpr (std::is_same_v<Op, DropoutStep>) {
      const auto& key = std::get<DropoutKey>(step.cache);
      if (key.probability == 0.0 || grad_x == nullptr) return &grad;
      dropout_backward(grad, key, into);
    } else if constexpr (std::is_same_v<Op, BasicReadout<T>>) {
      op.backward(input.dense(), graph_offsets, std::get<typename Op::Cache>(step.cache), grad,
                  grad_x);
    } else if constexpr (std::is_same_v<Op, BlockBegin>) {
      if (grad_x == nullptr) return nullptr;
      ops::detail::resize_buffer(into, grad.rows(), grad.cols());
      into = grad + step.skip_grad;
    } else if constexpr (std::is_same_v<Op, BlockEnd>) {
      Step<T>& begin = steps[op.begin];
      const InputRef<T> skip = *begin.input;
      if (op.skip) {
        if (begin.grad_input) {
          ops::detail::resize_buffer(begin.skip_grad, skip.rows(), skip.cols());
          begin.skip_grad.setZero();
        }
        detail::project_backward(*store, *op.skip, skip, grad,
                                 begin.grad_input ? &begin.skip_grad : nullptr);
      } else if (begin.grad_input) {
        begin.skip_grad = grad;
      }
      return &grad;
    } else if constexpr (kIsAttentionOp<Op>) {
      auto& cache = std::get<typename Op::Cache>(step.cache);
      BasicHalo<T>* level_halo = step.level > 0 ? halo : nullptr;
      if constexpr (kReadsEdgeFeatures<Op>) {
        op.backward(*masks[step.level], input, cache, grad, grad_x, level_halo,
                    edge_features_of(op));
      } else {
        op.backward(*masks[step.level], input, cache, grad, grad_x, level_halo);
      }
    } else if constexpr (std::is_same_v<Op, BasicLinear<T>>) {
      op.backward(input, grad, grad_x);
    } else if constexpr (std::is_same_v<Op, BasicActivation<T>>) {
      if (grad_x == nullptr) return nullptr;
      op.backward(input.dense(), grad, into);
    } else {
      op.backward(std::get<typename Op::Cache>(step.cache), grad, into);
    }
    return grad_x;
  }

  // Whether an attention layer type can read edge features (GAT, GATv2), and the ones it reads:
  // the model's, for a layer built with them.
  template <typename Op>
  static constexpr bool kReadsEdgeFeatures = requires(const Op& op) {
    op.options().edge_features;
  };
  template <typename Op>
  const RowMatrix<T>* edge_features_of(const Op& op) const {
    return op.options().edge_features > 0 ? edge_features : nullptr;
  }

  template <typename Op>
  static constexpr bool kIsAttentionOp =
      std::is_same_v<Op, BasicGatConv<T>> || std::is_same_v<Op, BasicGatV2Conv<T>> ||
      std::is_same_v<Op, BasicDotAttentionConv<T>>;

  // The first step of level `level` and the one after its last.
  std::pair<std::size_t, std::size_t> level_steps(std::size_t level) const {
    std::size_t first = 0;
    while (first < steps.size() && steps[first].level < level) ++first;
    std::size_t last = first;
    while (last < steps.size() && steps[last].level == level) ++last;
    return {first, last};
  }

  // The matrix `view` shows, when a step owns it whole; else a copy in `result`.
  const RowMatrix<T>& owned(InputRef<T> view) {
    for (auto& step : steps) {
      if (step.out.data() == view.dense().data() && step.out.rows() == view.rows()) {
        return step.out;
      }
    }
    result = view.dense();
    return result;
  }
};

template <typename T>
BasicModel<T>::BasicModel(const ModelOptions& options, Rng& rng) : impl_(nullptr) {
  detail::check_positive("model", "in_features", options.in_features);
  detail::check_positive("model", "classes", options.classes);
  detail::check_positive("model", "layers", options.layers);
  if (options.layers > kMaxLayers) {
    throw InvalidArgument("model: layers is " + std::to_string(options.layers) +
                          ", expected at most " + std::to_string(kMaxLayers));
  }
  detail::check_positive("model", "heads", options.heads);
  detail::check_positive("model", "hidden", options.hidden);
  detail::check_positive("model", "output_heads", options.output_heads);
  detail::check_dropout("model", options.dropout);
  impl_ = std::make_unique<Impl>(paper_spec(options), rng);
  impl_->options = options;
}

template <typename T>
BasicModel<T>::BasicModel(const ModelSpec& spec, Rng& rng) {
  detail::check_positive("model", "in_features", spec.in_features);
  detail::check_positive("model", "classes", spec.classes);
  impl_ = std::make_unique<Impl>(spec, rng);
}

template <typename T>
BasicModel<T>::~BasicModel() = default;
template <typename T>
BasicModel<T>::BasicModel(BasicModel&&) noexcept = default;
template <typename T>
BasicModel<T>& BasicModel<T>::operator=(BasicModel&&) noexcept = default;

template <typename T>
const RowMatrix<T>& BasicModel<T>::forward(const Graph& mask, InputRef<T> x, Mode mode, Rng& rng) {
  impl_->use(mask);
  return run_forward(x, mode, rng);
}

template <typename T>
const RowMatrix<T>& BasicModel<T>::forward(const Graph& mask,
                                           std::span<const std::vector<std::uint8_t>> rows,
                                           InputRef<T> x, Mode mode, Rng& rng) {
  Impl& s = *impl_;
  s.refuse_row_subsets("model.forward", "row sets");
  if (rows.size() != s.levels) {
    throw InvalidArgument("model.forward: " + std::to_string(rows.size()) +
                          " row sets for a model of " + std::to_string(s.levels) + " layers");
  }
  for (std::size_t index = 0; index < rows.size(); ++index) {
    if (static_cast<std::int64_t>(rows[index].size()) != mask.num_nodes()) {
      throw InvalidArgument("model.forward: row set " + std::to_string(index) + " has " +
                            std::to_string(rows[index].size()) + " bytes, expected the mask's " +
                            std::to_string(mask.num_nodes()) + " nodes");
    }
  }
  s.use(mask);
  s.rows = rows;
  const RowMatrix<T>& logits = run_forward(x, mode, rng);
  s.rows = {};
  return logits;
}

template <typename T>
const RowMatrix<T>& BasicModel<T>::forward(std::span<const Graph> masks, InputRef<T> x, Mode mode,
                                           Rng& rng) {
  impl_->refuse_readout("model.forward", "a mask per layer");
  impl_->use(masks, "model.forward");
  return run_forward(x, mode, rng);
}

template <typename T>
void BasicModel<T>::backward(const Graph& mask, InputRef<T> x, const RowMatrix<T>& grad_logits) {
  impl_->use(mask);
  run_backward(x, grad_logits);
}

template <typename T>
void BasicModel<T>::backward(std::span<const Graph> masks, InputRef<T> x,
                             const RowMatrix<T>& grad_logits) {
  impl_->use(masks, "model.backward");
  run_backward(x, grad_logits);
}

template <typename T>
const RowMatrix<T>& BasicModel<T>::run_forward(InputRef<T> x, Mode mode, Rng& rng) {
  Impl& s = *impl_;
  if (s.halo != nullptr) s.refuse_row_subsets("model.forward", "a part of a graph");
  if (s.readout) (void)s.offsets_for(x.rows());
  if (x.rows() != s.masks.front()->num_nodes()) {
    throw InvalidArgument("model.forward: x has " + std::to_string(x.rows()) +
                          " rows, the mask has " + std::to_string(s.masks.front()->num_nodes()) +
                          " nodes");
  }
  return s.owned(s.run(0, s.steps.size(), x, mode, rng));
}

template <typename T>
void BasicModel<T>::run_backward(InputRef<T> /*x*/, const RowMatrix<T>& grad_logits) {
  Impl& s = *impl_;
  if (s.readout) {
    maskgat::ops::detail::check_shape("model.backward", "grad_logits", grad_logits,
                                      static_cast<std::int64_t>(s.graph_offsets.size()) - 1,
                                      s.spec.classes, "the graph count");
  } else {
    maskgat::ops::detail::check_shape("model.backward", "grad_logits", grad_logits,
                                      s.masks.back()->num_nodes(), s.spec.classes,
                                      "the last mask's node count");
  }
  // dL/d(output) of the step being processed: the logits' gradient, then in turn each step's
  // input gradient, alternating between two buffers (a step's input gradient is never its output
  // gradient).
  const RowMatrix<T>* grad = &grad_logits;
  std::size_t next = 0;
  for (std::size_t k = s.steps.size(); k-- > 0 && grad != nullptr;) {
    RowMatrix<T>& into = s.grad_buffers[next];
    const RowMatrix<T>* result = std::visit(
        [&](const auto& op) { return s.backward_step(k, op, *grad, into); }, s.steps[k].op);
    if (result == &into) next = 1 - next;
    grad = result;
    const Step<T>& step = s.steps[k];
    if (grad == nullptr || step.truncate == 0) continue;
    // The step read the first rows of the output before it; the others get no gradient.
    const std::int64_t below = s.masks[step.truncate - 1]->num_nodes();
    if (grad->rows() < below) {
      RowMatrix<T>& padded = grad == &into ? into : s.grad_buffers[next];
      if (&padded != grad) {
        padded = *grad;
        next = 1 - next;
      }
      const std::int64_t read = padded.rows();
      padded.conservativeResize(below, Eigen::NoChange);
      padded.bottomRows(below - read).setZero();
      grad = &padded;
    }
  }
}

template <typename T>
const RowMatrix<T>& BasicModel<T>::forward_layer(std::int64_t layer, const Graph& mask,
                                                 InputRef<T> x) {
  Impl& s = *impl_;
  if (layer < 0 || layer >= static_cast<std::int64_t>(s.levels)) {
    throw InvalidArgument("model.forward_layer: layer " + std::to_string(layer) +
                          " is outside [0, " + std::to_string(s.levels) + ")");
  }
  s.refuse_readout("model.forward_layer", "one layer at a time");
  s.use(mask);
  Rng unused(0);  // evaluation draws nothing
  const auto [first, last] = s.level_steps(static_cast<std::size_t>(layer));
  return s.owned(s.run(first, last, x, Mode::kEval, unused));
}

template <typename T>
void BasicModel<T>::set_halo(BasicHalo<T>* halo) noexcept {
  impl_->halo = halo;
  impl_->row_numbers.clear();
}

template <typename T>
std::vector<AttentionWeights<T>> BasicModel<T>::attention(const Graph& mask) const {
  std::vector<AttentionWeights<T>> result;
  for (const auto& step : impl_->steps) {
    std::visit(
        [&](const auto& op) {
          using Op = std::decay_t<decltype(op)>;
          if constexpr (Impl::template kIsAttentionOp<Op>) {
            result.push_back(op.attention(mask, std::get<typename Op::Cache>(step.cache)));
          }
        },
        step.op);
  }
  return result;
}

template <typename T>
ParameterStore<T>& BasicModel<T>::parameters() noexcept {
  return *impl_->store;
}
template <typename T>
const ParameterStore<T>& BasicModel<T>::parameters() const noexcept {
  return *impl_->store;
}
template <typename T>
ParameterStore<T>& BasicModel<T>::buffers() noexcept {
  return *impl_->buffers;
}
template <typename T>
const ParameterStore<T>& BasicModel<T>::buffers() const noexcept {
  return *impl_->buffers;
}
template <typename T>
const ModelOptions& BasicModel<T>::options() const noexcept {
  return impl_->options;
}
template <typename T>
bool BasicModel<T>::mask_self_loops() const noexcept {
  return impl_->self_loops;
}
template <typename T>
std::int64_t BasicModel<T>::edge_feature_width() const noexcept {
  return impl_->edge_feature_width;
}
template <typename T>
void BasicModel<T>::set_edge_features(const RowMatrix<T>* features) noexcept {
  impl_->edge_features = features;
}
template <typename T>
bool BasicModel<T>::graph_level() const noexcept {
  return impl_->readout;
}
template <typename T>
void BasicModel<T>::set_graph_offsets(std::span<const std::int64_t> offsets) noexcept {
  impl_->graph_offsets = offsets;
}
template <typename T>
const ModelSpec& BasicModel<T>::spec() const noexcept {
  return impl_->spec;
}

template class BasicModel<float>;
template class BasicModel<double>;

}  // namespace maskgat::nn
