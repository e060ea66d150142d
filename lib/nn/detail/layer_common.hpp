#pragma once
// Pieces every attention layer uses: option checks, projections `x W + b`, the attention mask
// with or without added self-loops, attention dropout keys, and merging heads.

#include <cmath>
#include <optional>
#include <span>
#include <string>

#include "maskgat/core/error.hpp"
#include "maskgat/graph/masks.hpp"
#include "maskgat/nn/layer.hpp"
#include "maskgat/ops/attention.hpp"
#include "maskgat/ops/matmul.hpp"
#include "ops/detail/buffer.hpp"
#include "ops/detail/column_sums.hpp"
#include "ops/detail/shape_checks.hpp"

namespace maskgat::nn::detail {

using maskgat::ops::detail::check_shape;

inline void check_positive(const std::string& where, const char* name, std::int64_t value) {
  if (value <= 0) {
    throw InvalidArgument(where + ": " + name + " is " + std::to_string(value) +
                          ", expected a positive count");
  }
}

inline void check_dropout(const std::string& where, double dropout) {
  if (!(dropout >= 0.0 && dropout < 1.0)) {
    throw InvalidArgument(where + ": dropout " + std::to_string(dropout) + " is outside [0, 1)");
  }
}

// Checks the options every attention layer has (sizes, dropout, schedule), and the LeakyReLU
// slope of those that have one (GAT, GATv2).
template <typename Options>
void check_layer_options(const std::string& where, const Options& options) {
  check_positive(where, "in_features", options.in_features);
  check_positive(where, "out_features", options.out_features);
  check_positive(where, "heads", options.heads);
  check_dropout(where, options.dropout);
  maskgat::ops::detail::check_schedule(where.c_str(), options.schedule);
  if constexpr (requires { options.edge_features; }) {
    if (options.edge_features < 0) {
      throw InvalidArgument(where + ": edge_features " + std::to_string(options.edge_features) +
                            " is negative (0: no edge features)");
    }
  }
  if constexpr (requires { options.negative_slope; }) {
    if (!std::isfinite(options.negative_slope)) {
      throw InvalidArgument(where + ": negative_slope " + std::to_string(options.negative_slope) +
                            " is not finite");
    }
  }
}

// The width of a layer's projected heads, H * C.
template <typename Options>
std::int64_t heads_width(const Options& options) {
  return options.heads * options.out_features;
}

// Registers `prefix.weight` (Glorot) and, when asked, `prefix.bias` (zero).
template <typename T>
Projection add_projection(ParameterStore<T>& store, const std::string& prefix,
                          std::int64_t in_features, std::int64_t out_features, bool bias,
                          Rng& rng) {
  Projection projection{store.add(prefix + ".weight", in_features, out_features), std::nullopt};
  glorot_uniform<T>(store.value(projection.weight), in_features, out_features, rng);
  if (bias) projection.bias = store.add(prefix + ".bias", 1, out_features);
  return projection;
}

// Features per node of a layer's output: its heads side by side (`concat`), or their mean.
inline std::int64_t output_width(bool concat, std::int64_t heads, std::int64_t out_features) {
  return concat ? heads * out_features : out_features;
}

// The residual projection and the output bias that a GAT or GATv2 layer's options ask for, added
// in that order after the layer's own parameters.
template <typename T, typename Options>
void add_output_terms(ParameterStore<T>& store, const std::string& prefix, const Options& options,
                      Rng& rng, std::optional<Projection>& residual,
                      std::optional<Parameter>& bias) {
  const std::int64_t width = output_width(options.concat, options.heads, options.out_features);
  if (options.residual) {
    residual = add_projection(store, prefix + ".res", options.in_features, width, false, rng);
  }
  if (options.bias) bias = store.add(prefix + ".bias", 1, width);
}

template <typename T>
void add_bias(const ParameterStore<T>& store, const Parameter& bias, RowMatrix<T>& out) {
  const auto row = store.value(bias).row(0);
  maskgat::detail::for_each_block(out.rows(), maskgat::detail::kRowBlock,
                                  [&](std::int64_t begin, std::int64_t end) {
                                    out.middleRows(begin, end - begin).rowwise() += row;
                                  });
}

// out = x W + b.
template <typename T>
void project(const ParameterStore<T>& store, const Projection& projection, InputRef<T> x,
             RowMatrix<T>& out) {
  ops::matmul<T>(x, store.value(projection.weight), out);
  if (projection.bias) add_bias(store, *projection.bias, out);
}

// out += x W + b, with x W + b formed in `term` (the caller's buffer, reused from call to call).
template <typename T>
void project_add(const ParameterStore<T>& store, const Projection& projection, InputRef<T> x,
                 RowMatrix<T>& term, RowMatrix<T>& out) {
  project(store, projection, x, term);
  out += term;
}

// Adds the parameter gradients of `out = x W + b` and, with `grad_x`, adds dL/dx into it.
template <typename T>
void project_backward(ParameterStore<T>& store, const Projection& projection, InputRef<T> x,
                      const RowMatrix<T>& grad_out, RowMatrix<T>* grad_x) {
  auto grad_weight = store.grad(projection.weight);
  ops::matmul_backward_weight<T>(x, grad_out, grad_weight);
  if (projection.bias)
    maskgat::ops::detail::add_column_sums(grad_out, store.grad(*projection.bias).data());
  if (grad_x != nullptr)
    ops::matmul_backward_input<T>(grad_out, store.value(projection.weight), *grad_x);
}

// Checks the edge features given to a layer built with `width` of them (0: none, and none may be
// given): a row per edge of `graph`. Returns whether the layer reads them.
template <typename T>
bool check_edge_features(const std::string& where, const Graph& graph,
                         const RowMatrix<T>* features, std::int64_t width) {
  if (width == 0) {
    if (features != nullptr) {
      throw InvalidArgument(where +
                            ": edge features were given to a layer built without them "
                            "(edge_features 0)");
    }
    return false;
  }
  if (features == nullptr) {
    throw InvalidArgument(where + ": the layer takes " + std::to_string(width) +
                          " edge features per edge (edge_features) but none were given");
  }
  check_shape(where.c_str(), "edge_features", *features, graph.num_edges(), width,
              "the graph's edge count");
  return true;
}

// The edge features of the entries of the mask a layer attends over: `features` when it attends
// over `graph`, else (with the self-loops it added) `masks::edge_features` of them, formed in
// `looped`. Null when the layer takes none.
template <typename T>
const RowMatrix<T>* mask_edge_features(const std::string& where, const Graph& graph,
                                       const Graph& mask, const RowMatrix<T>* features,
                                       std::int64_t width, RowMatrix<T>& looped) {
  if (!check_edge_features(where, graph, features, width)) return nullptr;
  if (&mask == &graph) return features;
  looped = masks::edge_features(graph, *features, mask);
  return &looped;
}

// The backward's view of the edge features `mask_edge_features` gave the forward: the same checks,
// and the self-loops' rows the forward formed in `looped`.
template <typename T>
const RowMatrix<T>* backward_edge_features(const std::string& where, const Graph& graph,
                                           const Graph& mask, const RowMatrix<T>* features,
                                           std::int64_t width, const RowMatrix<T>& looped) {
  if (!check_edge_features(where, graph, features, width)) return nullptr;
  return &mask == &graph ? features : &looped;
}

// The mask a layer attends over: `graph` itself, or, when it lacks self-loops the layer must add,
// `looped` (which the forward builds with `masks::from_graph`).
inline bool needs_self_loops(const Graph& graph, bool add_self_loops) {
  return add_self_loops && graph.num_self_loops() != graph.num_nodes();
}

inline const Graph& attention_mask(const Graph& graph, bool add_self_loops, const Graph& looped) {
  return needs_self_loops(graph, add_self_loops) ? looped : graph;
}

// The forward's mask: builds `looped` first when the graph lacks self-loops the layer adds.
inline const Graph& forward_mask(const Graph& graph, bool add_self_loops, Graph& looped) {
  if (needs_self_loops(graph, add_self_loops)) looped = masks::from_graph(graph, true);
  return attention_mask(graph, add_self_loops, looped);
}

inline void check_columns(const std::string& where, std::int64_t columns,
                          std::int64_t in_features) {
  if (columns != in_features) {
    throw InvalidArgument(where + ": x has " + std::to_string(columns) + " columns, expected " +
                          std::to_string(in_features));
  }
}

template <typename T>
void check_input(const std::string& where, const Graph& graph, InputRef<T> x,
                 std::int64_t in_features) {
  if (x.rows() != graph.num_nodes()) {
    throw InvalidArgument(where + ": x has " + std::to_string(x.rows()) + " rows, the graph has " +
                          std::to_string(graph.num_nodes()) + " nodes");
  }
  check_columns(where, x.cols(), in_features);
}

// Resizes `grad_x` to N x F and zeroes it, when asked for (dense `x` only).
template <typename T>
void prepare_grad_x(const std::string& where, InputRef<T> x, RowMatrix<T>* grad_x) {
  if (grad_x == nullptr) return;
  if (x.is_sparse()) {
    throw InvalidArgument(where +
                          ": the gradient of a sparse input is not computed; pass "
                          "grad_x = nullptr or a dense x");
  }
  maskgat::ops::detail::resize_buffer(*grad_x, x.rows(), x.cols());
  grad_x->setZero();
}

// Checks `grad_out` and prepares `grad_x` (zeroed, N x F) when asked for.
template <typename T>
void check_backward(const std::string& where, const Graph& graph, InputRef<T> x,
                    const RowMatrix<T>& grad_out, std::int64_t out_features, RowMatrix<T>* grad_x) {
  check_shape(where.c_str(), "grad_out", grad_out, graph.num_nodes(), out_features,
              "the graph's node count");
  prepare_grad_x(where, x, grad_x);
}

// The attention-dropout key of a forward, numbering the edges by `numbers` (the numbers the
// caller set in the cache's key; empty: by position).
inline DropoutKey dropout_for(Mode mode, double probability, Rng& rng,
                              std::span<const std::int64_t> numbers) {
  if (mode != Mode::kTrain || probability <= 0.0) return {};
  return {probability, rng.next_u64(), 0, numbers};
}

// Whether the attention output is the layer's own: heads concatenated, or a single head, whose
// mean is itself (x / 1 == x exactly, so skipping the copy changes no value).
inline bool heads_are_output(bool concat, std::int64_t heads) { return concat || heads == 1; }

// Where the attention output goes: straight into `out` when it is the layer's own, else into
// `heads_out`, averaged by `finish_output`.
template <typename T>
RowMatrix<T>& heads_target(bool concat, std::int64_t heads, RowMatrix<T>& out,
                           RowMatrix<T>& heads_out) {
  return heads_are_output(concat, heads) ? out : heads_out;
}

// out = the mean over heads of `heads_out` (N x H*C -> N x C).
template <typename T>
void mean_heads(const RowMatrix<T>& heads_out, std::int64_t heads, RowMatrix<T>& out) {
  const std::int64_t channels = heads_out.cols() / heads;
  maskgat::ops::detail::resize_buffer(out, heads_out.rows(), channels);
  maskgat::detail::for_each_block(out.rows(), maskgat::detail::kRowBlock,
                                  [&](std::int64_t begin, std::int64_t end) {
                                    const auto in = heads_out.middleRows(begin, end - begin);
                                    auto target = out.middleRows(begin, end - begin);
                                    target = in.leftCols(channels);
                                    for (std::int64_t h = 1; h < heads; ++h)
                                      target += in.middleCols(h * channels, channels);
                                    target /= static_cast<T>(heads);
                                  });
}

// The gradient of `mean_heads`: every head gets grad_out / H.
template <typename T>
void mean_heads_backward(const RowMatrix<T>& grad_out, std::int64_t heads,
                         RowMatrix<T>& grad_heads) {
  const std::int64_t channels = grad_out.cols();
  maskgat::ops::detail::resize_buffer(grad_heads, grad_out.rows(), heads * channels);
  for (std::int64_t h = 0; h < heads; ++h) {
    grad_heads.middleCols(h * channels, channels) = grad_out / static_cast<T>(heads);
  }
}

// The gradient with respect to the per-head attention output.
template <typename T>
const RowMatrix<T>& heads_gradient(bool concat, std::int64_t heads, const RowMatrix<T>& grad_out,
                                   RowMatrix<T>& grad_heads) {
  if (heads_are_output(concat, heads)) return grad_out;
  mean_heads_backward(grad_out, heads, grad_heads);
  return grad_heads;
}

// What every layer adds after attention: the mean over heads (unless they are concatenated into
// `out` already), a projection of the input (residual, or the dot layer's root weight, with its
// bias) and the output bias. `projected` is the layer's buffer for the projection.
template <typename T>
void finish_output(const ParameterStore<T>& store, bool concat, std::int64_t heads,
                   const RowMatrix<T>& heads_out, const std::optional<Projection>& projection,
                   const std::optional<Parameter>& bias, InputRef<T> x, RowMatrix<T>& projected,
                   RowMatrix<T>& out) {
  if (!heads_are_output(concat, heads)) mean_heads(heads_out, heads, out);
  if (projection) project_add(store, *projection, x, projected, out);
  if (bias) add_bias(store, *bias, out);
}

// Backward of `finish_output`: adds the bias and projection gradients (and the projection's part
// of dL/dx when `grad_x` is set) and returns dL/d(per-head attention output).
template <typename T>
const RowMatrix<T>& finish_output_backward(ParameterStore<T>& store, bool concat,
                                           std::int64_t heads,
                                           const std::optional<Projection>& projection,
                                           const std::optional<Parameter>& bias, InputRef<T> x,
                                           const RowMatrix<T>& grad_out, RowMatrix<T>* grad_x,
                                           RowMatrix<T>& grad_heads) {
  if (bias) maskgat::ops::detail::add_column_sums(grad_out, store.grad(*bias).data());
  if (projection) project_backward(store, *projection, x, grad_out, grad_x);
  return heads_gradient(concat, heads, grad_out, grad_heads);
}

// The attention of a GAT or GATv2 layer and its output terms: `ops::attention` over `mask` (on
// `rows`) with the cache's dropout key, into the layer's output or the per-head buffer that
// `finish_output` averages, then `finish_output`.
template <typename T, typename Options, typename Score, typename Cache>
void attend(const ParameterStore<T>& store, const Options& options, const Graph& mask,
            const Score& score, const RowMatrix<T>& values, InputRef<T> x,
            const std::optional<Projection>& residual, const std::optional<Parameter>& bias,
            Cache& cache, RowMatrix<T>& out, std::span<const std::uint8_t> rows) {
  ops::attention(mask, score, values, cache.dropout, cache.alpha,
                 heads_target(options.concat, options.heads, out, cache.heads_out),
                 options.schedule, rows);
  finish_output(store, options.concat, options.heads, cache.heads_out, residual, bias, x,
                cache.projected, out);
}

// The first steps of a GAT or GATv2 layer's backward: the argument checks, then the gradients of
// the output terms. Returns the gradient with respect to the attention's output.
template <typename T, typename Options, typename Cache>
const RowMatrix<T>& output_terms_backward(const char* where, ParameterStore<T>& store,
                                          const Options& options, const Graph& graph, InputRef<T> x,
                                          const std::optional<Projection>& residual,
                                          const std::optional<Parameter>& bias,
                                          const RowMatrix<T>& grad_out, RowMatrix<T>* grad_x,
                                          Cache& cache) {
  check_backward(where, graph, x, grad_out,
                 output_width(options.concat, options.heads, options.out_features), grad_x);
  return finish_output_backward(store, options.concat, options.heads, residual, bias, x, grad_out,
                                grad_x, cache.grad_heads);
}

// A layer's attention coefficients on the mask of its last forward pass.
template <typename Options, typename Cache>
auto attention_of(const Graph& graph, const Options& options, const Cache& cache) {
  return attention_weights(attention_mask(graph, options.add_self_loops, cache.looped),
                           cache.alpha);
}

}  // namespace maskgat::nn::detail
