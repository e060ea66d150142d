#include "maskgat/nn/model.hpp"

#include <array>
#include <cmath>
#include <string>
#include <variant>

#include "core/detail/parallel.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/nn/dot_attention_conv.hpp"
#include "maskgat/nn/dropout.hpp"
#include "maskgat/nn/gat_conv.hpp"
#include "maskgat/nn/gatv2_conv.hpp"
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

template <typename T>
using Layer = std::variant<BasicGatConv<T>, BasicGatV2Conv<T>, BasicDotAttentionConv<T>>;
template <typename T>
using LayerCache = std::variant<typename BasicGatConv<T>::Cache, typename BasicGatV2Conv<T>::Cache,
                                typename BasicDotAttentionConv<T>::Cache>;

// The shared options of layer `index` (0-based) of a model.
template <typename Options>
Options layer_options(const ModelOptions& model, std::int64_t index) {
  const bool output = index + 1 == model.layers;
  Options options;
  options.in_features = index == 0 ? model.in_features : model.heads * model.hidden;
  options.out_features = output ? model.classes : model.hidden;
  options.heads = output ? model.output_heads : model.heads;
  options.concat = !output;
  options.dropout = model.attention_dropout;
  options.schedule = model.schedule;
  return options;
}

template <typename T>
Layer<T> make_layer(ParameterStore<T>& store, const ModelOptions& model, std::int64_t index,
                    Rng& rng) {
  const std::string name = "conv" + std::to_string(index + 1);
  switch (model.attention) {
    case AttentionKind::kGatV2:
      return Layer<T>(std::in_place_index<1>, store, name,
                      layer_options<GatV2ConvOptions>(model, index), rng);
    case AttentionKind::kDot:
      return Layer<T>(std::in_place_index<2>, store, name,
                      layer_options<DotAttentionConvOptions>(model, index), rng);
    case AttentionKind::kGat:
      break;
  }
  return Layer<T>(std::in_place_index<0>, store, name, layer_options<GatConvOptions>(model, index),
                  rng);
}

using maskgat::detail::kRowBlock;

// ELU(z) = max(z, 0) + exp(min(z, 0)) - 1 and ELU'(z) = exp(min(z, 0)): branch-free, so Eigen
// evaluates both with its vectorised exp (its expm1 goes through a logarithm and is several times
// slower; exp - 1 loses relative precision only where ELU(z) is tiny, an absolute error of an ulp
// of 1). Parallel over fixed row blocks.
template <typename T>
void elu(const RowMatrix<T>& z, std::int64_t rows, RowMatrix<T>& out) {
  maskgat::ops::detail::resize_buffer(out, rows, z.cols());
  maskgat::detail::for_each_block(rows, kRowBlock, [&](std::int64_t begin, std::int64_t end) {
    const auto block = z.middleRows(begin, end - begin).array();
    out.middleRows(begin, end - begin).array() = block.max(T(0)) + (block.min(T(0)).exp() - T(1));
  });
}

// grad *= ELU'(z), on grad's rows (the first rows of z).
template <typename T>
void multiply_by_elu_derivative(const RowMatrix<T>& z, RowMatrix<T>& grad) {
  maskgat::detail::for_each_block(grad.rows(), kRowBlock, [&](std::int64_t begin, std::int64_t end) {
    grad.middleRows(begin, end - begin).array() *=
        z.middleRows(begin, end - begin).array().min(T(0)).exp();
  });
}

}  // namespace

template <typename T>
struct BasicModel<T>::Impl {
  ModelOptions options;
  std::unique_ptr<ParameterStore<T>> store = std::make_unique<ParameterStore<T>>();
  std::vector<Layer<T>> layers;
  std::vector<LayerCache<T>> caches;
  std::vector<DropoutKey> input_dropout;  // per layer, of the last forward
  std::vector<RowMatrix<T>> outputs;      // per layer, before the activation
  std::vector<RowMatrix<T>> inputs;       // per layer >= 1: dropout(ELU(previous output))
  RowMatrix<T> dense_input;               // layer 0's input after dropout
  RowSparse<T> sparse_input;
  std::array<RowMatrix<T>, 2> grad_inputs;  // see backward
  std::vector<const Graph*> masks;          // of the current forward or backward, per layer
  // The rows each layer forms in the current forward, one vector per layer (none: every row).
  std::span<const std::vector<std::uint8_t>> rows;
  BasicHalo<T>* halo = nullptr;  // see set_halo
  // With a halo: the whole graph's number of each row's first element, per dense width.
  std::vector<std::pair<std::int64_t, std::vector<std::int64_t>>> row_numbers;

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

