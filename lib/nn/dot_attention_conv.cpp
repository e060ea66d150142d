#include "maskgat/nn/dot_attention_conv.hpp"

#include <cmath>

#include "maskgat/ops/attention.hpp"
#include "nn/detail/layer_common.hpp"

namespace maskgat::nn {
namespace {

// Scores scaled by 1 / sqrt(C), as in Vaswani et al. and TransformerConv.
template <typename T, typename Cache>
ops::DotScore<T> dot_score(const Cache& cache, const DotAttentionConvOptions& options) {
  return {cache.query, cache.key, options.heads,
          static_cast<T>(1.0 / std::sqrt(static_cast<double>(options.out_features)))};
}

}  // namespace

template <typename T>
BasicDotAttentionConv<T>::BasicDotAttentionConv(ParameterStore<T>& store, std::string_view name,
                                                const DotAttentionConvOptions& options, Rng& rng)
    : store_(&store), options_(options) {
  detail::check_layer_options("dot_attention_conv", options);
  const std::string prefix(name);
  const std::int64_t width = detail::heads_width(options);
  query_ = detail::add_projection(store, prefix + ".query", options.in_features, width, true, rng);
  key_ = detail::add_projection(store, prefix + ".key", options.in_features, width, true, rng);
  value_ = detail::add_projection(store, prefix + ".value", options.in_features, width, true, rng);
  if (options.root_weight) {
    skip_ = detail::add_projection(store, prefix + ".skip", options.in_features, output_features(),
                                   options.bias, rng);
  }
}

template <typename T>
std::int64_t BasicDotAttentionConv<T>::output_features() const noexcept {
  return detail::output_width(options_.concat, options_.heads, options_.out_features);
}

template <typename T>
void BasicDotAttentionConv<T>::forward(const Graph& graph, InputRef<T> x, Mode mode, Rng& rng,
                                       Cache& cache, RowMatrix<T>& out,
                                       std::span<const std::uint8_t> rows,
                                       BasicHalo<T>* halo) const {
  detail::check_input("dot_attention_conv.forward", graph, x, options_.in_features);
  detail::project(*store_, query_, x, cache.query);
  detail::project(*store_, key_, x, cache.key);
  detail::project(*store_, value_, x, cache.value);
  if (halo != nullptr) {
    halo->fill(cache.key);
    halo->fill(cache.value);
  }
  cache.dropout = detail::dropout_for(mode, options_.dropout, rng, cache.dropout.numbers);
  const auto score = dot_score<T>(cache, options_);
  ops::attention(graph, score, cache.value, cache.dropout, cache.alpha,
                 detail::heads_target(options_.concat, options_.heads, out, cache.heads_out),
                 options_.schedule, rows);
  detail::finish_output(*store_, options_.concat, options_.heads, cache.heads_out, skip_,
                        std::optional<Parameter>{}, x, cache.projected, out);
}

template <typename T>
void BasicDotAttentionConv<T>::backward(const Graph& graph, InputRef<T> x, Cache& cache,
                                        const RowMatrix<T>& grad_out, RowMatrix<T>* grad_x,
                                        BasicHalo<T>* halo) const {
  detail::check_backward("dot_attention_conv.backward", graph, x, grad_out, output_features(),
                         grad_x);
  const RowMatrix<T>& grad_heads = detail::finish_output_backward(
      *store_, options_.concat, options_.heads, skip_, std::optional<Parameter>{}, x, grad_out,
      grad_x, cache.grad_heads);
  const auto score = dot_score<T>(cache, options_);
  ops::DotScoreGrad<T> grad_score{cache.grad_query, cache.grad_key};
  ops::attention_backward(graph, score, cache.value, cache.alpha, cache.dropout, grad_heads,
                          grad_score, cache.grad_value, cache.workspace, options_.schedule);
  if (halo != nullptr) {
    halo->reduce(cache.grad_key);
    halo->reduce(cache.grad_value);
  }
  detail::project_backward(*store_, query_, x, cache.grad_query, grad_x);
  detail::project_backward(*store_, key_, x, cache.grad_key, grad_x);
  detail::project_backward(*store_, value_, x, cache.grad_value, grad_x);
}

template <typename T>
AttentionWeights<T> BasicDotAttentionConv<T>::attention(const Graph& graph,
                                                        const Cache& cache) const {
  return attention_weights(graph, cache.alpha);
}

template class BasicDotAttentionConv<float>;
template class BasicDotAttentionConv<double>;

}  // namespace maskgat::nn
