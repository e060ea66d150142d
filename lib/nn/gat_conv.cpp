#include "maskgat/nn/gat_conv.hpp"

#include "maskgat/ops/attention.hpp"
#include "nn/detail/layer_common.hpp"
#include "ops/detail/head_scores.hpp"

namespace maskgat::nn {

template <typename T>
BasicGatConv<T>::BasicGatConv(ParameterStore<T>& store, std::string_view name,
                              const GatConvOptions& options, Rng& rng)
    : store_(&store), options_(options) {
  detail::check_layer_options("gat_conv", options);
  const std::string prefix(name);
  lin_ = detail::add_projection(store, prefix, options.in_features, detail::heads_width(options),
                                false, rng);
  att_src_ = store.add(prefix + ".att_src", options.heads, options.out_features);
  glorot_uniform<T>(store.value(att_src_), options.heads, options.out_features, rng);
  att_dst_ = store.add(prefix + ".att_dst", options.heads, options.out_features);
  glorot_uniform<T>(store.value(att_dst_), options.heads, options.out_features, rng);
  detail::add_output_terms(store, prefix, options, rng, residual_, bias_);
}

template <typename T>
std::int64_t BasicGatConv<T>::output_features() const noexcept {
  return detail::output_width(options_.concat, options_.heads, options_.out_features);
}

template <typename T>
void BasicGatConv<T>::forward(const Graph& graph, InputRef<T> x, Mode mode, Rng& rng, Cache& cache,
                              RowMatrix<T>& out, std::span<const std::uint8_t> rows,
                              BasicHalo<T>* halo) const {
  detail::check_input("gat_conv.forward", graph, x, options_.in_features);
  const Graph& mask = detail::forward_mask(graph, options_.add_self_loops, cache.looped);
  detail::project(*store_, lin_, x, cache.h);
  if (halo != nullptr) halo->fill(cache.h);
  ops::detail::head_scores<T>(cache.h, store_->value(att_src_), store_->value(att_dst_), cache.src,
                              cache.dst);
  cache.dropout = detail::dropout_for(mode, options_.dropout, rng, cache.dropout.numbers);
  const ops::AdditiveScore<T> score{cache.src, cache.dst, static_cast<T>(options_.negative_slope)};
  detail::attend(*store_, options_, mask, score, cache.h, x, residual_, bias_, cache, out, rows);
}

template <typename T>
void BasicGatConv<T>::backward(const Graph& graph, InputRef<T> x, Cache& cache,
                               const RowMatrix<T>& grad_out, RowMatrix<T>* grad_x,
                               BasicHalo<T>* halo) const {
  const RowMatrix<T>& grad_heads = detail::output_terms_backward(
      "gat_conv.backward", *store_, options_, graph, x, residual_, bias_, grad_out, grad_x, cache);
  const Graph& mask = detail::attention_mask(graph, options_.add_self_loops, cache.looped);
  const ops::AdditiveScore<T> score{cache.src, cache.dst, static_cast<T>(options_.negative_slope)};
  ops::AdditiveScoreGrad<T> grad_score{cache.grad_src, cache.grad_dst};
  ops::attention_backward(mask, score, cache.h, cache.alpha, cache.dropout, grad_heads, grad_score,
                          cache.grad_h, cache.workspace, options_.schedule);
  ops::detail::head_scores_backward<T>(cache.h, store_->value(att_src_), store_->value(att_dst_),
                                       cache.grad_src, cache.grad_dst, cache.grad_h,
                                       store_->grad(att_src_), store_->grad(att_dst_));
  if (halo != nullptr) halo->reduce(cache.grad_h);
  detail::project_backward(*store_, lin_, x, cache.grad_h, grad_x);
}

template <typename T>
AttentionWeights<T> BasicGatConv<T>::attention(const Graph& graph, const Cache& cache) const {
  return detail::attention_of(graph, options_, cache);
}

template class BasicGatConv<float>;
template class BasicGatConv<double>;

}  // namespace maskgat::nn