  // Points every layer at `mask`, on every row.
  void use(const Graph& mask) {
    masks.assign(layers.size(), &mask);
    rows = {};
  }

  // Points layer l at `given[l]`, after checking there is one per layer, each on at most the
  // nodes of the one before.
  void use(std::span<const Graph> given, const char* where) {
    if (given.size() != layers.size()) {
      throw InvalidArgument(std::string(where) + ": " + std::to_string(given.size()) +
                            " masks for a model of " + std::to_string(layers.size()) + " layers");
    }
    masks.clear();
    for (const Graph& mask : given) {
      if (!masks.empty() && mask.num_nodes() > masks.back()->num_nodes()) {
        throw InvalidArgument(std::string(where) + ": mask " + std::to_string(masks.size()) +
                              " has " + std::to_string(mask.num_nodes()) + " nodes, more than mask " +
                              std::to_string(masks.size() - 1) + "'s " +
                              std::to_string(masks.back()->num_nodes()));
      }
      masks.push_back(&mask);
    }
    rows = {};
  }

  // Layer `index`'s rows in the current forward (none: every row).
  std::span<const std::uint8_t> rows_of(std::size_t index) const {
    if (rows.empty()) return {};
    return rows[index];
  }

  // Layer `index`'s input in the last forward.
  InputRef<T> input(std::size_t index, InputRef<T> x) const {
    if (index > 0) return inputs[index];
    if (input_dropout[0].probability == 0.0) return x;
    if (x.is_sparse()) return sparse_input;
    return dense_input;
  }
};

