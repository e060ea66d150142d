#pragma once
// One attention layer with its own parameter store and cache, and what the tests need to treat
// the three layer types alike: their options and their dense reference.

#include <cstdint>
#include <string>

#include "maskgat/nn/dot_attention_conv.hpp"
#include "maskgat/nn/gat_conv.hpp"
#include "maskgat/nn/gatv2_conv.hpp"
#include "support/dense_attention.hpp"

namespace maskgat::test {

// Heads x channels per head, each taking its own kernel path (`detail::with_shape` and the
// single-head gathers): 8 x 8 (the GAT recipe), 8 heads of another width, one head of at most a
// vector's channels (float and double) and of more, and the generic path.
struct HeadShape {
  std::int64_t heads;
  std::int64_t channels;
};
inline constexpr HeadShape kKernelShapes[] = {{8, 8}, {8, 3}, {1, 3}, {1, 20}, {2, 3}};

template <typename Layer>
struct LayerTraits;

template <typename T>
struct LayerTraits<nn::BasicGatConv<T>> {
  using Scalar = T;
  using Options = nn::GatConvOptions;
  static constexpr const char* kName = "gat_conv";
  static RowMatrix<T> reference(const Graph& graph, const RowMatrix<T>& x,
                                const nn::ParameterStore<T>& store, const Options& options,
                                const RowMatrix<T>* edge_features) {
    return reference_gat<T>(graph, x, store, "conv", options, edge_features);
  }
};

template <typename T>
struct LayerTraits<nn::BasicGatV2Conv<T>> {
  using Scalar = T;
  using Options = nn::GatV2ConvOptions;
  static constexpr const char* kName = "gatv2_conv";
  static RowMatrix<T> reference(const Graph& graph, const RowMatrix<T>& x,
                                const nn::ParameterStore<T>& store, const Options& options,
                                const RowMatrix<T>* edge_features) {
    return reference_gatv2<T>(graph, x, store, "conv", options, edge_features);
  }
};

template <typename T>
struct LayerTraits<nn::BasicDotAttentionConv<T>> {
  using Scalar = T;
  using Options = nn::DotAttentionConvOptions;
  static constexpr const char* kName = "dot_attention_conv";
  static RowMatrix<T> reference(const Graph& graph, const RowMatrix<T>& x,
                                const nn::ParameterStore<T>& store, const Options& options,
                                const RowMatrix<T>* /*edge_features*/) {
    return reference_dot<T>(graph, x, store, "conv", options);
  }
};

// A layer named `conv`, initialised from `seed`, with the edge features of its graph when its
// options take them (set `edge_features` before a forward). Not copyable: the layer points at the
// store.
template <typename Layer>
struct Harness {
  using T = typename LayerTraits<Layer>::Scalar;
  using Options = typename LayerTraits<Layer>::Options;

  Harness(const Options& layer_options, std::uint64_t seed)
      : options(layer_options), init_rng(seed), layer(store, "conv", layer_options, init_rng) {}
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  // Forward in `mode` with attention-dropout key drawn from `Rng(dropout_seed)`.
  RowMatrix<T> forward(const Graph& graph, InputRef<T> x, nn::Mode mode = nn::Mode::kEval,
                       std::uint64_t dropout_seed = 0) {
    Rng rng(dropout_seed);
    RowMatrix<T> out;
    if constexpr (kHasEdgeFeatures) {
      layer.forward(graph, x, mode, rng, cache, out, {}, nullptr, edges());
    } else {
      layer.forward(graph, x, mode, rng, cache, out);
    }
    return out;
  }

  // dL/dx of the last forward into `grad_x`, from dL/dout.
  void backward(const Graph& graph, InputRef<T> x, const RowMatrix<T>& grad_out,
                RowMatrix<T>* grad_x) {
    if constexpr (kHasEdgeFeatures) {
      layer.backward(graph, x, cache, grad_out, grad_x, nullptr, edges());
    } else {
      layer.backward(graph, x, cache, grad_out, grad_x);
    }
  }

  RowMatrix<T> reference(const Graph& graph, const RowMatrix<T>& x) const {
    return LayerTraits<Layer>::reference(graph, x, store, options, edges());
  }

  static constexpr bool kHasEdgeFeatures = requires(Options o) { o.edge_features; };

  // The edge features the layer takes, or null.
  [[nodiscard]] const RowMatrix<T>* edges() const {
    if constexpr (kHasEdgeFeatures) {
      if (options.edge_features > 0) return &edge_features;
    }
    return nullptr;
  }

  Options options;
  RowMatrix<T> edge_features;
  Rng init_rng;
  nn::ParameterStore<T> store;
  Layer layer;
  typename Layer::Cache cache;
};

// Options of the given layer type with the shared fields set.
template <typename Layer>
typename LayerTraits<Layer>::Options layer_options(std::int64_t in_features,
                                                   std::int64_t out_features, std::int64_t heads,
                                                   bool concat) {
  typename LayerTraits<Layer>::Options options;
  options.in_features = in_features;
  options.out_features = out_features;
  options.heads = heads;
  options.concat = concat;
  return options;
}

}  // namespace maskgat::test