template <typename T>
BasicModel<T>::BasicModel(const ModelOptions& options, Rng& rng) : impl_(std::make_unique<Impl>()) {
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
  impl_->options = options;
  const auto count = static_cast<std::size_t>(options.layers);
  for (std::int64_t index = 0; index < options.layers; ++index) {
    impl_->layers.push_back(make_layer(*impl_->store, options, index, rng));
  }
  for (const auto& layer : impl_->layers) {
    impl_->caches.push_back(std::visit(
        [](const auto& conv) -> LayerCache<T> {
          return typename std::decay_t<decltype(conv)>::Cache{};
        },
        layer));
  }
  impl_->input_dropout.resize(count);
  impl_->outputs.resize(count);
  impl_->inputs.resize(count);
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
  if (rows.size() != s.layers.size()) {
    throw InvalidArgument("model.forward: " + std::to_string(rows.size()) +
                          " row sets for a model of " + std::to_string(s.layers.size()) +
                          " layers");
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
  const bool train = mode == Mode::kTrain && s.options.dropout > 0.0;
  for (std::size_t index = 0; index < s.layers.size(); ++index) {
    s.input_dropout[index] =
        train ? DropoutKey{s.options.dropout, rng.next_u64(), index} : DropoutKey{};
    if (index == 0) {
      s.input_dropout[0].numbers = train ? s.numbers_of(x) : std::span<const std::int64_t>();
      if (train && x.is_sparse()) dropout(x.sparse(), s.input_dropout[0], s.sparse_input);
      if (train && !x.is_sparse()) dropout(x.dense(), s.input_dropout[0], s.dense_input);
    } else {
      RowMatrix<T>& input = s.inputs[index];
      elu(s.outputs[index - 1], s.masks[index]->num_nodes(), input);
      if (train) {
        s.input_dropout[index].numbers = s.numbers_of(input);
        dropout(input, s.input_dropout[index], input);
      }
    }
    std::visit(
        [&](const auto& layer) {
          using Cache = typename std::decay_t<decltype(layer)>::Cache;
          auto& cache = std::get<Cache>(s.caches[index]);
          cache.dropout.numbers =
              s.halo != nullptr ? s.halo->first_edges() : std::span<const std::int64_t>();
          layer.forward(*s.masks[index], s.input(index, x), mode, rng, cache, s.outputs[index],
                        s.rows_of(index), index > 0 ? s.halo : nullptr);
        },
        s.layers[index]);
  }
  return s.outputs.back();
}

template <typename T>
void BasicModel<T>::run_backward(InputRef<T> x, const RowMatrix<T>& grad_logits) {
  Impl& s = *impl_;
  // dL/d(layer output) of the layer being processed: the logits' gradient, then in turn each
  // hidden layer's, which alternate between two buffers (a layer's input gradient must not be its
  // output gradient); the first layer needs none, so a 2-layer model keeps one N x (H * C) buffer.
  const RowMatrix<T>* grad_out = &grad_logits;
  for (std::size_t index = s.layers.size(); index-- > 0;) {
    RowMatrix<T>& grad_input = s.grad_inputs[index % 2];
    std::visit(
        [&](const auto& layer) {
          using Cache = typename std::decay_t<decltype(layer)>::Cache;
          layer.backward(*s.masks[index], s.input(index, x), std::get<Cache>(s.caches[index]),
                         *grad_out, index > 0 ? &grad_input : nullptr,
                         index > 0 ? s.halo : nullptr);
        },
        s.layers[index]);
    if (index == 0) break;
    dropout_backward(grad_input, s.input_dropout[index], grad_input);
    multiply_by_elu_derivative(s.outputs[index - 1], grad_input);
    // Layer index read the first rows of the layer below's output; the others get no gradient.
    const std::int64_t below = s.masks[index - 1]->num_nodes();
    if (grad_input.rows() < below) {
      const std::int64_t read = grad_input.rows();
      grad_input.conservativeResize(below, Eigen::NoChange);
      grad_input.bottomRows(below - read).setZero();
    }
    grad_out = &grad_input;
  }
}

template <typename T>
const RowMatrix<T>& BasicModel<T>::forward_layer(std::int64_t layer, const Graph& mask,
                                                 InputRef<T> x) {
  Impl& s = *impl_;
  if (layer < 0 || layer >= static_cast<std::int64_t>(s.layers.size())) {
    throw InvalidArgument("model.forward_layer: layer " + std::to_string(layer) +
                          " is outside [0, " + std::to_string(s.layers.size()) + ")");
  }
  const auto index = static_cast<std::size_t>(layer);
  Rng unused(0);  // evaluation draws nothing
  std::visit(
      [&](const auto& conv) {
        using Cache = typename std::decay_t<decltype(conv)>::Cache;
        conv.forward(mask, x, Mode::kEval, unused, std::get<Cache>(s.caches[index]),
                     s.outputs[index]);
      },
      s.layers[index]);
  if (index + 1 == s.layers.size()) return s.outputs[index];
  elu(s.outputs[index], s.outputs[index].rows(), s.inputs[index + 1]);
  return s.inputs[index + 1];
}

template <typename T>
void BasicModel<T>::set_halo(BasicHalo<T>* halo) noexcept {
  impl_->halo = halo;
  impl_->row_numbers.clear();
}

template <typename T>
std::vector<AttentionWeights<T>> BasicModel<T>::attention(const Graph& mask) const {
  std::vector<AttentionWeights<T>> result;
  for (std::size_t index = 0; index < impl_->layers.size(); ++index) {
    std::visit(
        [&](const auto& layer) {
          using Cache = typename std::decay_t<decltype(layer)>::Cache;
          result.push_back(layer.attention(mask, std::get<Cache>(impl_->caches[index])));
        },
        impl_->layers[index]);
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
const ModelOptions& BasicModel<T>::options() const noexcept {
  return impl_->options;
}

template class BasicModel<float>;
template class BasicModel<double>;

}  // namespace maskgat::nn
